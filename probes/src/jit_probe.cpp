// The JIT probe. See jit_probe.h. Compiled with NDEBUG forced, like the dispatcher probe, because
// it registers a RecordFunction callback (RecordFunction's layout depends on NDEBUG).
#include "recompdiag/probes/jit_probe.h"

#include <ATen/record_function.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/pass_manager.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "detail/torch_compat.h"

namespace recompdiag::probes {

namespace {

// What the post pass and the TorchScript-scope callback write, from any thread, without a lock.
struct JitCounters {
  static constexpr int kMaxNames = 16;
  static constexpr size_t kNameSize = 128;
  std::atomic<int64_t> plan_builds{0};
  // Names of watched functions and their call counts, written by watch() before the count that
  // publishes them; read by the callback without a lock.
  std::array<std::array<char, kNameSize>, kMaxNames> names{};
  std::array<std::atomic<int64_t>, kMaxNames> calls{};
  std::atomic<int> name_count{0};
};

// A watched compilation unit and, per function, whether it had an optimized plan at begin_step.
struct Watched {
  std::weak_ptr<torch::jit::CompilationUnit> unit;
  const torch::jit::CompilationUnit* address = nullptr;
  struct Fn {
    const torch::jit::Function* function = nullptr;
    int name_slot = -1;
    bool optimized_at_begin = false;
  };
  std::vector<Fn> functions;
};

}  // namespace

struct JitProbe::Impl {
  JitCounters counters;  // the pass holds a pointer to it: Impl never moves (unique_ptr)
  std::vector<Watched> watched;
  unsigned int pass_id = 0;
  bool pass_registered = false;
  bool counts_calls = false;  // holds g_jit_state: its callback counts the watched calls
  uint64_t callback = 0;      // registered for the current step, else 0
  bool in_step = false;
  int64_t pending_compiles = 0;
  int64_t plan_builds_at_begin = 0;
};

namespace {

std::atomic<JitCounters*> g_jit_state{nullptr};
thread_local int t_script_depth = 0;

std::unique_ptr<at::ObserverContext> on_script_start(const at::RecordFunction& fn) {
  if (t_script_depth++ != 0) return nullptr;  // only calls from outside TorchScript
  JitCounters* s = g_jit_state.load(std::memory_order_acquire);
  if (s == nullptr) return nullptr;
  const char* name = fn.name();
  const int n = s->name_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(s->names[static_cast<size_t>(i)].data(), name) == 0) {
      s->calls[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  return nullptr;
}

void on_script_end(const at::RecordFunction& /*fn*/, at::ObserverContext* /*ctx*/) {
  if (t_script_depth > 0) --t_script_depth;
}

// Whether the function's current specialization (grad mode, autocast) has its optimized plan:
// the one a call now would use. Asking creates the executor, which is cheap and builds no plan.
bool is_optimized(torch::jit::Function& function) {
  return detail::executor_is_optimized(function);
}

int slot_for(JitCounters& s, const std::string& name) {
  const int n = s.name_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (name == s.names[static_cast<size_t>(i)].data()) return i;
  }
  if (n >= JitCounters::kMaxNames || name.size() >= JitCounters::kNameSize) return -1;
  std::memcpy(s.names[static_cast<size_t>(n)].data(), name.c_str(), name.size() + 1);
  s.calls[static_cast<size_t>(n)].store(0, std::memory_order_relaxed);
  s.name_count.store(n + 1, std::memory_order_release);
  return n;
}

}  // namespace

JitProbe::JitProbe() : impl_(std::make_unique<Impl>()) {
  impl_->watched.reserve(kMaxWatched);
  try {
    JitCounters* counters = &impl_->counters;
    impl_->pass_id = torch::jit::registerPostPass([counters](std::shared_ptr<torch::jit::Graph>&) {
      counters->plan_builds.fetch_add(1, std::memory_order_relaxed);
    });
    impl_->pass_registered = true;
  } catch (const std::exception& e) {
    availability_.reason = std::string("JIT post pass not registered: ") + e.what();
    return;
  }
  JitCounters* expected = nullptr;
  if (g_jit_state.compare_exchange_strong(expected, &impl_->counters)) {
    impl_->counts_calls = true;
    availability_.reason.clear();
    if (!detail::can_ask_executor()) {
      availability_.reason =
          "profiling runs counted as calls: this LibTorch's graph executor cannot say whether "
          "its plan is optimized";
    }
  } else {
    availability_.reason = "profiling runs not counted: another JIT probe is active";
  }
  availability_.available = true;
}

JitProbe::~JitProbe() {
  stop_counting_calls();
  if (impl_->counts_calls) g_jit_state.store(nullptr, std::memory_order_release);
  if (impl_->pass_registered) torch::jit::clearPostPass(impl_->pass_id);
}

// The callback is registered only for a step that has a watched function without its optimized
// plan, and removed at its end: any registered RecordFunction callback, whatever its scope, makes
// LibTorch rebuild its callback state each time the autograd engine sets a thread's state (twice
// per node run), which cost a step of the default setup 0.68M instructions (2.9%) on LibTorch
// 2.15 for a callback that steady steps never need.
void JitProbe::count_calls() {
  if (!impl_->counts_calls || impl_->callback != 0) return;
  at::RecordFunctionCallback cb(&on_script_start, &on_script_end);
  cb.scopes({at::RecordScope::TORCHSCRIPT_FUNCTION});
  impl_->callback = at::addGlobalCallback(cb);
}

void JitProbe::stop_counting_calls() {
  if (impl_->callback != 0) at::removeCallback(impl_->callback);
  impl_->callback = 0;
}

void JitProbe::watch(const std::shared_ptr<torch::jit::CompilationUnit>& unit) {
  if (!unit || !available()) return;
  std::vector<Watched>& watched = impl_->watched;
  for (const Watched& w : watched) {
    if (w.address == unit.get() && !w.unit.expired()) return;
  }
  // Forget dead units first, then the oldest, to stay within kMaxWatched.
  watched.erase(std::remove_if(watched.begin(), watched.end(),
                               [](const Watched& w) { return w.unit.expired(); }),
                watched.end());
  if (static_cast<int>(watched.size()) >= kMaxWatched) watched.erase(watched.begin());
  Watched w;
  w.unit = unit;
  w.address = unit.get();
  for (torch::jit::Function* f : unit->get_functions()) {
    Watched::Fn fn;
    fn.function = f;
    fn.name_slot = slot_for(impl_->counters, f->name());
    fn.optimized_at_begin = false;  // new: whatever it builds in this step counts
    w.functions.push_back(fn);
  }
  watched.push_back(std::move(w));
  ++impl_->pending_compiles;
  if (impl_->in_step) count_calls();  // its calls in this step are profiling runs
}

int64_t JitProbe::watched() const {
  int64_t n = 0;
  for (const Watched& w : impl_->watched) n += w.unit.expired() ? 0 : 1;
  return n;
}

void JitProbe::begin_step() {
  if (!available()) return;
  JitCounters& c = impl_->counters;
  impl_->plan_builds_at_begin = c.plan_builds.load(std::memory_order_relaxed);
  for (int i = 0; i < c.name_count.load(std::memory_order_relaxed); ++i) {
    c.calls[static_cast<size_t>(i)].store(0, std::memory_order_relaxed);
  }
  bool unoptimized = !detail::can_ask_executor();  // then every call counts
  for (Watched& w : impl_->watched) {
    auto unit = w.unit.lock();
    if (!unit) continue;
    for (Watched::Fn& fn : w.functions) {
      fn.optimized_at_begin = is_optimized(const_cast<torch::jit::Function&>(*fn.function));
      unoptimized = unoptimized || (!fn.optimized_at_begin && fn.name_slot >= 0);
    }
  }
  stop_counting_calls();  // a step never ended
  if (unoptimized) count_calls();
  impl_->in_step = true;
}

JitStats JitProbe::end_step() {
  JitStats out;
  if (!available()) return out;
  stop_counting_calls();
  impl_->in_step = false;
  JitCounters& c = impl_->counters;
  out.compiles = impl_->pending_compiles;
  impl_->pending_compiles = 0;
  out.plan_builds = c.plan_builds.load(std::memory_order_relaxed) - impl_->plan_builds_at_begin;
  impl_->plan_builds_at_begin = c.plan_builds.load(std::memory_order_relaxed);
  for (Watched& w : impl_->watched) {
    auto unit = w.unit.lock();
    if (!unit) continue;
    for (Watched::Fn& fn : w.functions) {
      if (fn.optimized_at_begin || fn.name_slot < 0) continue;
      const int64_t calls =
          c.calls[static_cast<size_t>(fn.name_slot)].load(std::memory_order_relaxed);
      // The call that found the profile complete built the plan and ran it: not a profiling run.
      const bool optimized_now = is_optimized(const_cast<torch::jit::Function&>(*fn.function));
      out.profiling_runs += std::max<int64_t>(0, calls - (optimized_now ? 1 : 0));
      fn.optimized_at_begin = optimized_now;
    }
  }
  for (int i = 0; i < c.name_count.load(std::memory_order_relaxed); ++i) {
    c.calls[static_cast<size_t>(i)].store(0, std::memory_order_relaxed);
  }
  return out;
}

}  // namespace recompdiag::probes
