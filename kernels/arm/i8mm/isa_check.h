// Included first by every kernel file of arm/i8mm: the build fails unless it
// is compiled with the i8mm tier's flags (CMakeLists.txt).
#pragma once

#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "kernels/arm/i8mm must be compiled with -march=armv8.2-a+dotprod+i8mm"
#endif
