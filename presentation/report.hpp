// Summary tables from a store's results, rendered as Markdown, CSV and LaTeX.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "storage/table.hpp"

namespace linsweep {

class Store;

// A rendered summary: a title, headers and string cells (already formatted).
struct ReportTable {
  std::string name;   // file stem, e.g. "all_linear_extremes"
  std::string title;  // one line
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::string note;         // footnote (e.g. the mark for intervals containing zero)
  std::string paper{};      // "Table 6" … for the paper's tables (the report says which), else empty
  bool diagnostic = false;  // a check of the method rather than a result (settings side by side):
                            // after every result table, in a section of its own on the page
};

// Every registered summary section's tables (presentation/section.hpp), in report order, from
// the store's committed units (each read once). Sections without rows add nothing; the † note
// stays only on tables that use the mark. A store with a sweep's settings: the sections show one
// setting, and a last, diagnostic table compares them all (presentation/setting_comparison.hpp).
std::vector<ReportTable> build_report(const Store& store);
// The same from tables already read (Store::read_tables).
std::vector<ReportTable> build_report(const std::map<std::string, Table>& tables);

std::string render_markdown(const std::vector<ReportTable>& tables);
std::string render_latex(const std::vector<ReportTable>& tables);
std::string render_csv(const ReportTable& table);

// What write_report wrote.
struct ReportFiles {
  std::string markdown;            // the Markdown of every table
  std::vector<std::string> files;  // tables.md, tables.tex, then csv/<name>.csv per table
  std::size_t tables = 0;
};

// Writes `out_dir`/tables.md, tables.tex and csv/<name>.csv for `tables` (each atomically;
// out_dir and csv/ are created). Throws StorageError when a directory or file cannot be made.
ReportFiles write_report(const std::vector<ReportTable>& tables, const std::string& out_dir);

}  // namespace linsweep
