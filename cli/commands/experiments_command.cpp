// `linsweep experiments`: every experiment a spec may list, and the spec's `runtime` and
// `resources` sections, with their parameters' types, defaults, valid ranges and meaning, from
// the declarations themselves (so always true to this build). docs/spec.md and docs/experiments/
// show the same tables (`--markdown`), and a test holds them equal.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands/commands.hpp"
#include "cli/commands/markdown_cell.hpp"
#include "common/errors.hpp"
#include "experiments/framework/experiment.hpp"
#include "orchestrator/spec/spec_sections.hpp"

namespace linsweep {
namespace {

struct ExperimentsArgs {
  bool json = false;
  std::string markdown;  // an experiment or section whose table to print
};

// An experiment or a section of the spec, as listed.
struct Listed {
  std::string name, doc;
  const std::vector<ParamField>* params;
};

std::vector<Listed> sections() {
  return {{"runtime", "how the work runs", &runtime_schema().fields()},
          {"resources", "what a Slurm job asks for (`linsweep submit`)", &resources_schema().fields()}};
}

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

nlohmann::json listed_json(const Listed& l) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : *l.params)
    params.push_back({{"key", p.key},
                      {"type", param_type_name(p.type)},
                      {"default", p.fallback},
                      {"range", range_json(p.range)},
                      {"doc", p.doc}});
  return {{"name", l.name}, {"doc", l.doc}, {"params", params}};
}

// A default as docs show it: `null` (unset) as "unset", strings bare.
std::string default_text(const nlohmann::json& v) {
  if (v.is_null()) return "unset";
  if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
  return v.dump();
}

// | key | type | default | range | meaning |, one row per parameter.
std::string markdown_table(const Listed& l) {
  std::string out = "| key | type | default | range | meaning |\n|---|---|---|---|---|\n";
  for (const auto& p : *l.params)
    out += "| `" + p.key + "` | " + markdown_cell(param_type_name(p.type)) + " | `" + default_text(p.fallback) +
           "` | " + markdown_cell(p.range.describe()) + " | " + markdown_cell(p.doc) + " |\n";
  return out;
}

int run_experiments(const ExperimentsArgs& a) {
  std::vector<Listed> experiments;
  for (const ExperimentDef* e : ExperimentRegistry::instance().experiments())
    experiments.push_back({e->name, e->doc, &e->params});
  if (!a.markdown.empty()) {
    std::string known;
    for (const auto& group : {experiments, sections()})
      for (const Listed& l : group) {
        if (l.name == a.markdown) {
          std::fputs(markdown_table(l).c_str(), stdout);
          return 0;
        }
        known += (known.empty() ? "" : ", ") + l.name;
      }
    throw InputError("experiments --markdown: '" + a.markdown +
                     "' is neither an experiment nor a section (known: " + known + ")");
  }
  if (a.json) {
    nlohmann::json j = {{"experiments", nlohmann::json::array()}, {"sections", nlohmann::json::array()}};
    for (const Listed& l : experiments) j["experiments"].push_back(listed_json(l));
    for (const Listed& l : sections()) j["sections"].push_back(listed_json(l));
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  for (const Listed& l : experiments) {
    std::printf("%s: %s\n", l.name.c_str(), l.doc.c_str());
    for (const auto& p : *l.params)
      std::printf("  %-18s %s, default %s, %s: %s\n", p.key.c_str(), param_type_name(p.type).c_str(),
                  p.fallback.dump().c_str(), p.range.describe().c_str(), p.doc.c_str());
  }
  return 0;
}

}  // namespace

void add_experiments_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<ExperimentsArgs>();
  CLI::App* cmd = root.add_subcommand(
      "experiments", "List the experiments a spec may request, with every parameter's type, default and valid range.");
  cmd->add_flag("--json", args->json,
                "{experiments: [{name, doc, params: [{key, type, default, range, doc}]}], sections: [runtime, "
                "resources, alike]}");
  cmd->add_option("--markdown", args->markdown,
                  "print the parameter table of one experiment, or of the section runtime or resources, as the "
                  "docs show it")
      ->excludes("--json");
  cmd->footer("Example: linsweep experiments --json | python3 -m json.tool");
  cmd->callback([args, action] { *action = [args] { return run_experiments(*args); }; });
}

}  // namespace linsweep
