/* Reference (portable C) dtype-generic BatchToSpaceND / SpaceToBatchND over NCHW images. */
#ifndef MACE_KERNELS_CPU_REF_SPACE_BATCH_H_
#define MACE_KERNELS_CPU_REF_SPACE_BATCH_H_

#include <stddef.h>
#include <stdint.h>

/* x [N * bh * bw, C, IH, IW] -> y [N, C, OH, OW] (elements of esize bytes), TF's block
 * order: input batch b = (oy * bw + ox) * N + n holds the pixels (h, w) with h % bh == oy,
 * w % bw == ox, where h = oh + crop_top, w = ow + crop_left (h / bh, w / bw in x).
 * Computes the output rows [begin, end) of [0, N * C * OH). */
void mace_x_batch_to_space__ref(const void *x, void *y, size_t esize, int64_t N, int64_t C,
                                int64_t IH, int64_t IW, int64_t OH, int64_t OW, int64_t bh,
                                int64_t bw, int64_t crop_top, int64_t crop_left,
                                int64_t begin, int64_t end);

/* x [N, C, IH, IW] -> y [N * bh * bw, C, OH, OW], OH = (IH + pad_top + pad_bottom) / bh:
 * y[(oy * bw + ox) * N + n, c, h, w] = x[n, c, h * bh + oy - pad_top, w * bw + ox - pad_left]
 * or zero (all bytes 0) in the padding. Computes output rows [begin, end) of
 * [0, N * bh * bw * C * OH). */
void mace_x_space_to_batch__ref(const void *x, void *y, size_t esize, int64_t N, int64_t C,
                                int64_t IH, int64_t IW, int64_t OH, int64_t OW, int64_t bh,
                                int64_t bw, int64_t pad_top, int64_t pad_left,
                                int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_SPACE_BATCH_H_ */
