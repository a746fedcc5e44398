// All CUPTI calls of recompdiag. See cupti_api.h.
#include "detail/cupti_api.h"

#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "detail/cupti_activity.h"
#include "detail/section_counters.h"
#include "detail/signature_table.h"

namespace recompdiag::probes::detail {
namespace {

// Record layouts: the newest of the toolkit we compile against (the library we
// link is the same toolkit's). Only the common leading fields are read.
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using SyncRecord = CUpti_ActivitySynchronization2;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using SyncRecord = CUpti_ActivitySynchronization;
#endif

std::string cupti_error(const char* call, CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return std::string(call) + ": " + (text != nullptr ? text : "unknown CUPTI error");
}

}  // namespace

struct CuptiApi::State {
  State(const CuptiOptions& options)
      : kernel_names(static_cast<size_t>(options.kernel_name_capacity)) {
    const int n = std::max(1, std::min(options.buffers, 64));
    buffer_bytes = static_cast<size_t>(std::max<int64_t>(64 << 10, options.buffer_bytes));
    for (int i = 0; i < n; ++i) {
      buffers.push_back(static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes)));
    }
  }
  ~State() {
    for (uint8_t* b : buffers) std::free(b);
  }
  SectionCounters<CuptiStats, kCuptiSection> counters;
  SignatureTable kernel_names;
  std::vector<uint8_t*> buffers;  // fixed pool, allocated once
  size_t buffer_bytes = 0;
  std::atomic<uint64_t> in_use{0};  // bit i: buffers[i] handed to CUPTI
  CUpti_SubscriberHandle subscriber = nullptr;
  bool subscribed = false;
  std::vector<CUpti_ActivityKind> enabled;
};

namespace {

std::atomic<CuptiApi::State*> g_cupti{nullptr};

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  CuptiApi::State* s = g_cupti.load(std::memory_order_acquire);
  if (s == nullptr) return;
  uint64_t used = s->in_use.load(std::memory_order_relaxed);
  for (size_t i = 0; i < s->buffers.size(); ++i) {
    const uint64_t bit = uint64_t{1} << i;
    while (!(used & bit)) {
      if (s->in_use.compare_exchange_weak(used, used | bit, std::memory_order_acq_rel)) {
        *buffer = s->buffers[i];
        *size = s->buffer_bytes;
        return;
      }
    }
  }
  // No free buffer: CUPTI drops records, which
  // cuptiActivityGetNumDroppedRecords reports.
}

// The SDK's record as an Activity for interpret(); false for kinds the probe does not count.
bool to_activity(const CUpti_Activity* record, Activity& out) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const KernelRecord*>(record);
      out.kind = Activity::Kind::kKernel;
      out.name = k->name;
      out.start_ns = k->start;
      out.end_ns = k->end;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const MemcpyRecord*>(record);
      out.kind = Activity::Kind::kMemcpy;
      out.bytes = static_cast<int64_t>(m->bytes);
      switch (m->copyKind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
          out.direction = Activity::Direction::kHostToDevice;
          break;
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
          out.direction = Activity::Direction::kDeviceToHost;
          break;
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
          out.direction = Activity::Direction::kDeviceToDevice;
          break;
        default:
          out.direction = Activity::Direction::kOther;
          break;
      }
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET:
      out.kind = Activity::Kind::kMemset;
      return true;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      auto* y = reinterpret_cast<const SyncRecord*>(record);
      out.kind = Activity::Kind::kSync;
      out.device_side = y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
      return true;
    }
    default:
      return false;
  }
}

void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                  size_t /*size*/, size_t valid_size) {
  CuptiApi::State* s = g_cupti.load(std::memory_order_acquire);
  if (s == nullptr || buffer == nullptr) return;
  // Interpret the whole buffer into a local delta, then publish it at once.
  CuptiStats delta;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    Activity activity;
    if (to_activity(record, activity)) interpret(activity, s->kernel_names, delta);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    Activity drops;
    drops.kind = Activity::Kind::kDropped;
    drops.count = static_cast<int64_t>(dropped);
    interpret(drops, s->kernel_names, delta);
  }
  s->counters.add(delta);
  for (size_t i = 0; i < s->buffers.size(); ++i) {
    if (s->buffers[i] == buffer) {
      s->in_use.fetch_and(~(uint64_t{1} << i), std::memory_order_acq_rel);
      break;
    }
  }
}

void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* /*data*/) {
  auto* s = static_cast<CuptiApi::State*>(userdata);
  if (s == nullptr || domain != CUPTI_CB_DOMAIN_RESOURCE) return;
  Activity activity;
  if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
    activity.kind = Activity::Kind::kModuleLoad;
  } else if (id == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
    activity.kind = Activity::Kind::kGraphInstantiation;
  } else {
    return;
  }
  CuptiStats delta;
  interpret(activity, s->kernel_names, delta);
  s->counters.add(delta);
}

Availability check_driver() {
  Availability out;
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    out.reason =
        std::string("no CUDA driver: ") + (err != nullptr ? err : "libcuda.so.1 not found");
    return out;
  }
  using InitFn = int (*)(unsigned int);
  using CountFn = int (*)(int*);
  using ErrorFn = int (*)(int, const char**);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  auto error = reinterpret_cast<ErrorFn>(dlsym(lib, "cuGetErrorString"));
  if (init == nullptr || count == nullptr) {
    out.reason = "CUDA driver lacks cuInit/cuDeviceGetCount";
    return out;  // the library stays loaded: the driver is process-wide anyway
  }
  const int rc = init(0);
  if (rc != 0) {
    const char* text = nullptr;
    if (error != nullptr) error(rc, &text);
    out.reason = "cuInit failed: " + std::string(text != nullptr ? text : std::to_string(rc));
    return out;
  }
  int devices = 0;
  if (count(&devices) != 0 || devices == 0) {
    out.reason = "no CUDA device";
    return out;
  }
  out.available = true;
  return out;
}

}  // namespace

const Availability& CuptiApi::driver_status() {
  static const Availability status = check_driver();
  return status;
}

std::unique_ptr<CuptiApi> CuptiApi::start(const CuptiOptions& options, std::string* why_not) {
  const Availability& driver = driver_status();
  if (!driver.available) {
    *why_not = driver.reason;
    return nullptr;
  }
  auto state = std::make_unique<State>(options);
  State* expected = nullptr;
  if (!g_cupti.compare_exchange_strong(expected, state.get())) {
    *why_not = "another CUPTI probe is active in this process";
    return nullptr;
  }
  std::unique_ptr<CuptiApi> api(new CuptiApi(std::move(state)));  // destructor undoes partial work
  State& s = *api->state_;
  CUptiResult rc = cuptiSubscribe(&s.subscriber, &on_callback, &s);
  if (rc != CUPTI_SUCCESS) {
    *why_not = cupti_error("cuptiSubscribe", rc);
    return nullptr;
  }
  s.subscribed = true;
  for (CUpti_CallbackId id :
       {CUPTI_CBID_RESOURCE_MODULE_LOADED, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED}) {
    rc = cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, id);
    if (rc != CUPTI_SUCCESS) {
      *why_not = cupti_error("cuptiEnableCallback", rc);
      return nullptr;
    }
  }
  rc = cuptiActivityRegisterCallbacks(&on_buffer_requested, &on_buffer_completed);
  if (rc != CUPTI_SUCCESS) {
    *why_not = cupti_error("cuptiActivityRegisterCallbacks", rc);
    return nullptr;
  }
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}) {
    rc = cuptiActivityEnable(kind);
    if (rc == CUPTI_SUCCESS) {
      s.enabled.push_back(kind);
    } else if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      // Without kernel records the probe has nothing to stand on; the other kinds are optional
      // (a GPU or CUPTI version may refuse one) and then simply stay zero.
      *why_not = cupti_error("cuptiActivityEnable", rc);
      return nullptr;
    }
  }
  return api;
}

CuptiApi::CuptiApi(std::unique_ptr<State> state) : state_(std::move(state)) {}

CuptiApi::~CuptiApi() {
  State& s = *state_;
  for (CUpti_ActivityKind kind : s.enabled) cuptiActivityDisable(kind);
  if (!s.enabled.empty()) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (s.subscribed) cuptiUnsubscribe(s.subscriber);
  g_cupti.store(nullptr, std::memory_order_release);
  // Buffers CUPTI still holds would be freed under it: CUPTI returned them all
  // in the forced flush.
}

CuptiStats CuptiApi::flush_and_take() {
  cuptiActivityFlushAll(0);
  CuptiStats out;
  state_->counters.take(out);
  return out;
}

}  // namespace recompdiag::probes::detail
