// Included right before each HWY_BEFORE_NAMESPACE() of the hwy tier (no
// include guard: once per target pass, after hwy/highway.h has set this
// pass's HWY_TARGET_STR). Highway 1.0.3's AVX3_DL attribute string lists
// "avxvnni" but not "avx512vnni", although its run-time check for AVX3_DL
// requires AVX512-VNNI (cpuid 7 ecx bit 11); this adds it, so
// _mm512_dpbusd_epi32 compiles and inlines there. The string is 1.0.3's
// (third_party pins that version), plus avx512vnni. A pragma adding the one
// feature works for GCC but not for Clang, which keeps the first target
// attribute; redefining the string serves both.
#if HWY_TARGET == HWY_AVX3_DL
#undef HWY_TARGET_STR
#define HWY_TARGET_STR                                                       \
  HWY_TARGET_STR_AVX3                                                        \
  ",vpclmulqdq,avx512vbmi,avx512vbmi2,vaes,avxvnni,avx512bitalg,avx512vpopcntdq," \
  "avx512vnni"
#endif
