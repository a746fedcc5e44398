#pragma once
/// \file
/// torch.compile's findings in words (core/compile_findings.h has the facts): why a run
/// recompiled, cause by cause (the frames, the guard, the cause, the fix), the eager cliff, the
/// graph breaks, the caches; and what two runs compiled differently. One sentence per cause, not
/// one per recompile. What the single-run report, the first screen of `compare` and `ab`, and the
/// compile diff print. None throws.
///
///     const RunAnalysis r = analyze_run(read_columnar_run("run.jsonl"));
///     for (const std::string& line : reports::compile_finding_lines(r.compile)) {
///       std::cout << "- " << line << "\n";
///     }

#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/compile_findings.h"

namespace recompdiag::reports {

/// A source file as a report names it: the path under site-packages/ or dist-packages/ where it
/// is one ("transformers/utils/generic.py"), else its last two components ("src/train.py").
std::string short_path(const std::string& file);

/// "`forward` (train.py:12)": a frame by its function and where it starts.
std::string frame_name(const std::string& function, const std::string& file, int64_t line);

/// One sentence per cause of `findings`' recompiles: the frames that recompiled for it (the one
/// that recompiled most first, with its count and whether it reached its limit), the newest
/// guard failure, what it cost, the cause and the fix. "A new size: `wrapper`
/// (transformers/utils/generic.py:1075) recompiled 8 times and reached its recompile limit (8), and
/// 4 other frames once each; guard `tensor 'kwargs['input_ids']' size mismatch at index 1. expected
/// 51, actual 45`; 7.9 s compiling, 35.2% of the run. Cause: a tensor came with a new size (a
/// sequence length, an uneven last batch). Fix: mark the changing dimension dynamic ...".
std::vector<std::string> recompile_cause_lines(const CompileFindings& findings);

/// "From step 11 compiled frames ran eagerly on 85 steps (86 calls): `wrapper` (...) reached the
/// recompile limit (8) at step 11, and dynamo stopped compiling it without an error."
std::string eager_fallback_sentence(const EagerFallback& eager);

/// "Graph break (3, first at step 0): logging.Logger method not supported for non-export cases,
/// at modeling_gpt2.py:312 in forward; hint: ..."
std::string graph_break_sentence(const GraphBreakFinding& g);

/// The compile caches' outcomes: "Inductor's FX-graph cache cold (12 misses); AOTAutograd's warm
/// (4 hits)"; empty when neither was used.
std::string cache_sentence(const CompileFindings& findings);

/// "TorchScript compiled 2 times (steps 0-30): phase 2: loss weights [0.7,0.3] -> [0.99,0.01]".
std::string other_compile_sentence(const OtherCompileFinding& c);

/// Every finding of `findings` in the order a report names them: the recompile causes, the eager
/// cliff, the graph breaks, the caches, the other compilers' compiles.
std::vector<std::string> compile_finding_lines(const CompileFindings& findings);

/// An alert rule over a run: "`host_syncs` fired at 2 steps (11 and 75): 30 host sync(s) at step
/// 11 ..." (the first message, whole).
std::string alert_group_sentence(const AlertGroup& group);

/// One frame of the compile diff: "`wrapper` (generic.py:1075): A recompiled 0 times, B 8 times
/// (B reached its limit); guards that failed in B only: `tensor ... size mismatch at index 1`
/// (a new size)".
std::string frame_diff_sentence(const FrameDiff& frame);

/// The compile diff of a comparison in sentences: the frames, then the graph breaks, caches and
/// eager fallbacks that differ. Empty when nothing differs.
std::vector<std::string> compile_diff_lines(const CompileDiff& diff);

/// What the first screen of a comparison names of why B differs: for each side that recompiled,
/// fell back to eager or broke its graph more, one sentence per cause ("B: ..."); empty when the
/// two compiled alike.
std::vector<std::string> compile_cause_lines(const Comparison& comparison);

/// How busy the GPU was in each phase's steady state (kernel time over step time, from CUPTI), A
/// against B: "GPU busy (kernel time over step time, steady state): phase 1 A 82.0%, B 80.1%;
/// phase 2 A 40.2%, B 79.9%". Empty where neither run has CUPTI's records.
std::string gpu_busy_sentence(const Comparison& comparison);

}  // namespace recompdiag::reports
