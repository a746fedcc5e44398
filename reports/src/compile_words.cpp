// torch.compile's findings in words (compile_words.h).

#include "recompdiag/reports/compile_words.h"

#include <algorithm>
#include <map>

#include "detail/format.h"
#include "recompdiag/core/recompile_cause.h"

namespace recompdiag::reports {

namespace {

using detail::plural;
using detail::printf_string;

const RecompileCause* cause_of(const std::string& key) {
  for (const RecompileCause& c : recompile_causes()) {
    if (key == c.key) return &c;
  }
  return nullptr;
}

// The cause's name at the head of its sentence: "A new size", or the guard's subject when the
// cause is not a known one.
std::string cause_title(const std::string& key, const std::string& subject) {
  static const std::map<std::string, std::string> titles = {
      {"float_lr", "A Python float learning rate that changed"},
      {"float_hyperparameter", "A Python float hyperparameter that changed"},
      {"train_eval", "train() and eval() flips"},
      {"grad_mode", "Grad mode changes"},
      {"global_state", "A global torch setting that changed"},
      {"new_size", "A new size"},
      {"dtype_change", "A new dtype"},
      {"device_change", "A new device"},
      {"requires_grad_change", "requires_grad changes"},
      {"rebuilt_object", "A rebuilt object"},
      {"host_value", "A host value read after a graph break"},
      {"python_number", "A Python number that changed"},
  };
  const auto it = titles.find(key);
  if (it != titles.end()) return it->second;
  return "Guard `" + subject + "`";
}

std::string steps_range(int64_t first, int64_t last) {
  return first == last ? "step " + std::to_string(first)
                       : "steps " + std::to_string(first) + "-" + std::to_string(last);
}

std::string times(int64_t n) { return n == 1 ? "once" : std::to_string(n) + " times"; }

// The key that groups a frame's recompiles into one sentence: its top guard's cause, else the
// guard itself.
std::string group_key(const FrameFinding& f) {
  if (f.guards.empty()) return "?";
  const GuardFinding& g = f.guards.front();
  return g.cause.empty() ? "guard:" + g.subject : g.cause;
}

}  // namespace

std::string short_path(const std::string& file) {
  for (const char* root : {"site-packages/", "dist-packages/"}) {
    const size_t at = file.rfind(root);
    if (at != std::string::npos) return file.substr(at + std::string(root).size());
  }
  const size_t last = file.rfind('/');
  if (last == std::string::npos || last == 0) return file;
  const size_t before = file.rfind('/', last - 1);
  return before == std::string::npos ? file : file.substr(before + 1);
}

std::string frame_name(const std::string& function, const std::string& file, int64_t line) {
  std::string out = "`" + (function.empty() ? std::string("?") : function) + "`";
  if (!file.empty())
    out += " (" + short_path(file) + (line > 0 ? ":" + std::to_string(line) : "") + ")";
  return out;
}

std::vector<std::string> recompile_cause_lines(const CompileFindings& findings) {
  // Frames grouped by cause, each group in the order of its costliest frame.
  std::vector<std::pair<std::string, std::vector<const FrameFinding*>>> groups;
  for (const FrameFinding& f : findings.frames) {
    const std::string key = group_key(f);
    auto g =
        std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
    if (g == groups.end()) {
      groups.push_back({key, {}});
      g = groups.end() - 1;
    }
    g->second.push_back(&f);
  }
  std::vector<std::string> lines;
  for (const auto& [key, frames] : groups) {
    std::vector<const FrameFinding*> by_count = frames;
    std::stable_sort(by_count.begin(), by_count.end(),
                     [](const auto* x, const auto* y) { return x->recompiles > y->recompiles; });
    const FrameFinding& top = *by_count.front();
    const GuardFinding& guard = top.guards.front();
    double compile_s = 0.0;
    for (const FrameFinding* f : frames) compile_s += f->compile_s;

    std::string line = cause_title(guard.cause, guard.subject) + ": " +
                       frame_name(top.function, top.file, top.line) + " recompiled " +
                       times(top.recompiles) + " (" + steps_range(top.first_step, top.last_step) +
                       ")";
    if (top.limit_reached) {
      line += " and reached its recompile limit" +
              (top.recompile_limit > 0 ? " (" + std::to_string(top.recompile_limit) + ")"
                                       : std::string());
    }
    if (by_count.size() > 1) {
      std::vector<std::string> others;
      int64_t other_recompiles = 0;
      for (size_t i = 1; i < by_count.size(); ++i) {
        if (others.size() < 4) others.push_back("`" + by_count[i]->function + "`");
        other_recompiles += by_count[i]->recompiles;
      }
      if (by_count.size() - 1 > others.size()) others.push_back("...");
      const int64_t n_others = static_cast<int64_t>(by_count.size() - 1);
      line += ", and " + plural(n_others, "other frame", "other frames") + " " +
              (other_recompiles == n_others && n_others > 1 ? std::string("once each")
                                                            : times(other_recompiles)) +
              " (" + detail::joined(others) + ")";
    }
    line += "; guard `" + guard.newest + "`";
    if (!guard.site.empty()) line += " at " + guard.site;
    if (!guard.source.empty()) line += " (`" + guard.source + "`)";
    if (top.guards.size() > 1) {
      line += ", and " +
              plural(static_cast<int64_t>(top.guards.size() - 1), "other guard", "other guards");
    }
    if (compile_s > 0.0) {
      line += "; " + detail::seconds(compile_s) + " s compiling";
      if (findings.run_s > 0.0)
        line += ", " + detail::percent(compile_s / findings.run_s) + " of the run";
    }
    line += ".";
    if (const RecompileCause* c = cause_of(guard.cause)) {
      line += std::string(" Cause: ") + c->what + ". Fix: " + c->fix;
      if (*c->upstream != '\0') line += std::string(" (") + c->upstream + ")";
      line += ".";
    }
    lines.push_back(line);
  }
  return lines;
}

std::string eager_fallback_sentence(const EagerFallback& eager) {
  std::string line;
  if (eager.steps > 0) {
    line = "From step " + std::to_string(eager.first_step) + " compiled frames ran eagerly on " +
           std::to_string(eager.steps) + " of the " +
           plural(eager.observed_steps, "observed step", "observed steps") + " (" +
           plural(eager.calls, "call", "calls") + ")";
  } else {
    line = "Compiled frames stopped compiling";
  }
  if (eager.limit_step >= 0) {
    line += ": " +
            (eager.function.empty() ? std::string("a frame")
                                    : frame_name(eager.function, eager.file, eager.line)) +
            " reached the recompile limit" +
            (eager.limit > 0 ? " (" + std::to_string(eager.limit) + ")" : std::string()) +
            " at step " + std::to_string(eager.limit_step) +
            ", and dynamo runs the calls that fail its guards eagerly, without an error";
  }
  return line +
         ". Raising torch._dynamo.config.recompile_limit only postpones this: remove the "
         "cause of the recompiles.";
}

std::string graph_break_sentence(const GraphBreakFinding& g) {
  std::string line = "Graph break" + (g.count > 1 ? " (" + std::to_string(g.count) + ")" : "") +
                     ", first at step " + std::to_string(g.first_step) + ": " + g.reason;
  if (!g.sites.empty()) {
    std::vector<std::string> sites(g.sites.begin(),
                                   g.sites.begin() + std::min<size_t>(g.sites.size(), 3));
    if (g.sites.size() > 3) sites.push_back("...");
    line += ", at " + detail::joined(sites);
  }
  if (!g.hint.empty()) line += "; hint: " + g.hint;
  return line;
}

std::string cache_sentence(const CompileFindings& findings) {
  std::vector<std::string> parts;
  const auto one = [&](const char* name, const CacheFinding& c) {
    if (c.outcome == CacheOutcome::kUnused) return;
    std::string part = std::string(name) + " " + to_string(c.outcome) + " (";
    std::vector<std::string> counts;
    if (c.hits > 0) counts.push_back(plural(c.hits, "hit", "hits"));
    if (c.misses > 0) counts.push_back(plural(c.misses, "miss", "misses"));
    if (c.bypasses > 0) counts.push_back(plural(c.bypasses, "bypass", "bypasses"));
    parts.push_back(part + detail::joined(counts) + ")");
  };
  one("Inductor's FX-graph cache", findings.fx_cache);
  one("AOTAutograd's cache", findings.aot_cache);
  if (parts.empty()) return "";
  return "Compile caches: " + detail::joined(parts, "; ") + ".";
}

std::string other_compile_sentence(const OtherCompileFinding& c) {
  const std::string compiler =
      c.compiler.empty() || c.compiler == "torchscript" ? std::string("TorchScript") : c.compiler;
  return compiler + " compiled " + times(c.count) + " (" + steps_range(c.first_step, c.last_step) +
         "): " + c.reason;
}

std::vector<std::string> compile_finding_lines(const CompileFindings& findings) {
  std::vector<std::string> lines = recompile_cause_lines(findings);
  if (findings.eager) lines.push_back(eager_fallback_sentence(*findings.eager));
  for (const GraphBreakFinding& g : findings.graph_breaks) lines.push_back(graph_break_sentence(g));
  const std::string caches = cache_sentence(findings);
  if (!caches.empty()) lines.push_back(caches);
  for (const OtherCompileFinding& c : findings.other_compiles) {
    lines.push_back(other_compile_sentence(c));
  }
  return lines;
}

std::string alert_group_sentence(const AlertGroup& group) {
  std::string where =
      group.count == 1
          ? "at step " + std::to_string(group.first_step)
          : "at " + plural(group.count, "step", "steps") + " (" + std::to_string(group.first_step) +
                (group.count == 2 ? " and " : " to ") + std::to_string(group.last_step) + ")";
  std::string line = "`" + group.rule + "` fired " + where;
  if (!group.message.empty()) {
    // The message begins with its rule's name where the writer put it there: say it once.
    std::string message = group.message;
    if (message.rfind(group.rule + ": ", 0) == 0) message.erase(0, group.rule.size() + 2);
    line += ": " + message;
  }
  return line;
}

std::string frame_diff_sentence(const FrameDiff& f) {
  std::string line = frame_name(f.function, f.file, f.line) + ": A recompiled it " +
                     times(f.recompiles_a) + ", B " + times(f.recompiles_b);
  if (f.limit_a != f.limit_b) {
    line += std::string(" (") + (f.limit_b ? "B" : "A") + " reached its recompile limit)";
  }
  const auto only = [](const char* side, const std::vector<GuardFinding>& guards) {
    std::vector<std::string> parts;
    for (const GuardFinding& g : guards) {
      std::string part = "`" + g.subject + "`";
      if (const RecompileCause* c = cause_of(g.cause)) part += std::string(" (") + c->what + ")";
      parts.push_back(part);
    }
    return std::string("; guards that failed in ") + side + " only: " + detail::joined(parts);
  };
  if (!f.only_a.empty()) line += only("A", f.only_a);
  if (!f.only_b.empty()) line += only("B", f.only_b);
  return line;
}

std::vector<std::string> compile_diff_lines(const CompileDiff& diff) {
  std::vector<std::string> lines;
  for (const FrameDiff& f : diff.frames) lines.push_back(frame_diff_sentence(f));
  for (const auto& [side, breaks] :
       {std::make_pair("A", &diff.breaks_only_a), std::make_pair("B", &diff.breaks_only_b)}) {
    for (const GraphBreakFinding& g : *breaks) {
      lines.push_back(std::string(side) + " has more: " + graph_break_sentence(g));
    }
  }
  for (const auto& [name, cache] : {std::make_pair("Inductor's FX-graph cache", &diff.fx_cache),
                                    std::make_pair("AOTAutograd's cache", &diff.aot_cache)}) {
    if (*cache) {
      lines.push_back(std::string(name) + ": A " + to_string((*cache)->first) + ", B " +
                      to_string((*cache)->second));
    }
  }
  if (diff.eager_a || diff.eager_b) {
    const auto steps = [](const std::optional<EagerFallback>& e) {
      return e ? std::to_string(e->steps) : std::string("0");
    };
    lines.push_back("Steps that ran compiled frames eagerly: A " + steps(diff.eager_a) + ", B " +
                    steps(diff.eager_b));
  }
  return lines;
}

std::vector<std::string> compile_cause_lines(const Comparison& c) {
  std::vector<std::string> lines;
  const auto side_lines = [&](const char* side, const RunAnalysis& run, bool b_side) {
    // The side's own findings, with only the frames it recompiled more than the other side.
    CompileFindings more = run.compile;
    more.frames.clear();
    for (const FrameFinding& f : run.compile.frames) {
      for (const FrameDiff& d : c.compile_diff.frames) {
        const int64_t mine = b_side ? d.recompiles_b : d.recompiles_a;
        const int64_t theirs = b_side ? d.recompiles_a : d.recompiles_b;
        if (d.function == f.function && d.file == f.file && d.line == f.line && mine > theirs) {
          more.frames.push_back(f);
        }
      }
    }
    for (const std::string& line : recompile_cause_lines(more)) {
      lines.push_back(std::string(side) + ": " + line);
    }
    const std::optional<EagerFallback>& mine =
        b_side ? c.compile_diff.eager_b : c.compile_diff.eager_a;
    const std::optional<EagerFallback>& theirs =
        b_side ? c.compile_diff.eager_a : c.compile_diff.eager_b;
    if (mine && (!theirs || mine->steps > theirs->steps)) {
      lines.push_back(std::string(side) + ": " + eager_fallback_sentence(*mine));
    }
    for (const GraphBreakFinding& g :
         b_side ? c.compile_diff.breaks_only_b : c.compile_diff.breaks_only_a) {
      lines.push_back(std::string(side) + ": " + graph_break_sentence(g));
    }
  };
  side_lines("B", c.b, true);
  side_lines("A", c.a, false);
  return lines;
}

std::string gpu_busy_sentence(const Comparison& c) {
  std::vector<std::string> phases;
  const auto busy = [](const RunAnalysis& r, int phase) -> std::optional<double> {
    const std::optional<size_t> i = find_phase(r, phase);
    return i ? gpu_busy(r.phases[*i]) : std::nullopt;
  };
  for (const PhaseComparison& p : c.phases) {
    const std::optional<double> a = busy(c.a, p.phase);
    const std::optional<double> b = busy(c.b, p.phase);
    if (!a && !b) continue;
    phases.push_back("phase " + std::to_string(p.phase) + " A " +
                     (a ? detail::percent(*a) : std::string("n/a")) + ", B " +
                     (b ? detail::percent(*b) : std::string("n/a")));
  }
  if (phases.empty()) return "";
  return "GPU busy (kernel time over step time, steady state): " + detail::joined(phases, "; ");
}

}  // namespace recompdiag::reports
