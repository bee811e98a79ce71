// ENGINE_HWY_RUN(Run, run): HWY_EXPORT(Run) and `run`, the MatmulKernel::run
// that calls Run on the target Highway chose for this CPU
// (HWY_DYNAMIC_DISPATCH). For the HWY_ONCE part of a kernel file, after
// hwy/highway.h.
#pragma once

#include <cstddef>

#define ENGINE_HWY_RUN(Run, run)                                                                          \
  HWY_EXPORT(Run);                                                                                        \
  void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t dst_stride) { \
    HWY_DYNAMIC_DISPATCH(Run)(m, n, k, lhs, rhs, dst, dst_stride);                                         \
  }
