/* Reference (portable C) f32 PriorBox (Caffe SSD default boxes). */
#ifndef MACE_KERNELS_CPU_REF_PRIOR_BOX_H_
#define MACE_KERNELS_CPU_REF_PRIOR_BOX_H_

#include <stdint.h>

/* Boxes of the feature-map cells [begin, end) of [0, H * W) (cell = h * W + w), written to
 * y[cell * num_priors * 4 ...] as (xmin, ymin, xmax, ymax) / image size, in Caffe's order per
 * cell: for each min size s: the square s, then (if n_max) the square sqrt(s * max[s]),
 * then one box per aspect ratio ar != 1 of `ars` (s * sqrt(ar) wide, s / sqrt(ar) high).
 * Centers: ((w + offset) * step_w, (h + offset) * step_h). clip: each value to [0, 1]. */
void mace_f32_prior_box__ref(const float *min_sizes, int n_min, const float *max_sizes,
                             int n_max, const float *ars, int n_ar, int64_t W, float img_w,
                             float img_h, float step_w, float step_h, float offset, int clip,
                             float *y, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_PRIOR_BOX_H_ */
