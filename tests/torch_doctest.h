#pragma once
// Include this instead of <doctest/doctest.h> in test files that use LibTorch: Debian's LibTorch
// pulls in glog, whose CHECK* macros collide with doctest's. LibTorch comes first, glog's macros
// are dropped, then doctest defines its own.

#include <torch/torch.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LE
#undef CHECK_LT
#undef CHECK_GE
#undef CHECK_GT

#include <doctest/doctest.h>
