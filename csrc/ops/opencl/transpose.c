/* Transpose on the GPU (OpenCL, f32): any permutation of up to 8 dims, as the CPU kind
 * (ops/transpose.c); kernels/opencl/layout.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct transpose_cl_state {
  mace_cl_shadow shadow;
  int32_t dims[8], x_strides[8];  /* the output's dims, the input's strides in that order */
} transpose_cl_state;

static mace_status transpose_cl_init(mace_op *op) {
  transpose_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status transpose_cl_infer(mace_op *op) {
  transpose_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks the permutation */
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Transpose): %s on the GPU (f32 only)",
                      op->name, mace_dtype_name(x->dtype));
  const int64_t *p;
  const int np = mace_op_arg_ints(op, "dims", &p);
  int64_t stride[MACE_MAX_DIMS];
  int64_t s = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    stride[d] = s;
    s *= x->dims[d];
  }
  const int pad = 8 - x->ndim;
  for (int k = 0; k < 8; ++k) {
    st->dims[k] = 1;
    st->x_strides[k] = 0;
  }
  for (int k = 0; k < x->ndim; ++k) {
    int64_t src = np > 0 ? p[k] : x->ndim - 1 - k;
    if (src < 0) src += x->ndim;
    st->dims[pad + k] = (int32_t)x->dims[src];
    st->x_strides[pad + k] = (int32_t)stride[src];
  }
  return MACE_OK;
}

static mace_status transpose_cl_run(mace_op *op) {
  transpose_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const int64_t n = mace_tensor_numel(op->outputs[0]);
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layout", "transpose", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, n));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 5, st->dims, sizeof(st->dims)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 6, st->x_strides, sizeof(st->x_strides)));
  const size_t gws[1] = {(size_t)n};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}

static void transpose_cl_release(mace_op *op) {
  transpose_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_transpose_cl = {.type = "Transpose", .device = MACE_DEVICE_GPU,
                                           .dtype = MACE_DT_F32,
                                           .state_size = sizeof(transpose_cl_state),
                                           .init = transpose_cl_init,
                                           .infer = transpose_cl_infer,
                                           .run = transpose_cl_run,
                                           .release = transpose_cl_release};
