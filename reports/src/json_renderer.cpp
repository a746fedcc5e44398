#include <cmath>
#include <ostream>

#include "detail/job_report.h"
#include "recompdiag/core/version.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/story.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using nlohmann::json;

// JSON has no NaN or infinity; a figure that is not finite is null.
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json nums(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(num(v));
  return out;
}

json times_json(const StepTimeSummary& s) {
  return {{"n", s.n},
          {"median_ms", num(s.median_ms)},
          {"p95_ms", num(s.p95_ms)},
          {"mad_ms", num(s.mad_ms)},
          {"mean_ms", num(s.mean_ms)},
          {"stddev_ms", num(s.stddev_ms)},
          {"min_ms", num(s.min_ms)},
          {"max_ms", num(s.max_ms)},
          {"total_s", num(s.total_s)}};
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
      sum[f.name] = num(f.sum);
      max[f.name] = num(f.max);
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

json run_json(const RunAnalysis& r) {
  json phases = json::array();
  for (const auto& p : r.phases) {
    phases.push_back({{"phase", p.phase},
                      {"first_step", p.first_step},
                      {"last_step", p.last_step},
                      {"warmup_steps", p.warmup_steps},
                      {"warmup_extra_s", num(p.warmup_extra_s)},
                      {"all", times_json(p.all)},
                      {"steady", times_json(p.steady)},
                      {"counts", counts_json(p.counts)},
                      {"steady_counts", counts_json(p.steady_counts)},
                      {"drift_ratio", num(p.drift_ratio)},
                      {"final_loss", num(p.final_loss)},
                      {"final_head_losses", nums(p.final_head_losses)}});
  }
  json switches = json::array();
  for (const auto& s : r.switches) {
    switches.push_back({{"from_phase", s.from_phase},
                        {"to_phase", s.to_phase},
                        {"switch_step", s.switch_step},
                        {"extra_s", num(s.extra_s)},
                        {"compile_s", num(s.compile_s)},
                        {"tax_s", num(s.tax_s)},
                        {"recovery_steps", s.recovery_steps},
                        {"noise_low_s", num(s.noise_low_s)},
                        {"noise_high_s", num(s.noise_high_s)},
                        {"signal", s.signal},
                        {"noise_explained", s.noise_explained},
                        {"first_step_ms", num(s.first_step_ms)},
                        {"first_step_ratio", num(s.first_step_ratio)},
                        {"around", counts_json(s.around)},
                        {"loss_jump",
                         {{"total_before", num(s.loss.total_before)},
                          {"total_after", num(s.loss.total_after)},
                          {"head_before", nums(s.loss.head_before)},
                          {"head_after", nums(s.loss.head_after)},
                          {"head_jump", nums(s.loss.head_jump)}}}});
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
                         {"score", num(g.score)},
                         {"text", signal_words(g)}});
    }
    stretches.push_back({{"first_step", s.first_step},
                         {"last_step", s.last_step},
                         {"phase", s.phase},
                         {"mean_ratio", num(s.mean_ratio)},
                         {"max_ratio", num(s.max_ratio)},
                         {"extra_s", num(s.extra_s)},
                         {"signals", signals},
                         {"sentence", stretch_sentence(s)}});
  }
  json summary = nullptr;
  if (r.summary) {
    summary = {{"steps", r.summary->steps},
               {"elapsed_s", num(r.summary->elapsed_s)},
               {"compiles", r.summary->compiles},
               {"alerts", r.summary->alerts},
               {"final_loss", num(r.summary->final_loss)},
               {"final_head_losses", nums(r.summary->final_head_losses)},
               {"status", r.summary->status}};
  }
  return {{"path", r.path},
          {"header", json(run_header_json(r.header))},
          {"summary", summary},
          {"steps", r.steps},
          {"total_wall_s", num(r.total_wall_s)},
          {"phases", phases},
          {"switches", switches},
          {"compiles", compiles},
          {"alerts", alerts},
          {"slow_stretch_count", r.slow_stretch_count},
          {"slow_stretches", stretches},
          {"outcome",
           {{"finished", r.outcome.finished},
            {"final_loss", num(r.outcome.final_loss)},
            {"final_head_losses", nums(r.outcome.final_head_losses)}}},
          {"warnings", r.warnings}};
}

// What the runs learned, as fields: per run its switches (loss before and after, steps to
// recover, the new phase's loss per epoch) and final loss per head; the measures and the verdict.
json convergence_json(const ConvergenceComparison& c) {
  auto runs = [](const std::vector<RunConvergence>& side) {
    json out = json::array();
    for (const RunConvergence& r : side) {
      json switches = json::array();
      for (const SwitchConvergence& s : r.switches) {
        switches.push_back({{"to_phase", s.to_phase},
                            {"switch_step", s.switch_step},
                            {"loss_before", num(s.loss_before)},
                            {"loss_after", num(s.loss_after)},
                            {"recovery_steps", s.recovery_steps},
                            {"phase_loss", num(s.phase_loss)},
                            {"epoch_losses", nums(s.epoch_losses)}});
      }
      out.push_back({{"switches", switches},
                     {"final_loss", num(r.final_loss)},
                     {"final_head_losses", nums(r.final_head_losses)}});
    }
    return out;
  };
  json measures = json::array();
  for (const QualityMeasure& m : c.measures) {
    measures.push_back({{"name", m.name},
                        {"label", m.label},
                        {"a", num(m.a)},
                        {"b", num(m.b)},
                        {"change", num(m.change)},
                        {"worse_pairs", m.worse_pairs},
                        {"better_pairs", m.better_pairs},
                        {"p_holm", num(m.p)},
                        {"regression", m.regression}});
  }
  return {{"verdict", to_string(c.verdict)},
          {"tested", c.tested},
          {"pairs", c.pairs},
          {"worse_pairs", c.worse_pairs},
          {"final_loss_a", num(c.final_loss_a)},
          {"final_loss_b", num(c.final_loss_b)},
          {"final_loss_change", num(c.final_loss_change)},
          {"recovery_steps_a", num(c.recovery_steps_a)},
          {"recovery_steps_b", num(c.recovery_steps_b)},
          {"measures", measures},
          {"runs_a", runs(c.a)},
          {"runs_b", runs(c.b)},
          {"summary", convergence_summary(c)}};
}

}  // namespace

json report_json(const Comparison& c) {
  json phases = json::array();
  for (const auto& p : c.phases) {
    phases.push_back({{"phase", p.phase},
                      {"n_a", p.n_a},
                      {"n_b", p.n_b},
                      {"median_a_ms", num(p.median_a_ms)},
                      {"median_b_ms", num(p.median_b_ms)},
                      {"p95_a_ms", num(p.p95_a_ms)},
                      {"p95_b_ms", num(p.p95_b_ms)},
                      {"ratio",
                       {{"value", num(p.ratio.ratio)},
                        {"ci_low", num(p.ratio.low)},
                        {"ci_high", num(p.ratio.high)},
                        {"confidence", p.ratio.confidence},
                        {"resamples", p.ratio.resamples}}},
                      {"mann_whitney",
                       {{"u_a", num(p.mann_whitney.u_a)},
                        {"u_b", num(p.mann_whitney.u_b)},
                        {"z", num(p.mann_whitney.z)},
                        {"p", num(p.mann_whitney.p)},
                        {"too_few_samples", p.mann_whitney.too_few_samples}}},
                      {"verdict", to_string(p.verdict)},
                      {"reason", phase_reason(p, c)}});
    // The gate's tests (issue 13): what the verdict rests on.
    phases.back()["test"] = {{"unit", to_string(p.unit)},
                             {"paired", p.paired},
                             {"n_a", p.test.n_a},
                             {"n_b", p.test.n_b},
                             {"block_steps_a", p.block_steps_a},
                             {"block_steps_b", p.block_steps_b},
                             {"epoch_pairs", p.epoch_pairs},
                             {"step_pairs", p.step_pairs},
                             {"pair_blocks", p.pair_blocks},
                             {"pair_block_length", p.pair_block_length},
                             {"turn_steps", p.turn_steps},
                             {"level_spread", num(p.level_spread)},
                             {"noise_contradicted", p.noise_contradicted},
                             {"run_medians_a_ms", nums(p.run_medians_a_ms)},
                             {"run_medians_b_ms", nums(p.run_medians_b_ms)},
                             {"se_log", num(p.test.se_log)},
                             {"df", num(p.test.df)},
                             {"p", num(p.test.p)},
                             {"p_holm", num(p.p_holm)},
                             {"tost_p", num(p.test.tost_p)},
                             {"tost_p_holm", num(p.tost_p_holm)},
                             {"equivalent", p.equivalent},
                             {"mde", num(p.test.mde)},
                             {"runs_needed", p.runs_needed}};
    // Every step of the phase, warm-up and compiles included.
    phases.back()["whole"] = {{"mean_a_ms", num(p.whole_mean_a_ms)},
                              {"mean_b_ms", num(p.whole_mean_b_ms)},
                              {"ratio", num(p.whole_test.ratio)},
                              {"low", num(p.whole_test.low)},
                              {"high", num(p.whole_test.high)},
                              {"n_a", p.whole_test.n_a},
                              {"n_b", p.whole_test.n_b},
                              {"se_log", num(p.whole_test.se_log)},
                              {"p", num(p.whole_test.p)},
                              {"p_holm", num(p.whole_p_holm)},
                              {"decides", p.whole_decides}};
    phases.back()["counted_decides"] = p.counted_decides;
    phases.back()["decisive_ratio"] = num(p.decisive_ratio);
  }
  json counts = json::array();
  for (const auto& cc : c.count_changes) {
    counts.push_back({{"phase", cc.phase},
                      {"count", cc.count},
                      {"a_min", cc.a_min},
                      {"a_max", cc.a_max},
                      {"b_min", cc.b_min},
                      {"b_max", cc.b_max},
                      {"fails", cc.fails},
                      {"failed_by", cc.failed_by},
                      {"text", count_change_line(cc)}});
  }
  json switches = json::array();
  for (const auto& s : c.switches) {
    switches.push_back({{"to_phase", s.to_phase},
                        {"tax_s_a", num(s.tax_s_a)},
                        {"tax_s_b", num(s.tax_s_b)},
                        {"tax_s_difference", num(s.tax_s_difference)},
                        {"extra_s_a", num(s.extra_s_a)},
                        {"extra_s_b", num(s.extra_s_b)},
                        {"compile_s_a", num(s.compile_s_a)},
                        {"compile_s_b", num(s.compile_s_b)},
                        {"recovery_steps_a", s.recovery_steps_a},
                        {"recovery_steps_b", s.recovery_steps_b}});
  }
  json counted = json::array();
  for (const CountedCost& cost : c.counted_costs) {
    counted.push_back({{"phase", cost.phase},
                       {"counts", cost.counts},
                       {"per_step_counts", cost.per_step_counts},
                       {"causes", cost_causes(cost, c)},
                       {"event_steps_a", num(cost.event_steps_a)},
                       {"event_steps_b", num(cost.event_steps_b)},
                       {"cost_s_a", num(cost.cost_s_a)},
                       {"cost_s_b", num(cost.cost_s_b)},
                       {"compile_s_a", num(cost.compile_s_a)},
                       {"compile_s_b", num(cost.compile_s_b)},
                       {"difference_s", num(cost.difference_s)},
                       {"low_s", num(cost.low_s)},
                       {"high_s", num(cost.high_s)},
                       {"confidence", cost.confidence},
                       {"phase_s_a", num(cost.phase_s_a)},
                       {"share", num(cost.share)},
                       {"p", num(cost.p)},
                       {"against_counts", cost.against_counts},
                       {"measured_s", num(cost.measured_s)},
                       {"measured_bounds", cost.measured_bounds},
                       {"steps_s", num(cost.steps_s)},
                       {"steps_low_s", num(cost.steps_low_s)},
                       {"steps_high_s", num(cost.steps_high_s)},
                       {"cause_counts", cost.cause_counts},
                       {"verdict", to_string(cost.verdict)},
                       {"text", counted_cost_line(cost, c)}});
  }
  json diffs = json::array();
  for (const auto& d : c.config_differences)
    diffs.push_back({{"key", d.key}, {"a", d.a}, {"b", d.b}});
  return {{"schema", kReportSchemaVersion},
          {"kind", "recompdiag.compare"},
          {"tool", "recompdiag"},
          {"tool_version", kToolVersion},
          {"build", kBuildInfo},
          {"verdict", to_string(c.verdict)},
          {"step_time_verdict", to_string(c.step_time_verdict)},
          {"counts_verdict", to_string(c.counts_verdict)},
          {"summary", summary(c)},
          {"deciding_phase", c.deciding_phase ? json(*c.deciding_phase) : json(nullptr)},
          {"deciding_signal", c.deciding_signal ? json{{"kind", c.deciding_signal->kind},
                                                       {"count", c.deciding_signal->count}}
                                                : json(nullptr)},
          {"story", story(c).lines()},
          {"options",
           {{"threshold", c.options.threshold},
            {"drift_warning", c.options.drift_warning},
            {"alpha", c.options.alpha},
            {"min_samples", c.options.min_samples},
            {"bootstrap_resamples", c.options.bootstrap.resamples},
            {"bootstrap_seed", c.options.bootstrap.seed},
            {"confidence", c.options.bootstrap.confidence},
            {"power", c.options.power},
            {"fail_on", c.options.fail_on},
            {"paired", c.options.paired},
            {"turns", c.options.turns},
            {"run_noise", c.options.run_noise ? json(*c.options.run_noise) : json(nullptr)},
            {"run_noise_source", c.options.run_noise_source}}},
          {"unit", to_string(c.unit)},
          {"runs_a", c.paths_a},
          {"runs_b", c.paths_b},
          {"phases", phases},
          {"count_changes", counts},
          {"counted_costs", counted},
          {"switches", switches},
          {"convergence", convergence_json(c.convergence)},
          {"config_differences", diffs},
          {"warnings", warnings(c)},
          {"a", run_json(c.a)},
          {"b", run_json(c.b)},
          {"job_a", c.job_a ? detail::job_json(*c.job_a) : json(nullptr)},
          {"job_b", c.job_b ? detail::job_json(*c.job_b) : json(nullptr)}};
}

void JsonRenderer::render(const Comparison& c, std::ostream& out) const {
  out << report_json(c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace recompdiag::reports
