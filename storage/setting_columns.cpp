// Setting columns: the swept keys as typed columns beside every table's rows.
#include "storage/setting_columns.hpp"

#include <cmath>
#include <set>

namespace linsweep {
namespace {

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string setting_name(const nlohmann::json& setting) {
  std::string out;
  if (!setting.is_object()) return out;
  for (auto it = setting.begin(); it != setting.end(); ++it)
    out += (out.empty() ? "" : ",") + it.key() + "=" + text_of(it.value());
  return out;
}

nlohmann::json setting_of(const std::string& provenance) {
  const auto j = nlohmann::json::parse(provenance, nullptr, false);
  if (j.is_object() && j.contains("setting") && j["setting"].is_object()) return j["setting"];
  return nlohmann::json::object();
}

void add_setting_columns(std::map<std::string, Table>& tables, const std::map<std::string, nlohmann::json>& settings) {
  std::map<std::string, ColumnType> keys;  // key -> column type
  for (const auto& [unit, s] : settings)
    for (auto it = s.begin(); it != s.end(); ++it) {
      ColumnType& type = keys.emplace(it.key(), ColumnType::kFloat).first->second;  // float until a non-number
      if (!it.value().is_number()) type = ColumnType::kString;
    }
  if (keys.empty()) return;
  for (auto& [name, t] : tables) {
    const int unit = t.column_index("unit");
    if (unit < 0) continue;
    std::vector<std::pair<std::string, ColumnType>> added{{"setting", ColumnType::kString}};
    for (const auto& [key, type] : keys)
      if (t.column_index(key) < 0) added.emplace_back(key, type);
    if (t.column_index("setting") >= 0) added.erase(added.begin());
    for (const auto& [key, type] : added) t.columns.push_back({key, type, false});
    for (auto& row : t.rows) {
      const auto s = settings.find(std::get<std::string>(row[static_cast<std::size_t>(unit)]));
      for (const auto& [key, type] : added) {
        const nlohmann::json* v = nullptr;
        if (s != settings.end() && key != "setting" && s->second.contains(key)) v = &s->second[key];
        if (key == "setting")
          row.emplace_back(s == settings.end() ? std::string() : setting_name(s->second));
        else if (type == ColumnType::kFloat)
          row.emplace_back(v ? v->get<double>() : std::nan(""));
        else
          row.emplace_back(v ? text_of(*v) : std::string());
      }
    }
  }
}

}  // namespace linsweep
