/* SpaceToDepth on the GPU (OpenCL, f32): Y[n, (i * b + j) * C + c, y, x] = X[n, c, y * b + i,
 * x * b + j], as the CPU kind (ops/space_to_depth.c); ops/opencl/cl_permute.h. */
#include "core/op.h"
#include "ops/opencl/cl_permute.h"

typedef struct space_to_depth_cl_state {
  mace_cl_shadow shadow;
  int64_t dims[6], strides[6];
} space_to_depth_cl_state;

static mace_status space_to_depth_cl_init(mace_op *op) {
  space_to_depth_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status space_to_depth_cl_infer(mace_op *op) {
  space_to_depth_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks block and shapes */
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (SpaceToDepth): %s on the GPU (f32 only)",
                      op->name, mace_dtype_name(x->dtype));
  const int64_t b = mace_op_arg_int(op, "block_size", 1);
  const int64_t n = x->dims[0], c = x->dims[1], fh = x->dims[2], fw = x->dims[3];
  /* Output [N, b_i, b_j, C, H / b, W / b] with the input's strides of each. */
  const int64_t dims[6] = {n, b, b, c, y->dims[2], y->dims[3]};
  const int64_t strides[6] = {c * fh * fw, fw, 1, fh * fw, b * fw, b};
  for (int k = 0; k < 6; ++k) {
    st->dims[k] = dims[k];
    st->strides[k] = strides[k];
  }
  return MACE_OK;
}

static mace_status space_to_depth_cl_run(mace_op *op) {
  space_to_depth_cl_state *st = op->state;
  return mace_cl_permute_launch(op, 6, st->dims, st->strides, 0);
}

static void space_to_depth_cl_release(mace_op *op) {
  space_to_depth_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_space_to_depth_cl = {.type = "SpaceToDepth",
                                                .device = MACE_DEVICE_GPU,
                                                .dtype = MACE_DT_F32,
                                                .state_size = sizeof(space_to_depth_cl_state),
                                                .init = space_to_depth_cl_init,
                                                .infer = space_to_depth_cl_infer,
                                                .run = space_to_depth_cl_run,
                                                .release = space_to_depth_cl_release};
