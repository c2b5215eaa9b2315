/* Identity: copies its input (any dtype); also what the converter emits for Dropout. */
/*
 * Inputs:  0 X (any dtype, any rank).
 * Output:  0 Y = X (same dtype and shape).
 * Arguments: none.
 */
#include "core/op.h"
#include "kernels/cpu/ref/copy.h"

#define IDENTITY_GRAIN_BYTES 65536

static mace_status identity_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Identity): input '%s' has no dtype",
                      op->name, x->name);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const void *in;
  void *out;
} identity_job;

static void identity_range(void *ctx, int64_t begin, int64_t end) {
  const identity_job *j = (const identity_job *)ctx;
  mace_x_copy__ref(j->in, j->out, begin, end);
}

static mace_status identity_run(mace_op *op) {
  identity_job job = {op->inputs[0]->data, op->outputs[0]->data};
  int64_t n = (int64_t)mace_tensor_nbytes(op->inputs[0]);
  if (n == 0 || job.in == job.out) return MACE_OK;
  mace_threadpool_parallel_for(op->pool, n, IDENTITY_GRAIN_BYTES, identity_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_identity = {.type = "Identity", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_INVALID, .state_size = 0,
                                       .infer = identity_infer, .run = identity_run};
