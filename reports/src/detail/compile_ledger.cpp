#include "detail/compile_ledger.h"

namespace recompdiag::reports::detail {

std::vector<LedgerColumn> compile_ledger_columns(const Comparison& c) {
  std::vector<LedgerColumn> cols;
  for (const RunAnalysis* r : {&c.a, &c.b}) {
    for (const PhaseAnalysis& p : r->phases) {
      if (!p.counts.has_compile_ledger) continue;
      for (const SectionTotal& s : p.counts.sections.sections()) {
        if (std::string(s.name) == sections::kCompiled) {
          cols.push_back({(r == &c.a ? "A phase " : "B phase ") + std::to_string(p.phase), &s});
        }
      }
    }
  }
  return cols;
}

double ledger_value(const LedgerColumn& column, size_t i) {
  const FieldTotal& t = column.totals->fields[i];
  return kCompiledSection.fields[i].unit == FieldUnit::kLevel ? t.max : t.sum;
}

}  // namespace recompdiag::reports::detail
