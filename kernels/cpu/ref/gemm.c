/* Reference (portable C) f32 matrix multiply over strided operands, one block of C at a time. */
#include "kernels/cpu/ref/gemm.h"

/* Rows of C are computed as a sum of scaled rows of B when B's rows are contiguous
 * (unit stride along n), else as dot products along k; both keep the innermost loop on
 * unit-stride memory when the operands allow it. */
void mace_f32_gemm__ref(int64_t K, const float *a, int64_t a_rs, int64_t a_cs,
                        const float *b, int64_t b_rs, int64_t b_cs, float *c, int64_t c_rs,
                        int64_t m_begin, int64_t m_end, int64_t n_begin, int64_t n_end) {
  const int64_t nn = n_end - n_begin;
  if (nn <= 0) return;
  for (int64_t m = m_begin; m < m_end; ++m) {
    float *restrict crow = c + m * c_rs + n_begin;
    const float *arow = a + m * a_rs;
    if (b_cs == 1) {
      for (int64_t n = 0; n < nn; ++n) crow[n] = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        const float av = arow[k * a_cs];
        const float *restrict brow = b + k * b_rs + n_begin;
        for (int64_t n = 0; n < nn; ++n) crow[n] += av * brow[n];
      }
    } else {
      for (int64_t n = 0; n < nn; ++n) {
        const float *bcol = b + (n_begin + n) * b_cs;
        float acc = 0.0f;
        if (a_cs == 1 && b_rs == 1) {
          /* Eight partial sums: vectorizable without reassociation, and more accurate. */
          float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          int64_t k = 0;
          for (; k + 8 <= K; k += 8)
            for (int j = 0; j < 8; ++j) part[j] += arow[k + j] * bcol[k + j];
          for (; k < K; ++k) acc += arow[k] * bcol[k];
          acc += ((part[0] + part[4]) + (part[1] + part[5])) +
                 ((part[2] + part[6]) + (part[3] + part[7]));
        } else {
          for (int64_t k = 0; k < K; ++k) acc += arow[k * a_cs] * bcol[k * b_rs];
        }
        crow[n] = acc;
      }
    }
  }
}
