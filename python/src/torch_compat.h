#pragma once
// The Python module's side of the LibTorch compatibility seam (cmake/RecompdiagTorchCompat.cmake):
// what it needs of LibTorch APIs that differ between 1.13 and 2.x, the same on every version.
#include <memory>

namespace recompdiag::python {

/// Sets aside, for its lifetime, the Python objects in the calling thread's LibTorch thread-local
/// state (torch 2.x's backward keeps a contextvars.Context there), and puts them back when
/// destroyed, on the same thread, GIL held. Work issued meanwhile captures a state without them.
/// Does nothing on a LibTorch that keeps none (1.13).
class ThreadPythonObjectsAside {
 public:
  ThreadPythonObjectsAside();
  ~ThreadPythonObjectsAside();
  ThreadPythonObjectsAside(const ThreadPythonObjectsAside&) = delete;
  ThreadPythonObjectsAside& operator=(const ThreadPythonObjectsAside&) = delete;

 private:
  std::shared_ptr<void> saved_;  // the state set aside; null where there is none
};

}  // namespace recompdiag::python
