// The dispatcher probe's two hooks into LibTorch's dispatcher, which share what they count: a
// global RecordFunction callback, and a boxed fallback on a mode key.
//
// NOTE: this file must be compiled with the NDEBUG setting LibTorch was built
// with (CMake forces NDEBUG on it): RecordFunction has a debug-only member, so
// a mismatch shifts inputs_ and reads garbage.
#include "recompdiag/probes/dispatcher_probe.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/dispatch/ObservedOperators.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "detail/dispatch_state.h"
#include "recompdiag/core/error.h"

namespace recompdiag::probes {

namespace {

using State = detail::DispatchState;

// The active probe's state. Callbacks are plain function pointers, so the state
// is found here.
std::atomic<State*> g_state{nullptr};

// kUnknown: a record nested deeper than the stack below holds; its end classifies it by name.
enum class OpClass : uint8_t { kPlain, kCopy, kSync, kTransparent, kRecorder, kUnknown };

// Per-thread nesting: only the outermost op of a thread counts as an op, only the outermost sync
// as a sync, and syncs inside the recorder's scope are the recorder's. The start callback pushes
// each record's class and the end callback pops it, so that the end does no string work: a
// counted step runs both for every op (thousands a step), and recomputing the class by name at the
// end was a third of the callbacks' instructions. RecordFunction ends the records of a thread in
// the reverse order it started them.
// One thread_local struct: the library is position-independent, so each thread_local access may
// cost a __tls_get_addr call; a callback makes one.
struct Nesting {
  static constexpr int kDepth = 64;
  int op = 0;
  int sync = 0;
  int recorder = 0;
  int depth = 0;
  OpClass stack[kDepth] = {};

  void push(OpClass cls) {
    if (depth < kDepth) stack[depth] = cls;
    ++depth;
  }
  // The class of the innermost open record; kTransparent when none is open (an end without its
  // start: a callback enabled while the record was open), kUnknown beyond the stack.
  OpClass pop() {
    if (depth == 0) return OpClass::kTransparent;
    --depth;
    return depth < kDepth ? stack[depth] : OpClass::kUnknown;
  }
};
thread_local Nesting t_nesting;

// Whether C string `s` starts with `prefix`, compared in line and stopping at the first
// difference: no call, and no read past the end of a name shorter than the prefix.
template <size_t N>
bool starts_with(const char* s, const char (&prefix)[N]) {
  for (size_t i = 0; i + 1 < N; ++i) {
    if (s[i] != prefix[i]) return false;
  }
  return true;
}

template <size_t N>
bool equals(const char* s, const char (&name)[N]) {
  return starts_with(s, name) && s[N - 1] == '\0';
}

// Classifies by name without allocating: autograd's "evaluate_function: X" wrapper is
// transparent (its ops are the real work), aten::copy_ carries the devices of a copy, and a few
// ops block the host until the device is done.
OpClass classify(const char* name) {
  if (name == nullptr) return OpClass::kPlain;
  if (!starts_with(name, "aten::")) {
    return starts_with(name, "autograd::") ? OpClass::kTransparent : OpClass::kPlain;
  }
  const char* op = name + 6;
  switch (op[0]) {
    case 'c':
      return equals(op, "copy_") ? OpClass::kCopy : OpClass::kPlain;
    case 'i':
      return equals(op, "item") || equals(op, "is_nonzero") ? OpClass::kSync : OpClass::kPlain;
    case '_':
      return equals(op, "_local_scalar_dense") || equals(op, "_unique") || equals(op, "_unique2")
                 ? OpClass::kSync
                 : OpClass::kPlain;
    case 'n':
      return equals(op, "nonzero") ? OpClass::kSync : OpClass::kPlain;
    case 'e':
      return equals(op, "equal") ? OpClass::kSync : OpClass::kPlain;
    case 'u':
      return equals(op, "unique_consecutive") || equals(op, "unique_dim") ? OpClass::kSync
                                                                          : OpClass::kPlain;
    default:
      return OpClass::kPlain;
  }
}

// The device an op runs on: its first tensor input, else an explicit device
// argument, else the host (factory ops without a device create host tensors).
c10::Device op_device(c10::ArrayRef<const c10::IValue> inputs) {
  for (const auto& v : inputs) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined()) return t.device();
    } else if (v.isTensorList()) {
      // c10::List hands out tensors by value: a refcount bump, no allocation.
      const c10::List<at::Tensor> list = v.toTensorList();
      for (size_t i = 0; i < list.size(); ++i) {
        const at::Tensor t = list.get(i);
        if (t.defined()) return t.device();
      }
    } else if (v.isDevice()) {
      return v.toDevice();
    }
  }
  return c10::Device(c10::kCPU);
}

uint64_t signature_of(const char* name, c10::ArrayRef<const c10::IValue> inputs) {
  detail::Fnv1a h;
  h.add_string(name);
  for (const auto& v : inputs) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) {
        h.add_word(0xdead);
        continue;
      }
      h.add_word(static_cast<uint64_t>(t.scalar_type()) << 16 |
                 static_cast<uint64_t>(static_cast<uint8_t>(t.device().type())) << 8 |
                 static_cast<uint64_t>(static_cast<uint8_t>(t.device().index())));
      if (t.is_nested() || t.is_sparse()) continue;
      h.add_word(static_cast<uint64_t>(t.dim()));
      for (int64_t s : t.sizes()) h.add_word(static_cast<uint64_t>(s));
    } else if (v.isTensorList()) {
      h.add_word(0x7157 + v.toTensorList().size());
    } else {
      // The kind of a non-tensor argument, not its value (tagKind() would
      // allocate).
      h.add_word(v.isNone()      ? 1
                 : v.isInt()     ? 2
                 : v.isDouble()  ? 3
                 : v.isBool()    ? 4
                 : v.isIntList() ? 5
                                 : 6);
    }
  }
  return h.value();
}

void count_copy(State& s, c10::ArrayRef<const c10::IValue> inputs) {
  // aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking): self is the
  // destination.
  if (inputs.size() < 2 || !inputs[0].isTensor() || !inputs[1].isTensor()) return;
  const at::Tensor& dst = inputs[0].toTensor();
  const at::Tensor& src = inputs[1].toTensor();
  if (!dst.defined() || !src.defined() || dst.device() == src.device()) return;
  const int64_t bytes =
      static_cast<int64_t>(src.numel()) * static_cast<int64_t>(src.element_size());
  const bool src_host = src.device().is_cpu();
  const bool dst_host = dst.device().is_cpu();
  if (src_host && !dst_host) {
    s.counters.add<&DispatchStats::copies_h2d>(1);
    s.counters.add<&DispatchStats::bytes_h2d>(bytes);
  } else if (!src_host && dst_host) {
    s.counters.add<&DispatchStats::copies_d2h>(1);
    s.counters.add<&DispatchStats::bytes_d2h>(bytes);
  } else if (!src_host && !dst_host) {
    s.counters.add<&DispatchStats::copies_d2d>(1);
    s.counters.add<&DispatchStats::bytes_d2d>(bytes);
  }
}

// Host syncs need no inputs: the op's name says it blocks.
void count_sync(State& s, const Nesting& n) {
  if (n.recorder > 0) {
    s.counters.add<&DispatchStats::recorder_syncs>(1);
  } else {
    s.counters.add<&DispatchStats::syncs>(1);
  }
}

// What an op with its inputs tells beyond its name: its device, a cross-device copy, and
// whether its signature is new.
void inspect(State& s, const char* name, OpClass cls, bool outermost,
             c10::ArrayRef<const c10::IValue> inputs) {
  if (cls == OpClass::kCopy) count_copy(s, inputs);
  if (!outermost) return;
  const c10::Device device = op_device(inputs);
  if (device.is_cpu()) {
    s.counters.add<&DispatchStats::ops_cpu>(1);
    if (s.expect_cuda) s.counters.add<&DispatchStats::host_ops>(1);
  } else if (device.is_cuda()) {
    s.counters.add<&DispatchStats::ops_cuda>(1);
  }
  if (s.hash_signatures) {
    switch (s.signatures.insert(signature_of(name, inputs))) {
      case detail::InsertResult::kNew:
        s.counters.add<&DispatchStats::new_signatures>(1);
        break;
      case detail::InsertResult::kDropped:
        s.counters.add<&DispatchStats::dropped>(1);
        break;
      case detail::InsertResult::kSeen:
        break;
    }
  }
}

// The class a record's start gave it, from its scope and name (what the stack holds for
// shallower ones).
OpClass class_of(at::RecordScope scope, const char* name) {
  if (scope == at::RecordScope::USER_SCOPE) {
    return std::strcmp(name, kRecorderReadScope) == 0 ? OpClass::kRecorder : OpClass::kTransparent;
  }
  return classify(name);
}

// What the start of an op (not a user scope or autograd's wrapper) counts into `s` (the active
// probe's state, loaded once by the caller; null: only the nesting is kept): the op itself when it
// is the thread's outermost, the outermost sync, and with `inputs` what they tell.
template <typename Inputs>
void count_op(State* s, Nesting& n, const char* name, OpClass cls, bool inspecting,
              const Inputs& inputs) {
  const bool outermost = n.op++ == 0;
  const bool outer_sync = cls == OpClass::kSync && n.sync++ == 0;
  if (s == nullptr) return;
  if (outer_sync) count_sync(*s, n);
  if (outermost) s->counters.add<&DispatchStats::ops>(1);
  if (inspecting) {
    try {
      inspect(*s, name, cls, outermost, inputs());
    } catch (...) {
      // An input we cannot read (an exotic tensor type): count it, never throw
      // into the op.
      s->counters.add<&DispatchStats::dropped>(1);
    }
  }
}

// The end of an op that count_op started.
void close_op(Nesting& n, OpClass cls) {
  if (cls == OpClass::kSync && n.sync > 0) --n.sync;
  if (n.op > 0) --n.op;
}

// The start callback of both modes: `kInputs` is the inspecting one (registered with
// needsInputs), the other counts ops and syncs by name alone, so that LibTorch does not box the
// op's arguments into IValues for it.
template <bool kInputs>
std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  const char* name = fn.name();
  Nesting& n = t_nesting;
  const OpClass cls = class_of(fn.scope(), name);
  n.push(cls);
  if (cls == OpClass::kRecorder) ++n.recorder;
  if (cls == OpClass::kTransparent || cls == OpClass::kRecorder) return nullptr;
  count_op(g_state.load(std::memory_order_acquire), n, name, cls, kInputs,
           [&fn] { return fn.inputs(); });
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* /*unused*/) {
  Nesting& n = t_nesting;
  OpClass cls = n.pop();
  if (cls == OpClass::kUnknown) cls = class_of(fn.scope(), fn.name());
  switch (cls) {
    case OpClass::kTransparent:
    case OpClass::kUnknown:
      return;
    case OpClass::kRecorder:
      if (n.recorder > 0) --n.recorder;
      return;
    case OpClass::kSync:
    case OpClass::kPlain:
    case OpClass::kCopy:
      close_op(n, cls);
      return;
  }
}

// The callback of a step: the inspecting one (registered with needsInputs) or the counting one,
// for ops and user scopes (the recorder's).
at::RecordFunctionCallback make_callback(bool inputs) {
  at::RecordFunctionCallback cb(inputs ? &on_start<true> : &on_start<false>, &on_end);
  cb.needsInputs(inputs).scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE});
  return cb;
}

// The mode key's fallback: every op a thread with the key included dispatches enters here first
// (the key sits above autograd), is counted, and goes on to the keys below with its arguments
// boxed. Only ops come here, so the op's class needs no stack: this frame holds it.
constexpr c10::DispatchKey kModeKey = c10::DispatchKey::TESTING_ONLY_GenericMode;
// Inside an op counted by name, what it calls runs without the mode key and with this one, which
// falls through for every op but the syncs: the dispatcher leaves a key that falls through out of
// an op's key set (as Autocast's does), so the nested ops run unboxed and unseen, as they cost
// nothing to count, and only a nested sync is boxed to be counted. It is below the mode key.
constexpr c10::DispatchKey kNestedSyncKey = c10::DispatchKey::TESTING_ONLY_GenericWrapper;

// The ops RecordFunction never records (c10::ObservedOperators: aten::size, aten::is_leaf,
// aten::_version, ...: metadata reads), told apart by the address of their name, which the
// dispatcher keeps for the op's lifetime. Filled at registration, read only afterwards.
std::array<const c10::OperatorName*, 32> g_unobserved{};

bool unobserved(const c10::OperatorHandle& op) {
  const c10::OperatorName* name = &op.operator_name();
  for (const c10::OperatorName* u : g_unobserved) {
    if (u == nullptr) return false;
    if (u == name) return true;
  }
  return false;
}

// Ends what count_op started when the fallback's frame goes, the op thrown out of or not.
struct CloseOp {
  Nesting& n;
  OpClass cls;
  ~CloseOp() { close_op(n, cls); }
};

void mode_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                   torch::jit::Stack* stack) {
  const c10::DispatchKeySet below =
      keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kModeKey);
  State* s = g_state.load(std::memory_order_acquire);
  Nesting& n = t_nesting;
  // No probe (the key left included on a thread after its probe went), or an outermost op that
  // RecordFunction does not count either (nested, such an op counts nothing): pass it on.
  if (s == nullptr || (n.op == 0 && unobserved(op))) {
    op.redispatchBoxed(below, stack);
    return;
  }
  const char* name = op.operator_name().name.c_str();
  const OpClass cls = classify(name);
  const bool inspecting = s->inspecting.load(std::memory_order_relaxed);
  // The op's arguments are the top of the stack.
  count_op(s, n, name, cls, inspecting, [&] {
    const size_t args = op.schema().arguments().size();
    return c10::ArrayRef<const c10::IValue>(stack->data() + stack->size() - args, args);
  });
  const CloseOp close{n, cls};
  if (inspecting) {
    // Nested ops tell their devices and copies: each comes here too.
    op.redispatchBoxed(below, stack);
    return;
  }
  // Counting by name needs of the nested ops only their syncs.
  const c10::impl::ExcludeDispatchKeyGuard no_mode_key(kModeKey);
  const c10::impl::IncludeDispatchKeyGuard nested_syncs(kNestedSyncKey);
  op.redispatchBoxed(below, stack);
}

// The nested sync key's kernel of the sync ops (classify: kSync), reached only inside an op that
// the mode key counted by name.
void nested_sync(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                 torch::jit::Stack* stack) {
  const c10::DispatchKeySet below =
      keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kNestedSyncKey);
  State* s = g_state.load(std::memory_order_acquire);
  Nesting& n = t_nesting;
  count_op(s, n, op.operator_name().name.c_str(), OpClass::kSync, false,
           [] { return c10::ArrayRef<const c10::IValue>(); });
  const CloseOp close{n, OpClass::kSync};
  op.redispatchBoxed(below, stack);
}

// The registrations of both keys' fallbacks and of the nested sync key's kernels (below); set
// once, never freed. Plain pointers, never destroyed, so that LeakSanitizer sees them as live at
// exit.
std::array<torch::Library*, 3> g_mode_libraries{};

// Registers both keys' fallbacks and kernels, once per process and for good: a thread may keep
// the key after its probe is gone (a step that never ended), and a key with no kernel would fail
// every op it dispatches. Returns "" when registered, else why not.
const std::string& mode_key_registration() {
  static const std::string why = []() -> std::string {
    try {
      // Every overload of each (aten::size.int, aten::size.Dimname, ...), as RecordFunction.
      size_t n = 0;
      std::vector<std::string> syncs;
      auto& dispatcher = c10::Dispatcher::singleton();
      for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
        if (classify(name.name.c_str()) == OpClass::kSync)
          syncs.push_back(name.overload_name.empty() ? name.name
                                                     : name.name + "." + name.overload_name);
        if (c10::ObservedOperators::isObserved(name)) continue;
        const auto op = dispatcher.findOp(name);
        if (!op) continue;
        // A LibTorch with more would have the mode key count ops RecordFunction skips.
        if (n == g_unobserved.size())
          return "mode key fallback not registered: this LibTorch has more than " +
                 std::to_string(g_unobserved.size()) + " unobserved operators";
        g_unobserved[n++] = &op->operator_name();
      }
      // Never destroyed, so never deregistered (above).
      auto library = [](size_t i, const char* ns, c10::DispatchKey key) {
        g_mode_libraries[i] = new torch::Library(torch::Library::IMPL, ns, key, __FILE__, __LINE__);
        return g_mode_libraries[i];
      };
      library(0, "_", kModeKey)
          ->fallback(torch::CppFunction::makeFromBoxedFunction<&mode_fallback>());
      library(1, "_", kNestedSyncKey)->fallback(torch::CppFunction::makeFallthrough());
      torch::Library* sync_kernels = library(2, "aten", kNestedSyncKey);  // classify: aten's
      for (const std::string& sync : syncs)
        sync_kernels->impl(sync.c_str(), torch::CppFunction::makeFromBoxedFunction<&nested_sync>());
      return "";
    } catch (const c10::Error& e) {
      return std::string("mode key fallback not registered: ") + e.what_without_backtrace();
    } catch (const std::exception& e) {
      return std::string("mode key fallback not registered: ") + e.what();
    }
  }();
  return why;
}

}  // namespace

RecorderRead::RecorderRead() { ++t_nesting.recorder; }

RecorderRead::~RecorderRead() {
  Nesting& n = t_nesting;
  if (n.recorder > 0) --n.recorder;
}

void DispatcherOptions::validate() const {
  if (expected_device.empty()) throw InputError("DispatcherOptions::expected_device is empty");
  require_at_least("DispatcherOptions::sample_every", sample_every, 1);
  require_at_least("DispatcherOptions::signature_capacity", signature_capacity, 1);
}

DispatcherProbe::DispatcherProbe(DispatcherOptions options)
    : options_((options.validate(), std::move(options))),
      state_(std::make_unique<State>(
          static_cast<size_t>(std::max<int64_t>(64, options_.signature_capacity)))) {
  state_->expect_cuda = options_.expected_device.rfind("cuda", 0) == 0;
  state_->hash_signatures = options_.signatures;
  const bool automatic = options_.hook == DispatchHook::kAuto;
  options_.hook = resolve_dispatch_hook(options_.hook, /*torch_compile_may_run=*/false);
  State* expected = nullptr;
  if (!g_state.compare_exchange_strong(expected, state_.get())) {
    availability_.reason = "another dispatcher probe is active in this process";
    return;
  }
  if (options_.hook == DispatchHook::kModeKey) {
    const std::string& why = mode_key_registration();
    if (why.empty()) {
      availability_.available = true;
      return;
    }
    if (!automatic) {
      availability_.reason = why;
      g_state.store(nullptr);
      return;
    }
    options_.hook = DispatchHook::kRecordFunction;  // kAuto: the callback instead
  }
  // A callback is registered for a step and removed after it, not registered once and enabled
  // per step: LibTorch copies every registered global callback, enabled or not, each time a
  // thread's RecordFunction state is set, and the autograd engine sets it for every node it runs
  // (hundreds a step). Registered for the whole run, two callbacks cost a counted step 0.6M
  // instructions of copies, and every unobserved step of the default sampling some too.
  try {
    at::removeCallback(at::addGlobalCallback(make_callback(true)));  // can it register at all?
    availability_.available = true;
  } catch (const std::exception& e) {
    g_state.store(nullptr);
    availability_.reason = std::string("RecordFunction callback not installed: ") + e.what();
  }
}

DispatcherProbe::~DispatcherProbe() {
  if (!availability_.available) return;
  stop_observing();
  g_state.store(nullptr, std::memory_order_release);
}

void DispatcherProbe::start_observing(bool inspect) {
  if (options_.hook == DispatchHook::kModeKey) {
    state_->inspecting.store(inspect, std::memory_order_relaxed);
    key_was_included_ = c10::impl::tls_is_dispatch_key_included(kModeKey);
    c10::impl::tls_set_dispatch_key_included(kModeKey, true);
    key_included_ = true;
  } else {
    registered_ = at::addGlobalCallback(make_callback(inspect));
  }
}

void DispatcherProbe::stop_observing() {
  if (registered_ != 0) at::removeCallback(registered_);
  registered_ = 0;
  if (key_included_) c10::impl::tls_set_dispatch_key_included(kModeKey, key_was_included_);
  key_included_ = false;
}

void DispatcherProbe::begin_step(int64_t step, bool force_sample) {
  if (!availability_.available) return;
  state_->counters.reset();
  stop_observing();  // a step never ended
  in_step_ = true;
  sampled_ = force_sample || step % options_.sample_every == 0;
  if (sampled_ || options_.count_unsampled) start_observing(sampled_);
}

DispatchStats DispatcherProbe::end_step() {
  DispatchStats out;
  if (!availability_.available || !in_step_) {
    out.sampled = false;
    out.counted = false;
    return out;
  }
  stop_observing();
  in_step_ = false;
  out.sampled = sampled_;
  out.counted = sampled_ || options_.count_unsampled;
  state_->counters.take(out);
  return out;
}

int64_t DispatcherProbe::signatures_seen() const {
  return static_cast<int64_t>(state_->signatures.size());
}

}  // namespace recompdiag::probes
