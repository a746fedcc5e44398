#include "detail/cupti_activity.h"

namespace recompdiag::probes::detail {

void interpret(const Activity& a, SignatureTable& kernel_names, CuptiStats& out) {
  switch (a.kind) {
    case Activity::Kind::kKernel:
      ++out.kernels;
      if (a.end_ns > a.start_ns) out.kernel_ms += static_cast<double>(a.end_ns - a.start_ns) / 1e6;
      if (a.name != nullptr) {
        Fnv1a h;
        h.add_string(a.name);
        switch (kernel_names.insert(h.value())) {
          case InsertResult::kNew:
            ++out.new_kernels;
            break;
          case InsertResult::kDropped:
            ++out.dropped;
            break;
          case InsertResult::kSeen:
            break;
        }
      }
      return;
    case Activity::Kind::kMemcpy:
      switch (a.direction) {
        case Activity::Direction::kHostToDevice:
          ++out.memcpy_h2d;
          out.bytes_h2d += a.bytes;
          return;
        case Activity::Direction::kDeviceToHost:
          ++out.memcpy_d2h;
          out.bytes_d2h += a.bytes;
          return;
        case Activity::Direction::kDeviceToDevice:
          ++out.memcpy_d2d;
          out.bytes_d2d += a.bytes;
          return;
        case Activity::Direction::kOther:
          return;
      }
      return;
    case Activity::Kind::kMemset:
      ++out.memsets;
      return;
    case Activity::Kind::kSync:
      // A stream waiting on an event is a device-side wait, not the host blocking.
      if (!a.device_side) ++out.syncs;
      return;
    case Activity::Kind::kModuleLoad:
      ++out.module_loads;
      return;
    case Activity::Kind::kGraphInstantiation:
      ++out.graph_instantiations;
      return;
    case Activity::Kind::kDropped:
      out.dropped += a.count;
      return;
  }
}

}  // namespace recompdiag::probes::detail
