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

void SectionTotals::add_run(const StepRecord& first, const StepRecord& stride, int64_t n) {
  if (n <= 0) return;
  const auto count = static_cast<double>(n);
  std::size_t k = 0;
  for_each_section([&](const auto& section) {
    SectionTotal& total = sections_[k++];
    const auto* values = section.of(first);
    if (values == nullptr) return;
    const auto& steps = stride.*section.record;
    const bool had = total.steps > 0;
    total.steps += n;
    for (std::size_t i = 0; i < section.size; ++i) {
      const double v0 = field_value(*values, section.fields[i]);
      const double dv = steps ? field_value(*steps, section.fields[i]) : 0.0;
      const double v_last = v0 + dv * (count - 1.0);
      FieldTotal& t = total.fields[i];
      t.sum += v0 * count + dv * (count * (count - 1.0) / 2.0);
      const double most = std::max(v0, v_last);
      t.max = had ? std::max(t.max, most) : most;
      t.last = v_last;
    }
  });
}

}  // namespace recompdiag
