#pragma once
/// \file
/// torch.compile's work in one run, as findings a report names first: each frame that recompiled,
/// with the guards that failed and their known causes, the recompile limit reached and the steps
/// that then ran eagerly, the graph breaks by reason and site, and the compile caches' outcomes;
/// and, for two runs, what differs between them frame by frame (the compile diff). Facts only,
/// read from a run's events (the Python package's `compile`, `graph_break` and recompile-limit
/// `note` events) and its `compiled` sections; the reports word them. Pure; no LibTorch.
///
///     const ColumnarRun run = read_columnar_run("run.jsonl");
///     const RunAnalysis analysis = analyze_run(run);       // analysis.compile holds these
///     for (const FrameFinding& f : analysis.compile.frames) {
///       std::cout << f.function << " recompiled " << f.recompiles << " times\n";
///     }

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace recompdiag {

struct ColumnarRun;
struct PhaseAnalysis;

/// A guard that kept failing on a frame: its recompiles grouped by what it checks.
struct GuardFinding {
  /// What the guard checks, without the values that changed: "tensor 'kwargs['input_ids']' size
  /// mismatch at index 1", "L['scale']" (of "L['scale'] == 0.5"). The key of the grouping.
  std::string subject;
  /// The newest failure as dynamo wrote it, without its "F/C: " prefix and its comments:
  /// "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 51, actual 45".
  std::string newest;
  /// The source line dynamo quoted beside the guard ("loss = scale * mse"), and where it is
  /// ("train.py:18 in step"); empty where dynamo quoted none.
  std::string source;
  std::string site;
  /// The known cause's key (recompile_cause.h: "new_size", "python_number"), or empty.
  std::string cause;
  int64_t recompiles = 0;  ///< Recompiles of the frame whose newest failure was this guard.
  int64_t first_step = 0;
  int64_t last_step = 0;
};

/// A frame (a Python function torch.compile compiled) that recompiled.
struct FrameFinding {
  std::string function;      ///< "forward"
  std::string file;          ///< As the run recorded it (a path)
  int64_t line = 0;          ///< The function's first line
  int64_t recompiles = 0;    ///< Compile events of the frame: each a recompile (a guard failed).
  int64_t after_warmup = 0;  ///< Of which at or after the end of their phase's warm-up.
  int64_t first_step = 0;
  int64_t last_step = 0;
  /// Its compiles at its last recompile, as dynamo counts its cache entries (the first compile
  /// included), and the limit at which dynamo stops compiling it (0 when the run did not say).
  int64_t compiles = 0;
  int64_t recompile_limit = 0;
  /// The frame reached its limit: dynamo's recompile-limit note names it, or its compiles reached
  /// the limit. From then on the calls that fail its guards run eagerly.
  bool limit_reached = false;
  /// Time the steps it recompiled in spent compiling (the step's `compile_ms`, shared evenly
  /// between the frames recompiled in one step), in seconds.
  double compile_s = 0.0;
  /// The guards that failed, most recompiles first.
  std::vector<GuardFinding> guards;
};

/// Calls of compiled frames that ran eagerly: the recompile limit's silent cliff. Counted from
/// dynamo's recompile-limit note where the run has one, else from the first eager call after its
/// phase's warm-up (a frame dynamo skips during the first compiles is no cliff). Eager calls are
/// counted on the steps the torch.compile probe observed (sampled steps).
struct EagerFallback {
  int64_t first_step = 0;      ///< The first step counted from (the note's, or the first call's).
  int64_t steps = 0;           ///< Observed steps from first_step on with eager calls.
  int64_t observed_steps = 0;  ///< Observed steps from first_step on.
  int64_t calls = 0;           ///< Eager calls in all on those steps.
  /// The frame dynamo's recompile-limit note names, and the limit; empty and 0 without a note.
  std::string function;
  std::string file;
  int64_t line = 0;
  int64_t limit = 0;
  int64_t limit_step = -1;  ///< The step of the note; -1 without one.
};

/// A graph break reason (dynamo's first line), with its hint and where in user code it broke.
struct GraphBreakFinding {
  std::string reason;  ///< "logging.Logger method not supported for non-export cases"
  std::string hint;    ///< Dynamo's first hint; empty when it gave none.
  /// Where it broke, "file.py:42 in fn", each once, most breaks first; empty where the run did not
  /// record sites (a package before 0.7).
  std::vector<std::string> sites;
  int64_t count = 0;  ///< Breaks with this reason.
  int64_t first_step = 0;
};

/// What a compile cache did over the run.
enum class CacheOutcome {
  kUnused,  ///< No lookup.
  kCold,    ///< Misses only: the run compiled what the cache did not have.
  kWarm,    ///< Hits only.
  kMixed,   ///< Hits and misses.
};

/// "unused", "cold", "warm" or "mixed".
const char* to_string(CacheOutcome outcome);

/// One compile cache's lookups over the run.
struct CacheFinding {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t bypasses = 0;
  CacheOutcome outcome = CacheOutcome::kUnused;
};

/// A compile of another compiler (TorchScript's), grouped by the reason its events gave.
struct OtherCompileFinding {
  std::string compiler;  ///< "torchscript", as the event's detail says ("" when it does not).
  std::string reason;
  int64_t count = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
};

/// torch.compile's findings in one run.
struct CompileFindings {
  /// The run has `compiled` sections: its torch.compile probe ran. Without them every count below
  /// is zero because nothing was seen, not because nothing compiled.
  bool observed = false;
  /// The run has the compile ledger (torch's own counters, the Python package's).
  bool ledger = false;
  int64_t compiles = 0;    ///< Compiled regions first run (kProbeCounts' dynamo_compiles).
  int64_t recompiles = 0;  ///< Of which a frame's second or later compile.
  double compile_s = 0.0;  ///< Compiling in all (`compile_ms` of every step), seconds.
  double run_s = 0.0;      ///< The run's steps' wall time, seconds (compile time is in it).
  /// Frames that recompiled, the costliest (compile time, then recompiles) first.
  std::vector<FrameFinding> frames;
  std::optional<EagerFallback> eager;
  std::vector<GraphBreakFinding> graph_breaks;      ///< Most breaks first.
  CacheFinding fx_cache;                            ///< Inductor's FX-graph cache.
  CacheFinding aot_cache;                           ///< AOTAutograd's cache.
  std::vector<OtherCompileFinding> other_compiles;  ///< Most compiles first.
};

/// The findings of `run`, whose phases (warm-up) `phases` holds (analyze_run()'s). Never throws
/// on a valid run: an event whose detail lacks a field is read with what it has.
CompileFindings find_compile_findings(const ColumnarRun& run,
                                      const std::vector<PhaseAnalysis>& phases);

/// The subject of a guard failure (GuardFinding::subject): `guard` without its "F/C: " prefix, its
/// comments and the values that changed. Pure.
std::string guard_subject(const std::string& guard);

/// One frame compared between two runs: what each side recompiled, the guards that failed on one
/// side only, and whether each reached its limit.
struct FrameDiff {
  std::string function;
  std::string file;
  int64_t line = 0;
  int64_t recompiles_a = 0;
  int64_t recompiles_b = 0;
  double compile_s_a = 0.0;
  double compile_s_b = 0.0;
  bool limit_a = false;
  bool limit_b = false;
  /// Guards (their subjects) that failed on one side only, with that side's finding.
  std::vector<GuardFinding> only_a;
  std::vector<GuardFinding> only_b;
};

/// What torch.compile did differently in two runs (A the baseline).
struct CompileDiff {
  /// Frames that recompiled on either side and differ (in recompiles, guards or limit), the
  /// largest difference in compile time first.
  std::vector<FrameDiff> frames;
  /// Graph-break reasons a side has more of than the other (or alone), with that side's finding.
  std::vector<GraphBreakFinding> breaks_only_a;
  std::vector<GraphBreakFinding> breaks_only_b;
  /// The caches' outcomes, where they differ.
  std::optional<std::pair<CacheOutcome, CacheOutcome>> fx_cache;
  std::optional<std::pair<CacheOutcome, CacheOutcome>> aot_cache;
  /// Eager fallbacks, where one side has them and the other not (or fewer steps).
  std::optional<EagerFallback> eager_a;
  std::optional<EagerFallback> eager_b;

  /// Nothing differs.
  bool empty() const {
    return frames.empty() && breaks_only_a.empty() && breaks_only_b.empty() && !fx_cache &&
           !aot_cache && !eager_a && !eager_b;
  }
};

/// The compile diff of two runs' findings. Pure.
CompileDiff diff_compile_findings(const CompileFindings& a, const CompileFindings& b);

}  // namespace recompdiag
