// The registry of summary sections.
#include "presentation/section.hpp"

#include <utility>

#include "common/registry.hpp"

namespace linsweep {

const std::vector<SummarySection>& summary_sections() { return registered<SummarySection>(); }

SectionRegistrar::SectionRegistrar(SummarySection section) {
  register_once(
      registered<SummarySection>(), std::move(section), "summary section",
      [](const SummarySection& s) { return s.name; },
      [](const SummarySection& a, const SummarySection& b) {
        return a.order != b.order ? a.order < b.order : a.name < b.name;
      });
}

}  // namespace linsweep
