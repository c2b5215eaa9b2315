/* Reference (portable C) dtype-generic DepthToSpace (DCR, CRD) and SpaceToDepth, NCHW. */
#ifndef MACE_KERNELS_CPU_REF_DEPTH_TO_SPACE_H_
#define MACE_KERNELS_CPU_REF_DEPTH_TO_SPACE_H_

#include <stddef.h>
#include <stdint.h>

/* in [n, c * b * b, h, w] -> out [n, c, h * b, w * b] with
 *   DCR (crd == 0): out[n, k, y * b + i, x * b + j] = in[n, (i * b + j) * c + k, y, x]
 *   CRD (crd != 0): out[n, k, y * b + i, x * b + j] = in[n, k * b * b + i * b + j, y, x]
 * Computes output rows [begin, end) of the n * c * h * b rows. */
void mace_x_depth_to_space__ref(const void *in, int64_t n, int64_t c, int64_t h, int64_t w,
                                int64_t b, int crd, size_t esize, void *out, int64_t begin,
                                int64_t end);

/* in [n, c, h * b, w * b] -> out [n, b * b * c, h, w] (inverse of DCR):
 *   out[n, (i * b + j) * c + k, y, x] = in[n, k, y * b + i, x * b + j]
 * Computes output rows [begin, end) of the n * b * b * c * h rows. */
void mace_x_space_to_depth__ref(const void *in, int64_t n, int64_t c, int64_t h, int64_t w,
                                int64_t b, size_t esize, void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_DEPTH_TO_SPACE_H_ */
