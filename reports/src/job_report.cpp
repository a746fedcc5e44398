#include "detail/job_report.h"

#include <string>

#include "detail/format.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports::detail {

namespace {

// "Recompiles differ across ranks (rank 0: 0, rank 1: 1): ...", or "" when they agree.
std::string compiles_differ_sentence(const JobAnalysis& job) {
  if (!job.compiles_differ) return "";
  std::string counts;
  for (const RankSummary& r : job.ranks) {
    counts += (counts.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r.rank) + ": " +
              std::to_string(r.compiles);
  }
  return "Compile events differ across ranks (" + counts +
         "): a rank that recompiles alone stalls every other rank in its next all-reduce. Look "
         "for a rank-dependent shape or an uneven last batch (drop_last=True, or pad it).";
}

}  // namespace

void write_job_markdown(const JobAnalysis& job, const char* side, std::ostream& out) {
  out << "\n**Data-parallel job " << side << "** (`" << job.job_id << "`, " << job.world_size
      << " ranks; the job's step is its slowest rank's):\n\n";
  out << "| Rank | steps | median step ms | p95 step ms | median wait ms | wait total s | wait share "
         "| compiles | finished |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const RankSummary& r : job.ranks) {
    out << "| " << r.rank << " | " << r.steps << " | " << ms(r.median_step_ms) << " | "
        << ms(r.p95_step_ms) << " | " << ms(r.median_wait_ms) << " | " << seconds(r.total_wait_s)
        << " | " << percent(r.wait_share) << " | " << r.compiles << " | "
        << (r.finished ? "yes" : "no") << " |\n";
  }
  if (job.compiles_differ) out << "\n" << md_cell(compiles_differ_sentence(job)) << "\n";
  if (job.stragglers.empty()) return;
  out << "\n**Stragglers in " << side << "** (who the ranks waited for in each slow stretch):\n";
  for (const StragglerFinding& f : job.stragglers)
    out << "- " << md_cell(straggler_sentence(f)) << "\n";
}

void write_job_html(const JobAnalysis& job, const char* side, std::ostream& out) {
  out << "<h2>Data-parallel job " << side << ": " << html_escape(job.job_id) << ", "
      << job.world_size << " ranks</h2>\n";
  out << "<table><tr><th>rank</th><th>steps</th><th>median step ms</th><th>p95 step ms</th>"
         "<th>median wait ms</th><th>wait total s</th><th>wait share</th><th>compiles</th>"
         "<th>finished</th></tr>\n";
  for (const RankSummary& r : job.ranks) {
    out << "<tr><td>" << r.rank << "</td><td>" << r.steps << "</td><td>" << ms(r.median_step_ms)
        << "</td><td>" << ms(r.p95_step_ms) << "</td><td>" << ms(r.median_wait_ms) << "</td><td>"
        << seconds(r.total_wait_s) << "</td><td>" << percent(r.wait_share) << "</td><td>"
        << r.compiles << "</td><td>" << (r.finished ? "yes" : "no") << "</td></tr>\n";
  }
  out << "</table>\n";
  if (job.compiles_differ) out << "<p>" << html_escape(compiles_differ_sentence(job)) << "</p>\n";
  if (job.stragglers.empty()) return;
  out << "<ul>\n";
  for (const StragglerFinding& f : job.stragglers) {
    out << "<li>" << html_escape(straggler_sentence(f)) << "</li>\n";
  }
  out << "</ul>\n";
}

nlohmann::json job_json(const JobAnalysis& job) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankSummary& r : job.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"path", r.path},
                     {"steps", r.steps},
                     {"median_step_ms", r.median_step_ms},
                     {"p95_step_ms", r.p95_step_ms},
                     {"median_wait_ms", r.median_wait_ms},
                     {"total_wait_s", r.total_wait_s},
                     {"wait_share", r.wait_share},
                     {"compiles", r.compiles},
                     {"finished", r.finished}});
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const StragglerFinding& f : job.stragglers) {
    stragglers.push_back(
        {{"first_step", f.first_step},
         {"last_step", f.last_step},
         {"phase", f.phase},
         {"straggler", f.straggler < 0 ? nlohmann::json(nullptr) : nlohmann::json(f.straggler)},
         {"cause", straggler_cause(f)},
         {"waiters", f.waiters},
         {"wait_min_ms", f.wait_min_ms},
         {"wait_max_ms", f.wait_max_ms},
         {"sentence", straggler_sentence(f)}});
  }
  return {{"job_id", job.job_id},
          {"world_size", job.world_size},
          {"ranks", ranks},
          {"compiles_differ", job.compiles_differ},
          {"stragglers", stragglers}};
}

}  // namespace recompdiag::reports::detail
