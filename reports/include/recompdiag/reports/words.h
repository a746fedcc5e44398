#pragma once
/// \file
/// The facts of an analysis and of a comparison in sentences: a probe signal, a slow stretch and
/// a job's straggler; a count that changed, what the counted events cost, why a phase got its
/// verdict, and the verdict of the whole. The core library finds the facts; these word them, and
/// every renderer, the CLI and the benches print these words. None throws: a name this version
/// does not know (a run or comparison of another version) is worded as itself.
///
///     const Comparison c = compare_runs(read_run_file("a.jsonl"), read_run_file("b.jsonl"));
///     std::cout << reports::summary(c) << "\n";
///     for (const PhaseComparison& p : c.phases) std::cout << reports::phase_reason(p, c) << "\n";

#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/straggler.h"

namespace recompdiag::reports {

/// A probe signal: "2 JIT compiles (reason: phase 2: loss weights baked into the graph)", "Adam
/// state reset", "12 extra cross-device copies (4.2 MB)", "phase 2 start".
std::string signal_words(const Signal& signal);

/// "steps 50-52 ran 38x the steady median (+0.21 s); 2 JIT compiles (reason: ...), Adam state
/// reset": where, how slow, and its four strongest signals.
std::string stretch_sentence(const SlowStretch& stretch);

/// What a job's straggler did in its stretch: "recompiled (reason \"...\", 45 ms)", "built 3 JIT
/// plan(s)", "raised host_sync", ...; empty without a straggler.
std::string straggler_cause(const StragglerFinding& finding);

/// "steps 300-302: rank 1 recompiled (...); ranks 0, 2 waited 41-44 ms in all-reduce", or that
/// every rank was slow alike.
std::string straggler_sentence(const StragglerFinding& finding);

/// The change in words, without side or phase: "12 more JIT compiles", "1 fewer JIT compile".
std::string count_change(const CountChange& change);

/// "B: 12 more JIT compiles in phase 2 (0 -> 12)"; a side's range where its runs differ
/// ("0-2 -> 12").
std::string count_change_line(const CountChange& change);

/// What a counted cost prices (CountedCost::cause_counts, worded from the comparison's count
/// changes in its phase): "5 more JIT compiles and 50 more JIT plan builds".
std::string cost_causes(const CountedCost& cost, const Comparison& comparison);

/// "B's 5 more JIT compiles cost 0.31 s (95% CI 0.25-0.37 s, p = 0.002), 18.0% of A's phase 2
/// (1.72 s)", with what the compilers' own clocks measured where that bounds it, and a note where
/// the difference runs against the counts. Empty for a cost of per-step counts only (no count is
/// costed: the steady test prices them).
std::string counted_cost_line(const CountedCost& cost, const Comparison& comparison);

/// Why the phase got its verdict, with the figures it rests on: "slower beyond the 5.0%
/// threshold: B/A 1.302 (95% CI 1.25-1.36, p < 0.001 Holm; 18 vs 18 blocks of steps, ...)".
std::string phase_reason(const PhaseComparison& phase, const Comparison& comparison);

/// The timing verdict in one sentence: the deciding phase (Comparison::deciding_phase) and why,
/// or the `--fail-on` count that fails the gate, or that every phase is proven within the
/// threshold.
std::string time_summary(const Comparison& comparison);

/// The training quality in one sentence: "training quality: regression over 3 seeded pairs:
/// final loss +12.0% (p=0.02); quality does not gate; final loss 0.3 -> 0.336 (+12.0%); steps to
/// recover the pre-switch loss 40 -> 95".
std::string convergence_summary(const ConvergenceComparison& convergence);

/// A caveat of the comparison in one sentence: "few steady steps (fewer than 20), the verdict is
/// weak: phase 2 17 and 12 steady steps in A and B".
std::string caveat_words(const Caveat& caveat, const Comparison& comparison);

/// Every caveat of the comparison in words, in order: what the reports list as warnings.
std::vector<std::string> warnings(const Comparison& comparison);

/// time_summary(), and the training quality (convergence_summary()) where B's training changed.
std::string summary(const Comparison& comparison);

}  // namespace recompdiag::reports
