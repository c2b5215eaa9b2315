/* DepthToSpace: moves channel blocks into space, NCHW, DCR or CRD order (any dtype). */
/*
 * Inputs:  0 X [N, C * b * b, H, W] (any dtype).
 * Output:  0 Y [N, C, H * b, W * b].
 * Arguments:
 *   block_size  int b >= 1 (required)
 *   mode        string "DCR" (default; TF and ONNX default) or "CRD" (ONNX, PyTorch PixelShuffle)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/depth_to_space.h"

#define DEPTH_TO_SPACE_GRAIN_ELEMS 16384

typedef struct depth_to_space_state {
  int64_t b;
  int crd;
} depth_to_space_state;

static mace_status depth_to_space_infer(mace_op *op) {
  depth_to_space_state *s = (depth_to_space_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DepthToSpace): input '%s' must be 4-D NCHW",
                      op->name, x->name);
  s->b = mace_op_arg_int(op, "block_size", 0);
  const char *mode = mace_op_arg_str(op, "mode", "DCR");
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DepthToSpace): mode '%s' is not DCR or CRD",
                      op->name, mode);
  s->crd = strcmp(mode, "CRD") == 0;
  if (s->b < 1 || x->dims[1] % (s->b * s->b) != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DepthToSpace): block_size %lld does not fit "
                      "%lld channels", op->name, (long long)s->b, (long long)x->dims[1]);
  int64_t dims[4] = {x->dims[0], x->dims[1] / (s->b * s->b), x->dims[2] * s->b,
                     x->dims[3] * s->b};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, 4));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const depth_to_space_state *s;
  const mace_tensor *x;
  void *out;
} depth_to_space_job;

static void depth_to_space_range(void *ctx, int64_t begin, int64_t end) {
  const depth_to_space_job *j = (const depth_to_space_job *)ctx;
  const int64_t *d = j->x->dims, b = j->s->b;
  mace_x_depth_to_space__ref(j->x->data, d[0], d[1] / (b * b), d[2], d[3], b, j->s->crd,
                             mace_dtype_size(j->x->dtype), j->out, begin, end);
}

static mace_status depth_to_space_run(mace_op *op) {
  const depth_to_space_state *s = (const depth_to_space_state *)op->state;
  const mace_tensor *y = op->outputs[0];
  if (mace_tensor_numel(y) == 0) return MACE_OK;
  const int64_t rows = y->dims[0] * y->dims[1] * y->dims[2];
  depth_to_space_job job = {s, op->inputs[0], y->data};
  int64_t grain = DEPTH_TO_SPACE_GRAIN_ELEMS / (y->dims[3] + 1);
  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, depth_to_space_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_depth_to_space = {.type = "DepthToSpace", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(depth_to_space_state),
                                             .infer = depth_to_space_infer,
                                             .run = depth_to_space_run};
