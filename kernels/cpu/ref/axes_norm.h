/* Reference (portable C) normalization over an arbitrary set of axes (MVN, Lp norms), f32. */
#ifndef MACE_KERNELS_CPU_REF_AXES_NORM_H_
#define MACE_KERNELS_CPU_REF_AXES_NORM_H_

#include <stdint.h>

#define MACE_AXES_NORM_MAX_DIMS 8

typedef enum mace_axes_norm_mode {
  MACE_AXES_NORM_MVN = 0,       /* y = (x - mean) / (sqrt(var) + eps) */
  MACE_AXES_NORM_MEAN_ONLY = 1, /* y = x - mean */
  MACE_AXES_NORM_L1 = 2,        /* y = x / sum|x|    (0 where the sum is 0) */
  MACE_AXES_NORM_L2 = 3         /* y = x / sqrt(sum x^2)  (0 where the sum is 0) */
} mace_axes_norm_mode;

/* The tensor's positions split into kept dims (nk of them: dims kd, element strides ks)
 * and normalized dims (nr: rd, rs). Work item t in [begin, end) is the t-th kept position
 * (row-major over kd); its red_count = prod(rd) elements are normalized together. */
typedef struct mace_axes_norm_view {
  int nk, nr;
  int64_t kd[MACE_AXES_NORM_MAX_DIMS], ks[MACE_AXES_NORM_MAX_DIMS];
  int64_t rd[MACE_AXES_NORM_MAX_DIMS], rs[MACE_AXES_NORM_MAX_DIMS];
  int64_t red_count;
} mace_axes_norm_view;

void mace_f32_axes_norm__ref(const float *x, float *y, const mace_axes_norm_view *v,
                             mace_axes_norm_mode mode, float eps, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_AXES_NORM_H_ */
