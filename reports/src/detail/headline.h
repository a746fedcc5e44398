#pragma once
// The report's first screen, in words: what changed between A and B and what it cost (the
// finding), then one line per question (step time, counted events, training quality) with its own
// verdict word, and what the gate does with it. Markdown and HTML print the same headline.

#include <string>
#include <vector>

#include "recompdiag/core/compare.h"

namespace recompdiag::reports::detail {

/// One question the comparison answers, with its own verdict.
struct Question {
  std::string name;      ///< "Step time (steady state)"
  std::string verdict;   ///< "no change", "regression", "untested difference", ...
  std::string css;       ///< The verdict's class: "regression", "improvement", "no_change", "open"
  std::string evidence;  ///< The figures it rests on, in one line.
  std::string term;      ///< The glossary entry (glossary.h) that explains the question.
};

struct Headline {
  std::string title;                 ///< "No change", "Regression", "Inconclusive: ..."
  std::string gate;                  ///< "gate: pass (exit 0)", "gate: fail (exit 1)"
  std::vector<std::string> finding;  ///< What changed and what it cost, by cause.
  std::vector<Question> questions;
};

Headline headline(const Comparison& c);

}  // namespace recompdiag::reports::detail
