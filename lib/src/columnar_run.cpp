// Reading run files into columns, and converting between RunFile and ColumnarRun.
#include "detail/run_parser.h"
#include "recompdiag/core/step_columns.h"

namespace recompdiag {

ColumnarRun read_columnar_run(const std::string& path) {
  ColumnarRun out;
  detail::read_run_into(path, out);  // the parser's reused StepRecord is copied into columns
  out.steps.shrink_to_fit();
  return out;
}

ColumnarRun parse_columnar_run(const std::string& text, const std::string& name) {
  ColumnarRun out;
  out.path = name;
  // The parser's reused StepRecord is copied into columns.
  detail::RunCollector<ColumnarRun> filler(out);
  detail::RunLineParser parser(name, filler, out.skipped);
  detail::feed_run_text(text, parser);
  out.steps.shrink_to_fit();
  return out;
}

ColumnarRun to_columnar(const RunFile& run) {
  ColumnarRun out;
  out.path = run.path;
  out.header = run.header;
  out.steps.reserve(run.steps.size());
  for (const StepRecord& s : run.steps) out.steps.push_back(s);
  out.events = run.events;
  out.summary = run.summary;
  out.skipped = run.skipped;
  return out;
}

RunFile to_run_file(const ColumnarRun& run) {
  RunFile out;
  out.path = run.path;
  out.header = run.header;
  out.steps.reserve(run.steps.size());
  for (size_t i = 0; i < run.steps.size(); ++i) out.steps.push_back(run.steps.at(i));
  out.events = run.events;
  out.summary = run.summary;
  out.skipped = run.skipped;
  return out;
}

}  // namespace recompdiag
