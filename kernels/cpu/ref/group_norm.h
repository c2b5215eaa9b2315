/* Reference (portable C) group normalization (also instance normalization), f32. */
#ifndef MACE_KERNELS_CPU_REF_GROUP_NORM_H_
#define MACE_KERNELS_CPU_REF_GROUP_NORM_H_

#include <stdint.h>

/* x and y are [N, G, cpg, hw] row-major (C = G * cpg channels of hw elements each).
 * Computes rows r = n * G + g in [begin, end): each normalized over its cpg * hw elements,
 * y = (x - mean) / sqrt(var + eps) * scale[i] + bias[i], i = the channel g * cpg + c, or
 * the group g when per_group. Statistics are accumulated in double. */
void mace_f32_group_norm__ref(const float *x, float *y, int64_t groups, int64_t cpg,
                              int64_t hw, const float *scale, const float *bias,
                              int per_group, float eps, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_GROUP_NORM_H_ */
