/* CPU feature detection (CPUID/XGETBV on x86-64, AT_HWCAP on aarch64) and MACE_CPU_ISA. */
#include "runtime/cpu/cpu_features.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "kernels/cpu/isa.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#define MACE_X86 1
#elif defined(__aarch64__)
#include <sys/auxv.h>
#define MACE_ARM64 1
#endif

static mace_cpu_features g_features;
static mace_cpu_isa g_detected = MACE_ISA_REF;
static mace_cpu_isa g_active = MACE_ISA_REF;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#ifdef MACE_X86
static unsigned long long xgetbv0(void) {
  unsigned int lo, hi;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0)); /* xgetbv */
  return ((unsigned long long)hi << 32) | lo;
}

static void detect_x86(mace_cpu_features *f) {
  unsigned int a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  const int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
  const int f16c = (c >> 29) & 1;
  if (!osxsave || !avx) return;
  const unsigned long long xcr0 = xgetbv0();
  const int ymm_os = (xcr0 & 0x6) == 0x6;     /* SSE + AVX state */
  const int zmm_os = (xcr0 & 0xe6) == 0xe6;   /* + opmask, ZMM_Hi256, Hi16_ZMM */
  if (!ymm_os) return;
  f->fma = fma;
  f->f16c = f16c;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
  f->avx2 = (b >> 5) & 1;
  if (zmm_os) {
    f->avx512f = (b >> 16) & 1;
    f->avx512bw = (b >> 30) & 1;
    /* VNNI with its 256-bit forms (AVX512VL, EBX bit 31; every VNNI CPU has it): the GEMM's
     * narrow tiles use them */
    f->avx512vnni = ((c >> 11) & 1) && ((b >> 31) & 1);
  }
}
#endif

#ifdef MACE_ARM64
static void detect_arm64(mace_cpu_features *f) {
  const unsigned long hw = getauxval(AT_HWCAP);
  f->neon = (hw >> 1) & 1;      /* HWCAP_ASIMD */
  f->dotprod = (hw >> 20) & 1;  /* HWCAP_ASIMDDP */
}
#endif

int mace_cpu_isa_supported(mace_cpu_isa isa) {
  const mace_cpu_features *f = mace_cpu_features_get();
  switch (isa) {
    case MACE_ISA_REF: return 1;
    case MACE_ISA_AVX2: return f->avx2 && f->fma && f->f16c;
    case MACE_ISA_AVX512: return f->avx2 && f->fma && f->f16c && f->avx512f && f->avx512bw;
    case MACE_ISA_NEON: return f->neon;
  }
  return 0;
}

const char *mace_cpu_isa_name(mace_cpu_isa isa) {
  switch (isa) {
    case MACE_ISA_REF: return "ref";
    case MACE_ISA_AVX2: return "avx2";
    case MACE_ISA_AVX512: return "avx512";
    case MACE_ISA_NEON: return "neon";
  }
  return "?";
}

static void detect_once(void) {
#ifdef MACE_X86
  detect_x86(&g_features);
#endif
#ifdef MACE_ARM64
  detect_arm64(&g_features);
#endif
  /* g_features is complete here; mace_cpu_isa_supported reads it through the getter, which
   * would recurse into pthread_once, so decide from the fields directly. */
  const mace_cpu_features *f = &g_features;
  if (f->avx2 && f->fma && f->f16c && f->avx512f && f->avx512bw) g_detected = MACE_ISA_AVX512;
  else if (f->avx2 && f->fma && f->f16c) g_detected = MACE_ISA_AVX2;
  else if (f->neon) g_detected = MACE_ISA_NEON;
  else g_detected = MACE_ISA_REF;
  g_active = g_detected;

  const char *env = getenv("MACE_CPU_ISA");
  if (!env || !*env) return;
  mace_cpu_isa want;
  if (strcmp(env, "ref") == 0) want = MACE_ISA_REF;
  else if (strcmp(env, "avx2") == 0) want = MACE_ISA_AVX2;
  else if (strcmp(env, "avx512") == 0) want = MACE_ISA_AVX512;
  else if (strcmp(env, "neon") == 0) want = MACE_ISA_NEON;
  else {
    MACE_LOG(WARNING, "MACE_CPU_ISA=%s is not one of ref|avx2|avx512|neon; using %s", env,
             mace_cpu_isa_name(g_detected));
    return;
  }
  int ok;
  if (want == MACE_ISA_REF) ok = 1;
  else if (want == MACE_ISA_NEON) ok = g_detected == MACE_ISA_NEON;
  else ok = g_detected != MACE_ISA_NEON && g_detected >= want;
  if (ok) g_active = want;
  else
    MACE_LOG(WARNING, "MACE_CPU_ISA=%s: this CPU does not support it; using %s", env,
             mace_cpu_isa_name(g_detected));
}

const mace_cpu_features *mace_cpu_features_get(void) {
  pthread_once(&g_once, detect_once);
  return &g_features;
}

mace_cpu_isa mace_cpu_isa_detected(void) {
  pthread_once(&g_once, detect_once);
  return g_detected;
}

mace_cpu_isa mace_cpu_isa_active(void) {
  pthread_once(&g_once, detect_once);
  /* No higher than the best ISA this build has kernels for (MACE_ENABLE_<ISA>, kernels/cpu/isa.h):
   * the dispatch tables and the NCHWc block follow this level. */
  mace_cpu_isa isa = g_active;
  if (isa == MACE_ISA_AVX512 && !MACE_ENABLE_AVX512) isa = MACE_ISA_AVX2;
  if (isa == MACE_ISA_AVX2 && !MACE_ENABLE_AVX2) isa = MACE_ISA_REF;
  if (isa == MACE_ISA_NEON && !MACE_ENABLE_NEON) isa = MACE_ISA_REF;
  return isa;
}
