/* Pad on the GPU (OpenCL, f32): constant / reflect / symmetric / edge / wrap padding (and
 * cropping) of up to 8 dims, paddings from the argument or inputs as the CPU kind (ops/pad.c,
 * ops/pad_paddings.h); kernels/opencl/layout.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"
#include "ops/pad_paddings.h"

typedef struct pad_cl_state {
  mace_cl_shadow shadow;
  int32_t dims[8], in_dims[8], before[8];
  float value;
} pad_cl_state;

static mace_status pad_cl_init(mace_op *op) {
  pad_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status pad_cl_infer(mace_op *op) {
  pad_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks paddings, value */
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Pad): %s on the GPU (f32 only)", op->name,
                      mace_dtype_name(x->dtype));
  int64_t p[2 * MACE_MAX_DIMS];
  MACE_RETURN_IF_ERROR(mace_pad_read_paddings(op, x->ndim, p));
  for (int k = 0; k < 8; ++k) {
    const int d = k - (8 - x->ndim);
    st->dims[k] = d >= 0 ? (int32_t)y->dims[d] : 1;
    st->in_dims[k] = d >= 0 ? (int32_t)x->dims[d] : 1;
    st->before[k] = d >= 0 ? (int32_t)p[2 * d] : 0;
  }
  st->value = mace_op_arg_float(op, "constant_value", 0.0f);
  if (op->n_inputs >= 3 && mace_tensor_numel(op->inputs[2]) > 0 && op->inputs[2]->data)
    st->value = *(const float *)op->inputs[2]->data;  /* a value input, checked by the shadow */
  return MACE_OK;
}

static mace_status pad_cl_run(mace_op *op) {
  pad_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const int64_t n = mace_tensor_numel(op->outputs[0]);
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layout", "pad", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, n));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 5, st->dims, sizeof(st->dims)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 6, st->in_dims, sizeof(st->in_dims)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 7, st->before, sizeof(st->before)));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 8, mace_op_arg_int(op, "pad_type", 0)));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 9, st->value));
  const size_t gws[1] = {(size_t)n};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}

static void pad_cl_release(mace_op *op) {
  pad_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_pad_cl = {.type = "Pad", .device = MACE_DEVICE_GPU,
                                     .dtype = MACE_DT_F32, .state_size = sizeof(pad_cl_state),
                                     .value_inputs = 0xeu, /* inputs 1..3, as ops/pad.c */
                                     .init = pad_cl_init, .infer = pad_cl_infer,
                                     .run = pad_cl_run, .release = pad_cl_release};
