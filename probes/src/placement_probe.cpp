#include "recompdiag/probes/placement_probe.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <exception>
#include <string>

#include "recompdiag/core/error.h"

namespace recompdiag::probes {

ExpectedDevice::ExpectedDevice(const std::string& device) : text(device) {
  try {
    const c10::Device d(device);
    type = static_cast<int>(d.type());
    index = d.has_index() ? d.index() : -1;
  } catch (const std::exception& e) {
    throw InputError("expected device '" + device + "' is not a torch device: " + e.what());
  }
}

PlacementStats inspect_placement(const std::vector<at::Tensor>& params,
                                 const std::vector<at::Tensor>& buffers,
                                 const ExpectedDevice& expected) {
  auto off = [&](const at::Tensor& t) {
    if (!t.defined()) return false;
    const c10::Device d = t.device();
    return static_cast<int>(d.type()) != expected.type ||
           (expected.index >= 0 && d.index() != expected.index);
  };
  PlacementStats out;
  for (const at::Tensor& p : params) {
    if (off(p)) ++out.params_off_device;
    if (off(p.grad())) ++out.grads_off_device;
  }
  for (const at::Tensor& b : buffers) {
    if (off(b)) ++out.buffers_off_device;
  }
  return out;
}

}  // namespace recompdiag::probes
