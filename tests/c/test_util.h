/* Scaffolding of the C tests (a helper header, not a test): the failure count with CHECK and
 * FAIL, the seeded random numbers, sentinel-filled buffers, and the closing line of a test.
 *
 *   CHECK(cond, fmt, ...)   counts a failure and reports it when cond is false
 *   FAIL(fmt, ...)          counts a failure and reports it
 *   TEST_REQUIRE_SIMD_VARIANTS(n)   a SIMD test that checked n = 0 non-reference variants
 *                           where the CPU has one fails
 *   return TEST_FINISH(fmt, ...);   "test_x: <details>: ok" on stdout, or "test_x: <details>:
 *                           N failure(s)" on stderr; the exit status (0 when nothing failed)
 *
 * A report is one line on stderr, "FAIL file:line: [cond: ]message"; the first
 * TEST_MAX_REPORTS of a run are printed, all are counted. Only the C standard library is used
 * (test_public_api sees mace/mace.h and nothing else). */
#ifndef MACE_TESTS_C_TEST_UTIL_H
#define MACE_TESTS_C_TEST_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_MAX_REPORTS 20

static int failures = 0;    /* failed checks of this test program */
static long test_checks = 0; /* CHECKs evaluated */

#if defined(__GNUC__)
#define TEST_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define TEST_PRINTF_LIKE(f, a)
#endif

static inline void test_fail_(const char *file, int line, const char *cond, const char *fmt, ...)
    TEST_PRINTF_LIKE(4, 5);
static inline void test_fail_(const char *file, int line, const char *cond, const char *fmt, ...) {
  ++failures;
  if (failures > TEST_MAX_REPORTS) {
    if (failures == TEST_MAX_REPORTS + 1) fprintf(stderr, "(further failures are counted, not shown)\n");
    return;
  }
  fprintf(stderr, "FAIL %s:%d: ", file, line);
  if (cond) fprintf(stderr, "%s: ", cond);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

#define FAIL(...) test_fail_(__FILE__, __LINE__, NULL, __VA_ARGS__)
#define CHECK(cond, ...)                                          \
  do {                                                            \
    ++test_checks;                                                \
    if (!(cond)) test_fail_(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

static inline int test_finish_(const char *file, const char *fmt, ...) TEST_PRINTF_LIKE(2, 3);
static inline int test_finish_(const char *file, const char *fmt, ...) {
  const char *name = strrchr(file, '/');
  name = name ? name + 1 : file;
  int len = (int)strlen(name);
  if (len > 2 && strcmp(name + len - 2, ".c") == 0) len -= 2;
  FILE *out = failures ? stderr : stdout;
  (void)test_checks;
  fprintf(out, "%.*s: ", len, name);
  if (fmt && *fmt) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputs(": ", out);
  }
  if (failures)
    fprintf(out, "%d failure(s)\n", failures);
  else
    fputs("ok\n", out);
  return failures != 0;
}

#define TEST_FINISH(...) test_finish_(__FILE__, __VA_ARGS__)

/* ---- the SIMD tests' guard ------------------------------------------------------------------
 * A SIMD test passes the number of non-reference variants it checked: on aarch64 (NEON is
 * baseline) and on an x86-64 CPU with AVX2 + FMA that must be at least one, so a build or a
 * dispatch table that lost its SIMD kernels fails instead of passing on nothing checked. */
static inline void test_require_simd_(const char *file, int line, int simd_checked) {
  int expect = 0;
#if defined(__aarch64__)
  expect = 1;
#elif (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
  __builtin_cpu_init();
  expect = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  ++test_checks;
  if (expect && simd_checked <= 0)
    test_fail_(file, line, NULL, "no SIMD variant was checked on a CPU that has one");
}

#define TEST_REQUIRE_SIMD_VARIANTS(n) test_require_simd_(__FILE__, __LINE__, (n))

/* ---- seeded random numbers: one LCG, 16 bits a draw ------------------------------------ */

static inline unsigned test_rand16(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 8) & 0xffff;
}

/* Uniform in [-1, 1), in steps of 2^-15 (so scale * frand(s) is exact for a power-of-2 scale). */
static inline float frand(unsigned *s) { return (float)test_rand16(s) / 32768.0f - 1.0f; }

/* Uniform in [lo, hi], both ends included. */
static inline float frand_range(unsigned *s, float lo, float hi) {
  return lo + (hi - lo) * (float)test_rand16(s) / 65535.0f;
}

/* ---- buffers: outputs pre-filled with SENTINEL show a write outside the asked range ----- */

#define SENTINEL 99.0f

static inline float *rand_buf(int64_t n, unsigned *seed) {
  float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; p && i < n; ++i) p[i] = frand(seed);
  return p;
}

static inline float *sentinel_buf(int64_t n) {
  float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; p && i < n; ++i) p[i] = SENTINEL;
  return p;
}

#endif
