/* Reference (portable C) GridSample: samples X at grid positions, 1 to 3 spatial dims (f32). */
#ifndef MACE_KERNELS_CPU_REF_GRID_SAMPLE_H_
#define MACE_KERNELS_CPU_REF_GRID_SAMPLE_H_
#include <stdint.h>

typedef enum { MACE_GS_NEAREST = 0, MACE_GS_LINEAR = 1, MACE_GS_CUBIC = 2 } mace_gs_mode;
typedef enum { MACE_GS_ZEROS = 0, MACE_GS_BORDER = 1, MACE_GS_REFLECTION = 2 } mace_gs_padding;

/* x [N, C, in...] (nd spatial dims), grid [N, out..., nd] with the coordinates of the last
 * spatial dim first (x, y, z), normalized to [-1, 1]; y [N, C, out...]. Computes output
 * elements [begin, end) of N * C * prod(out) as ONNX GridSample (opset 22) defines. */
void mace_f32_grid_sample__ref(const float *x, const float *grid, float *y, int nd,
                               const int64_t *in_dims, const int64_t *out_dims, int64_t channels,
                               mace_gs_mode mode, mace_gs_padding padding, int align_corners,
                               int64_t begin, int64_t end);
#endif /* MACE_KERNELS_CPU_REF_GRID_SAMPLE_H_ */
