/* Activation: element-wise activation functions (f32), PRELU with a broadcast slope. */
/*
 * Inputs:  0 X (f32, any shape); 1 slope (f32, only for PRELU: broadcastable to X by NumPy
 *          rules, e.g. [C,1,1] for per-channel slopes of an NCHW X).
 * Output:  0 Y, shape and dtype of X.
 * Arguments:
 *   activation              "RELU" | "RELUX" | "LEAKYRELU" | "SIGMOID" | "TANH" |
 *                           "HARDSIGMOID" | "HARDSWISH" | "ELU" | "SWISH" | "GELU" |
 *                           "GELU_TANH" | "MISH" | "PRELU" | "NOOP" (SWISH: x * sigmoid(alpha
 *                           * x); GELU: x * (1 + erf(x / sqrt(2))) / 2; GELU_TANH and MISH as
 *                           in ops/fused_activation.h)
 *   max_limit               RELUX upper bound (default 6)
 *   activation_coefficient  LEAKYRELU slope (default 0.01), ELU alpha (default 1),
 *                           SWISH alpha (default 1)
 *   hardsigmoid_alpha/beta  HARDSIGMOID (default 0.2, 0.5)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/ref/eltwise.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/nchwc_split.h"
#include "runtime/cpu/simd_dispatch.h"

#define ACTIVATION_GRAIN 16384

typedef struct activation_state {
  int prelu;
  mace_activation act;
  mace_eltwise_shape shape;  /* PRELU: X against the slope */
} activation_state;

static mace_status activation_init(mace_op *op) {
  activation_state *s = (activation_state *)op->state;
  const char *a = mace_op_arg_str(op, "activation", NULL);
  if (a == NULL) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Activation): missing argument \"activation\"",
                      op->name);
  }
  if (strcmp(a, "PRELU") == 0) {
    s->prelu = 1;
    return MACE_OK;
  }
  return mace_fused_activation_parse(op, &s->act);
}

/* Element-wise (not PRELU, whose slope is laid out per channel): the same on any layout. */
static int activation_accepts_nchwc(mace_op *op, int block) {
  (void)block;
  const char *a = mace_op_arg_str(op, "activation", NULL);
  return a && strcmp(a, "PRELU") != 0 && op->n_inputs == 1 ? MACE_NCHWC_ELEMENTWISE
                                                           : MACE_NCHWC_NO;
}

static mace_status activation_infer(mace_op *op) {
  activation_state *s = (activation_state *)op->state;
  const mace_tensor *x;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, s->prelu ? 2 : 1, 2, 1));
  x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (s->prelu) {
    const mace_tensor *slope = op->inputs[1];
    int64_t out_dims[MACE_MAX_DIMS];
    int out_nd = 0;
    char b1[128], b2[128];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, slope, MACE_DT_F32));
    if (x->ndim > MACE_ELTWISE_MAX_DIMS || slope->ndim > MACE_ELTWISE_MAX_DIMS ||
        mace_eltwise_shape_init(&s->shape, x->dims, x->ndim, slope->dims, slope->ndim,
                                out_dims, &out_nd) >= 0 ||
        !mace_dims_equal(out_dims, out_nd, x->dims, x->ndim)) {
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (Activation): PRELU slope %s does not broadcast to input %s",
                        op->name, mace_dims_str(slope->dims, slope->ndim, b1, sizeof(b1)),
                        mace_dims_str(x->dims, x->ndim, b2, sizeof(b2)));
    }
  }
  if (x->layout == MACE_LAYOUT_NCHWC && s->prelu)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Activation): PRELU cannot run on the "
                      "blocked (NCHWc) layout", op->name);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->outputs[0]->layout = x->layout;
  op->outputs[0]->block = x->block;
  op->macs = mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const activation_state *s;
  const float *x, *slope;
  float *y;
} activation_job;

static void activation_range(void *ctx, int64_t begin, int64_t end) {
  const activation_job *j = (const activation_job *)ctx;
  if (j->s->prelu) {
    const mace_f32_eltwise_binary_fn fast = mace_simd_active()->eltwise_binary;
    (fast ? fast : mace_f32_eltwise__ref)(MACE_ELTWISE_PRELU, &j->s->shape, j->x, j->slope, j->y,
                                          begin, end);
  } else {
    mace_f32_activation(&j->s->act, j->x + begin, j->y + begin, end - begin);
  }
}

static mace_status activation_run(mace_op *op) {
  const activation_state *s = (const activation_state *)op->state;
  activation_job job;
  /* NCHWc: the padded channel tail too (its lanes are finite: kernels/cpu/nchwc.h). */
  int64_t n = mace_tensor_storage_numel(op->inputs[0]);
  job.s = s;
  job.x = (const float *)op->inputs[0]->data;
  job.slope = s->prelu ? (const float *)op->inputs[1]->data : NULL;
  job.y = (float *)op->outputs[0]->data;
  if (n > 0)  /* in row bands on large NCHWc planes (runtime/cpu/nchwc_split.h) */
    mace_nchwc_parallel_for(op->pool, op->outputs[0], ACTIVATION_GRAIN, activation_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_activation_f32 = {.type = "Activation", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_F32,
                                             .state_size = sizeof(activation_state),
                                             .init = activation_init,
                                             .infer = activation_infer,
                                             .run = activation_run,
                                             .accepts_nchwc = activation_accepts_nchwc};
