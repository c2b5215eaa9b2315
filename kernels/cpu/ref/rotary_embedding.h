/* Reference (portable C) f32 rotary position embedding (ONNX RotaryEmbedding). */
#ifndef MACE_KERNELS_CPU_REF_ROTARY_EMBEDDING_H_
#define MACE_KERNELS_CPU_REF_ROTARY_EMBEDDING_H_

#include <stdint.h>

/* x and y are [B, Hn, L, D] seen through element strides {batch, head, sequence} (D is
 * contiguous), so 3-D [B, L, Hn*D] tensors work in place of 4-D ones. The first `rdim` of
 * each row's D values are rotated by the angle whose cos/sin are cache rows of rdim/2
 * values: row pos[b * L + l] of cos/sin when pos is given, else row b * L + l.
 * interleaved: pairs (2k, 2k+1), else (k, k + rdim/2). The rest is copied.
 * Computes rows r in [begin, end) of [0, B * Hn * L), r = (b * Hn + h) * L + l. */
void mace_f32_rotary_embedding__ref(const float *x, float *y, const float *cos_c,
                                    const float *sin_c, const int64_t *pos, int64_t Hn,
                                    int64_t L, int64_t D, int64_t rdim, const int64_t st[3],
                                    int interleaved, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_ROTARY_EMBEDDING_H_ */
