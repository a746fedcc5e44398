// StepColumns and PackedColumn (step_columns.h): appending, reading one step, and walking runs
// of steps whose probe counters form arithmetic progressions.
#include "recompdiag/core/step_columns.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "recompdiag/core/record_fields.h"

namespace recompdiag {

namespace {

// Wrapping arithmetic: a stride between any two int64 values, and back, exactly.
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, uint64_t n) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * n);
}

int64_t bits_of(double v) {
  int64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
double double_of(int64_t b) {
  double v = 0.0;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// A field's value as the column stores it, and back.
template <class T>
int64_t to_bits(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return bits_of(v);
  } else {
    return static_cast<int64_t>(v);
  }
}
template <class T>
T from_bits(int64_t b) {
  if constexpr (std::is_same_v<T, double>) {
    return double_of(b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return b != 0;
  } else {
    return b;
  }
}

// Where each field of a section lives in its struct, so that appending a step copies the fields'
// bits without a visit per field. Built once per section.
struct FieldSlots {
  template <class S>
  explicit FieldSlots(const Section<S>& section) {
    static_assert(std::is_trivially_copyable_v<S>);
    const S probe{};
    const auto* base = reinterpret_cast<const char*>(&probe);
    for (const Field<S>& f : section) {
      std::visit(
          [&](auto member) {
            using T = std::decay_t<decltype(probe.*member)>;
            static_assert(sizeof(T) == 8 || std::is_same_v<T, bool>);
            offsets.push_back(
                static_cast<size_t>(reinterpret_cast<const char*>(&(probe.*member)) - base));
            is_bool.push_back(std::is_same_v<T, bool>);
          },
          f.member);
    }
  }
  // Field `f` of the struct at `base` as the column stores it (as to_bits()).
  int64_t bits(const char* base, size_t f) const {
    if (is_bool[f]) {
      bool b = false;
      std::memcpy(&b, base + offsets[f], sizeof b);
      return b ? 1 : 0;
    }
    int64_t v = 0;
    std::memcpy(&v, base + offsets[f], sizeof v);
    return v;
  }
  std::vector<size_t> offsets;
  std::vector<char> is_bool;
};

}  // namespace

void PackedColumn::push_back_slow(int64_t value) {
  const size_t i = size_++;
  if (is_plain_) {
    plain_.push_back(value);
    return;
  }
  if (run_length_ == 1) {
    // The second value of a run sets its stride.
    Run& r = runs_.back();
    r.stride = wrap_sub(value, r.first);
    run_length_ = 2;
    expected_ = wrap_add(value, r.stride);
    return;
  }
  runs_.push_back({i, value, 0});
  run_length_ = 1;
  // Runs of one or two values cost more than the values: keep those plainly.
  if (runs_.size() > 64 && runs_.size() * 3 > size_) {
    plain_.reserve(size_ * 2);
    for (size_t k = 0; k < size_; ++k) plain_.push_back((*this)[k]);
    is_plain_ = true;
    run_length_ = 0;
    runs_.clear();
    runs_.shrink_to_fit();
  }
}

size_t PackedColumn::run_index(size_t i) const {
  const auto it = std::upper_bound(runs_.begin(), runs_.end(), static_cast<uint64_t>(i),
                                   [](uint64_t v, const Run& r) { return v < r.start; });
  return static_cast<size_t>(it - runs_.begin()) - 1;
}

int64_t PackedColumn::lookup(size_t i) const {
  if (is_plain_) return plain_[i];
  const Run& r = runs_[run_index(i)];
  return wrap_add(r.first, wrap_mul(r.stride, i - r.start));
}

PackedColumn::Span PackedColumn::span(size_t i) const {
  if (is_plain_) return {i, i + 1, plain_[i], 0};
  const size_t k = run_index(i);
  const Run& r = runs_[k];
  const size_t end = k + 1 < runs_.size() ? static_cast<size_t>(runs_[k + 1].start) : size_;
  return {static_cast<size_t>(r.start), end, r.first, r.stride};
}

size_t PackedColumn::memory_bytes() const {
  return runs_.capacity() * sizeof(Run) + plain_.capacity() * sizeof(int64_t);
}

void PackedColumn::shrink_to_fit() {
  runs_.shrink_to_fit();
  plain_.shrink_to_fit();
}

StepColumns::StepColumns() {
  size_t k = 0;
  for_each_section([&](const auto& section) {
    if (k >= kSections) throw std::logic_error("StepColumns: more probe sections than columns");
    sections_[k++].fields.resize(section.size);
  });
}

void StepColumns::push_back(const StepRecord& s) {
  const size_t i = size();
  step_.push_back(s.step);
  phase_.push_back(s.phase);
  epoch_.push_back(s.epoch);
  step_in_phase_.push_back(s.step_in_phase);
  wall_ms_.push_back(s.wall_ms);
  loss_.push_back(s.loss);
  lr_.push_back(bits_of(s.lr));
  device_present_.push_back(s.device_ms.has_value());
  device_ms_.push_back(s.device_ms ? bits_of(*s.device_ms) : 0);
  head_offset_.push_back(static_cast<int64_t>(head_values_.size()));
  head_values_.insert(head_values_.end(), s.head_losses.begin(), s.head_losses.end());
  if (weights_.empty() || weights_.back().second != s.loss_weights) {
    weights_.emplace_back(i, s.loss_weights);
  }
  for (const std::string& rule : s.alerts) alerts_.emplace_back(i, rule);
  size_t k = 0;
  for_each_section([&](const auto& section) {
    static const FieldSlots kSlots(section);
    SectionColumns& c = sections_[k++];
    const auto& value = s.*section.record;
    c.present.push_back(value.has_value());
    if (!value) {
      for (PackedColumn& f : c.fields) f.push_back(0);
      return;
    }
    const auto* base = reinterpret_cast<const char*>(&*value);
    for (size_t f = 0; f < section.size; ++f) c.fields[f].push_back(kSlots.bits(base, f));
  });
}

void StepColumns::reserve(size_t steps) {
  wall_ms_.reserve(steps);
  loss_.reserve(steps);
}

size_t StepColumns::head_count(size_t i) const {
  const auto end = i + 1 < size() ? static_cast<size_t>(head_offset_[i + 1]) : head_values_.size();
  return end - static_cast<size_t>(head_offset_[i]);
}

const std::vector<double>& StepColumns::loss_weights(size_t i) const {
  static const std::vector<double> kNone;
  const auto it = std::upper_bound(
      weights_.begin(), weights_.end(), i,
      [](size_t v, const std::pair<size_t, std::vector<double>>& w) { return v < w.first; });
  return it == weights_.begin() ? kNone : std::prev(it)->second;
}

StepRecord StepColumns::at(size_t i) const {
  StepRecord s;
  get(i, s);
  return s;
}

void StepColumns::get(size_t i, StepRecord& s) const {
  s.step = step_[i];
  s.phase = phase(i);
  s.epoch = epoch(i);
  s.step_in_phase = step_in_phase_[i];
  s.wall_ms = wall_ms_[i];
  s.loss = loss_[i];
  s.lr = double_of(lr_[i]);
  s.device_ms.reset();
  if (device_present_[i] != 0) s.device_ms = double_of(device_ms_[i]);
  const double* heads = head_losses(i);
  s.head_losses.assign(heads, heads + head_count(i));
  s.loss_weights = loss_weights(i);
  s.alerts.clear();
  auto it = std::lower_bound(
      alerts_.begin(), alerts_.end(), i,
      [](const std::pair<size_t, std::string>& a, size_t v) { return a.first < v; });
  for (; it != alerts_.end() && it->first == i; ++it) s.alerts.push_back(it->second);
  size_t k = 0;
  for_each_section([&](const auto& section) {
    const SectionColumns& c = sections_[k++];
    auto& target = s.*section.record;
    target.reset();
    if (c.present[i] == 0) return;
    target.emplace();
    for (size_t f = 0; f < section.size; ++f) {
      std::visit(
          [&](auto member) {
            using T = std::decay_t<decltype((*target).*member)>;
            (*target).*member = from_bits<T>(c.fields[f][i]);
          },
          section.fields[f].member);
    }
  });
}

void StepColumns::for_each_run(
    size_t lo, size_t hi,
    const std::function<void(const StepRecord&, const StepRecord&, size_t)>& f) const {
  StepRecord first;
  StepRecord stride;
  for (size_t i = lo; i < hi;) {
    size_t end = hi;
    size_t k = 0;
    for_each_section([&](const auto& section) {
      const SectionColumns& c = sections_[k++];
      auto& v = first.*section.record;
      auto& d = stride.*section.record;
      v.reset();
      d.reset();
      const PackedColumn::Span present = c.present.span(i);
      // A presence that changes within its run (stride != 0) is a run of one here.
      end = std::min(end, present.stride == 0 ? present.end : i + 1);
      if (wrap_add(present.first, wrap_mul(present.stride, i - present.start)) == 0) return;
      v.emplace();
      d.emplace();
      for (size_t fi = 0; fi < section.size; ++fi) {
        const PackedColumn::Span sp = c.fields[fi].span(i);
        const int64_t value = wrap_add(sp.first, wrap_mul(sp.stride, i - sp.start));
        std::visit(
            [&](auto member) {
              using T = std::decay_t<decltype((*v).*member)>;
              (*v).*member = from_bits<T>(value);
              if constexpr (std::is_same_v<T, int64_t>) {
                (*d).*member = sp.stride;
                end = std::min(end, sp.end);
              } else {
                (*d).*member = T{};
                end = std::min(end, sp.stride == 0 ? sp.end : i + 1);
              }
            },
            section.fields[fi].member);
      }
    });
    f(first, stride, end - i);
    i = end;
  }
}

size_t StepColumns::memory_bytes() const {
  size_t n = 0;
  for (const PackedColumn* c : {&step_, &phase_, &epoch_, &step_in_phase_, &lr_, &device_present_,
                                &device_ms_, &head_offset_})
    n += c->memory_bytes();
  n += (wall_ms_.capacity() + loss_.capacity() + head_values_.capacity()) * sizeof(double);
  for (const auto& w : weights_) n += sizeof w + w.second.capacity() * sizeof(double);
  for (const auto& a : alerts_) n += sizeof a + a.second.capacity();
  for (const SectionColumns& s : sections_) {
    n += s.present.memory_bytes();
    for (const PackedColumn& c : s.fields) n += c.memory_bytes() + sizeof c;
  }
  return n;
}

void StepColumns::shrink_to_fit() {
  for (PackedColumn* c : {&step_, &phase_, &epoch_, &step_in_phase_, &lr_, &device_present_,
                          &device_ms_, &head_offset_})
    c->shrink_to_fit();
  wall_ms_.shrink_to_fit();
  loss_.shrink_to_fit();
  head_values_.shrink_to_fit();
  weights_.shrink_to_fit();
  alerts_.shrink_to_fit();
  for (SectionColumns& s : sections_) {
    s.present.shrink_to_fit();
    for (PackedColumn& c : s.fields) c.shrink_to_fit();
  }
}

}  // namespace recompdiag
