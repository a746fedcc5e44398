// Reading run files into columns, and converting between RunFile and ColumnarRun.
#include "detail/run_parser.h"
#include "recompdiag/core/step_columns.h"

namespace recompdiag {

namespace {

// A run with its steps held as `To` holds them; every other part copied.
template <class To, class From>
To convert_run(const From& run) {
  To out;
  out.path = run.path;
  out.header = run.header;
  out.steps.reserve(run.steps.size());
  for (size_t i = 0; i < run.steps.size(); ++i) out.steps.push_back(run.steps.at(i));
  out.events = run.events;
  out.summary = run.summary;
  out.skipped = run.skipped;
  return out;
}

}  // namespace

ColumnarRun read_columnar_run(const std::string& path) {
  ColumnarRun out;
  detail::read_run_into(path, out);  // the parser's reused StepRecord is copied into columns
  out.steps.shrink_to_fit();
  return out;
}

ColumnarRun parse_columnar_run(const std::string& text, const std::string& name) {
  ColumnarRun out;
  detail::parse_run_into(text, name, out);
  out.steps.shrink_to_fit();
  return out;
}

ColumnarRun to_columnar(const RunFile& run) { return convert_run<ColumnarRun>(run); }

RunFile to_run_file(const ColumnarRun& run) { return convert_run<RunFile>(run); }

}  // namespace recompdiag
