/* Reference (portable C) f32 PSROIAlign (R-FCN position-sensitive ROI align). */
#ifndef MACE_KERNELS_CPU_REF_PSROI_ALIGN_H_
#define MACE_KERNELS_CPU_REF_PSROI_ALIGN_H_

#include <stdint.h>

/* X [N, output_dim * G * G, H, W], rois [R, 5] (batch index, x1, y1, x2, y2; the batch index
 * already checked in [0, N)), Y [R, output_dim, G, G]. Computes the planes p in [begin, end)
 * of [0, R * output_dim), p = r * output_dim + c. Bin (ph, pw) of output channel c averages
 * bilinear samples of input channel (c * G + ph) * G + pw over the bin; the ROI is
 * [x1, x2] x [y1, y2] times spatial_scale, its size at least 0.1; sampling > 0 samples per
 * bin and axis, else ceil(bin size). */
void mace_f32_psroi_align__ref(const float *x, const float *rois, float *y, int64_t N,
                               int64_t output_dim, int64_t G, int64_t H, int64_t W,
                               float spatial_scale, int64_t sampling, int64_t begin,
                               int64_t end);

#endif /* MACE_KERNELS_CPU_REF_PSROI_ALIGN_H_ */
