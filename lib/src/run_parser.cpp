// The run-file reader's line parser: the fast path for step lines (step_line.cpp), simdjson's DOM
// parser for every other line (reused across lines); a broken last line (a run killed mid-write)
// is skipped and reported, any other broken line is an error.
#include "detail/run_parser.h"

#include <simdjson.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "detail/json_integer.h"
#include "detail/step_line.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/record_fields.h"
namespace recompdiag {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

using Kind = RunFileError::Kind;

// A line that cannot be read. kNotJson is what a run killed mid-write leaves on its last line;
// anything else is wrong wherever it is.
class LineError : public std::runtime_error {
 public:
  explicit LineError(const std::string& what, Kind kind = Kind::kInvalidRecord)
      : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

double get_double(const element& e) {
  double d;
  if (e.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  uint64_t u;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  throw LineError("expected a number");
}

// An integer field of a step line, of type T.
template <class T>
T get_int(const element& e, const char* what) {
  T out{};
  int64_t i;
  uint64_t u;
  double d;
  const char* why = "is not an integer";
  if (e.get_int64().get(i) == simdjson::SUCCESS)
    why = detail::integer_from(i, &out);
  else if (e.get_uint64().get(u) == simdjson::SUCCESS)
    why = detail::integer_from(u, &out);
  else if (e.get_double().get(d) == simdjson::SUCCESS)
    why = detail::integer_from(d, &out);
  if (why != nullptr) throw LineError(std::string("'") + what + "' " + why);
  return out;
}

// An integer field of a header, event or summary line: `fallback` when absent.
template <class T>
T integer_field(const nlohmann::json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  T v = fallback;
  if (const char* why = detail::json_integer(*it, &v))
    throw LineError(std::string("'") + key + "' " + why);
  return v;
}

std::vector<double> get_doubles(const element& e) {
  std::vector<double> out;
  simdjson::dom::array arr;
  if (e.get_array().get(arr) != simdjson::SUCCESS) throw LineError("expected an array of numbers");
  out.reserve(arr.size());
  for (element v : arr) out.push_back(get_double(v));
  return out;
}

template <class S>
S read_section(const object& obj, const Section<S>& section) {
  S s{};
  const Field<S>* fields = section.fields;
  const size_t N = section.size;
  size_t cursor = 0;
  for (auto field : obj) {
    // Named locals, not a structured binding: C++17 lambdas cannot capture those (clang refuses).
    const std::string_view key = field.key;
    const element value = field.value;
    // Fields arrive in the order the writer emits them; search on from the last match, so a
    // file of ours costs one comparison per field and a reordered one still reads.
    for (size_t tried = 0; tried < N; ++tried) {
      const auto& f = fields[(cursor + tried) % N];
      if (key != f.name) continue;
      std::visit(
          [&](auto member) {
            using T = std::decay_t<decltype(s.*member)>;
            if constexpr (std::is_same_v<T, bool>) {
              bool b = false;
              if (value.get_bool().get(b) != simdjson::SUCCESS)
                throw LineError(std::string("'") + f.name + "' is not a boolean");
              s.*member = b;
            } else if constexpr (std::is_same_v<T, double>) {
              s.*member = get_double(value);
            } else {
              s.*member = get_int<T>(value, f.name);
            }
          },
          f.member);
      cursor = (cursor + tried + 1) % N;
      break;
    }
  }
  return s;
}

// Reads `value` into the section of `step` named `key`; false when no section has that name.
bool read_any_section(std::string_view key, const element& value, StepRecord& step) {
  bool found = false;
  for_each_section([&](const auto& section) {
    if (found || key != section.name) return;
    step.*section.record = read_section(value.get_object().value(), section);
    found = true;
  });
  return found;
}

std::string to_std(std::string_view v) { return std::string(v.data(), v.size()); }

nlohmann::json to_nlohmann(const element& e) {
  // Header and events are rare; a re-parse through nlohmann keeps their free-form parts.
  return nlohmann::json::parse(simdjson::to_string(e));
}

// Reads a step through simdjson's DOM into `s` (reset first); the slow path's half of
// step_line.cpp's parse_step_line().
void read_step(const object& obj, StepRecord& s, bool* has_wall) {
  s = StepRecord{};
  *has_wall = false;
  for (auto [key, value] : obj) {
    if (key == "step")
      s.step = get_int<int64_t>(value, "step");
    else if (key == "phase")
      s.phase = get_int<int>(value, "phase");
    else if (key == "epoch")
      s.epoch = get_int<int>(value, "epoch");
    else if (key == "step_in_phase")
      s.step_in_phase = get_int<int64_t>(value, "step_in_phase");
    else if (key == "wall_ms") {
      s.wall_ms = get_double(value);
      *has_wall = true;
    } else if (key == "device_ms") {
      if (!value.is_null()) s.device_ms = get_double(value);
    } else if (key == "loss")
      s.loss = get_double(value);
    else if (key == "head_losses")
      s.head_losses = get_doubles(value);
    else if (key == "loss_weights")
      s.loss_weights = get_doubles(value);
    else if (key == "lr")
      s.lr = get_double(value);
    else if (key == "alerts") {
      for (element a : value.get_array()) s.alerts.push_back(to_std(a.get_string().value()));
    } else {
      read_any_section(key, value, s);  // a probe section, or an unknown key (ignored)
    }
  }
}

// The checks every step passes, whichever path read it.
void check_step(const StepRecord& s, bool has_wall) {
  if (!has_wall) throw LineError("step " + std::to_string(s.step) + " has no wall_ms");
  if (std::isnan(s.wall_ms))
    throw LineError("step " + std::to_string(s.step) + " has a NaN or null wall time");
  if (s.wall_ms < 0)
    throw LineError("step " + std::to_string(s.step) + " has a negative wall time");
  if (s.device_ms && (std::isnan(*s.device_ms) || *s.device_ms < 0))
    throw LineError("step " + std::to_string(s.step) + " has a NaN or negative device time");
}

RunHeader read_header(const element& e) {
  nlohmann::json j = to_nlohmann(e);
  if (!j.contains("schema") || !j["schema"].is_number_integer())
    throw LineError("run header has no integer 'schema'");
  RunHeader h;
  h.schema = integer_field(j, "schema", 0);
  if (h.schema != kRunSchemaVersion) {
    throw LineError("unknown schema version " + std::to_string(h.schema) +
                        " (this recompdiag reads " + std::to_string(kRunSchemaVersion) + ")",
                    Kind::kUnknownSchema);
  }
  auto str = [&](const char* k) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  h.tool_version = str("tool_version");
  h.mode = str("mode");
  h.optimizer_handoff = str("optimizer_handoff");
  h.optimizer = str("optimizer");
  h.device_requested = str("device_requested");
  h.device_used = str("device_used");
  h.torch_version = str("torch_version");
  h.cuda_available = j.value("cuda_available", false);
  if (j.contains("cupti") && j["cupti"].is_object()) {
    h.cupti.available = j["cupti"].value("available", false);
    h.cupti.reason = j["cupti"].value("reason", "");
  }
  h.step_timing = str("step_timing");
  if (j.contains("config")) h.config = j["config"];
  if (j.contains("probes")) h.probes = j["probes"];
  h.seed = integer_field(j, "seed", uint64_t{0});
  h.start_time = str("start_time");
  h.host = str("host");
  // Files from before data-parallel runs have no rank fields: a single process.
  auto integer = [&](const char* k, int fallback) {
    if (j.contains(k) && !j[k].is_number_integer())
      throw LineError(std::string("run header's '") + k + "' is not an integer");
    return integer_field(j, k, fallback);
  };
  h.rank = integer("rank", 0);
  h.world_size = integer("world_size", 1);
  h.job_id = str("job_id");
  h.turn_every_steps = integer_field(j, "turn_every_steps", int64_t{0});
  if (h.turn_every_steps < 0) throw LineError("run header's 'turn_every_steps' is negative");
  if (j.contains("planted_slowdown_pct")) {
    if (!j["planted_slowdown_pct"].is_number() ||
        !(j["planted_slowdown_pct"].get<double>() >= 0.0)) {
      throw LineError("run header's 'planted_slowdown_pct' is not a percentage");
    }
    h.planted_slowdown_pct = j["planted_slowdown_pct"].get<double>();
  }
  if (h.world_size < 1 || h.rank < 0 || h.rank >= h.world_size) {
    throw LineError("run header has rank " + std::to_string(h.rank) + " of world_size " +
                    std::to_string(h.world_size) + " (need 0 <= rank < world_size)");
  }
  return h;
}

EventRecord read_event(const element& e) {
  nlohmann::json j = to_nlohmann(e);
  EventRecord ev;
  auto kind = parse_event_kind(j.value("event", ""));
  if (!kind) throw LineError("unknown event '" + j.value("event", "") + "'");
  ev.kind = *kind;
  ev.step = integer_field(j, "step", int64_t{0});
  ev.phase = integer_field(j, "phase", 1);
  ev.reason = j.value("reason", "");
  if (j.contains("detail")) ev.detail = j["detail"];
  return ev;
}

RunSummary read_summary(const element& e) {
  nlohmann::json j = to_nlohmann(e);
  RunSummary s;
  auto num = [&](const char* k) {
    return j.contains(k) && j[k].is_number() ? j[k].get<double>()
                                             : std::numeric_limits<double>::quiet_NaN();
  };
  s.steps = integer_field(j, "steps", int64_t{0});
  s.elapsed_s = num("elapsed_s");
  s.compiles = integer_field(j, "compiles", int64_t{0});
  s.alerts = integer_field(j, "alerts", int64_t{0});
  s.final_loss = num("final_loss");
  if (j.contains("final_head_losses"))
    for (const auto& v : j["final_head_losses"])
      s.final_head_losses.push_back(v.is_number() ? v.get<double>()
                                                  : std::numeric_limits<double>::quiet_NaN());
  s.status = j.value("status", "completed");
  if (j.contains("parameters_digest") && j["parameters_digest"].is_string())
    s.parameters_digest = j["parameters_digest"].get<std::string>();
  return s;
}

/// Feeds lines one at a time; keeps the state needed to accept a truncated last line.

}  // namespace

namespace detail {

struct RunLineParser::Impl {
  Impl(std::string p, RecordSink& s, std::vector<SkippedLine>& k)
      : path(std::move(p)), sink(s), skipped(k) {}

  [[noreturn]] void fail(int64_t line, Kind kind, const std::string& why) {
    throw RunFileError(kind, path, line, why);
  }

  // Parses one non-blank line and hands its record on; throws LineError for a bad line.
  void parse(const char* data, size_t len, int64_t line_no) {
    bool has_wall = false;
    if (have_header && parse_step_line(data, len, step, &has_wall)) {
      check_step(step, has_wall);
      sink.on_step(step);
      return;
    }
    element root;
    auto err = parser.parse(data, len, false).get(root);
    if (err)
      throw LineError(std::string("not valid JSON (") + simdjson::error_message(err) + ")",
                      Kind::kNotJson);
    object obj;
    // Before the header, a line that is not one says the file is not a run file at all.
    const Kind fault = have_header ? Kind::kInvalidRecord : Kind::kNotARunFile;
    if (root.get_object().get(obj) != simdjson::SUCCESS)
      throw LineError("not a JSON object", fault);
    std::string_view type;
    if (obj["type"].get_string().get(type) != simdjson::SUCCESS)
      throw LineError("no \"type\" field", fault);
    if (!have_header) {
      if (type != "run")
        throw LineError(
            "not a recompdiag run file: the first line is not a run header (\"type\":\"run\")",
            fault);
      sink.on_run_start(read_header(root));
      have_header = true;
    } else if (type == "step") {
      read_step(obj, step, &has_wall);
      check_step(step, has_wall);
      sink.on_step(step);
    } else if (type == "event") {
      sink.on_event(read_event(root));
    } else if (type == "summary") {
      sink.on_run_end(read_summary(root));
    } else if (type == "run") {
      throw LineError("a second run header");
    } else {
      skipped.push_back({line_no, "unknown record type '" + to_std(type) + "'"});
    }
  }

  std::string path;
  RecordSink& sink;
  std::vector<SkippedLine>& skipped;
  simdjson::dom::parser parser;
  StepRecord step;  // reused: its vectors keep their storage from line to line
  bool have_header = false;
  std::optional<std::string> pending_error;
  int64_t pending_line = 0;
};

RunLineParser::RunLineParser(std::string path, RecordSink& sink, std::vector<SkippedLine>& skipped)
    : impl_(new Impl(std::move(path), sink, skipped)) {}

RunLineParser::~RunLineParser() { delete impl_; }

void RunLineParser::feed(const char* data, size_t len, int64_t line_no) {
  Impl& m = *impl_;
  while (len > 0 && (data[len - 1] == '\r' || data[len - 1] == ' ' || data[len - 1] == '\t')) --len;
  size_t start = 0;
  while (start < len && (data[start] == ' ' || data[start] == '\t')) ++start;
  if (start == len) {
    m.skipped.push_back({line_no, "blank line"});
    return;
  }
  if (m.pending_error) m.fail(m.pending_line, Kind::kNotJson, *m.pending_error);
  try {
    m.parse(data + start, len - start, line_no);
  } catch (const LineError& e) {
    // A broken line is fatal unless it turns out to be the last one (a run killed mid-write);
    // a header that is not one is fatal at once.
    if (!m.have_header) {
      m.fail(line_no, e.kind() == Kind::kNotJson ? Kind::kNotARunFile : e.kind(), e.what());
    }
    if (e.kind() != Kind::kNotJson) m.fail(line_no, e.kind(), e.what());
    m.pending_error = e.what();
    m.pending_line = line_no;
  } catch (const nlohmann::json::exception& e) {
    m.fail(line_no, Kind::kInvalidRecord, e.what());
  } catch (const simdjson::simdjson_error& e) {
    m.fail(line_no, Kind::kInvalidRecord, e.what());
  }
}

void RunLineParser::finish() {
  Impl& m = *impl_;
  if (m.pending_error)
    m.skipped.push_back({m.pending_line, "truncated last line: " + *m.pending_error});
  if (!m.have_header) {
    throw RunFileError(Kind::kEmpty, m.path, 0, "empty file, not a recompdiag run file");
  }
}

}  // namespace detail

}  // namespace recompdiag
