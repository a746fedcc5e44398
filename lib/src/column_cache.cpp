// Run files' columns kept in a cache directory, bit for bit, checked against the run file.

#include "recompdiag/core/column_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/record_fields.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/version.h"

namespace recompdiag {

namespace detail {

// Writes and reads the columns' members as they are in memory (one machine's cache: its byte
// order, its sizes). Reading checks every length against what is left, so that a damaged file
// fails to read instead of reading past its end.
struct ColumnCodec {
  // The packed columns of the step numbers, phases and the rest, in one order for both ways.
  static std::array<const PackedColumn*, 8> columns(const StepColumns& s) {
    return {&s.step_, &s.phase_,          &s.epoch_,     &s.step_in_phase_,
            &s.lr_,   &s.device_present_, &s.device_ms_, &s.head_offset_};
  }
  static std::array<PackedColumn*, 8> columns(StepColumns& s) {
    return {&s.step_, &s.phase_,          &s.epoch_,     &s.step_in_phase_,
            &s.lr_,   &s.device_present_, &s.device_ms_, &s.head_offset_};
  }

  std::string* out = nullptr;  // writing: what is not yet in `file`
  std::ofstream* file = nullptr;
  const char* p = nullptr;  // reading: what is left
  const char* end = nullptr;

  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out->append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    // Into the file a megabyte at a time: the columns are not held twice.
    if (file && out->size() > (size_t{1} << 20)) {
      file->write(out->data(), static_cast<std::streamsize>(out->size()));
      out->clear();
    }
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out->append(s);
  }
  void put_column(const PackedColumn& c) {
    put_vector(c.runs_);
    put_vector(c.plain_);
    put<uint8_t>(c.is_plain_);
    put<uint64_t>(c.size_);
    put<uint64_t>(c.run_length_);
    put<int64_t>(c.expected_);
  }
  void put_steps(const StepColumns& s) {
    for (const PackedColumn* c : columns(s)) put_column(*c);
    put_vector(s.wall_ms_);
    put_vector(s.loss_);
    put_vector(s.head_values_);
    put<uint64_t>(s.weights_.size());
    for (const auto& [step, weights] : s.weights_) {
      put<uint64_t>(step);
      put_vector(weights);
    }
    put<uint64_t>(s.alerts_.size());
    for (const auto& [step, rule] : s.alerts_) {
      put<uint64_t>(step);
      put_string(rule);
    }
    for (const auto& section : s.sections_) {
      put_column(section.present);
      put<uint64_t>(section.fields.size());
      for (const PackedColumn& f : section.fields) put_column(f);
    }
  }

  template <class T>
  bool get(T& v) {
    if (static_cast<size_t>(end - p) < sizeof v) return false;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return true;
  }
  template <class T>
  bool get_vector(std::vector<T>& v) {
    uint64_t n = 0;
    if (!get(n) || n > static_cast<size_t>(end - p) / sizeof(T)) return false;
    v.resize(n);
    if (n) std::memcpy(v.data(), p, n * sizeof(T));
    p += n * sizeof(T);
    return true;
  }
  bool get_string(std::string& s) {
    uint64_t n = 0;
    if (!get(n) || n > static_cast<size_t>(end - p)) return false;
    s.assign(p, n);
    p += n;
    return true;
  }
  bool get_column(PackedColumn& c) {
    uint8_t plain = 0;
    uint64_t size = 0, run_length = 0;
    if (!get_vector(c.runs_) || !get_vector(c.plain_) || !get(plain) || !get(size) ||
        !get(run_length) || !get(c.expected_)) {
      return false;
    }
    c.is_plain_ = plain != 0;
    c.size_ = size;
    c.run_length_ = run_length;
    // What the readers index must be there.
    if (c.is_plain_ ? c.plain_.size() != size : (size > 0 && c.runs_.empty())) return false;
    for (const auto& r : c.runs_) {
      if (r.start >= size) return false;
    }
    return true;
  }
  bool get_steps(StepColumns& s) {
    for (PackedColumn* c : columns(s)) {
      if (!get_column(*c)) return false;
    }
    uint64_t n = 0;
    if (!get_vector(s.wall_ms_) || !get_vector(s.loss_) || !get_vector(s.head_values_) || !get(n)) {
      return false;
    }
    s.weights_.resize(0);
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t step = 0;
      std::vector<double> weights;
      if (!get(step) || !get_vector(weights)) return false;
      s.weights_.emplace_back(step, std::move(weights));
    }
    if (!get(n)) return false;
    s.alerts_.resize(0);
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t step = 0;
      std::string rule;
      if (!get(step) || !get_string(rule)) return false;
      s.alerts_.emplace_back(step, std::move(rule));
    }
    const size_t steps = s.wall_ms_.size();
    for (auto& section : s.sections_) {
      if (!get_column(section.present) || !get(n) || n != section.fields.size()) return false;
      for (PackedColumn& f : section.fields) {
        if (!get_column(f) || f.size() != steps) return false;
      }
      if (section.present.size() != steps) return false;
    }
    for (PackedColumn* c : columns(s)) {
      if (c->size() != steps) return false;
    }
    return s.loss_.size() == steps && s.head_offset_.size() == steps;
  }
};

}  // namespace detail

namespace {

constexpr char kMagic[] = "recompdiag columns\n";
constexpr uint64_t kFormat = 1;
constexpr uint64_t kByteOrder = 0x0102030405060708;

// The step sections as this build holds them in columns: each section's name and its fields'
// names and kinds, in order. A build whose sections differ (a field added, renamed or retyped
// within one version) reads no cache of another.
const std::string& columns_schema() {
  static const std::string schema = [] {
    std::string out;
    for_each_section([&](const auto& section) {
      out += section.name;
      out += '{';
      for (const auto& f : section) {
        out += f.name;
        out += static_cast<char>('0' + f.member.index());
        out += ',';
      }
      out += '}';
    });
    return out;
  }();
  return schema;
}

// What a cache file must match of its run file.
struct Identity {
  std::string path;  // absolute
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  bool operator==(const Identity& o) const {
    return path == o.path && size == o.size && mtime_ns == o.mtime_ns && inode == o.inode;
  }
};

bool identify(const std::string& path, Identity& id) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::error_code ec;
  id.path = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) return false;
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.inode = static_cast<uint64_t>(st.st_ino);
  return true;
}

// The cache file of a run file: FNV-1a of its absolute path.
std::string cache_file(const std::string& dir, const Identity& id) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : id.path) h = (h ^ c) * 1099511628211ull;
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.columns", static_cast<unsigned long long>(h));
  return dir + "/" + name;
}

// The run's lines but its steps: header, events, summary.
std::string meta_lines(const ColumnarRun& run) {
  std::string text = to_json_line(run.header) + "\n";
  for (const EventRecord& e : run.events) text += to_json_line(e) + "\n";
  if (run.summary) text += to_json_line(*run.summary) + "\n";
  return text;
}

// Whether the lines read back as the run has them (a field the writer does not know would be
// lost: such a run is not cached).
bool round_trips(const ColumnarRun& run, const std::string& text) {
  try {
    return meta_lines(parse_columnar_run(text, run.path)) == text;
  } catch (const std::exception&) {
    return false;
  }
}

bool write_cache(const std::string& file, const Identity& id, const ColumnarRun& run) {
  const std::string text = meta_lines(run);
  if (!round_trips(run, text)) return false;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
  static std::atomic<int> writes{0};  // two threads may cache the same run (compare x x)
  const std::string tmp =
      file + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(writes++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    std::string out = kMagic;
    detail::ColumnCodec codec;
    codec.out = &out;
    codec.file = &f;
    codec.put(kFormat);
    codec.put(kByteOrder);
    codec.put_string(kToolVersion);
    codec.put_string(columns_schema());
    codec.put_string(id.path);
    codec.put(id.size);
    codec.put(id.mtime_ns);
    codec.put(id.inode);
    codec.put_string(text);
    codec.put_steps(run.steps);
    codec.put(kByteOrder);  // the end: a file cut short has no second marker
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f.flush()) {
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

bool read_cache(const std::string& file, const Identity& id, const std::string& path,
                ColumnarRun& run) {
  std::ifstream f(file, std::ios::binary | std::ios::ate);
  if (!f) return false;
  std::string bytes(static_cast<size_t>(f.tellg()), '\0');
  f.seekg(0);
  if (!f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return false;
  const size_t magic = sizeof kMagic - 1;
  if (bytes.compare(0, magic, kMagic) != 0) return false;
  detail::ColumnCodec in;
  in.p = bytes.data() + magic;
  in.end = bytes.data() + bytes.size();
  uint64_t format = 0, order = 0;
  std::string version, schema, text;
  Identity cached;
  if (!in.get(format) || format != kFormat || !in.get(order) || order != kByteOrder ||
      !in.get_string(version) || version != kToolVersion || !in.get_string(schema) ||
      schema != columns_schema() || !in.get_string(cached.path) || !in.get(cached.size) ||
      !in.get(cached.mtime_ns) || !in.get(cached.inode) || !(cached == id) ||
      !in.get_string(text)) {
    return false;
  }
  ColumnarRun out;
  try {
    out = parse_columnar_run(text, path);
  } catch (const std::exception&) {
    return false;
  }
  if (!in.get_steps(out.steps) || !in.get(order) || order != kByteOrder || in.p != in.end) {
    return false;
  }
  out.path = path;
  run = std::move(out);
  return true;
}

// Removes the least recently used files of `dir` (by modification time: a hit touches its
// file) until the rest hold at most `max_bytes`.
void bound_cache(const std::string& dir, uint64_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  uint64_t total = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".columns" || !e.is_regular_file(ec)) continue;
    total += e.file_size(ec);
    files.emplace_back(e.last_write_time(ec), e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& [time, path] : files) {
    if (total <= max_bytes) break;
    const uint64_t size = fs::file_size(path, ec);
    if (fs::remove(path, ec)) total -= size;
  }
}

}  // namespace

std::string column_cache_dir() {
  if (const char* dir = std::getenv("RECOMPDIAG_COLUMN_CACHE")) {
    const std::string d = dir;
    return d == "off" ? std::string() : d;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/recompdiag/columns";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/recompdiag/columns";
  }
  return "";
}

ColumnarRun read_columnar_run_cached(const std::string& path) {
  ColumnCacheOptions options;
  options.dir = column_cache_dir();
  return read_columnar_run_cached(path, options);
}

void ColumnCacheOptions::validate() const {
  require_at_least("ColumnCacheOptions::min_steps", min_steps, 0);
  if (max_bytes == 0) throw InputError("ColumnCacheOptions::max_bytes must be >= 1, got 0");
}

ColumnarRun read_columnar_run_cached(const std::string& path, ColumnCacheOptions& options) {
  options.validate();
  options.hit = options.written = false;
  Identity id;
  if (options.dir.empty() || !identify(path, id)) return read_columnar_run(path);
  const std::string file = cache_file(options.dir, id);
  ColumnarRun run;
  if (read_cache(file, id, path, run)) {
    options.hit = true;
    ::utimensat(AT_FDCWD, file.c_str(), nullptr, 0);  // used now: the last to leave
    return run;
  }
  run = read_columnar_run(path);
  Identity after;
  // A run still being written, or one that did not finish, is not cached.
  if (static_cast<int64_t>(run.steps.size()) >= options.min_steps && run.summary &&
      run.skipped.empty() && identify(path, after) && after == id) {
    options.written = write_cache(file, id, run);
    if (options.written) bound_cache(options.dir, options.max_bytes);
  }
  return run;
}

}  // namespace recompdiag
