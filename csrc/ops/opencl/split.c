/* Split on the GPU (OpenCL, f32): one tensor cut along an axis into the outputs the CPU kind's
 * infer sized (ops/split.c: split argument, input 1 or equal parts), one slice copy per
 * output; kernels/opencl/layout.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct split_cl_state {
  mace_cl_shadow shadow;
  int64_t axis;
} split_cl_state;

static mace_status split_cl_init(mace_op *op) {
  split_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status split_cl_infer(mace_op *op) {
  split_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks axis and sizes */
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Split): %s on the GPU (f32 only)", op->name,
                      mace_dtype_name(x->dtype));
  st->axis = mace_op_arg_int(op, "axis", 0);
  if (st->axis < 0) st->axis += x->ndim;
  return MACE_OK;
}

static mace_status split_cl_run(mace_op *op) {
  split_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < x->ndim; ++d) {
    if (d < st->axis) outer *= x->dims[d];
    else if (d > st->axis) inner *= x->dims[d];
  }
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layout", "copy_slice_from", "", &k));
  int64_t start = 0;
  for (int i = 0; i < op->n_outputs; ++i) {
    const mace_tensor *y = op->outputs[i];
    const int64_t inner_y = y->dims[st->axis] * inner;
    if (outer * inner_y > 0) {
      MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
      MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, y));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, outer));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5, x->dims[st->axis] * inner));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, inner_y));
      MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 7, start));
      const size_t gws[1] = {(size_t)(outer * inner_y)};
      MACE_RETURN_IF_ERROR(mace_cl_launch(rt, k, 1, gws, NULL, op->name));
    }
    start += inner_y;
  }
  return MACE_OK;
}

static void split_cl_release(mace_op *op) {
  split_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_split_cl = {.type = "Split", .device = MACE_DEVICE_GPU,
                                       .dtype = MACE_DT_F32,
                                       .state_size = sizeof(split_cl_state),
                                       .value_inputs = 1u << 1, /* sizes, as ops/split.c */
                                       .init = split_cl_init, .infer = split_cl_infer,
                                       .run = split_cl_run, .release = split_cl_release};
