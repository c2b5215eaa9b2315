/* Buffers for the SIMD-against-reference C tests (a helper header, not a test): a seeded LCG in
 * [-1, 1), and outputs pre-filled with SENTINEL so that a write outside the asked range shows. */
#ifndef MACE_TESTS_C_TEST_BUFS_H
#define MACE_TESTS_C_TEST_BUFS_H

#include <stdint.h>
#include <stdlib.h>

#define SENTINEL 99.0f

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float *rand_buf(int64_t n, unsigned *seed) {
  float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; p && i < n; ++i) p[i] = frand(seed);
  return p;
}

static float *sentinel_buf(int64_t n) {
  float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; p && i < n; ++i) p[i] = SENTINEL;
  return p;
}

#endif
