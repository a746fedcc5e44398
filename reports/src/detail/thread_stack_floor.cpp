// civetweb (Debian's, under prometheus-cpp's pull endpoint) starts every thread with a fixed
// 100 KiB stack (pthread_attr_setstacksize(0x19000), compiled in, no option). glibc carves a
// thread's static TLS out of its stack and refuses a stack that cannot hold it (EINVAL, before any
// clone): in a process that loads PyPI's CUDA LibTorch, whose libraries bring about 250 KiB of
// static TLS (libcublasLt 94 KiB, libtorch_cpu 31 KiB, libc10_cuda 26 KiB, ...), civetweb cannot
// start a single thread and the exporter fails as "Cannot create threads". Debian's LibTorch 1.13
// stays under the limit, which is why only the torch2 build showed it.
//
// The fix is this definition of pthread_attr_setstacksize in the executable, exported to the
// dynamic symbol table (reports/prometheus.cmake links every user of recompdiag::prometheus with
// --export-dynamic-symbol), so that it precedes libc's for every library: a request below
// kThreadStackFloor is raised to it (address space only; pages are touched as the thread uses
// them), anything larger passes unchanged to libc's own function. The pull endpoint calls
// floored_stack_size() so that the linker always takes this object from the static library.
#include "detail/thread_stack_floor.h"

#include <dlfcn.h>
#include <pthread.h>

namespace recompdiag::reports::detail {

std::size_t floored_stack_size(std::size_t size) {
  return size < kThreadStackFloor ? kThreadStackFloor : size;
}

}  // namespace recompdiag::reports::detail

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t size) noexcept {
  using Fn = int (*)(pthread_attr_t*, size_t);
  // libc's own, found once; thread-safe (a function-local static).
  static const Fn next = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  if (next == nullptr) return 22;  // EINVAL: cannot happen where libc is linked dynamically
  return next(attr, recompdiag::reports::detail::floored_stack_size(size));
}
