// The findings summary: sections' conclusions pivoted into a (model, corpus) × topic table.
#include "presentation/findings.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace linsweep {

std::vector<Finding> collect_findings(const TableSet& tables) {
  std::vector<Finding> out;
  for (const auto& section : summary_sections())
    if (section.findings) section.findings(tables, &out);
  return out;
}

std::vector<std::string> collect_headlines(const TableSet& tables) {
  std::vector<std::string> out;
  for (const auto& section : summary_sections())
    if (section.headlines) section.headlines(tables, &out);
  if (out.size() > kMaxHeadlines) out.resize(kMaxHeadlines);
  return out;
}

ReportTable findings_table(const std::vector<Finding>& findings) {
  ReportTable t{"findings", "Findings: per model and corpus, with 95% intervals", {"model", "corpus"}, {}, ""};
  std::vector<std::string> topics;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> cells;
  for (const auto& f : findings) {
    if (std::find(topics.begin(), topics.end(), f.topic) == topics.end()) topics.push_back(f.topic);
    cells[{f.model, f.corpus}][f.topic] = f.text;
  }
  t.headers.insert(t.headers.end(), topics.begin(), topics.end());
  for (const auto& [key, by_topic] : cells) {
    std::vector<std::string> row{key.first, key.second};
    for (const auto& topic : topics) {
      const auto it = by_topic.find(topic);
      row.push_back(it == by_topic.end() ? "–" : it->second);
    }
    t.rows.push_back(std::move(row));
  }
  t.note =
      "Intervals: 95% bootstrap intervals over eval windows (AUCs: over hold-out rows); a wall-clock saving's range "
      "is over its repeats. † the interval contains zero. \"beats\" and \"worse\" count only intervals that exclude "
      "zero; layers and gates are chosen on the select split, never on the eval split.";
  return t;
}

}  // namespace linsweep
