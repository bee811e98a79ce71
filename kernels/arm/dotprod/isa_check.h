// Included first by every file of arm/dotprod: the build fails unless it is
// compiled with exactly the dotprod tier's flags (CMakeLists.txt).
#pragma once

#if !defined(__ARM_FEATURE_DOTPROD)
#error "arm/dotprod needs SDOT: compile with -march=armv8.2-a+dotprod"
#endif
#if defined(__ARM_FEATURE_MATMUL_INT8) || defined(__ARM_FEATURE_SVE)
#error "arm/dotprod must not assume i8mm or SVE: compile it with exactly -march=armv8.2-a+dotprod"
#endif
