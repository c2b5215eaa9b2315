/* Which unequal strides the f32 depthwise SIMD kernels (kernels/cpu/dwconv.h) also take. */
#ifndef MACE_KERNELS_CPU_DWCONV_STRIDES_H_
#define MACE_KERNELS_CPU_DWCONV_STRIDES_H_

#include "kernels/cpu/dwconv.h"

/* Besides what mace_f32_dwconv_applies says: K 3, 5 or 7 with strides (1, 2) or (2, 1)
 * (PP-LCNetV3, PaddleOCR's v4 text recogniser, halves the height or the width alone); the
 * kernels run them on their channels-last path, or through the reference kernel where that
 * path does not apply. */
static inline int mace_f32_dwconv_applies_unequal(const mace_conv2d_shape *s) {
  return s->group == s->in_c && s->out_c == s->in_c && s->k_h == s->k_w &&
         (s->k_h == 3 || s->k_h == 5 || s->k_h == 7) &&
         ((s->stride_h == 1 && s->stride_w == 2) || (s->stride_h == 2 && s->stride_w == 1)) &&
         s->dilation_h == 1 && s->dilation_w == 1;
}

#endif /* MACE_KERNELS_CPU_DWCONV_STRIDES_H_ */
