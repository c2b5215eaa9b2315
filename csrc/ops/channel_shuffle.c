/* ChannelShuffle: ShuffleNet's channel interleave over [N, C, ...] (any dtype). */
/*
 * Inputs:  0 X (any dtype, rank >= 2, channels at dim 1; C divisible by group).
 * Output:  0 Y, shape of X: X viewed as [N, group, C / group, ...] transposed to
 *          [N, C / group, group, ...], i.e. Y[:, i * group + g] = X[:, g * (C / group) + i].
 * Arguments:
 *   group  int >= 1 (required)
 */
#include "core/op.h"
#include "kernels/cpu/ref/channel_shuffle.h"

#define CHANNEL_SHUFFLE_GRAIN_BYTES 65536

typedef struct channel_shuffle_state {
  int64_t group, channels, plane_bytes, items;
} channel_shuffle_state;

static mace_status channel_shuffle_infer(mace_op *op) {
  channel_shuffle_state *s = (channel_shuffle_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  const size_t es = mace_dtype_size(x->dtype);
  if (es == 0 || x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ChannelShuffle): input '%s' needs a dtype "
                      "and rank >= 2", op->name, x->name);
  s->group = mace_op_arg_int(op, "group", 0);
  s->channels = x->dims[1];
  if (s->group < 1 || s->channels % s->group != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ChannelShuffle): group %lld does not divide "
                      "%lld channels", op->name, (long long)s->group, (long long)s->channels);
  s->plane_bytes = (int64_t)es;
  for (int d = 2; d < x->ndim; ++d) s->plane_bytes *= x->dims[d];
  s->items = x->dims[0] * s->channels;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const channel_shuffle_state *s;
  const void *in;
  void *out;
} channel_shuffle_job;

static void channel_shuffle_range(void *ctx, int64_t begin, int64_t end) {
  const channel_shuffle_job *j = (const channel_shuffle_job *)ctx;
  mace_x_channel_shuffle__ref(j->in, j->s->channels, j->s->group, j->s->plane_bytes, j->out,
                              begin, end);
}

static mace_status channel_shuffle_run(mace_op *op) {
  const channel_shuffle_state *s = (const channel_shuffle_state *)op->state;
  if (s->items == 0 || s->plane_bytes == 0) return MACE_OK;
  channel_shuffle_job job = {s, op->inputs[0]->data, op->outputs[0]->data};
  int64_t grain = CHANNEL_SHUFFLE_GRAIN_BYTES / (s->plane_bytes + 1);
  mace_threadpool_parallel_for(op->pool, s->items, grain > 0 ? grain : 1, channel_shuffle_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_channel_shuffle = {.type = "ChannelShuffle",
                                              .device = MACE_DEVICE_CPU,
                                              .dtype = MACE_DT_INVALID,
                                              .state_size = sizeof(channel_shuffle_state),
                                              .infer = channel_shuffle_infer,
                                              .run = channel_shuffle_run};
