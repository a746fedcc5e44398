// The torch.compile probe. See compiled_probe.h. Compiled with NDEBUG forced, like the other
// probes that install a RecordFunction callback (RecordFunction's layout depends on NDEBUG).
#include "recompdiag/probes/compiled_probe.h"

#include "recompdiag/core/record_fields.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>

namespace recompdiag::probes {

// Dynamo's scopes come a few per step from the thread that runs Python: a mutex costs nothing
// there. Every other op pays only the prefix test in on_scope.
struct CompiledProbe::State {
  std::mutex mutex;
  CompiledStats step;
  // What a step starts from: the ledger flag and the levels (kLevel fields) of the steps before.
  CompiledStats carried;
  std::unordered_set<std::string> regions;  // every F/C seen: a new one is a compile
  bool lookup_pending = false;              // a lookup that no region has followed yet

  void on_lookup() {
    std::lock_guard<std::mutex> lock(mutex);
    if (lookup_pending) ++step.eager_fallbacks;
    lookup_pending = true;
    ++step.lookups;
  }
  void on_region(std::string_view id) {
    std::lock_guard<std::mutex> lock(mutex);
    lookup_pending = false;
    ++step.region_runs;
    if (!regions.emplace(id).second) return;
    ++step.compiles;
    // "F/C" or "!A/F/C": the compile number is after the last '/'.
    const size_t slash = id.rfind('/');
    if (slash != std::string_view::npos && id.substr(slash + 1) != "0") ++step.recompiles;
  }
};

namespace {

constexpr std::string_view kLookup = "TorchDynamo Cache Lookup";
constexpr std::string_view kRegion = "Torch-Compiled Region: ";

// The live probe's state: RecordFunction callbacks carry no user data, so one probe per process
// counts (a second one reports itself unavailable, as the dispatcher probe does).
std::atomic<CompiledProbe::State*> g_state{nullptr};

std::unique_ptr<at::ObserverContext> on_scope(const at::RecordFunction& fn) {
  const char* name = fn.name();
  // Every op of the step comes here: reject on the first bytes ("aten::", "autograd::", ...).
  if (name == nullptr || name[0] != 'T' || name[1] != 'o') return nullptr;
  CompiledProbe::State* state = g_state.load(std::memory_order_acquire);
  if (state == nullptr) return nullptr;
  const std::string_view n(name);
  if (n == kLookup) {
    state->on_lookup();
  } else if (n.substr(0, kRegion.size()) == kRegion) {
    state->on_region(n.substr(kRegion.size()));
  }
  return nullptr;
}

}  // namespace

CompiledProbe::CompiledProbe(int64_t sample_every)
    : state_(std::make_unique<State>()), sample_every_(std::max<int64_t>(1, sample_every)) {
  State* expected = nullptr;
  if (!g_state.compare_exchange_strong(expected, state_.get())) {
    availability_ = {false, "unavailable: another torch.compile probe is alive in this process"};
    return;
  }
  callback_ = at::addGlobalCallback(
      at::RecordFunctionCallback(&on_scope).needsInputs(false).scopes({at::RecordScope::FUNCTION}));
  at::disableCallback(callback_);  // on during observed steps only
}

CompiledProbe::~CompiledProbe() {
  if (callback_ != 0) at::removeCallback(callback_);
  State* mine = state_.get();
  g_state.compare_exchange_strong(mine, nullptr);
}

const char* CompiledProbe::name() const { return sections::kCompiled; }
const Availability& CompiledProbe::availability() const { return availability_; }

void CompiledProbe::begin_step(const StepBegin& begin) {
  if (!availability_.available) return;
  begun_ = true;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    // Compile time noted between steps (a compile callback after end_step) stays with the next
    // step; the counts start afresh.
    // So do the ledger's counts of a compile between the steps (its levels are carried).
    CompiledStats next = state_->carried;
    next.compile_ms = state_->step.compile_ms;
    for (size_t i = kCompiledLedgerFirst + 1; i < kCompiledSection.size; ++i) {
      const Field<CompiledStats>& f = kCompiledSection.fields[i];
      if (f.unit == FieldUnit::kLevel) continue;
      std::visit([&](auto member) { next.*member = state_->step.*member; }, f.member);
    }
    state_->step = next;
    state_->lookup_pending = false;
  }
  if (begin.observe_all || begin.step % sample_every_ == 0) observe_now();
}

void CompiledProbe::observe_now() {
  if (!availability_.available || !begun_ || enabled_) return;
  at::reenableCallback(callback_);
  enabled_ = true;
}

void CompiledProbe::end_step(StepRecord& record) {
  if (!availability_.available) return;
  if (enabled_) at::disableCallback(callback_);
  std::lock_guard<std::mutex> lock(state_->mutex);
  // A lookup still pending at step end ran its frame eagerly.
  if (state_->lookup_pending) ++state_->step.eager_fallbacks;
  state_->lookup_pending = false;
  state_->step.sampled = enabled_;
  if (begun_) record.compiled = state_->step;
  begun_ = false;
  enabled_ = false;
  state_->step = state_->carried;
}

void CompiledProbe::add_ledger(std::string_view name, double value) {
  const Field<CompiledStats>* field = nullptr;
  for (size_t i = kCompiledLedgerFirst + 1; i < kCompiledSection.size; ++i) {
    if (name == kCompiledSection.fields[i].name) field = &kCompiledSection.fields[i];
  }
  if (field == nullptr || field->unit == FieldUnit::kFlag) {
    throw std::invalid_argument("the compiled section has no ledger field '" + std::string(name) +
                                "'");
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->step.ledger = state_->carried.ledger = true;
  const bool level = field->unit == FieldUnit::kLevel;
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(state_->step.*member)>;
        if constexpr (!std::is_same_v<T, bool>) {
          if (level) {
            // A level holds from step to step until torch reports another.
            state_->step.*member = state_->carried.*member = static_cast<T>(value);
          } else {
            state_->step.*member += static_cast<T>(value);
          }
        }
      },
      field->member);
}

void CompiledProbe::add_compile_time(double ms) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->step.compile_ms += ms;
}

int64_t CompiledProbe::regions_seen() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<int64_t>(state_->regions.size());
}

}  // namespace recompdiag::probes
