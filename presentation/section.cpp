// The registry of summary sections.
#include "presentation/section.hpp"

#include <algorithm>
#include <stdexcept>

namespace linsweep {
namespace {

std::vector<SummarySection>& registered() {
  static std::vector<SummarySection> sections;
  return sections;
}

}  // namespace

const std::vector<SummarySection>& summary_sections() { return registered(); }

SectionRegistrar::SectionRegistrar(SummarySection section) {
  auto& all = registered();
  for (const auto& s : all)
    if (s.name == section.name) throw std::logic_error("summary section '" + section.name + "' registered twice");
  const auto at =
      std::upper_bound(all.begin(), all.end(), section, [](const SummarySection& a, const SummarySection& b) {
        return a.order != b.order ? a.order < b.order : a.name < b.name;
      });
  all.insert(at, std::move(section));
}

}  // namespace linsweep
