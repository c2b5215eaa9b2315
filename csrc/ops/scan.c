/* Scan: a subgraph run once per slice of its scan inputs along an axis, carrying state. */
/*
 * Inputs:  N initial state values, then M scan inputs, then the outer-scope tensors the body
 *          reads (lifted by the converter).
 * Outputs: N final state values, then K scan outputs: the body's per-iteration values stacked
 *          along scan_output_axes.
 * Body:    inputs (N states, M slices: a scan input without its scan axis, outer...);
 *          outputs (N states, K per-iteration values).
 * Arguments:
 *   body                    bytes: the body's serialized NetDef
 *   n_state                 int N
 *   scan_input_axes         ints (M, default 0 each), negative counts from the rank
 *   scan_input_directions   ints (M, default 0): 1 walks the axis backwards
 *   scan_output_axes        ints (K, default 0), negative counts from the output's rank
 *   scan_output_directions  ints (K, default 0): 1 fills the axis from its end
 *   body_outer              ints: for each outer input of the body, the op input feeding it
 *   batch                   int (default 0): 1 for opset 8's Scan, whose states, scan inputs
 *                           and outputs all have a leading batch axis: the scan runs once per
 *                           batch entry, the axes above counted without it
 * The iteration count is the scan inputs' common length along their axes, so every shape is
 * known at infer (states must keep their shapes from one iteration to the next).
 * Opset 8's sequence_lens is taken only when it is absent or every length is the full one.
 */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "ops/subnet.h"

typedef struct scan_state {
  mace_subnet body;
  int n_state, n_in, n_out, n_outer;
  const int64_t *outer;         /* borrowed from the argument */
  int64_t *in_axis, *out_axis;  /* owned: resolved for the current ranks */
  int *in_rev, *out_rev;        /* owned */
  int64_t trips;
  int batch;                    /* opset 8: a leading batch axis on every input and output */
  int64_t n_batch;              /* its size (1 outside batch mode) */
  size_t *slot;                 /* owned, n_state + n_in: byte offsets in scratch */
} scan_state;

static mace_status scan_list(mace_op *op, const char *name, int n, int64_t *out) {
  const int64_t *v = NULL;
  int got = mace_op_arg_ints(op, name, &v);
  for (int i = 0; i < n; ++i) out[i] = 0;
  if (got < 0) return MACE_OK;
  if (got != n)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): %s has %d values, expects %d",
                      op->name, name, got, n);
  for (int i = 0; i < n; ++i) out[i] = v[i];
  return MACE_OK;
}

static mace_status scan_init(mace_op *op) {
  scan_state *s = (scan_state *)op->state;
  s->n_state = (int)mace_op_arg_int(op, "n_state", 0);
  s->batch = mace_op_arg_int(op, "batch", 0) != 0;
  int n_outer = mace_op_arg_ints(op, "body_outer", &s->outer);
  s->n_outer = n_outer < 0 ? 0 : n_outer;
  s->n_in = op->n_inputs - s->n_state - s->n_outer;
  s->n_out = op->n_outputs - s->n_state;
  if (s->n_state < 0 || s->n_in < 1 || s->n_out < 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): %d inputs and %d outputs do not fit "
                      "n_state %d and %d outer inputs (at least one scan input)", op->name,
                      op->n_inputs, op->n_outputs, s->n_state, s->n_outer);
  for (int i = 0; i < s->n_outer; ++i)
    if (s->outer[i] < s->n_state + s->n_in || s->outer[i] >= op->n_inputs)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): body_outer[%d] = %lld is not an "
                        "outer input index", op->name, i, (long long)s->outer[i]);
  MACE_RETURN_IF_ERROR(mace_subnet_create(op, "body", 0, &s->body));
  if (s->body.n_in != s->n_state + s->n_in + s->n_outer || s->body.n_out != op->n_outputs)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): the body has %d inputs and %d "
                      "outputs, expects %d and %d", op->name, s->body.n_in, s->body.n_out,
                      s->n_state + s->n_in + s->n_outer, op->n_outputs);
  size_t n_in = (size_t)s->n_in, n_out = (size_t)(s->n_out ? s->n_out : 1);
  s->in_axis = calloc(n_in, sizeof(int64_t));
  s->out_axis = calloc(n_out, sizeof(int64_t));
  s->in_rev = calloc(n_in, sizeof(int));
  s->out_rev = calloc(n_out, sizeof(int));
  s->slot = calloc((size_t)(s->n_state + s->n_in + 1), sizeof(size_t));
  if (!s->in_axis || !s->out_axis || !s->in_rev || !s->out_rev || !s->slot)
    return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  int64_t *tmp = calloc(n_in > n_out ? n_in : n_out, sizeof(int64_t));
  if (!tmp) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_status st = scan_list(op, "scan_input_directions", s->n_in, tmp);
  for (int i = 0; st == MACE_OK && i < s->n_in; ++i) s->in_rev[i] = tmp[i] != 0;
  if (st == MACE_OK) st = scan_list(op, "scan_output_directions", s->n_out, tmp);
  for (int i = 0; st == MACE_OK && i < s->n_out; ++i) s->out_rev[i] = tmp[i] != 0;
  free(tmp);
  return st;
}

static void scan_release(mace_op *op) {
  scan_state *s = (scan_state *)op->state;
  mace_subnet_destroy(&s->body);
  free(s->in_axis);
  free(s->out_axis);
  free(s->in_rev);
  free(s->out_rev);
  free(s->slot);
}

/* [outer, len, inner] of dims around axis, inner in bytes. */
static void scan_split(const int64_t *dims, int ndim, int64_t axis, size_t elem, int64_t *outer,
                       int64_t *len, size_t *inner) {
  *outer = 1;
  *inner = elem;
  for (int d = 0; d < axis; ++d) *outer *= dims[d];
  for (int d = (int)axis + 1; d < ndim; ++d) *inner *= (size_t)dims[d];
  *len = dims[axis];
}

/* A tensor as the body sees it: the whole tensor, or (opset 8's batch mode) its block b along
 * the leading batch axis. data is NULL where the tensor's is. */
typedef struct scan_view {
  char *data;
  mace_dtype dtype;
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
} scan_view;

static scan_view scan_view_of(const mace_tensor *t, int batch, int64_t b) {
  scan_view v;
  memset(&v, 0, sizeof(v));
  v.dtype = t->dtype;
  v.ndim = batch ? t->ndim - 1 : t->ndim;
  memcpy(v.dims, t->dims + (batch ? 1 : 0), (size_t)v.ndim * sizeof(int64_t));
  size_t block = mace_tensor_nbytes(t);
  if (batch && t->dims[0] > 0) block /= (size_t)t->dims[0];
  v.data = t->data ? (char *)t->data + (batch ? (size_t)b * block : 0) : NULL;
  return v;
}

static size_t scan_view_bytes(const scan_view *v) {
  size_t n = mace_dtype_size(v->dtype);
  for (int d = 0; d < v->ndim; ++d) n *= (size_t)v->dims[d];
  return n;
}

/* The body's arguments for batch b: states (the op's inputs on the first iteration, else the
 * scratch slots), slices of the scan inputs (without the axis; data in scratch), outer. */
static void scan_args(mace_op *op, scan_state *s, int64_t b, int first, int at_run) {
  mace_subnet_arg *a = s->body.args;
  for (int j = 0; j < s->n_state; ++j) {
    const mace_tensor *t = op->inputs[j];
    const scan_view v = scan_view_of(t, s->batch, b);
    const int known = at_run || t->role == MACE_TENSOR_CONST || (t->is_value && t->value_ready);
    memset(&a[j], 0, sizeof(a[j]));
    a[j].dtype = v.dtype;
    a[j].ndim = v.ndim;
    memcpy(a[j].dims, v.dims, sizeof(v.dims));
    if (first)
      a[j].data = known ? v.data : NULL;
    else
      a[j].data = at_run ? (char *)op->scratch + s->slot[j] : NULL;
  }
  for (int i = 0; i < s->n_in; ++i) {
    const scan_view v = scan_view_of(op->inputs[s->n_state + i], s->batch, b);
    mace_subnet_arg *c = &a[s->n_state + i];
    memset(c, 0, sizeof(*c));
    c->dtype = v.dtype;
    for (int d = 0, e = 0; d < v.ndim; ++d)
      if (d != s->in_axis[i]) c->dims[e++] = v.dims[d];
    c->ndim = v.ndim - 1;
    c->data = at_run ? (char *)op->scratch + s->slot[s->n_state + i] : NULL;
  }
  for (int i = 0; i < s->n_outer; ++i)
    a[s->n_state + s->n_in + i] = mace_subnet_arg_of(op->inputs[s->outer[i]], at_run);
}

/* Sets output k's dims: the body's per-iteration (or final state) dims, with the iterations
 * inserted at `axis` (axis < 0: none), and the batch in front in batch mode. */
static mace_status scan_set_output(mace_op *op, const scan_state *s, int k, const mace_tensor *t,
                                   int64_t axis) {
  int64_t dims[MACE_MAX_DIMS];
  int nd = 0;
  const int extra = (axis >= 0) + (s->batch != 0);
  if (t->ndim + extra > MACE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Scan): output %d would have rank %d", op->name,
                      k, t->ndim + extra);
  if (s->batch) dims[nd++] = s->n_batch;
  for (int d = 0, e = 0; d < t->ndim + (axis >= 0); ++d)
    dims[nd++] = d == axis ? s->trips : t->dims[e++];
  return mace_op_set_output(op, k, t->dtype, dims, nd);
}

static mace_status scan_infer(mace_op *op) {
  scan_state *s = (scan_state *)op->state;
  int64_t *axes = calloc((size_t)(s->n_in + s->n_out), sizeof(int64_t));
  if (!axes) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_status st = scan_list(op, "scan_input_axes", s->n_in, axes);
  if (st == MACE_OK) st = scan_list(op, "scan_output_axes", s->n_out, axes + s->n_in);
  s->trips = -1;
  s->n_batch = 1;
  for (int j = 0; st == MACE_OK && s->batch && j < s->n_state + s->n_in; ++j) {
    const mace_tensor *x = op->inputs[j];
    if (x->ndim < 1 || x->dims[0] != op->inputs[0]->dims[0])
      st = mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): '%s' does not have the batch of the "
                      "other inputs", op->name, x->name);
    else
      s->n_batch = x->dims[0];
  }
  for (int i = 0; st == MACE_OK && i < s->n_in; ++i) {
    const scan_view v = scan_view_of(op->inputs[s->n_state + i], s->batch, 0);
    int64_t a = axes[i] < 0 ? axes[i] + v.ndim : axes[i];
    if (a < 0 || a >= v.ndim) {
      st = mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): scan input axis %lld is out of range "
                      "for '%s'", op->name, (long long)axes[i], op->inputs[s->n_state + i]->name);
    } else if (s->trips >= 0 && v.dims[a] != s->trips) {
      st = mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): scan inputs have lengths %lld and "
                      "%lld along their axes", op->name, (long long)s->trips, (long long)v.dims[a]);
    }
    s->in_axis[i] = a;
    if (st == MACE_OK) s->trips = v.dims[a];
  }
  size_t bytes = 0;
  for (int j = 0; st == MACE_OK && j < s->n_state + s->n_in; ++j) {
    s->slot[j] = bytes;
    const scan_view v = scan_view_of(op->inputs[j], s->batch, 0);
    size_t b = scan_view_bytes(&v);
    if (j >= s->n_state && v.dims[s->in_axis[j - s->n_state]] > 0)
      b /= (size_t)v.dims[s->in_axis[j - s->n_state]];
    bytes += (b + MACE_ALIGN - 1) / MACE_ALIGN * MACE_ALIGN;
  }
  if (st == MACE_OK) {
    scan_args(op, s, 0, 1, 0);
    st = mace_subnet_shape(op, &s->body, s->body.args);
  }
  for (int j = 0; st == MACE_OK && j < s->n_state; ++j) {
    const mace_tensor *t = mace_subnet_output(&s->body, j);
    const mace_subnet_arg *x = &s->body.args[j];
    if (t->dtype != x->dtype || !mace_dims_equal(t->dims, t->ndim, x->dims, x->ndim))
      st = mace_error(MACE_UNSUPPORTED, "op '%s' (Scan): state '%s' changes shape or dtype in "
                      "the body ('%s')", op->name, op->inputs[j]->name, t->name);
    else
      st = scan_set_output(op, s, j, t, -1);
  }
  for (int k = 0; st == MACE_OK && k < s->n_out; ++k) {
    const mace_tensor *t = mace_subnet_output(&s->body, s->n_state + k);
    int64_t a = axes[s->n_in + k] < 0 ? axes[s->n_in + k] + t->ndim + 1 : axes[s->n_in + k];
    if (a < 0 || a > t->ndim) {
      st = mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): scan output axis %lld is out of "
                      "range for rank %d", op->name, (long long)axes[s->n_in + k], t->ndim + 1);
      break;
    }
    s->out_axis[k] = a;
    st = scan_set_output(op, s, s->n_state + k, t, a);
  }
  free(axes);
  op->scratch_bytes = bytes;
  return st;
}

/* The scan of batch b (the whole op outside batch mode). */
static mace_status scan_run_batch(mace_op *op, scan_state *s, int64_t b) {
  for (int64_t it = 0; it < s->trips; ++it) {
    for (int i = 0; i < s->n_in; ++i) {  /* slice it (or its mirror) of each scan input */
      const scan_view x = scan_view_of(op->inputs[s->n_state + i], s->batch, b);
      int64_t outer, len;
      size_t inner;
      scan_split(x.dims, x.ndim, s->in_axis[i], mace_dtype_size(x.dtype), &outer, &len, &inner);
      const int64_t at = s->in_rev[i] ? len - 1 - it : it;
      char *dst = (char *)op->scratch + s->slot[s->n_state + i];
      for (int64_t o = 0; o < outer; ++o)
        memcpy(dst + (size_t)o * inner, x.data + ((size_t)(o * len + at)) * inner, inner);
    }
    scan_args(op, s, b, it == 0, 1);
    MACE_RETURN_IF_ERROR(mace_subnet_run(op, &s->body, s->body.args));
    for (int j = 0; j < s->n_state; ++j) {
      const mace_tensor *t = mace_subnet_output(&s->body, j);
      if (mace_tensor_nbytes(t))
        memcpy((char *)op->scratch + s->slot[j], t->data, mace_tensor_nbytes(t));
    }
    for (int k = 0; k < s->n_out; ++k) {
      const mace_tensor *t = mace_subnet_output(&s->body, s->n_state + k);
      const scan_view y = scan_view_of(op->outputs[s->n_state + k], s->batch, b);
      int64_t outer, len;
      size_t inner;
      scan_split(y.dims, y.ndim, s->out_axis[k], mace_dtype_size(y.dtype), &outer, &len, &inner);
      const int64_t at = s->out_rev[k] ? len - 1 - it : it;
      for (int64_t o = 0; o < outer; ++o)
        memcpy(y.data + ((size_t)(o * len + at)) * inner,
               (const char *)t->data + (size_t)o * inner, inner);
    }
  }
  for (int j = 0; j < s->n_state; ++j) {
    const scan_view y = scan_view_of(op->outputs[j], s->batch, b);
    const scan_view x = scan_view_of(op->inputs[j], s->batch, b);
    const size_t bytes = scan_view_bytes(&y);
    if (bytes) memcpy(y.data, s->trips > 0 ? (char *)op->scratch + s->slot[j] : x.data, bytes);
  }
  return MACE_OK;
}

static mace_status scan_run(mace_op *op) {
  scan_state *s = (scan_state *)op->state;
  for (int64_t b = 0; b < s->n_batch; ++b) MACE_RETURN_IF_ERROR(scan_run_batch(op, s, b));
  return MACE_OK;
}

const mace_op_kind mace_op_scan = {.type = "Scan", .device = MACE_DEVICE_CPU,
                                   .dtype = MACE_DT_INVALID, .state_size = sizeof(scan_state),
                                   .init = scan_init, .infer = scan_infer, .run = scan_run,
                                   .release = scan_release};
