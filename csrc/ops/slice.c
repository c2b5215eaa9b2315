/* Slice: ONNX Slice (starts/ends/axes/steps with clamping, negative steps), any dtype. */
/*
 * Inputs:  0 X (any dtype, rank 1..8)
 *          1..4 starts, ends, axes, steps (optional, i32/i64, constants or computed at run
 *               time; ONNX Slice-10 inputs),
 *          each used only when the argument of that name is absent.
 * Output:  0 Y.
 * Arguments (ONNX semantics):
 *   starts, ends  ints, one per entry of axes; negative counts from the dim; clamped to
 *                 [0, dim] (step > 0) or [-1, dim - 1] (step < 0); INT64_MAX/MIN mean "to the end"
 *   axes          ints (optional, default 0..len(starts)-1), negative counts from the rank
 *   steps         ints (optional, default 1), non-zero
 */
#include "core/op.h"
#include "kernels/cpu/ref/slice.h"
#include "ops/slice_params.h"

#define SLICE_GRAIN_ELEMS 16384

typedef mace_slice_params slice_state;  /* ops/slice_params.h */

/* The named argument, else the values of input `idx`; -1 if neither. */
static mace_status slice_ints(mace_op *op, const char *name, int idx, int64_t *buf,
                              const int64_t **vals, int *n) {
  *n = mace_op_arg_ints(op, name, vals);
  if (*n >= 0 || idx >= op->n_inputs || !op->inputs[idx]) return MACE_OK;
  MACE_RETURN_IF_ERROR(mace_op_input_ints(op, idx, buf, MACE_MAX_DIMS, n));
  *vals = buf;
  return MACE_OK;
}

static mace_status slice_infer(mace_op *op) {
  slice_state *s = (slice_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 5, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Slice): input '%s' has no dtype or rank 0",
                      op->name, x->name);
  int64_t b0[MACE_MAX_DIMS], b1[MACE_MAX_DIMS], b2[MACE_MAX_DIMS], b3[MACE_MAX_DIMS];
  const int64_t *starts, *ends, *axes, *steps;
  int ns, ne, na, nst;
  MACE_RETURN_IF_ERROR(slice_ints(op, "starts", 1, b0, &starts, &ns));
  MACE_RETURN_IF_ERROR(slice_ints(op, "ends", 2, b1, &ends, &ne));
  MACE_RETURN_IF_ERROR(slice_ints(op, "axes", 3, b2, &axes, &na));
  MACE_RETURN_IF_ERROR(slice_ints(op, "steps", 4, b3, &steps, &nst));
  if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns) ||
      ns > x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Slice): starts/ends/axes/steps lengths "
                      "(%d, %d, %d, %d) do not match for rank %d", op->name, ns, ne, na, nst,
                      x->ndim);
  int seen[MACE_MAX_DIMS] = {0};
  for (int d = 0; d < x->ndim; ++d) {
    s->starts[d] = 0;
    s->steps[d] = 1;
    s->out_dims[d] = x->dims[d];
  }
  for (int i = 0; i < ns; ++i) {
    int64_t a = na >= 0 ? axes[i] : i;
    if (a < 0) a += x->ndim;
    if (a < 0 || a >= x->ndim || seen[a])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Slice): axis %lld out of range or "
                        "repeated", op->name, (long long)(na >= 0 ? axes[i] : i));
    seen[a] = 1;
    const int64_t dim = x->dims[a], step = nst >= 0 ? steps[i] : 1;
    if (step == 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Slice): step 0", op->name);
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    int64_t len;
    if (step > 0) {
      b = b < 0 ? 0 : (b > dim ? dim : b);
      e = e < 0 ? 0 : (e > dim ? dim : e);
      len = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = b < 0 ? 0 : (b > dim - 1 ? dim - 1 : b);
      e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
      len = b > e ? (b - e - step - 1) / -step : 0;
    }
    s->starts[a] = len > 0 ? b : 0;
    s->steps[a] = step;
    s->out_dims[a] = len;
  }
  const int nd = x->ndim;
  s->row_len = s->out_dims[nd - 1];
  s->rows = 1;
  for (int d = 0; d + 1 < nd; ++d) s->rows *= s->out_dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, s->out_dims, nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mace_tensor *x;
  const slice_state *s;
  void *out;
} slice_job;

static void slice_range(void *ctx, int64_t begin, int64_t end) {
  const slice_job *j = (const slice_job *)ctx;
  mace_x_slice__ref(j->x->data, j->x->dims, j->x->ndim, j->s->starts, j->s->steps,
                    j->s->out_dims, mace_dtype_size(j->x->dtype), j->out, begin, end);
}

static mace_status slice_run(mace_op *op) {
  const slice_state *s = (const slice_state *)op->state;
  if (s->rows == 0 || s->row_len == 0) return MACE_OK;
  slice_job job = {op->inputs[0], s, op->outputs[0]->data};
  int64_t grain = SLICE_GRAIN_ELEMS / (s->row_len + 1);
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, slice_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_slice = {.type = "Slice", .device = MACE_DEVICE_CPU,
                                    .dtype = MACE_DT_INVALID, .state_size = sizeof(slice_state),
                                    .value_inputs = 0x1eu, /* inputs 1..4 */
                                    .infer = slice_infer, .run = slice_run};
