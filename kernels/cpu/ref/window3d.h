/* Reference (portable C) 3-D window ops over NCDHW: pooling, convolution, transposed (f32). */
#ifndef MACE_KERNELS_CPU_REF_WINDOW3D_H_
#define MACE_KERNELS_CPU_REF_WINDOW3D_H_
#include <stdint.h>

/* A 3-D window over [N, C, D, H, W]: per spatial axis (D, H, W) the input and output sizes,
 * kernel, stride, dilation and begin/end padding. */
typedef struct mace_window3d {
  int64_t in[3], out[3], k[3], s[3], d[3], pad_begin[3], pad_end[3];
} mace_window3d;

/* Output rows [begin, end) of N * C * D_out (each row H_out * W_out values) of max pooling
 * (NaN propagates; a window with no input element gives -inf) or average pooling (divided by
 * the window's elements inside the input, or with count_include_pad inside the padded
 * input). */
void mace_f32_pool3d__ref(const float *x, float *y, const mace_window3d *g, int is_max,
                          int count_include_pad, int64_t begin, int64_t end);

/* Output rows [begin, end) of N * C_out * D_out of a grouped convolution: x [N, C_in, D, H, W],
 * w [C_out, C_in / group, kD, kH, kW], bias [C_out] or NULL. */
void mace_f32_conv3d__ref(const float *x, const float *w, const float *bias, float *y,
                          const mace_window3d *g, int64_t c_in, int64_t c_out, int64_t group,
                          int64_t begin, int64_t end);
/* Output rows [begin, end) of N * C_out * D_out of a grouped transposed convolution: x [N, C_in,
 * D, H, W], w [C_in, C_out / group, kD, kH, kW], bias [C_out] or NULL; g->out are the output
 * sizes and g->pad_begin the pads cropped from the start of each axis. */
void mace_f32_deconv3d__ref(const float *x, const float *w, const float *bias, float *y,
                            const mace_window3d *g, int64_t c_in, int64_t c_out, int64_t group,
                            int64_t begin, int64_t end);
#endif /* MACE_KERNELS_CPU_REF_WINDOW3D_H_ */
