/* Reference (portable C) Lp pooling over 1 to 3 spatial dims (NC + spatial, row-major), f32. */
#ifndef MACE_KERNELS_CPU_REF_LP_POOL_H_
#define MACE_KERNELS_CPU_REF_LP_POOL_H_

#include <stdint.h>

/* Window geometry, spatial dims padded to 3 with leading size-1 dims. */
typedef struct mace_lp_pool_geom {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad_begin[3];
} mace_lp_pool_geom;

/* x is [nc, in...], y [nc, out...]. Output element t in [begin, end) (row-major over
 * [nc, out...]) is (sum over the window's elements inside x of |x|^p)^(1/p); padding
 * adds nothing. */
void mace_f32_lp_pool__ref(const float *x, float *y, const mace_lp_pool_geom *g, float p,
                           int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_LP_POOL_H_ */
