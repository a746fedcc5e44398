#include "torch_compat.h"

#include <utility>

#include "recompdiag/torch_features.h"

#if RECOMPDIAG_TORCH_HAS_TLS_PYTHON_OBJECTS
#include <ATen/ThreadLocalPythonObjects.h>
#endif

namespace recompdiag::python {

#if RECOMPDIAG_TORCH_HAS_TLS_PYTHON_OBJECTS
using ThreadLocalPythonObjects = at::impl::ThreadLocalPythonObjects;

ThreadPythonObjectsAside::ThreadPythonObjectsAside()
    : saved_(std::make_shared<ThreadLocalPythonObjects>(ThreadLocalPythonObjects::get_state())) {
  ThreadLocalPythonObjects::set_state(ThreadLocalPythonObjects());
}

ThreadPythonObjectsAside::~ThreadPythonObjectsAside() {
  ThreadLocalPythonObjects::set_state(
      std::move(*static_cast<ThreadLocalPythonObjects*>(saved_.get())));
}
#else
ThreadPythonObjectsAside::ThreadPythonObjectsAside() = default;
ThreadPythonObjectsAside::~ThreadPythonObjectsAside() = default;
#endif

}  // namespace recompdiag::python
