/* Transpose on the GPU (OpenCL, f32): any permutation of up to 8 dims, as the CPU kind
 * (ops/transpose.c); the gather of ops/opencl/cl_permute.h. */
#include "core/op.h"
#include "ops/opencl/cl_permute.h"

typedef struct transpose_cl_state {
  mace_cl_shadow shadow;
  int nd;
  int64_t dims[MACE_MAX_DIMS], strides[MACE_MAX_DIMS];  /* output dims, input strides */
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
  st->nd = x->ndim;
  for (int k = 0; k < x->ndim; ++k) {
    int64_t src = np > 0 ? p[k] : x->ndim - 1 - k;  /* absent or empty: reversed */
    if (src < 0) src += x->ndim;
    st->dims[k] = x->dims[src];
    st->strides[k] = stride[src];
  }
  return MACE_OK;
}

static mace_status transpose_cl_run(mace_op *op) {
  transpose_cl_state *st = op->state;
  return mace_cl_permute_launch(op, st->nd, st->dims, st->strides, 0);
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
