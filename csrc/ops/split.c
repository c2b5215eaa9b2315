/* Split: cuts one tensor (any dtype) into several along one axis. */
/*
 * Inputs:  0 X (any dtype, rank >= 1)
 *          1 split (optional, i32/i64, constant or computed at run time) sizes, used when the
 *            `split` argument is absent.
 * Outputs: 0..n-1 Y_i, dims of X with dims[axis] = split[i].
 * Arguments:
 *   axis   int (default 0), negative counts from the rank
 *   split  ints (optional): size of every output along axis, summing to dims[axis].
 *          Absent: equal parts of ceil(dims[axis] / n), the last one smaller when the
 *          dim does not divide (ONNX Split-18 num_outputs semantics)
 */
#include "core/op.h"
#include "kernels/cpu/ref/split.h"

#define SPLIT_GRAIN_BYTES 65536

typedef struct split_state {
  int64_t outer;
} split_state;

static mace_status split_infer(mace_op *op) {
  split_state *s = (split_state *)op->state;
  if (op->n_inputs < 1 || op->n_inputs > 2 || op->n_outputs < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Split): has %d inputs and %d outputs, "
                      "expects 1..2 and >= 1", op->name, op->n_inputs, op->n_outputs);
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Split): input '%s' has no dtype or rank 0",
                      op->name, x->name);
  const int64_t axis_arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = axis_arg < 0 ? axis_arg + x->ndim : axis_arg;
  if (axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Split): axis %lld out of range for rank %d",
                      op->name, (long long)axis_arg, x->ndim);
  const int n = op->n_outputs;
  const int64_t *sizes = NULL;
  int ns = mace_op_arg_ints(op, "split", &sizes);
  int64_t size_buf[1024]; /* create_op caps outputs at 1024 */
  if (ns < 0 && op->n_inputs > 1) {
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, size_buf, 1024, &ns));
    sizes = size_buf;
  }
  const int64_t len = x->dims[axis];
  int64_t total = 0;
  if (ns > 0) {
    if (ns != n)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Split): %d split sizes for %d outputs",
                        op->name, ns, n);
    for (int i = 0; i < n; ++i) {
      if (sizes[i] < 0)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Split): negative split size", op->name);
      total += sizes[i];
    }
    if (total != len)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Split): split sizes sum to %lld, dim %lld "
                        "is %lld", op->name, (long long)total, (long long)axis, (long long)len);
  }
  const int64_t chunk = (len + n - 1) / n;
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < x->ndim; ++d) dims[d] = x->dims[d];
  int64_t used = 0;
  for (int i = 0; i < n; ++i) {
    int64_t sz = ns > 0 ? sizes[i] : (len - used < chunk ? len - used : chunk);
    if (sz < 0) sz = 0;
    used += sz;
    dims[axis] = sz;
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, i, x->dtype, dims, x->ndim));
  }
  if (used != len)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Split): cannot split dim %lld into %d parts",
                      op->name, (long long)len, n);
  s->outer = 1;
  for (int d = 0; d < axis; ++d) s->outer *= x->dims[d];
  op->macs = 0;
  op->scratch_bytes = (size_t)n * (sizeof(void *) + 2 * sizeof(int64_t));
  return MACE_OK;
}

typedef struct {
  const void *in;
  int64_t in_row_bytes;
  const int64_t *row_bytes, *offsets;
  int n_out;
  void *const *outs;
} split_job;

static void split_range(void *ctx, int64_t begin, int64_t end) {
  const split_job *j = (const split_job *)ctx;
  mace_x_split__ref(j->in, j->in_row_bytes, j->row_bytes, j->offsets, j->n_out, j->outs, begin,
                    end);
}

static mace_status split_run(mace_op *op) {
  const split_state *s = (const split_state *)op->state;
  const int n = op->n_outputs;
  int64_t *row_bytes = (int64_t *)op->scratch;
  int64_t *offsets = row_bytes + n;
  void **outs = (void **)(offsets + n);
  const int64_t outer = s->outer;
  if (outer == 0) return MACE_OK;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const mace_tensor *y = op->outputs[i];
    row_bytes[i] = (int64_t)mace_tensor_nbytes(y) / outer;
    offsets[i] = total;
    total += row_bytes[i];
    outs[i] = y->data;
  }
  if (total == 0) return MACE_OK;
  split_job job = {op->inputs[0]->data, total, row_bytes, offsets, n, outs};
  int64_t grain = SPLIT_GRAIN_BYTES / (total / n + 1);
  mace_threadpool_parallel_for(op->pool, outer * n, grain > 0 ? grain : 1, split_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_split = {.type = "Split", .device = MACE_DEVICE_CPU,
                                    .dtype = MACE_DT_INVALID, .state_size = sizeof(split_state),
                                    .value_inputs = 1u << 1, .infer = split_infer,
                                    .run = split_run};
