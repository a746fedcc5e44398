#include "recompdiag/reports/report_files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "recompdiag/core/error.h"
#include "recompdiag/reports/renderer.h"

namespace recompdiag::reports {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& fill) {
  // The temporary file lives next to the target so rename() stays within one filesystem.
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
  ::close(fd);
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
      fill(out);
      out.flush();
      if (!out) throw InputError("cannot write '" + path + "': write failed");
    }
    // Make the content durable before the name points at it.
    const int sync_fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
    if (sync_fd >= 0) {
      ::fsync(sync_fd);
      ::close(sync_fd);
    }
    ::chmod(tmp.c_str(), 0644);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      throw InputError("cannot write '" + path + "': " + std::strerror(errno));
    }
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&](std::ostream& out) { out << content; });
}

std::string write_reports(const Comparison& comparison, const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError("cannot create report directory '" + out_dir + "': " + ec.message());
  std::ostringstream md;
  MarkdownRenderer().render(comparison, md);
  write_file_atomically(out_dir + "/report.md", md.str());
  write_file_atomically(out_dir + "/report.html",
                        [&](std::ostream& out) { HtmlRenderer().render(comparison, out); });
  write_file_atomically(out_dir + "/report.json",
                        [&](std::ostream& out) { JsonRenderer().render(comparison, out); });
  return md.str();
}

std::string write_ab_reports(const RunFile& recompile, const RunFile& mutable_run,
                             const CompareOptions& options, const std::string& out_dir) {
  return write_reports(compare_runs(recompile, mutable_run, options), out_dir);
}

}  // namespace recompdiag::reports
