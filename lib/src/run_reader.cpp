// Reading run files: the file in large chunks, line by line through detail::RunLineParser, so that
// memory follows the records kept, not the file's size.
#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "detail/run_parser.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag {

namespace {

using Kind = RunFileError::Kind;

}  // namespace

namespace detail {

void feed_run_text(const std::string& text, RunLineParser& parser) {
  simdjson::padded_string padded(text);
  const char* p = padded.data();
  const char* end = p + padded.size();
  int64_t line_no = 0;
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* line_end = nl ? nl : end;
    parser.feed(p, static_cast<size_t>(line_end - p), ++line_no);
    p = nl ? nl + 1 : end;
  }
  parser.finish();
}

void feed_run_file(const std::string& path, RunLineParser& parser,
                   const std::function<void(double)>& on_chunk) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw RunFileError(Kind::kCannotRead, path, 0,
                       std::string("cannot open run file: ") + std::strerror(errno));
  }
  // Stream in large chunks so memory follows the records, not the file size; every line handed
  // to the parser is followed by padding or by the rest of the chunk.
  constexpr size_t kChunk = 1u << 20;
  std::vector<char> buf(kChunk + simdjson::SIMDJSON_PADDING);
  size_t have = 0;
  int64_t line_no = 0;
  bool eof = false;
  struct stat st {};
  const double file_bytes = ::fstat(fd, &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
  double consumed = 0.0;
  try {
    while (!eof) {
      if (have == buf.size() - simdjson::SIMDJSON_PADDING) {  // one line longer than the buffer
        buf.resize(buf.size() * 2);
      }
      ssize_t n = ::read(fd, buf.data() + have, buf.size() - simdjson::SIMDJSON_PADDING - have);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw RunFileError(Kind::kCannotRead, path, 0,
                           std::string("read failed: ") + std::strerror(errno));
      }
      eof = (n == 0);
      have += static_cast<size_t>(n);
      std::memset(buf.data() + have, 0, simdjson::SIMDJSON_PADDING);
      size_t pos = 0;
      while (pos < have) {
        const char* start = buf.data() + pos;
        const char* nl = static_cast<const char*>(std::memchr(start, '\n', have - pos));
        if (!nl) {
          if (!eof) break;  // wait for the rest of the line
          parser.feed(start, have - pos, ++line_no);
          pos = have;
          break;
        }
        parser.feed(start, static_cast<size_t>(nl - start), ++line_no);
        pos = static_cast<size_t>(nl - buf.data()) + 1;
      }
      std::memmove(buf.data(), buf.data() + pos, have - pos);
      have -= pos;
      consumed += static_cast<double>(pos);
      if (on_chunk && file_bytes > 0.0) on_chunk(consumed / file_bytes);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  parser.finish();
}

}  // namespace detail

RunFile parse_run_file(const std::string& text, const std::string& name) {
  RunFile out;
  detail::parse_run_into(text, name, out);
  return out;
}

RunFile read_run_file(const std::string& path) {
  RunFile out;
  detail::read_run_into(path, out);
  return out;
}

}  // namespace recompdiag
