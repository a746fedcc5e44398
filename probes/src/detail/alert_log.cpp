// The Monitor's alert lines: each rule and subject once, the repeats counted (alert_log.h).

#include "detail/alert_log.h"

#include <algorithm>

namespace recompdiag::probes::detail {

void AlertLog::write(const Alert& alert) {
  if (finished_) return;
  auto it = std::find_if(seen_.begin(), seen_.end(), [&](const Entry& e) {
    return e.rule == alert.rule && e.subject == alert.subject;
  });
  if (it != seen_.end()) {
    if (it->repeats++ == 0) it->first_repeat = alert.step;
    it->last_repeat = alert.step;
    return;
  }
  seen_.push_back({alert.rule, alert.subject, 0, 0, 0});
  // One line, flushed: stderr of a training job interleaves with its other output.
  out_ << "recompdiag alert [" << alert.rule << "] step " << alert.step << ": " << alert.evidence
       << ". " << alert.advice << std::endl;
}

void AlertLog::finish() {
  if (finished_) return;
  finished_ = true;
  for (const Entry& e : seen_) {
    if (e.repeats == 0) continue;
    out_ << "recompdiag alert [" << e.rule << "] repeated " << e.repeats << " more time"
         << (e.repeats == 1 ? "" : "s") << " ("
         << (e.first_repeat == e.last_repeat
                 ? "step " + std::to_string(e.first_repeat)
                 : "steps " + std::to_string(e.first_repeat) + "-" + std::to_string(e.last_repeat))
         << ")" << (e.subject.empty() ? "" : ": " + e.subject)
         << "; every alert is in the run file\n";
  }
  out_.flush();
}

}  // namespace recompdiag::probes::detail
