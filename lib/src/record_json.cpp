// The JSON form of each record: steps formatted by hand (they are the hot path and the bulk of
// every run file), header, events and summary through nlohmann::json.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "recompdiag/core/record_fields.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag {

namespace {

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {  // JSON has no NaN or Inf; a diverged loss is written as null.
    out += "null";
    return;
  }
  std::array<char, 32> buf;
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), res.ptr);
}

void append_number(std::string& out, int64_t v) {
  std::array<char, 24> buf;
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), res.ptr);
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", c);
          out += esc;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void append_key(std::string& out, const char* key) {
  out += ",\"";
  out += key;
  out += "\":";
}

void append_array(std::string& out, const std::vector<double>& values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    append_number(out, values[i]);
  }
  out += ']';
}

template <class S>
void append_section(std::string& out, const Section<S>& section, const S& s) {
  append_key(out, section.name);
  out += '{';
  bool first = true;
  for (const Field<S>& f : section) {
    if (!first) out += ',';
    first = false;
    out += '"';
    out += f.name;
    out += "\":";
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(s.*member)>;
          if constexpr (std::is_same_v<T, bool>) {
            out += (s.*member) ? "true" : "false";
          } else {
            append_number(out, s.*member);
          }
        },
        f.member);
  }
  out += '}';
}

nlohmann::json availability_json(const Availability& a) {
  return {{"available", a.available}, {"reason", a.reason}};
}

}  // namespace

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kPhaseStart:
      return "phase_start";
    case EventKind::kCompile:
      return "compile";
    case EventKind::kLrChange:
      return "lr_change";
    case EventKind::kLossWeightsChange:
      return "loss_weights_change";
    case EventKind::kOptimizerRebuild:
      return "optimizer_rebuild";
    case EventKind::kAlert:
      return "alert";
    case EventKind::kNote:
      return "note";
    case EventKind::kGraphBreak:
      return "graph_break";
  }
  return "note";
}

std::optional<EventKind> parse_event_kind(const std::string& name) {
  for (EventKind k : kEventKinds) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

void append_json(std::string& out, const StepRecord& s) {
  out += "{\"type\":\"step\"";
  append_key(out, "step");
  append_number(out, s.step);
  append_key(out, "phase");
  append_number(out, static_cast<int64_t>(s.phase));
  append_key(out, "epoch");
  append_number(out, static_cast<int64_t>(s.epoch));
  append_key(out, "step_in_phase");
  append_number(out, s.step_in_phase);
  append_key(out, "wall_ms");
  append_number(out, s.wall_ms);
  append_key(out, "device_ms");
  if (s.device_ms) {
    append_number(out, *s.device_ms);
  } else {
    out += "null";
  }
  append_key(out, "loss");
  append_number(out, s.loss);
  append_key(out, "head_losses");
  append_array(out, s.head_losses);
  append_key(out, "loss_weights");
  append_array(out, s.loss_weights);
  append_key(out, "lr");
  append_number(out, s.lr);
  for_each_section([&](const auto& section) {
    if (const auto& present = s.*section.record) append_section(out, section, *present);
  });
  if (!s.alerts.empty()) {
    append_key(out, "alerts");
    out += '[';
    for (size_t i = 0; i < s.alerts.size(); ++i) {
      if (i) out += ',';
      append_string(out, s.alerts[i]);
    }
    out += ']';
  }
  out += '}';
}

std::string to_json_line(const StepRecord& step) {
  std::string out;
  append_json(out, step);
  return out;
}

nlohmann::ordered_json run_header_json(const RunHeader& h) {
  return {{"schema", h.schema},
          {"tool", "recompdiag"},
          {"tool_version", h.tool_version},
          {"mode", h.mode},
          {"optimizer_handoff", h.optimizer_handoff},
          {"optimizer", h.optimizer},
          {"device_requested", h.device_requested},
          {"device_used", h.device_used},
          {"torch_version", h.torch_version},
          {"cuda_available", h.cuda_available},
          {"cupti", availability_json(h.cupti)},
          {"step_timing", h.step_timing},
          {"config", h.config},
          {"probes", h.probes},
          {"seed", h.seed},
          {"start_time", h.start_time},
          {"host", h.host}};
}

std::string to_json_line(const RunHeader& h) {
  nlohmann::ordered_json j = {{"type", "run"}};
  j.update(run_header_json(h));
  // A rank of a data-parallel job says which; a single process's header stays as it was.
  if (h.world_size != 1 || h.rank != 0 || !h.job_id.empty()) {
    j["rank"] = h.rank;
    j["world_size"] = h.world_size;
    j["job_id"] = h.job_id;
  }
  if (h.turn_every_steps > 0) j["turn_every_steps"] = h.turn_every_steps;
  if (h.planted_slowdown_pct > 0.0) j["planted_slowdown_pct"] = h.planted_slowdown_pct;
  return j.dump();
}

std::string to_json_line(const EventRecord& e) {
  nlohmann::ordered_json j = {{"type", "event"},    {"event", to_string(e.kind)},
                              {"step", e.step},     {"phase", e.phase},
                              {"reason", e.reason}, {"detail", e.detail}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string to_json_line(const RunSummary& s) {
  nlohmann::json heads = nlohmann::json::array();
  for (double v : s.final_head_losses)
    heads.push_back(std::isfinite(v) ? nlohmann::json(v) : nullptr);
  nlohmann::ordered_json j = {
      {"type", "summary"},
      {"steps", s.steps},
      {"elapsed_s", s.elapsed_s},
      {"compiles", s.compiles},
      {"alerts", s.alerts},
      {"final_loss", std::isfinite(s.final_loss) ? nlohmann::json(s.final_loss) : nullptr},
      {"final_head_losses", heads},
      {"status", s.status}};
  if (!s.parameters_digest.empty()) j["parameters_digest"] = s.parameters_digest;
  return j.dump();
}

}  // namespace recompdiag
