/* LocalResponseNorm on the GPU (OpenCL, f32 stored fp32 or fp16): the CPU kind's arguments and
 * semantics (ops/lrn.c: a window of `size` channels, alpha, beta, bias; any rank >= 2);
 * kernels/opencl/lrn.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct lrn_cl_state {
  mace_cl_shadow shadow;
  int64_t size;
  float alpha, beta, bias;
} lrn_cl_state;

static mace_status lrn_cl_init(mace_op *op) {
  lrn_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));  /* checks size */
  st->size = mace_op_arg_int(op, "size", 0);
  st->alpha = mace_op_arg_float(op, "alpha", 1e-4f);
  st->beta = mace_op_arg_float(op, "beta", 0.75f);
  st->bias = mace_op_arg_float(op, "bias", 1.0f);
  return MACE_OK;
}

static mace_status lrn_cl_infer(mace_op *op) {
  lrn_cl_state *st = op->state;
  return mace_cl_shadow_infer(op, &st->shadow);
}

static mace_status lrn_cl_run(mace_op *op) {
  lrn_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0];
  const int64_t channels = x->dims[1], rows = x->dims[0] * channels;
  int64_t hw = 1;
  for (int d = 2; d < x->ndim; ++d) hw *= x->dims[d];
  if (rows == 0 || hw == 0) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "lrn", "lrn", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  const int64_t ints[] = {channels, hw, rows, (st->size - 1) / 2, st->size / 2};
  for (int i = 0; i < 5; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4 + i, ints[i]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 9, st->alpha));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 10, st->beta));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 11, st->bias));
  const size_t gws[2] = {(size_t)hw, (size_t)rows};
  return mace_cl_launch(rt, k, 2, gws, NULL, op->name);
}

static void lrn_cl_release(mace_op *op) {
  lrn_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_lrn_cl = {.type = "LocalResponseNorm", .device = MACE_DEVICE_GPU,
                                     .dtype = MACE_DT_F32, .state_size = sizeof(lrn_cl_state),
                                     .init = lrn_cl_init, .infer = lrn_cl_infer,
                                     .run = lrn_cl_run, .release = lrn_cl_release};
