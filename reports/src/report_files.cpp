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
#include <optional>
#include <sstream>

#include "recompdiag/core/error.h"
#include "recompdiag/reports/renderer.h"

namespace recompdiag::reports {

namespace {

// Streams `fill` into `path` as it stands, for a target that is not a regular file (/dev/stdout,
// a pipe): renaming over it would replace the device or the link itself.
void write_in_place(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
  fill(out);
  out.flush();
  if (!out) throw IoError("cannot write '" + path + "': write failed (disk full?)");
}

// Where a write of `path` goes: a link to a regular file stays a link and its target is
// replaced; nullopt for a path that exists and is not a regular file (/dev/stdout, a pipe), which
// is written in place. Throws InputError for a directory.
std::optional<std::string> replace_target(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows links
  if (fs::is_directory(status)) throw InputError("cannot write '" + path + "': is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status)) return std::nullopt;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    const fs::path real = fs::canonical(path, ec);
    if (!ec) return real.string();
  }
  return path;
}

// Creates an empty temporary file next to `target` (so that rename() stays within one
// filesystem) and returns its name. No room for even an empty file is the environment (IoError);
// a missing or read-only directory is the user's input (InputError).
std::string make_temp_beside(const std::string& path, const std::string& target) {
  std::string tmp = target + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    const std::string why = "cannot write '" + path + "': " + std::strerror(errno);
    if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG) throw IoError(why);
    throw InputError(why);
  }
  ::close(fd);
  return tmp;
}

}  // namespace

void check_writable(const std::string& path) {
  const std::optional<std::string> target = replace_target(path);
  if (target) std::remove(make_temp_beside(path, *target).c_str());
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& fill) {
  const std::optional<std::string> replaced = replace_target(path);
  if (!replaced) return write_in_place(path, fill);
  const std::string& target = *replaced;
  const std::string tmp = make_temp_beside(path, target);
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
      fill(out);
      out.flush();
      // A full disk or a file-size limit: the previous file is untouched (exit 1, not 2).
      if (!out) throw IoError("cannot write '" + path + "': write failed (disk full?)");
    }
    // Make the content durable before the name points at it; a failed fsync is a lost write.
    const int sync_fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
    if (sync_fd >= 0) {
      const bool synced = ::fsync(sync_fd) == 0;
      const int sync_errno = errno;
      ::close(sync_fd);
      if (!synced) throw IoError("cannot write '" + path + "': " + std::strerror(sync_errno));
    }
    ::chmod(tmp.c_str(), 0644);
    if (std::rename(tmp.c_str(), target.c_str()) != 0) {
      throw IoError("cannot write '" + path + "': " + std::strerror(errno));
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
