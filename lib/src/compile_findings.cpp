// torch.compile's findings in one run (frames that recompiled, the eager cliff, graph breaks,
// caches) from its events and compiled sections, and the compile diff of two runs.
#include "recompdiag/core/compile_findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/recompile_cause.h"
#include "recompdiag/core/step_columns.h"

namespace recompdiag {

namespace {

std::string string_field(const nlohmann::json& detail, const char* key) {
  if (!detail.is_object()) return {};
  const auto it = detail.find(key);
  return it != detail.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t integer_field(const nlohmann::json& detail, const char* key) {
  if (!detail.is_object()) return 0;
  const auto it = detail.find(key);
  return it != detail.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

bool is_dynamo(const EventRecord& e) { return string_field(e.detail, "compiler") == "dynamo"; }

// " # " splits dynamo's guard line into the expression, the source line and its site.
std::vector<std::string> comment_parts(const std::string& guard) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = guard.find(" # ", start)) != std::string::npos; start = at + 3) {
    parts.push_back(guard.substr(start, at - start));
  }
  parts.push_back(guard.substr(start));
  for (std::string& p : parts) {
    while (!p.empty() && p.back() == ' ') p.pop_back();
    while (!p.empty() && p.front() == ' ') p.erase(p.begin());
  }
  return parts;
}

// The expression without its "F/C: " prefix (a compile id, as "0/3: ").
std::string without_compile_id(std::string e) {
  const size_t colon = e.find(": ");
  if (colon != std::string::npos && colon > 0 && colon < 12 &&
      e.find_first_not_of("0123456789/", 0) == colon) {
    e.erase(0, colon + 2);
  }
  return e;
}

// The index of step number `step` in the run (the first step at or after it), or size().
size_t index_of_step(const StepColumns& steps, int64_t step) {
  size_t lo = 0, hi = steps.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (steps.step(mid) < step)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Whether `step` is at or after the end of its phase's warm-up.
bool after_warmup(const std::vector<PhaseAnalysis>& phases, int phase, int64_t step) {
  for (const PhaseAnalysis& p : phases) {
    if (p.phase == phase) return step >= p.first_step + p.warmup_steps;
  }
  return false;
}

// The torch.compile sums of the run's compiled sections.
void read_compiled_sections(const StepColumns& steps, CompileFindings& out) {
  steps.for_each_run(
      0, steps.size(), [&](const StepRecord& first, const StepRecord& stride, size_t n) {
        if (!first.compiled) return;
        out.observed = true;
        const CompiledStats& c = first.compiled.value();
        const CompiledStats& d = stride.compiled ? stride.compiled.value() : CompiledStats{};
        const auto sum = [&](int64_t a, int64_t s) {
          return a * static_cast<int64_t>(n) + s * static_cast<int64_t>(n * (n - 1) / 2);
        };
        out.ledger = out.ledger || c.ledger;
        out.compiles += sum(c.compiles, d.compiles);
        out.recompiles += sum(c.recompiles, d.recompiles);
        out.compile_s += c.compile_ms * static_cast<double>(n) / 1000.0;
        out.fx_cache.hits += sum(c.fx_cache_hits, d.fx_cache_hits);
        out.fx_cache.misses += sum(c.fx_cache_misses, d.fx_cache_misses);
        out.fx_cache.bypasses += sum(c.fx_cache_bypasses, d.fx_cache_bypasses);
        out.aot_cache.hits += sum(c.aot_cache_hits, d.aot_cache_hits);
        out.aot_cache.misses += sum(c.aot_cache_misses, d.aot_cache_misses);
        out.aot_cache.bypasses += sum(c.aot_cache_bypasses, d.aot_cache_bypasses);
      });
  for (size_t i = 0; i < steps.size(); ++i) out.run_s += steps.wall_ms(i) / 1000.0;
}

// The observed steps with eager calls of compiled frames, from the step `from` on (the limit's
// note), or from the first such step after its phase's warm-up when `from` is negative. None when
// no step from there called a compiled frame eagerly and there is no note.
std::optional<EagerFallback> eager_fallback(const StepColumns& steps,
                                            const std::vector<PhaseAnalysis>& phases,
                                            std::optional<EagerFallback> note) {
  std::optional<EagerFallback> out = note;
  size_t index = 0;  // of the run's first step: the runs cover the steps in order
  steps.for_each_run(0, steps.size(),
                     [&](const StepRecord& first, const StepRecord& stride, size_t n) {
                       const size_t start = index;
                       index += n;
                       if (!first.compiled || !first.compiled->sampled) return;
                       const int64_t calls0 = first.compiled->eager_fallbacks;
                       const int64_t per = stride.compiled ? stride.compiled->eager_fallbacks : 0;
                       for (size_t k = 0; k < n; ++k) {
                         const int64_t step = steps.step(start + k);
                         const int64_t calls = calls0 + per * static_cast<int64_t>(k);
                         if (!out) {
                           if (calls <= 0 || !after_warmup(phases, steps.phase(start + k), step))
                             continue;
                           out.emplace();
                           out->first_step = step;
                         }
                         if (step < out->first_step) continue;
                         ++out->observed_steps;
                         if (calls > 0) {
                           ++out->steps;
                           out->calls += calls;
                         }
                       }
                     });
  return out;
}

CacheOutcome outcome_of(const CacheFinding& c) {
  if (c.hits > 0 && c.misses > 0) return CacheOutcome::kMixed;
  if (c.hits > 0) return CacheOutcome::kWarm;
  if (c.misses > 0) return CacheOutcome::kCold;
  return CacheOutcome::kUnused;
}

// Dynamo's recompile-limit note: "torch._dynamo hit config.recompile_limit (8)\n function:
// 'wrapper' (/path/generic.py:1075)\n last reason: ...".
void read_limit_note(const EventRecord& e, EagerFallback& eager) {
  const std::string message = string_field(e.detail, "message");
  eager.limit_step = e.step;
  const size_t open = message.find("limit (");
  if (open != std::string::npos) {
    eager.limit = std::atoll(message.c_str() + open + 7);
  }
  const size_t fn = message.find("function: '");
  if (fn == std::string::npos) return;
  const size_t fn_end = message.find('\'', fn + 11);
  if (fn_end == std::string::npos) return;
  eager.function = message.substr(fn + 11, fn_end - fn - 11);
  const size_t paren = message.find(" (", fn_end);
  const size_t close = message.find(')', paren == std::string::npos ? fn_end : paren);
  if (paren == std::string::npos || close == std::string::npos) return;
  const std::string where = message.substr(paren + 2, close - paren - 2);
  const size_t colon = where.rfind(':');
  if (colon == std::string::npos) return;
  eager.file = where.substr(0, colon);
  eager.line = std::atoll(where.c_str() + colon + 1);
}

bool is_limit_note(const EventRecord& e) {
  if (e.kind != EventKind::kNote || !is_dynamo(e)) return false;
  const std::string message = string_field(e.detail, "message");
  return message.find("recompile_limit") != std::string::npos ||
         message.find("cache_size_limit") != std::string::npos;
}

// One frame's recompile event into its finding.
void add_recompile(const EventRecord& e, const std::vector<PhaseAnalysis>& phases,
                   FrameFinding& f) {
  if (f.recompiles == 0) f.first_step = e.step;
  ++f.recompiles;
  f.last_step = e.step;
  if (after_warmup(phases, e.phase, e.step)) ++f.after_warmup;
  f.compiles = std::max(f.compiles, integer_field(e.detail, "frame_compiles"));
  f.recompile_limit = std::max(f.recompile_limit, integer_field(e.detail, "recompile_limit"));
  std::string newest = "unknown guard failure";
  const auto failures = e.detail.is_object() ? e.detail.find("guard_failures") : e.detail.end();
  if (e.detail.is_object() && failures != e.detail.end() && failures->is_array() &&
      !failures->empty() && failures->front().is_string()) {
    newest = failures->front().get<std::string>();
  }
  const std::vector<std::string> parts = comment_parts(newest);
  const std::string subject = guard_subject(newest);
  auto g = std::find_if(f.guards.begin(), f.guards.end(),
                        [&](const GuardFinding& x) { return x.subject == subject; });
  if (g == f.guards.end()) {
    f.guards.push_back({});
    g = f.guards.end() - 1;
    g->subject = subject;
    g->first_step = e.step;
  }
  ++g->recompiles;
  g->last_step = e.step;
  g->newest = without_compile_id(parts.front());
  g->source = parts.size() > 1 ? parts[1] : std::string();
  g->site = parts.size() > 2 ? parts[2] : std::string();
  std::string cause = string_field(e.detail, "cause");
  if (cause.empty()) {
    if (const RecompileCause* c = classify_guard_failure(newest)) cause = c->key;
  }
  g->cause = cause;
}

// The frame `e` recompiled, by (file, line, function): its index in `frames`, added on first sight.
size_t frame_of(const EventRecord& e,
                std::map<std::tuple<std::string, int64_t, std::string>, size_t>& index,
                std::vector<FrameFinding>& frames) {
  auto key = std::make_tuple(string_field(e.detail, "file"), integer_field(e.detail, "line"),
                             string_field(e.detail, "function"));
  auto [it, added] = index.try_emplace(key, frames.size());
  if (added) {
    FrameFinding& f = frames.emplace_back();
    f.file = std::get<0>(key);
    f.line = std::get<1>(key);
    f.function = std::get<2>(key);
  }
  return it->second;
}

// Counts graph break `e` under its reason (first seen: its step and first hint), with its sites.
void add_graph_break(const EventRecord& e, std::map<std::string, size_t>& index,
                     std::vector<GraphBreakFinding>& breaks) {
  const std::string reason = string_field(e.detail, "reason");
  auto [it, added] = index.try_emplace(reason, breaks.size());
  if (added) {
    GraphBreakFinding& g = breaks.emplace_back();
    g.reason = reason;
    g.first_step = e.step;
    const auto hints = e.detail.find("hints");
    if (hints != e.detail.end() && hints->is_array() && !hints->empty() &&
        hints->front().is_string()) {
      g.hint = hints->front().get<std::string>();
    }
  }
  GraphBreakFinding& g = breaks[it->second];
  g.count += std::max<int64_t>(1, integer_field(e.detail, "count"));
  const auto sites = e.detail.find("sites");
  if (sites == e.detail.end() || !sites->is_array()) return;
  for (const auto& s : *sites) {
    if (!s.is_string()) continue;
    const std::string site = s.get<std::string>();
    if (std::find(g.sites.begin(), g.sites.end(), site) == g.sites.end()) g.sites.push_back(site);
  }
}

// The costliest first: frames by compile time, then recompiles; their guards, the graph breaks
// and the other compilers by count (stable: ties keep the order they were first seen in).
void order_findings(CompileFindings& out) {
  for (FrameFinding& f : out.frames) {
    std::stable_sort(
        f.guards.begin(), f.guards.end(),
        [](const GuardFinding& x, const GuardFinding& y) { return x.recompiles > y.recompiles; });
  }
  std::stable_sort(out.frames.begin(), out.frames.end(),
                   [](const FrameFinding& x, const FrameFinding& y) {
                     if (x.compile_s != y.compile_s) return x.compile_s > y.compile_s;
                     return x.recompiles > y.recompiles;
                   });
  std::stable_sort(
      out.graph_breaks.begin(), out.graph_breaks.end(),
      [](const GraphBreakFinding& x, const GraphBreakFinding& y) { return x.count > y.count; });
  std::stable_sort(
      out.other_compiles.begin(), out.other_compiles.end(),
      [](const OtherCompileFinding& x, const OtherCompileFinding& y) { return x.count > y.count; });
}

}  // namespace

const char* to_string(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::kUnused:
      return "unused";
    case CacheOutcome::kCold:
      return "cold";
    case CacheOutcome::kWarm:
      return "warm";
    case CacheOutcome::kMixed:
      return "mixed";
  }
  return "unused";
}

std::string guard_subject(const std::string& guard) {
  std::string e = without_compile_id(comment_parts(guard).front());
  const size_t expected = e.find(". expected ");
  if (expected != std::string::npos) return e.substr(0, expected);
  const size_t eq = e.rfind(" == ");
  if (eq != std::string::npos) return e.substr(0, eq);
  return e;
}

CompileFindings find_compile_findings(const ColumnarRun& run,
                                      const std::vector<PhaseAnalysis>& phases) {
  CompileFindings out;
  read_compiled_sections(run.steps, out);
  out.fx_cache.outcome = outcome_of(out.fx_cache);
  out.aot_cache.outcome = outcome_of(out.aot_cache);

  // Frames by (file, line, function), in the order they first recompiled.
  std::map<std::tuple<std::string, int64_t, std::string>, size_t> frame_index;
  std::map<int64_t, std::vector<size_t>> frames_at_step;  // step -> frames recompiled in it
  std::map<std::string, size_t> break_index;
  std::map<std::pair<std::string, std::string>, size_t> other_index;
  std::optional<EagerFallback> limit_note;
  for (const EventRecord& e : run.events) {
    if (e.kind == EventKind::kCompile && is_dynamo(e)) {
      const size_t frame = frame_of(e, frame_index, out.frames);
      add_recompile(e, phases, out.frames[frame]);
      frames_at_step[e.step].push_back(frame);
    } else if (e.kind == EventKind::kCompile) {
      const auto key = std::make_pair(string_field(e.detail, "compiler"), e.reason);
      auto [it, added] = other_index.try_emplace(key, out.other_compiles.size());
      if (added) out.other_compiles.push_back({key.first, key.second, 0, e.step, e.step});
      OtherCompileFinding& o = out.other_compiles[it->second];
      ++o.count;
      o.last_step = e.step;
    } else if (e.kind == EventKind::kGraphBreak) {
      add_graph_break(e, break_index, out.graph_breaks);
    } else if (is_limit_note(e) && !limit_note) {
      limit_note.emplace();
      limit_note->first_step = e.step;
      read_limit_note(e, *limit_note);
    }
  }
  out.eager = eager_fallback(run.steps, phases, limit_note);

  // Each step's compile time goes to the frames recompiled in it, evenly.
  for (const auto& [step, frames] : frames_at_step) {
    const size_t i = index_of_step(run.steps, step);
    if (i >= run.steps.size() || run.steps.step(i) != step) continue;
    const StepRecord s = run.steps.at(i);
    if (!s.compiled) continue;
    const double share = s.compiled->compile_ms / 1000.0 / static_cast<double>(frames.size());
    for (size_t f : frames) out.frames[f].compile_s += share;
  }
  for (FrameFinding& f : out.frames) {
    f.limit_reached = f.recompile_limit > 0 && f.compiles >= f.recompile_limit;
    if (out.eager && !out.eager->function.empty() && out.eager->function == f.function &&
        out.eager->line == f.line) {
      f.limit_reached = true;
    }
  }
  order_findings(out);
  return out;
}

CompileDiff diff_compile_findings(const CompileFindings& a, const CompileFindings& b) {
  CompileDiff d;
  const auto key = [](const FrameFinding& f) {
    return std::make_tuple(f.file, f.line, f.function);
  };
  std::map<std::tuple<std::string, int64_t, std::string>, FrameDiff> frames;
  const auto frame = [&](const FrameFinding& f) -> FrameDiff& {
    FrameDiff& fd = frames[key(f)];
    fd.function = f.function;
    fd.file = f.file;
    fd.line = f.line;
    return fd;
  };
  for (const FrameFinding& f : a.frames) {
    FrameDiff& fd = frame(f);
    fd.recompiles_a = f.recompiles;
    fd.compile_s_a = f.compile_s;
    fd.limit_a = f.limit_reached;
  }
  for (const FrameFinding& f : b.frames) {
    FrameDiff& fd = frame(f);
    fd.recompiles_b = f.recompiles;
    fd.compile_s_b = f.compile_s;
    fd.limit_b = f.limit_reached;
  }
  const auto guards_only = [](const std::vector<FrameFinding>& side,
                              const std::vector<FrameFinding>& other, const FrameDiff& fd) {
    std::vector<GuardFinding> out;
    const auto find = [&](const std::vector<FrameFinding>& frames) -> const FrameFinding* {
      for (const FrameFinding& f : frames) {
        if (f.file == fd.file && f.line == fd.line && f.function == fd.function) return &f;
      }
      return nullptr;
    };
    const FrameFinding* mine = find(side);
    const FrameFinding* theirs = find(other);
    if (mine == nullptr) return out;
    for (const GuardFinding& g : mine->guards) {
      const bool shared =
          theirs != nullptr &&
          std::any_of(theirs->guards.begin(), theirs->guards.end(),
                      [&](const GuardFinding& t) { return t.subject == g.subject; });
      if (!shared) out.push_back(g);
    }
    return out;
  };
  for (auto& [k, fd] : frames) {
    fd.only_a = guards_only(a.frames, b.frames, fd);
    fd.only_b = guards_only(b.frames, a.frames, fd);
    if (fd.recompiles_a == fd.recompiles_b && fd.limit_a == fd.limit_b && fd.only_a.empty() &&
        fd.only_b.empty()) {
      continue;
    }
    d.frames.push_back(fd);
  }
  std::stable_sort(d.frames.begin(), d.frames.end(), [](const FrameDiff& x, const FrameDiff& y) {
    return std::abs(x.compile_s_b - x.compile_s_a) > std::abs(y.compile_s_b - y.compile_s_a);
  });

  const auto more_breaks = [](const CompileFindings& side, const CompileFindings& other) {
    std::vector<GraphBreakFinding> out;
    for (const GraphBreakFinding& g : side.graph_breaks) {
      int64_t theirs = 0;
      for (const GraphBreakFinding& t : other.graph_breaks) {
        if (t.reason == g.reason) theirs = t.count;
      }
      if (g.count > theirs) out.push_back(g);
    }
    return out;
  };
  d.breaks_only_a = more_breaks(a, b);
  d.breaks_only_b = more_breaks(b, a);
  if (a.fx_cache.outcome != b.fx_cache.outcome) {
    d.fx_cache = std::make_pair(a.fx_cache.outcome, b.fx_cache.outcome);
  }
  if (a.aot_cache.outcome != b.aot_cache.outcome) {
    d.aot_cache = std::make_pair(a.aot_cache.outcome, b.aot_cache.outcome);
  }
  const int64_t eager_a = a.eager ? a.eager->steps : 0;
  const int64_t eager_b = b.eager ? b.eager->steps : 0;
  if (eager_a != eager_b || a.eager.has_value() != b.eager.has_value()) {
    d.eager_a = a.eager;
    d.eager_b = b.eager;
  }
  return d;
}

}  // namespace recompdiag
