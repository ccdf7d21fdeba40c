// `linsweep experiments`: every experiment a spec may list, with its parameters' types,
// defaults, valid ranges and meaning, from the registry (so always true to this build).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "experiments/framework/experiment.hpp"

namespace linsweep {
namespace {

nlohmann::json range_json(const ParamRange& r) {
  nlohmann::json j = nlohmann::json::object();
  if (r.min) j["min"] = {{"value", r.min->value}, {"open", r.min->open}};
  if (r.max) j["max"] = {{"value", r.max->value}, {"open", r.max->open}};
  if (!r.choices.empty()) j["choices"] = r.choices;
  if (r.non_empty) j["non_empty"] = true;
  if (r.distinct) j["distinct"] = true;
  j["text"] = r.describe();
  return j;
}

int run_experiments(bool json) {
  nlohmann::json out = nlohmann::json::array();
  for (const ExperimentDef* e : ExperimentRegistry::instance().experiments()) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : e->params)
      params.push_back({{"key", p.key},
                        {"type", param_type_name(p.type)},
                        {"default", p.fallback},
                        {"range", range_json(p.range)},
                        {"doc", p.doc}});
    out.push_back({{"name", e->name}, {"doc", e->doc}, {"params", params}});
  }
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  for (const auto& e : out) {
    std::printf("%s: %s\n", e["name"].get<std::string>().c_str(), e["doc"].get<std::string>().c_str());
    for (const auto& p : e["params"])
      std::printf("  %-18s %s, default %s, %s: %s\n", p["key"].get<std::string>().c_str(),
                  p["type"].get<std::string>().c_str(), p["default"].dump().c_str(),
                  p["range"]["text"].get<std::string>().c_str(), p["doc"].get<std::string>().c_str());
  }
  return 0;
}

}  // namespace

void add_experiments_command(CLI::App& root, CommandAction* action) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = root.add_subcommand(
      "experiments", "List the experiments a spec may request, with every parameter's type, default and valid range.");
  cmd->add_flag("--json", *json, "one JSON list of {name, doc, params: [{key, type, default, range, doc}]}");
  cmd->footer("Example: linsweep experiments --json | python3 -m json.tool");
  cmd->callback([json, action] { *action = [json] { return run_experiments(*json); }; });
}

}  // namespace linsweep
