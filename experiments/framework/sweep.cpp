// Layer selections and look-ups of a sweep.
#include "experiments/framework/sweep.hpp"

#include <algorithm>

namespace linsweep {

std::vector<std::int64_t> LayerSelection::resolve(std::int64_t n) const {
  std::vector<std::int64_t> out;
  if (all) {
    for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (const auto& [a, b] : ranges)
    for (std::int64_t i = a; i <= b && i < n; ++i) out.push_back(i);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

nlohmann::json LayerSelection::to_json() const {
  if (all) return "all";
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [a, b] : ranges)
    out.push_back(a == b ? nlohmann::json(a) : nlohmann::json(std::to_string(a) + "-" + std::to_string(b)));
  return out;
}

LayerSelection LayerSelection::from_json(const nlohmann::json& j) {
  LayerSelection sel;
  if (j.is_string() && j.get<std::string>() == "all") return sel;
  sel.all = false;
  for (const auto& x : j) {
    if (x.is_number_integer()) {
      sel.ranges.emplace_back(x.get<std::int64_t>(), x.get<std::int64_t>());
    } else {
      const std::string r = x.get<std::string>();
      const auto dash = r.find('-');
      sel.ranges.emplace_back(std::stoll(r.substr(0, dash)), std::stoll(r.substr(dash + 1)));
    }
  }
  return sel;
}

const ModelSpec* Sweep::model(const std::string& name) const {
  for (const auto& m : models)
    if (m.name == name) return &m;
  return nullptr;
}

const CorpusSpec* Sweep::corpus(const std::string& name) const {
  for (const auto& c : corpora)
    if (c.name == name) return &c;
  return nullptr;
}

const nlohmann::json* Sweep::requested(const std::string& experiment) const {
  auto it = experiments.find(experiment);
  return it == experiments.end() ? nullptr : &it->second;
}

}  // namespace linsweep
