/* Gather on the GPU (OpenCL, f32 data): constant indices along one axis, as the CPU kind
 * (ops/gather.c); kernels/opencl/gather.cl. Indices computed at run time are the CPU kind's
 * (MACE_UNSUPPORTED here: the net runs the op on the CPU), whose range check needs them on
 * the host. */
#include <stdlib.h>

#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct gather_cl_state {
  mace_cl_shadow shadow;
  int64_t outer, axis_len, inner, n_idx;
  void *idx_mem;             /* owned cl_mem: the indices as checked non-negative int32 */
  size_t idx_bytes;
} gather_cl_state;

static mace_status gather_cl_init(mace_op *op) {
  gather_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

/* Reads the constant indices back from their upload, checks them as the CPU kind does, and
 * uploads them as int32 in [0, axis_len). */
static mace_status upload_indices(mace_op *op, gather_cl_state *st) {
  const mace_tensor *idx = op->inputs[1];
  const int wide = idx->dtype == MACE_DT_I64;
  const size_t n = (size_t)st->n_idx, es = wide ? 8 : 4;
  mace_status status = MACE_OK;
  void *host = malloc(n * es + 1);
  int32_t *norm = malloc(n * sizeof(int32_t) + 1);
  if (!host || !norm) {
    status = mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Gather): no memory", op->name);
    goto done;
  }
  status = mace_cl_read(op->cl, idx->cl_mem, idx->cl_offset, host, n * es, 0);
  if (status != MACE_OK) goto done;
  for (size_t j = 0; j < n; ++j) {
    const int64_t v = wide ? ((const int64_t *)host)[j] : ((const int32_t *)host)[j];
    if (v < -st->axis_len || v >= st->axis_len) {
      status = mace_error(MACE_INVALID_MODEL, "op '%s' (Gather): index %lld (position %zu of "
                          "'%s') is out of range for an axis of %lld", op->name, (long long)v, j,
                          idx->name, (long long)st->axis_len);
      goto done;
    }
    norm[j] = (int32_t)(v < 0 ? v + st->axis_len : v);
  }
  if (st->idx_bytes < n * sizeof(int32_t)) {
    mace_cl_free(op->cl, st->idx_mem);
    st->idx_mem = NULL;
    st->idx_bytes = 0;
    status = mace_cl_alloc(op->cl, n * sizeof(int32_t), &st->idx_mem);
    if (status != MACE_OK) goto done;
    st->idx_bytes = n * sizeof(int32_t);
  }
  status = mace_cl_write(op->cl, st->idx_mem, 0, norm, n * sizeof(int32_t), 0);
done:
  free(host);
  free(norm);
  return status;
}

static mace_status gather_cl_infer(mace_op *op) {
  gather_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* axis, dtypes, out dims */
  const mace_tensor *x = op->inputs[0], *idx = op->inputs[1];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Gather): %s data on the GPU (f32 only)",
                      op->name, mace_dtype_name(x->dtype));
  if (idx->role != MACE_TENSOR_CONST || idx->storage != MACE_STORAGE_CL_BUFFER || !idx->cl_mem)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Gather): indices computed at run time on the "
                      "GPU (constant indices only)", op->name);
  int64_t axis = mace_op_arg_int(op, "axis", 0);
  if (axis < 0) axis += x->ndim;
  st->outer = st->inner = 1;
  for (int d = 0; d < x->ndim; ++d) {
    if (d < axis) st->outer *= x->dims[d];
    else if (d > axis) st->inner *= x->dims[d];
  }
  st->axis_len = x->dims[axis];
  st->n_idx = mace_tensor_numel(idx);
  if (st->outer * st->n_idx * st->inner == 0) return MACE_OK;
  return upload_indices(op, st);
}

static mace_status gather_cl_run(mace_op *op) {
  gather_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const int64_t n = st->outer * st->n_idx * st->inner;
  if (n == 0) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "gather", "gather", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 4, st->idx_mem));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5, n));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, st->n_idx));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 7, st->inner));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 8, st->axis_len));
  const size_t gws[1] = {(size_t)n};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}

static void gather_cl_release(mace_op *op) {
  gather_cl_state *st = op->state;
  mace_cl_free(op->cl, st->idx_mem);
  st->idx_mem = NULL;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_gather_cl = {.type = "Gather", .device = MACE_DEVICE_GPU,
                                        .dtype = MACE_DT_F32,
                                        .state_size = sizeof(gather_cl_state),
                                        .init = gather_cl_init, .infer = gather_cl_infer,
                                        .run = gather_cl_run, .release = gather_cl_release};
