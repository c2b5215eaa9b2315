/* Reference (portable C) f32 RoiAlign (ONNX semantics: avg/max pooling of bilinear samples). */
#ifndef MACE_KERNELS_CPU_REF_ROI_ALIGN_H_
#define MACE_KERNELS_CPU_REF_ROI_ALIGN_H_

#include <stdint.h>

/* X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch [R] (already checked in [0, N)),
 * Y [R, C, OH, OW]. Computes the planes p in [begin, end) of [0, R * C), p = r * C + c.
 * half_pixel: ROI corners shifted by -0.5 after scaling, sizes not clamped to >= 1 (ONNX
 * half_pixel); else ONNX output_half_pixel. sampling_ratio <= 0: ceil(roi size / output
 * size) samples per bin and axis. is_max: max of the samples' weighted corner values (as
 * ONNX Runtime computes it), else their average. */
void mace_f32_roi_align__ref(const float *x, const float *rois, const int64_t *batch, float *y,
                             int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                             float spatial_scale, int64_t sampling_ratio, int half_pixel,
                             int is_max, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_ROI_ALIGN_H_ */
