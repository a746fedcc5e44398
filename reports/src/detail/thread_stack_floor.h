#pragma once
// A floor under the thread stacks that libraries ask for: civetweb's 100 KiB threads and the
// static TLS of a CUDA LibTorch (see thread_stack_floor.cpp).

#include <cstddef>

namespace recompdiag::reports::detail {

/// The smallest stack pthread_attr_setstacksize grants in a process that links the exporter.
inline constexpr std::size_t kThreadStackFloor = std::size_t{1} << 20;

/// The stack size the interposed pthread_attr_setstacksize passes on for a request of `size`.
std::size_t floored_stack_size(std::size_t size);

}  // namespace recompdiag::reports::detail
