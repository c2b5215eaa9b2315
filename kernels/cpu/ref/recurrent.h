/* Reference (portable C) f32 cells of ONNX LSTM, GRU and RNN: one time step of one batch row. */
#ifndef MACE_KERNELS_CPU_REF_RECURRENT_H_
#define MACE_KERNELS_CPU_REF_RECURRENT_H_

#include <stdint.h>

/* Activation functions of the recurrent ops (ONNX names; alpha/beta where they take them). */
typedef enum mace_rnn_act_type {
  MACE_RNN_ACT_SIGMOID = 0,
  MACE_RNN_ACT_TANH = 1,
  MACE_RNN_ACT_RELU = 2,
  MACE_RNN_ACT_SOFTSIGN = 3,
  MACE_RNN_ACT_SOFTPLUS = 4,
  MACE_RNN_ACT_AFFINE = 5,          /* alpha * x + beta */
  MACE_RNN_ACT_LEAKYRELU = 6,       /* x >= 0 ? x : alpha * x */
  MACE_RNN_ACT_THRESHOLDEDRELU = 7, /* x > alpha ? x : 0 */
  MACE_RNN_ACT_SCALEDTANH = 8,      /* alpha * tanh(beta * x) */
  MACE_RNN_ACT_HARDSIGMOID = 9,     /* clamp(alpha * x + beta, 0, 1) */
  MACE_RNN_ACT_ELU = 10,            /* x >= 0 ? x : alpha * (exp(x) - 1) */
  MACE_RNN_ACT_COUNT = 11
} mace_rnn_act_type;

typedef struct mace_rnn_act {
  int type;
  float alpha, beta;
} mace_rnn_act;

/* Common operands of one cell step for hidden units j in [begin, end) of one batch row.
 * xw: the row of X @ W^T (gates concatenated, G * H values), hr: the row of H_prev @ R^T
 * (same layout), wb/rb: W and R biases (G * H each, NULL: none), clip: > 0 clips the
 * activations' inputs to [-clip, clip]. h: H_prev in, H_t out (in place); y: where H_t is
 * also written (NULL: nowhere). */

/* LSTM, gates i, o, f, c (ONNX order). c: C_prev in, C_t out. p: peepholes i, o, f
 * (3 * H, NULL: none). act: f, g, h. input_forget: f = 1 - i. */
void mace_f32_lstm_cell__ref(const float *xw, const float *hr, const float *wb, const float *rb,
                             const float *p, float *h, float *c, float *y, int64_t H, float clip,
                             int input_forget, const mace_rnn_act act[3], int64_t begin,
                             int64_t end);

/* GRU first half, gates z, r, h (ONNX order): computes z (into zr[0:H]) and r (into
 * zr[H:2H]); when linear_before_reset is 0 also rh = r * H_prev (for the caller's
 * rh @ Rh^T). act: f (for z and r). */
void mace_f32_gru_gates__ref(const float *xw, const float *hr, const float *wb, const float *rb,
                             const float *h, float *zr, float *rh, int64_t H, float clip,
                             const mace_rnn_act *f, int64_t begin, int64_t end);

/* GRU second half: h~ = g(xw_h + wb_h + r * (hr_h + rb_h)) when linear_before_reset, else
 * g(xw_h + wb_h + rhr + rb_h) where rhr is (r * H_prev) @ Rh^T (H values);
 * H_t = (1 - z) * h~ + z * H_prev. */
void mace_f32_gru_cell__ref(const float *xw, const float *hr, const float *rhr, const float *wb,
                            const float *rb, const float *zr, float *h, float *y, int64_t H,
                            float clip, int linear_before_reset, const mace_rnn_act *g,
                            int64_t begin, int64_t end);

/* Simple RNN: H_t = f(xw + wb + hr + rb). */
void mace_f32_rnn_cell__ref(const float *xw, const float *hr, const float *wb, const float *rb,
                            float *h, float *y, float clip, const mace_rnn_act *f,
                            int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_RECURRENT_H_ */
