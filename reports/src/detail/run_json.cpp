// A run's analysis as JSON, shared by the comparison's report and the single-run report.
#include "detail/run_json.h"

#include <cmath>

#include "recompdiag/reports/compile_words.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports::detail {

using nlohmann::json;

// JSON has no NaN or infinity; a figure that is not finite is null.
json json_number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json json_numbers(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(json_number(v));
  return out;
}

namespace {

json times_json(const StepTimeSummary& s) {
  return {{"n", s.n},
          {"median_ms", json_number(s.median_ms)},
          {"p95_ms", json_number(s.p95_ms)},
          {"mad_ms", json_number(s.mad_ms)},
          {"mean_ms", json_number(s.mean_ms)},
          {"stddev_ms", json_number(s.stddev_ms)},
          {"min_ms", json_number(s.min_ms)},
          {"max_ms", json_number(s.max_ms)},
          {"total_s", json_number(s.total_s)}};
}

// Per probe section: the steps that had it, and each field's sum and maximum over them, in table
// order. Sections no step had are left out.
json sections_json(const SectionTotals& totals) {
  json out = json::object();
  for (const SectionTotal& section : totals.sections()) {
    if (section.steps == 0) continue;
    json sum = json::object();
    json max = json::object();
    for (const FieldTotal& f : section.fields) {
      sum[f.name] = json_number(f.sum);
      max[f.name] = json_number(f.max);
    }
    out[section.name] = {{"steps", section.steps}, {"sum", sum}, {"max", max}};
  }
  return out;
}

json counts_json(const ProbeCounts& c) {
  json out = {{"has_jit", c.has_jit},
              {"has_dispatch", c.has_dispatch},
              {"has_cupti", c.has_cupti},
              {"has_optimizer", c.has_optimizer},
              {"has_transfers", c.has_transfers},
              {"cache_misses", c.cache_misses()},
              {"sections", sections_json(c.sections)}};
  for (const ProbeCountField& f : kProbeCountFields) out[f.key] = c.*f.value;
  return out;
}

}  // namespace

json run_json(const RunAnalysis& r) {
  json phases = json::array();
  for (const auto& p : r.phases) {
    phases.push_back({{"phase", p.phase},
                      {"first_step", p.first_step},
                      {"last_step", p.last_step},
                      {"warmup_steps", p.warmup_steps},
                      {"warmup_extra_s", json_number(p.warmup_extra_s)},
                      {"all", times_json(p.all)},
                      {"steady", times_json(p.steady)},
                      {"counts", counts_json(p.counts)},
                      {"steady_counts", counts_json(p.steady_counts)},
                      {"drift_ratio", json_number(p.drift_ratio)},
                      {"final_loss", json_number(p.final_loss)},
                      {"final_head_losses", json_numbers(p.final_head_losses)}});
  }
  json switches = json::array();
  for (const auto& s : r.switches) {
    switches.push_back({{"from_phase", s.from_phase},
                        {"to_phase", s.to_phase},
                        {"switch_step", s.switch_step},
                        {"extra_s", json_number(s.extra_s)},
                        {"compile_s", json_number(s.compile_s)},
                        {"tax_s", json_number(s.tax_s)},
                        {"recovery_steps", s.recovery_steps},
                        {"noise_low_s", json_number(s.noise_low_s)},
                        {"noise_high_s", json_number(s.noise_high_s)},
                        {"signal", s.signal},
                        {"noise_explained", s.noise_explained},
                        {"first_step_ms", json_number(s.first_step_ms)},
                        {"first_step_ratio", json_number(s.first_step_ratio)},
                        {"around", counts_json(s.around)},
                        {"loss_jump",
                         {{"total_before", json_number(s.loss.total_before)},
                          {"total_after", json_number(s.loss.total_after)},
                          {"head_before", json_numbers(s.loss.head_before)},
                          {"head_after", json_numbers(s.loss.head_after)},
                          {"head_jump", json_numbers(s.loss.head_jump)}}}});
  }
  json compiles = json::array();
  for (const auto& e : r.compiles)
    compiles.push_back({{"step", e.step}, {"phase", e.phase}, {"reason", e.reason}});
  json alerts = json::array();
  for (const auto& a : r.alerts) {
    alerts.push_back(
        {{"step", a.step}, {"phase", a.phase}, {"rule", a.rule}, {"message", a.message}});
  }
  json stretches = json::array();
  for (const auto& s : r.slow_stretches) {
    json signals = json::array();
    for (const auto& g : s.signals) {
      signals.push_back({{"kind", g.kind},
                         {"count", g.count},
                         {"score", json_number(g.score)},
                         {"text", signal_words(g)}});
    }
    stretches.push_back({{"first_step", s.first_step},
                         {"last_step", s.last_step},
                         {"phase", s.phase},
                         {"mean_ratio", json_number(s.mean_ratio)},
                         {"max_ratio", json_number(s.max_ratio)},
                         {"extra_s", json_number(s.extra_s)},
                         {"signals", signals},
                         {"sentence", stretch_sentence(s)}});
  }
  json alert_groups = json::array();
  for (const AlertGroup& g : r.alert_groups) {
    alert_groups.push_back({{"rule", g.rule},
                            {"count", g.count},
                            {"first_step", g.first_step},
                            {"last_step", g.last_step},
                            {"message", g.message}});
  }
  json summary = nullptr;
  if (r.summary) {
    summary = {{"steps", r.summary->steps},
               {"elapsed_s", json_number(r.summary->elapsed_s)},
               {"compiles", r.summary->compiles},
               {"alerts", r.summary->alerts},
               {"final_loss", json_number(r.summary->final_loss)},
               {"final_head_losses", json_numbers(r.summary->final_head_losses)},
               {"status", r.summary->status}};
  }
  return {{"path", r.path},
          {"header", json(run_header_json(r.header))},
          {"summary", summary},
          {"steps", r.steps},
          {"total_wall_s", json_number(r.total_wall_s)},
          {"phases", phases},
          {"switches", switches},
          {"compiles", compiles},
          {"alerts", alerts},
          {"slow_stretch_count", r.slow_stretch_count},
          {"slow_stretches", stretches},
          {"outcome",
           {{"finished", r.outcome.finished},
            {"final_loss", json_number(r.outcome.final_loss)},
            {"final_head_losses", json_numbers(r.outcome.final_head_losses)},
            {"loss_recorded", r.outcome.loss_recorded}}},
          {"alert_groups", alert_groups},
          {"compile", compile_findings_json(r.compile)},
          {"warnings", r.warnings}};
}

namespace {

json guard_json(const GuardFinding& g) {
  return {{"subject", g.subject},       {"newest", g.newest},
          {"source", g.source},         {"site", g.site},
          {"cause", g.cause},           {"recompiles", g.recompiles},
          {"first_step", g.first_step}, {"last_step", g.last_step}};
}

json guards_json(const std::vector<GuardFinding>& guards) {
  json out = json::array();
  for (const GuardFinding& g : guards) out.push_back(guard_json(g));
  return out;
}

json eager_json(const std::optional<EagerFallback>& e) {
  if (!e) return nullptr;
  return {{"first_step", e->first_step},
          {"steps", e->steps},
          {"calls", e->calls},
          {"function", e->function},
          {"file", e->file},
          {"line", e->line},
          {"limit", e->limit},
          {"limit_step", e->limit_step}};
}

json breaks_json(const std::vector<GraphBreakFinding>& breaks) {
  json out = json::array();
  for (const GraphBreakFinding& g : breaks) {
    out.push_back({{"reason", g.reason},
                   {"hint", g.hint},
                   {"sites", g.sites},
                   {"count", g.count},
                   {"first_step", g.first_step},
                   {"sentence", graph_break_sentence(g)}});
  }
  return out;
}

json cache_json(const CacheFinding& c) {
  return {{"hits", c.hits},
          {"misses", c.misses},
          {"bypasses", c.bypasses},
          {"outcome", to_string(c.outcome)}};
}

}  // namespace

json compile_findings_json(const CompileFindings& f) {
  json frames = json::array();
  for (const FrameFinding& fr : f.frames) {
    frames.push_back({{"function", fr.function},
                      {"file", fr.file},
                      {"line", fr.line},
                      {"recompiles", fr.recompiles},
                      {"after_warmup", fr.after_warmup},
                      {"first_step", fr.first_step},
                      {"last_step", fr.last_step},
                      {"compiles", fr.compiles},
                      {"recompile_limit", fr.recompile_limit},
                      {"limit_reached", fr.limit_reached},
                      {"compile_s", json_number(fr.compile_s)},
                      {"guards", guards_json(fr.guards)}});
  }
  json others = json::array();
  for (const OtherCompileFinding& o : f.other_compiles) {
    others.push_back({{"compiler", o.compiler},
                      {"reason", o.reason},
                      {"count", o.count},
                      {"first_step", o.first_step},
                      {"last_step", o.last_step}});
  }
  return {{"observed", f.observed},
          {"ledger", f.ledger},
          {"compiles", f.compiles},
          {"recompiles", f.recompiles},
          {"compile_s", json_number(f.compile_s)},
          {"run_s", json_number(f.run_s)},
          {"frames", frames},
          {"eager_fallback", eager_json(f.eager)},
          {"graph_breaks", breaks_json(f.graph_breaks)},
          {"fx_cache", cache_json(f.fx_cache)},
          {"aot_cache", cache_json(f.aot_cache)},
          {"other_compiles", others},
          {"findings", compile_finding_lines(f)}};
}

json compile_diff_json(const CompileDiff& d) {
  json frames = json::array();
  for (const FrameDiff& f : d.frames) {
    frames.push_back({{"function", f.function},
                      {"file", f.file},
                      {"line", f.line},
                      {"recompiles_a", f.recompiles_a},
                      {"recompiles_b", f.recompiles_b},
                      {"compile_s_a", json_number(f.compile_s_a)},
                      {"compile_s_b", json_number(f.compile_s_b)},
                      {"limit_reached_a", f.limit_a},
                      {"limit_reached_b", f.limit_b},
                      {"guards_only_a", guards_json(f.only_a)},
                      {"guards_only_b", guards_json(f.only_b)}});
  }
  const auto outcomes = [](const std::optional<std::pair<CacheOutcome, CacheOutcome>>& c) {
    return c ? json{{"a", to_string(c->first)}, {"b", to_string(c->second)}} : json(nullptr);
  };
  return {{"frames", frames},
          {"graph_breaks_more_a", breaks_json(d.breaks_only_a)},
          {"graph_breaks_more_b", breaks_json(d.breaks_only_b)},
          {"fx_cache", outcomes(d.fx_cache)},
          {"aot_cache", outcomes(d.aot_cache)},
          {"eager_fallback_a", eager_json(d.eager_a)},
          {"eager_fallback_b", eager_json(d.eager_b)},
          {"lines", compile_diff_lines(d)}};
}

}  // namespace recompdiag::reports::detail
