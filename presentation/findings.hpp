// The findings summary that opens the report: one row per (model, corpus), one column per
// topic, each cell a registered section's one-line conclusion (presentation/section.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "presentation/report.hpp"
#include "presentation/section.hpp"

namespace linsweep {

// Every registered section's findings from `tables`, in section order.
std::vector<Finding> collect_findings(const TableSet& tables);

// The report opens with at most this many sentences.
inline constexpr std::size_t kMaxHeadlines = 6;

// The registered sections' opening sentences (SummarySection::headlines), in section order, at
// most kMaxHeadlines (the sections first in report order keep theirs).
std::vector<std::string> collect_headlines(const TableSet& tables);

// The findings as one table: rows (model, corpus) in name order, columns in the order their
// topic first appears, "–" where a section has nothing for that row. No rows when `findings`
// is empty. Pure; never throws but std::bad_alloc.
ReportTable findings_table(const std::vector<Finding>& findings);

}  // namespace linsweep
