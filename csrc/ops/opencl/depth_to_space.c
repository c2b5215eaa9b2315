/* DepthToSpace on the GPU (OpenCL, f32): DCR or CRD order, as the CPU kind
 * (ops/depth_to_space.c), a permutation of the 6-D view; ops/opencl/cl_permute.h. */
#include <string.h>

#include "core/op.h"
#include "ops/opencl/cl_permute.h"

typedef struct depth_to_space_cl_state {
  mace_cl_shadow shadow;
  int64_t dims[6], strides[6];
} depth_to_space_cl_state;

static mace_status depth_to_space_cl_init(mace_op *op) {
  depth_to_space_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status depth_to_space_cl_infer(mace_op *op) {
  depth_to_space_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks block and shapes */
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (DepthToSpace): %s on the GPU (f32 only)",
                      op->name, mace_dtype_name(x->dtype));
  const int64_t b = mace_op_arg_int(op, "block_size", 1);
  const int crd = strcmp(mace_op_arg_str(op, "mode", "DCR"), "CRD") == 0;
  const int64_t n = x->dims[0], c = y->dims[1], h = x->dims[2], w = x->dims[3];
  const int64_t hw = h * w;
  /* Output [N, C, H, b_i, W, b_j]; the input's strides of each: DCR reads X as
   * [N, b_i, b_j, C, H, W], CRD as [N, C, b_i, b_j, H, W]. */
  const int64_t dims[6] = {n, c, h, b, w, b};
  const int64_t s_dcr[6] = {b * b * c * hw, hw, w, b * c * hw, 1, c * hw};
  const int64_t s_crd[6] = {c * b * b * hw, b * b * hw, w, b * hw, 1, hw};
  for (int k = 0; k < 6; ++k) {
    st->dims[k] = dims[k];
    st->strides[k] = crd ? s_crd[k] : s_dcr[k];
  }
  return MACE_OK;
}

static mace_status depth_to_space_cl_run(mace_op *op) {
  depth_to_space_cl_state *st = op->state;
  return mace_cl_permute_launch(op, 6, st->dims, st->strides, 0);
}

static void depth_to_space_cl_release(mace_op *op) {
  depth_to_space_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_depth_to_space_cl = {.type = "DepthToSpace",
                                                .device = MACE_DEVICE_GPU,
                                                .dtype = MACE_DT_F32,
                                                .state_size = sizeof(depth_to_space_cl_state),
                                                .init = depth_to_space_cl_init,
                                                .infer = depth_to_space_cl_infer,
                                                .run = depth_to_space_cl_run,
                                                .release = depth_to_space_cl_release};
