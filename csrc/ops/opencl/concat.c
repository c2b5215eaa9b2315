/* Concat on the GPU (OpenCL, f32): inputs joined along an axis, as the CPU kind (ops/concat.c),
 * one slice copy per input; kernels/opencl/layout.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct concat_cl_state {
  mace_cl_shadow shadow;
  int64_t axis;
} concat_cl_state;

static mace_status concat_cl_init(mace_op *op) {
  concat_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status concat_cl_infer(mace_op *op) {
  concat_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks axis and dims */
  for (int i = 0; i < op->n_inputs; ++i)
    if (op->inputs[i]->dtype != MACE_DT_F32)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Concat): %s input on the GPU (f32 only)",
                        op->name, mace_dtype_name(op->inputs[i]->dtype));
  st->axis = mace_op_arg_int(op, "axis", 0);
  if (st->axis < 0) st->axis += op->outputs[0]->ndim;
  return MACE_OK;
}

static mace_status concat_cl_run(mace_op *op) {
  concat_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *y = op->outputs[0];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < y->ndim; ++d) {
    if (d < st->axis) outer *= y->dims[d];
    else if (d > st->axis) inner *= y->dims[d];
  }
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layout", "copy_slice", "", &k));
  int64_t start = 0;
  for (int i = 0; i < op->n_inputs; ++i) {
    const mace_tensor *x = op->inputs[i];
    const int64_t inner_x = x->dims[st->axis] * inner;
    if (outer * inner_x > 0) {
      MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
      MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, y));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, outer));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5, inner_x));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, y->dims[st->axis] * inner));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 7, start));
      const size_t gws[1] = {(size_t)(outer * inner_x)};
      MACE_RETURN_IF_ERROR(mace_cl_launch(rt, k, 1, gws, NULL, op->name));
    }
    start += inner_x;
  }
  return MACE_OK;
}

static void concat_cl_release(mace_op *op) {
  concat_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_concat_cl = {.type = "Concat", .device = MACE_DEVICE_GPU,
                                        .dtype = MACE_DT_F32,
                                        .state_size = sizeof(concat_cl_state),
                                        .init = concat_cl_init, .infer = concat_cl_infer,
                                        .run = concat_cl_run, .release = concat_cl_release};
