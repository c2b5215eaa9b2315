/* GroupNorm on the GPU (OpenCL, f32 stored fp32 or fp16): as the CPU kind (ops/group_norm.c,
 * whose infer on the shadow checks the groups, the scale and the bias): groups (0: one per
 * channel, ONNX InstanceNormalization), epsilon, per-channel or per_group scale and bias; one
 * work-group per (image, group) row, kernels/opencl/group_norm.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct group_norm_cl_state {
  mace_cl_shadow shadow;
  int64_t rows, groups, cpg, hw;
} group_norm_cl_state;

static mace_status group_norm_cl_init(mace_op *op) {
  group_norm_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status group_norm_cl_infer(mace_op *op) {
  group_norm_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_tensor *x = op->inputs[0];
  const int64_t c = x->dims[1], g = mace_op_arg_int(op, "groups", 0);
  st->groups = g ? g : c;
  st->cpg = c / st->groups;
  st->rows = x->dims[0] * st->groups;
  st->hw = 1;
  for (int d = 2; d < x->ndim; ++d) st->hw *= x->dims[d];
  return MACE_OK;
}

static mace_status group_norm_cl_run(mace_op *op) {
  group_norm_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const int64_t len = st->cpg * st->hw;
  if (st->rows == 0 || len == 0) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "group_norm", "group_norm_rows", "", &k));
  const size_t group = mace_cl_row_group(k, len);
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 4, op, op->inputs[1]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 6, op, op->inputs[2]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 8, st->groups));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 9, st->cpg));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 10, st->hw));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 11, mace_op_arg_int(op, "per_group", 0) != 0));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 12, mace_op_arg_float(op, "epsilon", 1e-5f)));
  MACE_RETURN_IF_ERROR(mace_cl_arg_local(k, 13, group * sizeof(float)));
  const size_t gws[1] = {(size_t)st->rows * group}, lws[1] = {group};
  return mace_cl_launch(rt, k, 1, gws, lws, op->name);
}

static void group_norm_cl_release(mace_op *op) {
  group_norm_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_group_norm_cl = {.type = "GroupNorm", .device = MACE_DEVICE_GPU,
                                            .dtype = MACE_DT_F32,
                                            .state_size = sizeof(group_norm_cl_state),
                                            .init = group_norm_cl_init,
                                            .infer = group_norm_cl_infer,
                                            .run = group_norm_cl_run,
                                            .release = group_norm_cl_release};
