// The metrics endpoint under abuse (issue 10), against another process's exporter on loopback:
//
//   metrics_abuse --port PORT [--pid PID] [--held 1000] [--slow 200] [--seconds 12]
//                 [--max-threads N] [--scrape-deadline-s 10]
//
// 1. malformed requests (garbage, bad method or version, a header without a colon, NUL bytes)
//    and oversized ones (a 1 MiB URI, 1 MiB of headers, a body announced and never sent), each
//    followed by a normal scrape;
// 2. --held connections opened and held silent for --seconds while scraping every 250 ms;
// 3. --slow slowloris clients (a request sent one header byte per second) for --seconds, scraping
//    likewise.
// A scrape passes when it returns HTTP 200 with recompdiag_ metrics within --scrape-deadline-s
// (Prometheus's default scrape_timeout is 10 s: a scrape slower than that is lost). With --pid,
// the server's threads are counted in /proc/PID/task at every scrape. Prints the figures; exits 1
// when any scrape failed or the thread count passed --max-threads. Everything is bounded in time.

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A non-blocking TCP socket to 127.0.0.1:port, connect started (not necessarily finished). -1 on
// failure (e.g. out of file descriptors).
int open_connection(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Waits for `events` on fd until `deadline`; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Sends `request` (as much as the server takes before the deadline or an error), then reads the
// response until the server closes or the deadline. Returns the HTTP status, 0 when none came.
int exchange(int port, const std::string& request, double deadline_s, std::string* body) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(deadline_s));
  const int fd = open_connection(port);
  if (fd < 0) return 0;
  std::size_t sent = 0;
  while (sent < request.size() && wait_for(fd, POLLOUT, deadline)) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) break;  // the server closed on us: read what it said
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buf[16384];
  while (wait_for(fd, POLLIN, deadline)) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) break;
    raw.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  int status = 0;
  if (raw.rfind("HTTP/1.", 0) == 0 && raw.size() > 12) status = std::atoi(raw.c_str() + 9);
  if (body != nullptr) {
    const auto split = raw.find("\r\n\r\n");
    *body = split == std::string::npos ? "" : raw.substr(split + 4);
  }
  return status;
}

int count_threads(int pid) {
  if (pid <= 0) return 0;
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (dir == nullptr) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n;
}

struct Options {
  int port = 0;
  int pid = 0;
  int held = 1000;
  int slow = 200;
  double seconds = 12;
  int max_threads = 0;  // 0: not checked
  double scrape_deadline_s = 10;
};

// Scrape results of one stage.
struct ScrapeTally {
  int ok = 0;
  int failed = 0;
  double max_latency_s = 0;
  int max_threads = 0;
};

class Abuser {
 public:
  explicit Abuser(const Options& o) : o_(o) {}

  // One scrape, tallied; true when it passed.
  bool scrape(ScrapeTally& t) {
    const auto t0 = Clock::now();
    std::string body;
    const int status = exchange(o_.port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                o_.scrape_deadline_s, &body);
    const double latency = seconds_since(t0);
    const bool ok = status == 200 && body.find("recompdiag_") != std::string::npos;
    (ok ? t.ok : t.failed) += 1;
    t.max_latency_s = std::max(t.max_latency_s, latency);
    t.max_threads = std::max(t.max_threads, count_threads(o_.pid));
    if (!ok) std::cerr << "  scrape failed: HTTP " << status << " after " << latency << " s\n";
    return ok;
  }

  // Scrapes every 250 ms for --seconds; `tick` runs between scrapes.
  template <class Tick>
  void scrape_for(ScrapeTally& t, Tick tick) {
    const auto t0 = Clock::now();
    while (seconds_since(t0) < o_.seconds) {
      tick();
      scrape(t);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

  void report(const std::string& stage, const ScrapeTally& t) {
    std::printf("%-34s scrapes ok %d, failed %d, slowest %.3f s, server threads max %d\n",
                stage.c_str(), t.ok, t.failed, t.max_latency_s, t.max_threads);
    total_failed_ += t.failed;
    max_threads_ = std::max(max_threads_, t.max_threads);
  }

  void malformed() {
    static constexpr char kNulRequest[] = "GET /met\0rics HTTP/1.1\r\nHo\0st: x\r\n\r\n";
    const std::string big(1 << 20, 'a');
    const std::vector<std::pair<std::string, std::string>> requests = {
        {"garbage", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n"},
        {"bad method", "BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n"},
        {"bad version", "GET /metrics HTTP/7.3\r\nHost: x\r\n\r\n"},
        {"no version", "GET /metrics\r\n\r\n"},
        {"header without colon", "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n"},
        {"NUL bytes", std::string(kNulRequest, sizeof kNulRequest - 1)},
        {"bad percent escape", "GET /%zz%00%%/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"},
        {"1 MiB URI", "GET /" + big + " HTTP/1.1\r\nHost: x\r\n\r\n"},
        {"1 MiB of headers", "GET /metrics HTTP/1.1\r\nX-Big: " + big + "\r\n\r\n"},
        {"10000 headers",
         [] {
           std::string r = "GET /metrics HTTP/1.1\r\n";
           for (int i = 0; i < 10000; ++i) r += "X-" + std::to_string(i) + ": y\r\n";
           return r + "\r\n";
         }()},
        {"body announced, never sent",
         "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\nabc"},
        {"negative content length", "POST /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n"},
        {"bad chunked body",
         "POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzzzz\r\nxx\r\n"},
        {"half a request, never ended", "GET /metr"},
    };
    ScrapeTally t;
    for (const auto& [name, request] : requests) {
      const auto t0 = Clock::now();
      const int status = exchange(o_.port, request, 5.0, nullptr);
      std::printf("  %-30s -> %s in %.3f s\n", name.c_str(),
                  status ? ("HTTP " + std::to_string(status)).c_str() : "closed, no response",
                  seconds_since(t0));
      scrape(t);
    }
    report("malformed and oversized requests", t);
  }

  void held() {
    std::vector<int> fds;
    for (int i = 0; i < o_.held; ++i) {
      const int fd = open_connection(o_.port);
      if (fd < 0) break;
      fds.push_back(fd);
    }
    std::printf("  %zu connections opened and held silent for %.0f s\n", fds.size(), o_.seconds);
    ScrapeTally t;
    scrape_for(t, [] {});
    for (const int fd : fds) ::close(fd);
    report("connections held", t);
  }

  void slowloris() {
    std::vector<int> fds;
    for (int i = 0; i < o_.slow; ++i) {
      const int fd = open_connection(o_.port);
      if (fd < 0) break;
      fds.push_back(fd);
    }
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    std::size_t offset = 0;
    auto last = Clock::now() - std::chrono::seconds(1);
    std::printf("  %zu clients sending a request one byte per second for %.0f s\n", fds.size(),
                o_.seconds);
    ScrapeTally t;
    scrape_for(t, [&] {
      if (seconds_since(last) < 1.0) return;
      last = Clock::now();
      const char c = offset < request.size() ? request[offset++] : 'z';
      for (const int fd : fds) ::send(fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    });
    for (const int fd : fds) ::close(fd);
    report("slow clients (slowloris)", t);
  }

  int finish() {
    ScrapeTally t;
    scrape(t);
    report("after the abuse", t);
    const bool threads_ok = o_.max_threads <= 0 || max_threads_ <= o_.max_threads;
    std::printf("failed scrapes: %d; server threads max %d (bound %d)\n", total_failed_,
                max_threads_, o_.max_threads);
    return total_failed_ == 0 && threads_ok ? 0 : 1;
  }

 private:
  Options o_;
  int total_failed_ = 0;
  int max_threads_ = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--port") {
      o.port = std::stoi(v);
    } else if (flag == "--pid") {
      o.pid = std::stoi(v);
    } else if (flag == "--held") {
      o.held = std::stoi(v);
    } else if (flag == "--slow") {
      o.slow = std::stoi(v);
    } else if (flag == "--seconds") {
      o.seconds = std::stod(v);
    } else if (flag == "--max-threads") {
      o.max_threads = std::stoi(v);
    } else if (flag == "--scrape-deadline-s") {
      o.scrape_deadline_s = std::stod(v);
    } else {
      throw std::invalid_argument("unknown flag " + flag);
    }
  }
  if (o.port <= 0) throw std::invalid_argument("--port is required");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Abuser abuser(parse(argc, argv));
    ScrapeTally t;
    abuser.scrape(t);
    abuser.report("baseline", t);
    abuser.malformed();
    abuser.held();
    abuser.slowloris();
    return abuser.finish();
  } catch (const std::exception& e) {
    std::cerr << "metrics_abuse: error: " << e.what() << "\n";
    return 2;
  }
}
