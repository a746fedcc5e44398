#include "recompdiag/core/job.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>

#include "recompdiag/core/error.h"
#include "recompdiag/core/record_fields.h"

namespace recompdiag {

std::string rank_file_path(const std::string& out, int rank) {
  const std::string suffix = ".jsonl";
  const std::string tag = ".rank" + std::to_string(rank) + suffix;
  if (out.size() >= suffix.size() &&
      out.compare(out.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return out.substr(0, out.size() - suffix.size()) + tag;
  }
  return out + tag;
}

namespace {

/// Adds the summable fields of `from` to `into`; levels and flags keep `into`'s value.
template <class S>
void add_counts(const Section<S>& section, S& into, const S& from) {
  for (const Field<S>& f : section) {
    if (f.unit != FieldUnit::kCount && f.unit != FieldUnit::kBytes &&
        f.unit != FieldUnit::kMilliseconds) {
      continue;
    }
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(into.*member)>;
          if constexpr (!std::is_same_v<T, bool>) into.*member += from.*member;
        },
        f.member);
  }
}

StepRecord combine_step(const std::vector<RunFile>& ranks, size_t i) {
  StepRecord out = ranks[0].steps[i];
  std::set<std::string> alerts(out.alerts.begin(), out.alerts.end());
  for (size_t r = 1; r < ranks.size(); ++r) {
    const StepRecord& s = ranks[r].steps[i];
    out.wall_ms = std::max(out.wall_ms, s.wall_ms);
    if (s.device_ms) out.device_ms = std::max(out.device_ms.value_or(0.0), *s.device_ms);
    for_each_section([&](const auto& section) {
      const auto& theirs = s.*section.record;
      if (!theirs) return;
      auto& ours = out.*section.record;
      if (ours) {
        add_counts(section, *ours, *theirs);
      } else {
        ours = theirs;
      }
    });
    for (const std::string& a : s.alerts) {
      if (alerts.insert(a).second) out.alerts.push_back(a);
    }
  }
  return out;
}

}  // namespace

bool is_rank_header(const RunHeader& header) {
  return header.world_size > 1 || !header.job_id.empty();
}

bool is_rank_file(const RunFile& run) { return is_rank_header(run.header); }

RunFile job_run(const std::vector<RunFile>& ranks) {
  if (ranks.empty()) throw InputError("a job needs at least one rank file");
  const RunFile& first = ranks[0];
  RunFile out;
  out.path = "job " + first.header.job_id + " (" + std::to_string(ranks.size()) +
             " ranks: " + first.path + " ...)";
  out.header = first.header;
  size_t steps = first.steps.size();
  for (const RunFile& r : ranks) steps = std::min(steps, r.steps.size());
  out.steps.reserve(steps);
  for (size_t i = 0; i < steps; ++i) out.steps.push_back(combine_step(ranks, i));

  using Key = std::tuple<int, int64_t, std::string>;
  std::set<Key> seen;
  for (const EventRecord& e : first.events) {
    seen.insert({static_cast<int>(e.kind), e.step, e.reason});
    out.events.push_back(e);
  }
  for (size_t r = 1; r < ranks.size(); ++r) {
    for (const EventRecord& e : ranks[r].events) {
      if (seen.count({static_cast<int>(e.kind), e.step, e.reason}) != 0) continue;
      EventRecord own = e;
      own.reason = "rank " + std::to_string(ranks[r].header.rank) + ": " + e.reason;
      if (own.detail.is_object()) own.detail["rank"] = ranks[r].header.rank;
      out.events.push_back(std::move(own));
    }
  }
  std::stable_sort(out.events.begin(), out.events.end(),
                   [](const EventRecord& a, const EventRecord& b) { return a.step < b.step; });

  bool all_finished = true;
  for (const RunFile& r : ranks) all_finished = all_finished && r.summary.has_value();
  if (all_finished) {
    out.summary = first.summary;
    // A job failed or was interrupted when any of its ranks was.
    for (const char* status : {"interrupted", "failed"}) {
      for (const RunFile& r : ranks) {
        if (r.summary->status == status) out.summary->status = status;
      }
    }
  }
  for (const RunFile& r : ranks) {
    for (const SkippedLine& s : r.skipped) {
      out.skipped.push_back({s.line, r.path + ": " + s.why});
    }
  }
  return out;
}

std::vector<RunSet> group_rank_files(std::vector<RunFile> files) {
  std::vector<RunSet> out;
  std::map<std::string, size_t> job_index;  // job id -> index in out
  for (RunFile& f : files) {
    if (!is_rank_file(f)) {
      out.push_back({std::move(f), {}});
      continue;
    }
    auto [it, fresh] = job_index.emplace(f.header.job_id, out.size());
    if (fresh) out.emplace_back();
    RunSet& set = out[it->second];
    if (!set.ranks.empty() && set.ranks.front().header.world_size != f.header.world_size) {
      throw InputError(f.path + ": world_size " + std::to_string(f.header.world_size) +
                       " disagrees with " + set.ranks.front().path + " (" +
                       std::to_string(set.ranks.front().header.world_size) + ") of job " +
                       f.header.job_id);
    }
    for (const RunFile& other : set.ranks) {
      if (other.header.rank == f.header.rank) {
        throw InputError(f.path + ": rank " + std::to_string(f.header.rank) + " of job " +
                         f.header.job_id + " is also given as " + other.path);
      }
    }
    set.ranks.push_back(std::move(f));
  }
  for (RunSet& set : out) {
    if (!set.is_job()) continue;
    std::sort(set.ranks.begin(), set.ranks.end(),
              [](const RunFile& a, const RunFile& b) { return a.header.rank < b.header.rank; });
    const int world = set.ranks.front().header.world_size;
    if (static_cast<int>(set.ranks.size()) != world) {
      std::string missing;
      for (int r = 0, i = 0; r < world; ++r) {
        if (i < static_cast<int>(set.ranks.size()) && set.ranks[i].header.rank == r) {
          ++i;
        } else {
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        }
      }
      throw InputError(set.ranks.front().path + ": job " + set.ranks.front().header.job_id +
                       " has " + std::to_string(world) + " ranks but rank(s) " + missing +
                       " are not given");
    }
    set.run = job_run(set.ranks);
  }
  return out;
}

}  // namespace recompdiag
