/* AVX-512 fp16 / bf16 <-> fp32 conversion (kernels/cpu/half.h), 16 values an instruction; the
 * same instructions as half_avx2.c at twice the width, so the same bits as the reference. */
#include <immintrin.h>

#include "kernels/cpu/half.h"
#include "kernels/cpu/ukernels.h"

void mace_f16_to_f32__avx512(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(in + i))));
  if (i < end) mace_f16_to_f32__ref(in, out, i, end);
}

void mace_bf16_to_f32__avx512(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(in + i)));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(w, 16));
  }
  if (i < end) mace_bf16_to_f32__ref(in, out, i, end);
}

void mace_f32_to_f16__avx512(const float *in, uint16_t *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    _mm256_storeu_si256((__m256i *)(out + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT |
                                                                     _MM_FROUND_NO_EXC));
  if (i < end) mace_f32_to_f16__ref(in, out, i, end);
}
