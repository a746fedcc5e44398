#include <cmath>
#include <ostream>

#include "detail/job_report.h"
#include "detail/run_json.h"
#include "recompdiag/core/version.h"
#include "recompdiag/reports/compile_words.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/story.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using detail::run_json;
using nlohmann::json;

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
                            {"loss_before", detail::json_number(s.loss_before)},
                            {"loss_after", detail::json_number(s.loss_after)},
                            {"recovery_steps", s.recovery_steps},
                            {"phase_loss", detail::json_number(s.phase_loss)},
                            {"epoch_losses", detail::json_numbers(s.epoch_losses)}});
      }
      out.push_back({{"switches", switches},
                     {"final_loss", detail::json_number(r.final_loss)},
                     {"final_head_losses", detail::json_numbers(r.final_head_losses)}});
    }
    return out;
  };
  json measures = json::array();
  for (const QualityMeasure& m : c.measures) {
    measures.push_back({{"name", m.name},
                        {"label", m.label},
                        {"a", detail::json_number(m.a)},
                        {"b", detail::json_number(m.b)},
                        {"change", detail::json_number(m.change)},
                        {"worse_pairs", m.worse_pairs},
                        {"better_pairs", m.better_pairs},
                        {"p_holm", detail::json_number(m.p)},
                        {"regression", m.regression}});
  }
  return {{"verdict", to_string(c.verdict)},
          {"tested", c.tested},
          {"pairs", c.pairs},
          {"worse_pairs", c.worse_pairs},
          {"final_loss_a", detail::json_number(c.final_loss_a)},
          {"final_loss_b", detail::json_number(c.final_loss_b)},
          {"final_loss_change", detail::json_number(c.final_loss_change)},
          {"recovery_steps_a", detail::json_number(c.recovery_steps_a)},
          {"recovery_steps_b", detail::json_number(c.recovery_steps_b)},
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
                      {"median_a_ms", detail::json_number(p.median_a_ms)},
                      {"median_b_ms", detail::json_number(p.median_b_ms)},
                      {"p95_a_ms", detail::json_number(p.p95_a_ms)},
                      {"p95_b_ms", detail::json_number(p.p95_b_ms)},
                      {"ratio",
                       {{"value", detail::json_number(p.ratio.ratio)},
                        {"ci_low", detail::json_number(p.ratio.low)},
                        {"ci_high", detail::json_number(p.ratio.high)},
                        {"confidence", p.ratio.confidence},
                        {"resamples", p.ratio.resamples}}},
                      {"mann_whitney",
                       {{"u_a", detail::json_number(p.mann_whitney.u_a)},
                        {"u_b", detail::json_number(p.mann_whitney.u_b)},
                        {"z", detail::json_number(p.mann_whitney.z)},
                        {"p", detail::json_number(p.mann_whitney.p)},
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
                             {"level_spread", detail::json_number(p.level_spread)},
                             {"noise_contradicted", p.noise_contradicted},
                             {"run_medians_a_ms", detail::json_numbers(p.run_medians_a_ms)},
                             {"run_medians_b_ms", detail::json_numbers(p.run_medians_b_ms)},
                             {"se_log", detail::json_number(p.test.se_log)},
                             {"df", detail::json_number(p.test.df)},
                             {"p", detail::json_number(p.test.p)},
                             {"p_holm", detail::json_number(p.p_holm)},
                             {"tost_p", detail::json_number(p.test.tost_p)},
                             {"tost_p_holm", detail::json_number(p.tost_p_holm)},
                             {"equivalent", p.equivalent},
                             {"mde", detail::json_number(p.test.mde)},
                             {"runs_needed", p.runs_needed}};
    // Every step of the phase, warm-up and compiles included.
    phases.back()["whole"] = {{"mean_a_ms", detail::json_number(p.whole_mean_a_ms)},
                              {"mean_b_ms", detail::json_number(p.whole_mean_b_ms)},
                              {"ratio", detail::json_number(p.whole_test.ratio)},
                              {"low", detail::json_number(p.whole_test.low)},
                              {"high", detail::json_number(p.whole_test.high)},
                              {"n_a", p.whole_test.n_a},
                              {"n_b", p.whole_test.n_b},
                              {"se_log", detail::json_number(p.whole_test.se_log)},
                              {"p", detail::json_number(p.whole_test.p)},
                              {"p_holm", detail::json_number(p.whole_p_holm)},
                              {"decides", p.whole_decides}};
    phases.back()["counted_decides"] = p.counted_decides;
    phases.back()["matched_compiles"] = {
        {"pairs", p.matched_compile_pairs},
        {"ratio", detail::json_number(p.matched_compile_ratio)},
        {"p", p.compile_time_test ? detail::json_number(p.compile_time_test->p) : json(nullptr)},
        {"decides", p.compile_time_decides}};
    phases.back()["decisive_ratio"] = detail::json_number(p.decisive_ratio);
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
                        {"tax_s_a", detail::json_number(s.tax_s_a)},
                        {"tax_s_b", detail::json_number(s.tax_s_b)},
                        {"tax_s_difference", detail::json_number(s.tax_s_difference)},
                        {"extra_s_a", detail::json_number(s.extra_s_a)},
                        {"extra_s_b", detail::json_number(s.extra_s_b)},
                        {"compile_s_a", detail::json_number(s.compile_s_a)},
                        {"compile_s_b", detail::json_number(s.compile_s_b)},
                        {"recovery_steps_a", s.recovery_steps_a},
                        {"recovery_steps_b", s.recovery_steps_b}});
  }
  json counted = json::array();
  for (const CountedCost& cost : c.counted_costs) {
    counted.push_back({{"phase", cost.phase},
                       {"counts", cost.counts},
                       {"per_step_counts", cost.per_step_counts},
                       {"causes", cost_causes(cost, c)},
                       {"event_steps_a", detail::json_number(cost.event_steps_a)},
                       {"event_steps_b", detail::json_number(cost.event_steps_b)},
                       {"cost_s_a", detail::json_number(cost.cost_s_a)},
                       {"cost_s_b", detail::json_number(cost.cost_s_b)},
                       {"compile_s_a", detail::json_number(cost.compile_s_a)},
                       {"compile_s_b", detail::json_number(cost.compile_s_b)},
                       {"difference_s", detail::json_number(cost.difference_s)},
                       {"low_s", detail::json_number(cost.low_s)},
                       {"high_s", detail::json_number(cost.high_s)},
                       {"confidence", cost.confidence},
                       {"phase_s_a", detail::json_number(cost.phase_s_a)},
                       {"share", detail::json_number(cost.share)},
                       {"p", detail::json_number(cost.p)},
                       {"against_counts", cost.against_counts},
                       {"measured_s", detail::json_number(cost.measured_s)},
                       {"measured_bounds", cost.measured_bounds},
                       {"steps_s", detail::json_number(cost.steps_s)},
                       {"steps_low_s", detail::json_number(cost.steps_low_s)},
                       {"steps_high_s", detail::json_number(cost.steps_high_s)},
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
          {"job_b", c.job_b ? detail::job_json(*c.job_b) : json(nullptr)},
          {"compile_causes", compile_cause_lines(c)},
          {"compile_diff", detail::compile_diff_json(c.compile_diff)}};
}

void JsonRenderer::render(const Comparison& c, std::ostream& out) const {
  out << report_json(c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace recompdiag::reports
