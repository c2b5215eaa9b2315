/* AVX2 + F16C fp16 / bf16 <-> fp32 conversion (kernels/cpu/half.h), 8 values an instruction;
 * vcvtps2ph with round-to-nearest-even and vcvtph2ps give the reference's bits for every
 * input (NaNs quieted with their top payload bits kept, as the reference does). */
#include <immintrin.h>

#include "kernels/cpu/half.h"
#include "kernels/cpu/ukernels.h"

void mace_f16_to_f32__avx2(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
  if (i < end) mace_f16_to_f32__ref(in, out, i, end);
}

void mace_bf16_to_f32__avx2(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(in + i)));
    _mm256_storeu_si256((__m256i *)(out + i), _mm256_slli_epi32(w, 16));
  }
  if (i < end) mace_bf16_to_f32__ref(in, out, i, end);
}

void mace_f32_to_f16__avx2(const float *in, uint16_t *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8)
    _mm_storeu_si128((__m128i *)(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT |
                                                                  _MM_FROUND_NO_EXC));
  if (i < end) mace_f32_to_f16__ref(in, out, i, end);
}
