// All CUPTI calls of recompdiag. See cupti_api.h.
#include "detail/cupti_api.h"

#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

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
  std::atomic<int64_t> kernels{0}, new_kernels{0}, module_loads{0}, graph_instantiations{0};
  std::atomic<int64_t> memcpy_h2d{0}, memcpy_d2h{0}, memcpy_d2d{0};
  std::atomic<int64_t> bytes_h2d{0}, bytes_d2h{0}, bytes_d2d{0};
  std::atomic<int64_t> memsets{0}, syncs{0}, kernel_ns{0}, dropped{0};
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

void count_record(CuptiApi::State& s, const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const KernelRecord*>(record);
      s.kernels.fetch_add(1, std::memory_order_relaxed);
      if (k->end > k->start) {
        s.kernel_ns.fetch_add(static_cast<int64_t>(k->end - k->start), std::memory_order_relaxed);
      }
      if (k->name != nullptr) {
        Fnv1a h;
        h.add_string(k->name);
        switch (s.kernel_names.insert(h.value())) {
          case InsertResult::kNew:
            s.new_kernels.fetch_add(1, std::memory_order_relaxed);
            break;
          case InsertResult::kDropped:
            s.dropped.fetch_add(1, std::memory_order_relaxed);
            break;
          case InsertResult::kSeen:
            break;
        }
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const MemcpyRecord*>(record);
      const auto bytes = static_cast<int64_t>(m->bytes);
      switch (m->copyKind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
          s.memcpy_h2d.fetch_add(1, std::memory_order_relaxed);
          s.bytes_h2d.fetch_add(bytes, std::memory_order_relaxed);
          break;
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
          s.memcpy_d2h.fetch_add(1, std::memory_order_relaxed);
          s.bytes_d2h.fetch_add(bytes, std::memory_order_relaxed);
          break;
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
          s.memcpy_d2d.fetch_add(1, std::memory_order_relaxed);
          s.bytes_d2d.fetch_add(bytes, std::memory_order_relaxed);
          break;
        default:
          break;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET:
      s.memsets.fetch_add(1, std::memory_order_relaxed);
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      auto* y = reinterpret_cast<const SyncRecord*>(record);
      // A stream waiting on an event is a device-side wait, not the host
      // blocking.
      if (y->type != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) {
        s.syncs.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                  size_t /*size*/, size_t valid_size) {
  CuptiApi::State* s = g_cupti.load(std::memory_order_acquire);
  if (s == nullptr || buffer == nullptr) return;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    count_record(*s, record);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    s->dropped.fetch_add(static_cast<int64_t>(dropped), std::memory_order_relaxed);
  }
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
  if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
    s->module_loads.fetch_add(1, std::memory_order_relaxed);
  } else if (id == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
    s->graph_instantiations.fetch_add(1, std::memory_order_relaxed);
  }
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

CuptiCounts CuptiApi::flush_and_take() {
  cuptiActivityFlushAll(0);
  State& s = *state_;
  auto take = [](std::atomic<int64_t>& c) { return c.exchange(0, std::memory_order_relaxed); };
  CuptiCounts out;
  out.kernels = take(s.kernels);
  out.new_kernels = take(s.new_kernels);
  out.module_loads = take(s.module_loads);
  out.graph_instantiations = take(s.graph_instantiations);
  out.memcpy_h2d = take(s.memcpy_h2d);
  out.memcpy_d2h = take(s.memcpy_d2h);
  out.memcpy_d2d = take(s.memcpy_d2d);
  out.bytes_h2d = take(s.bytes_h2d);
  out.bytes_d2h = take(s.bytes_d2h);
  out.bytes_d2d = take(s.bytes_d2d);
  out.memsets = take(s.memsets);
  out.syncs = take(s.syncs);
  out.kernel_ns = take(s.kernel_ns);
  out.dropped = take(s.dropped);
  return out;
}

}  // namespace recompdiag::probes::detail
