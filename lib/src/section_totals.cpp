#include "recompdiag/core/section_totals.h"

#include <algorithm>

#include "recompdiag/core/record_fields.h"

namespace recompdiag {

SectionTotals::SectionTotals() {
  for_each_section([&](const auto& section) {
    SectionTotal total;
    total.name = section.name;
    for (const auto& f : section) {
      FieldTotal field;
      field.name = f.name;
      total.fields.push_back(field);
    }
    sections_.push_back(std::move(total));
  });
}

void SectionTotals::add(const StepRecord& step) {
  std::size_t k = 0;
  for_each_section([&](const auto& section) {
    SectionTotal& total = sections_[k++];
    const auto* values = section.of(step);
    if (values == nullptr) return;
    ++total.steps;
    for (std::size_t i = 0; i < section.size; ++i) {
      const double v = field_value(*values, section.fields[i]);
      FieldTotal& t = total.fields[i];
      t.sum += v;
      t.max = total.steps == 1 ? v : std::max(t.max, v);
      t.last = v;
    }
  });
}

}  // namespace recompdiag
