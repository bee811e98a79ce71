// Included first by every kernel file of arm/sve: the build fails unless it is
// compiled with the sve tier's flags (CMakeLists.txt).
#pragma once

#if !defined(__ARM_FEATURE_SVE)
#error "kernels/arm/sve must be compiled with -march=armv8.2-a+sve"
#endif
