/* ChannelShuffle on the GPU (OpenCL, f32): [N, group, C / group, rest] transposed to
 * [N, C / group, group, rest], as the CPU kind (ops/channel_shuffle.c); ops/opencl/cl_permute.h. */
#include "core/op.h"
#include "ops/opencl/cl_permute.h"

typedef struct channel_shuffle_cl_state {
  mace_cl_shadow shadow;
  int64_t dims[4], strides[4];
} channel_shuffle_cl_state;

static mace_status channel_shuffle_cl_init(mace_op *op) {
  channel_shuffle_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status channel_shuffle_cl_infer(mace_op *op) {
  channel_shuffle_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks group | C */
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (ChannelShuffle): %s on the GPU (f32 only)",
                      op->name, mace_dtype_name(x->dtype));
  const int64_t g = mace_op_arg_int(op, "group", 1), c = x->dims[1], cg = c / g;
  int64_t rest = 1;
  for (int d = 2; d < x->ndim; ++d) rest *= x->dims[d];
  const int64_t out_dims[4] = {x->dims[0], cg, g, rest};
  const int64_t strides[4] = {c * rest, rest, cg * rest, 1};  /* view [N, g, C/g, rest] */
  for (int k = 0; k < 4; ++k) {
    st->dims[k] = out_dims[k];
    st->strides[k] = strides[k];
  }
  return MACE_OK;
}

static mace_status channel_shuffle_cl_run(mace_op *op) {
  channel_shuffle_cl_state *st = op->state;
  return mace_cl_permute_launch(op, 4, st->dims, st->strides, 0);
}

static void channel_shuffle_cl_release(mace_op *op) {
  channel_shuffle_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_channel_shuffle_cl = {.type = "ChannelShuffle",
                                                 .device = MACE_DEVICE_GPU,
                                                 .dtype = MACE_DT_F32,
                                                 .state_size = sizeof(channel_shuffle_cl_state),
                                                 .init = channel_shuffle_cl_init,
                                                 .infer = channel_shuffle_cl_infer,
                                                 .run = channel_shuffle_cl_run,
                                                 .release = channel_shuffle_cl_release};
