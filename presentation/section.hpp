// A summary section: what one experiment contributes to `linsweep tables`, `plot` and the
// report. Experiments register theirs next to their tables (SectionRegistrar); the report and
// figure writers iterate the sections and know no experiment by name.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "presentation/report.hpp"
#include "storage/table.hpp"

namespace linsweep {

class Store;

// A store's tables by name, every registered table present (empty when no unit wrote it).
using TableSet = std::map<std::string, Table>;

// A figure a section made. The report lists the paper's figures first (by `paper`), then the
// others by section, and puts those of one model in that model's part of the report.
struct Figure {
  std::string stem;     // file stem (safe_name'd, without ".svg")
  std::string svg;      // the SVG document
  std::string title;    // one line: the report's heading and contents entry
  std::string caption;  // what it shows and how to read it (may be empty)
  std::string model;    // non-empty: the figure belongs to that model's part of the report
  std::string paper;    // "Fig. 1" … "Fig. 6" for the paper's figures, else empty
  bool folded = false;  // many of a kind and rarely read first: the report shows it behind a summary
};

// What a figure function may read: the tables, and the store for arrays and shards.
struct FigureInput {
  const TableSet& tables;
  const Store& store;
};

// One cell of the report's findings summary: what a section concludes for (model, corpus)
// under the column `topic`, in one line with its interval where the store holds one.
struct Finding {
  std::string model;
  std::string corpus;
  std::string topic;  // the summary's column, e.g. "cheapest layer (all-linear Δ%)"
  std::string text;
};

struct SummarySection {
  std::string name;  // for messages
  int order = 0;     // position in the report: lower first
  // Appends the section's summary tables (none when its tables are empty).
  std::function<void(const TableSet&, std::vector<ReportTable>*)> tables;
  // Appends the section's figures (none without data); may be empty.
  std::function<void(const FigureInput&, std::vector<Figure>*)> figures;
  // Appends the section's findings for the summary at the top of the report; may be empty.
  std::function<void(const TableSet&, std::vector<Finding>*)> findings{};
  // Appends the sentences that open the report (at most one or two per section): each states a
  // result across the store with its number and 95% interval, generated from the tables, and
  // chooses nothing on the eval split (a layer or a gate named in it was chosen on select, an
  // example row by a rule that reads no result). May be empty.
  std::function<void(const TableSet&, std::vector<std::string>*)> headlines{};
};

// Registered sections in report order. Filled before main(), read-only afterwards.
const std::vector<SummarySection>& summary_sections();

struct SectionRegistrar {
  explicit SectionRegistrar(SummarySection section);
};

}  // namespace linsweep
