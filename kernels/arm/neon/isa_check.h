// Included first by every file of arm/neon compiled with the tier's flags: the
// build fails unless they are exactly the neon tier's (CMakeLists.txt), so no
// instruction past Armv8.0 can reach a Cortex-A53.
#pragma once

#if !defined(__aarch64__) || !defined(__ARM_NEON)
#error "arm/neon needs AArch64 Advanced SIMD: compile with -march=armv8-a"
#endif
#if defined(__ARM_FEATURE_QRDMX) || defined(__ARM_FEATURE_DOTPROD) || defined(__ARM_FEATURE_SVE)
#error "arm/neon must run on Armv8.0 cores: compile it with exactly -march=armv8-a"
#endif
