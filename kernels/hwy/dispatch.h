// The two halves of a kernel's entry point, for a kernel file after
// hwy/highway.h.
//
// ENGINE_HWY_TARGET_RUN(Run, Impl): in HWY_NAMESPACE (once per target), Run,
// a plain function as HWY_EXPORT needs, that calls Impl (a template
// instance: RunGroups' for one weight type) with MatmulKernel::run's
// arguments.
//
// ENGINE_HWY_RUN(Run, run): in the HWY_ONCE part, HWY_EXPORT(Run) and `run`,
// the MatmulKernel::run that calls Run on the target Highway chose for this
// CPU (HWY_DYNAMIC_DISPATCH).
#pragma once

#include <cstddef>

#define ENGINE_HWY_TARGET_RUN(Run, ...)                                                                   \
  void Run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t dst_stride) { \
    __VA_ARGS__(m, n, k, lhs, rhs, dst, dst_stride);                                                       \
  }

#define ENGINE_HWY_RUN(Run, run)                                                                          \
  HWY_EXPORT(Run);                                                                                        \
  void run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t dst_stride) { \
    HWY_DYNAMIC_DISPATCH(Run)(m, n, k, lhs, rhs, dst, dst_stride);                                         \
  }
