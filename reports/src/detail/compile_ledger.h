#pragma once
// torch.compile's ledger as the renderers show it: one column per side and phase that has it,
// and each ledger field's value there (a level's largest, a count's or a time's sum).

#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/record_fields.h"

namespace recompdiag::reports::detail {

struct LedgerColumn {
  std::string title;            // "A phase 1"
  const SectionTotal* totals;   // the compiled section's totals there
};

// The columns of the phases whose steps carry the ledger, A's then B's; empty when none does.
std::vector<LedgerColumn> compile_ledger_columns(const Comparison& c);

// Field `i` of the compiled section (kCompiledLedgerFirst < i) in a column.
double ledger_value(const LedgerColumn& column, size_t i);

}  // namespace recompdiag::reports::detail
