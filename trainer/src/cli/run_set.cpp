#include "cli/run_set.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <future>

#include "recompdiag/core/error.h"

namespace recompdiag::trainer::cli {

std::vector<std::string> expand_run_paths(const std::vector<std::string>& specs,
                                          const std::string& flag) {
  std::vector<std::string> out;
  for (const std::string& spec : specs) {
    std::error_code ec;
    if (std::filesystem::is_directory(spec, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(spec, ec)) {
        if (entry.path().extension() == ".jsonl") found.push_back(entry.path().string());
      }
      if (ec) throw InputError(flag + " " + spec + ": cannot list the directory: " + ec.message());
      if (found.empty()) throw InputError(flag + " " + spec + ": no *.jsonl run files in it");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (spec.find_first_of("*?[") != std::string::npos) {
      glob_t g{};
      const int rc = ::glob(spec.c_str(), 0, nullptr, &g);
      std::vector<std::string> found;
      if (rc == 0) found.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);
      ::globfree(&g);
      if (found.empty()) throw InputError(flag + " '" + spec + "': no file matches");
      out.insert(out.end(), found.begin(), found.end());  // glob sorts by name
    } else {
      out.push_back(spec);
    }
  }
  return out;
}

namespace {

template <class Run>
std::vector<Run> read_all(const std::vector<std::string>& paths,
                          Run (*read)(const std::string& path)) {
  std::vector<Run> out(paths.size());
  // Two at a time: a second thread halves the wait on big files; more would fight for 2 cores.
  for (size_t i = 0; i < paths.size(); i += 2) {
    std::future<Run> second;
    if (i + 1 < paths.size()) {
      second = std::async(std::launch::async, [&, i] { return read(paths[i + 1]); });
    }
    try {
      out[i] = read(paths[i]);
    } catch (...) {
      if (second.valid()) second.wait();
      throw;
    }
    if (second.valid()) out[i + 1] = second.get();
  }
  return out;
}

}  // namespace

std::vector<RunFile> read_run_set(const std::vector<std::string>& paths) {
  return read_all<RunFile>(paths, &read_run_file);
}

std::vector<ColumnarRun> read_columnar_run_set(const std::vector<std::string>& paths) {
  return read_all<ColumnarRun>(paths, &read_columnar_run);
}

}  // namespace recompdiag::trainer::cli
