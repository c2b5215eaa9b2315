/* SpaceToDepth: moves b x b spatial blocks into channels, NCHW (any dtype). */
/*
 * Inputs:  0 X [N, C, H * b, W * b] (any dtype).
 * Output:  0 Y [N, b * b * C, H, W], Y[n, (i * b + j) * C + c, y, x] = X[n, c, y * b + i, x * b + j].
 * Arguments:
 *   block_size  int b >= 1 (required)
 */
#include "core/op.h"
#include "kernels/cpu/ref/depth_to_space.h"

#define SPACE_TO_DEPTH_GRAIN_ELEMS 16384

typedef struct space_to_depth_state {
  int64_t b;
} space_to_depth_state;

static mace_status space_to_depth_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (SpaceToDepth): input '%s' must be 4-D NCHW",
                      op->name, x->name);
  space_to_depth_state *s = (space_to_depth_state *)op->state;
  const int64_t b = s->b = mace_op_arg_int(op, "block_size", 0);
  if (b < 1 || x->dims[2] % b != 0 || x->dims[3] % b != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (SpaceToDepth): block_size %lld does not "
                      "divide %lldx%lld", op->name, (long long)b, (long long)x->dims[2],
                      (long long)x->dims[3]);
  int64_t dims[4] = {x->dims[0], x->dims[1] * b * b, x->dims[2] / b, x->dims[3] / b};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, 4));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mace_tensor *x, *y;
  int64_t b;
} space_to_depth_job;

static void space_to_depth_range(void *ctx, int64_t begin, int64_t end) {
  const space_to_depth_job *j = (const space_to_depth_job *)ctx;
  const int64_t *d = j->x->dims;
  mace_x_space_to_depth__ref(j->x->data, d[0], d[1], j->y->dims[2], j->y->dims[3], j->b,
                             mace_dtype_size(j->x->dtype), j->y->data, begin, end);
}

static mace_status space_to_depth_run(mace_op *op) {
  const mace_tensor *y = op->outputs[0];
  if (mace_tensor_numel(y) == 0) return MACE_OK;
  const int64_t rows = y->dims[0] * y->dims[1] * y->dims[2];
  space_to_depth_job job = {op->inputs[0], y, ((const space_to_depth_state *)op->state)->b};
  int64_t grain = SPACE_TO_DEPTH_GRAIN_ELEMS / (y->dims[3] + 1);
  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, space_to_depth_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_space_to_depth = {.type = "SpaceToDepth", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(space_to_depth_state),
                                             .infer = space_to_depth_infer,
                                             .run = space_to_depth_run};
