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
 * The iteration count is the scan inputs' common length along their axes, so every shape is
 * known at infer (states must keep their shapes from one iteration to the next).
 * Opset 8's Scan (a batch axis and sequence_lens) is refused by the converter.
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
  MACE_RETURN_IF_ERROR(mace_subnet_create(op, "body", &s->body));
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

/* The body's arguments: states (the op's inputs on the first iteration, else the scratch
 * slots), slices of the scan inputs (shape without the axis; data in scratch), outer. */
static void scan_args(mace_op *op, scan_state *s, int first, int at_run) {
  mace_subnet_arg *a = s->body.args;
  for (int j = 0; j < s->n_state; ++j) {
    a[j] = mace_subnet_arg_of(op->inputs[j], at_run);
    if (!first) a[j].data = at_run ? (char *)op->scratch + s->slot[j] : NULL;
  }
  for (int i = 0; i < s->n_in; ++i) {
    const mace_tensor *x = op->inputs[s->n_state + i];
    mace_subnet_arg *b = &a[s->n_state + i];
    memset(b, 0, sizeof(*b));
    b->dtype = x->dtype;
    for (int d = 0, e = 0; d < x->ndim; ++d)
      if (d != s->in_axis[i]) b->dims[e++] = x->dims[d];
    b->ndim = x->ndim - 1;
    b->data = at_run ? (char *)op->scratch + s->slot[s->n_state + i] : NULL;
  }
  for (int i = 0; i < s->n_outer; ++i)
    a[s->n_state + s->n_in + i] = mace_subnet_arg_of(op->inputs[s->outer[i]], at_run);
}

static mace_status scan_infer(mace_op *op) {
  scan_state *s = (scan_state *)op->state;
  int64_t *axes = calloc((size_t)(s->n_in + s->n_out), sizeof(int64_t));
  if (!axes) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_status st = scan_list(op, "scan_input_axes", s->n_in, axes);
  if (st == MACE_OK) st = scan_list(op, "scan_output_axes", s->n_out, axes + s->n_in);
  s->trips = -1;
  for (int i = 0; st == MACE_OK && i < s->n_in; ++i) {
    const mace_tensor *x = op->inputs[s->n_state + i];
    int64_t a = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
    if (a < 0 || a >= x->ndim) {
      st = mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): scan input axis %lld is out of range "
                      "for '%s' of rank %d", op->name, (long long)axes[i], x->name, x->ndim);
    } else if (s->trips >= 0 && x->dims[a] != s->trips) {
      st = mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): scan inputs have lengths %lld and "
                      "%lld along their axes", op->name, (long long)s->trips,
                      (long long)x->dims[a]);
    }
    s->in_axis[i] = a;
    if (st == MACE_OK) s->trips = x->dims[a];
  }
  size_t bytes = 0;
  for (int j = 0; st == MACE_OK && j < s->n_state + s->n_in; ++j) {
    s->slot[j] = bytes;
    const mace_tensor *x = op->inputs[j];
    size_t b = mace_tensor_nbytes(x);
    if (j >= s->n_state && x->dims[s->in_axis[j - s->n_state]] > 0)
      b /= (size_t)x->dims[s->in_axis[j - s->n_state]];
    bytes += (b + MACE_ALIGN - 1) / MACE_ALIGN * MACE_ALIGN;
  }
  if (st == MACE_OK) {
    scan_args(op, s, 1, 0);
    st = mace_subnet_shape(op, &s->body, s->body.args);
  }
  for (int j = 0; st == MACE_OK && j < s->n_state; ++j) {
    const mace_tensor *t = mace_subnet_output(&s->body, j), *x = op->inputs[j];
    if (t->dtype != x->dtype || !mace_dims_equal(t->dims, t->ndim, x->dims, x->ndim))
      st = mace_error(MACE_UNSUPPORTED, "op '%s' (Scan): state '%s' changes shape or dtype in "
                      "the body ('%s')", op->name, x->name, t->name);
    else
      st = mace_op_set_output(op, j, t->dtype, t->dims, t->ndim);
  }
  for (int k = 0; st == MACE_OK && k < s->n_out; ++k) {
    const mace_tensor *t = mace_subnet_output(&s->body, s->n_state + k);
    int64_t a = axes[s->n_in + k] < 0 ? axes[s->n_in + k] + t->ndim + 1 : axes[s->n_in + k];
    if (a < 0 || a > t->ndim || t->ndim + 1 > MACE_MAX_DIMS) {
      st = mace_error(MACE_INVALID_MODEL, "op '%s' (Scan): scan output axis %lld is out of "
                      "range for rank %d", op->name, (long long)axes[s->n_in + k], t->ndim + 1);
      break;
    }
    s->out_axis[k] = a;
    int64_t dims[MACE_MAX_DIMS];
    for (int d = 0, e = 0; d <= t->ndim; ++d) dims[d] = d == a ? s->trips : t->dims[e++];
    st = mace_op_set_output(op, s->n_state + k, t->dtype, dims, t->ndim + 1);
  }
  free(axes);
  op->scratch_bytes = bytes;
  return st;
}

static mace_status scan_run(mace_op *op) {
  scan_state *s = (scan_state *)op->state;
  for (int64_t it = 0; it < s->trips; ++it) {
    for (int i = 0; i < s->n_in; ++i) {  /* slice it (or its mirror) of each scan input */
      const mace_tensor *x = op->inputs[s->n_state + i];
      int64_t outer, len;
      size_t inner;
      scan_split(x->dims, x->ndim, s->in_axis[i], mace_dtype_size(x->dtype), &outer, &len, &inner);
      const int64_t at = s->in_rev[i] ? len - 1 - it : it;
      char *dst = (char *)op->scratch + s->slot[s->n_state + i];
      for (int64_t o = 0; o < outer; ++o)
        memcpy(dst + (size_t)o * inner, (const char *)x->data + ((size_t)(o * len + at)) * inner,
               inner);
    }
    scan_args(op, s, it == 0, 1);
    MACE_RETURN_IF_ERROR(mace_subnet_run(op, &s->body, s->body.args));
    for (int j = 0; j < s->n_state; ++j) {
      const mace_tensor *t = mace_subnet_output(&s->body, j);
      if (mace_tensor_nbytes(t))
        memcpy((char *)op->scratch + s->slot[j], t->data, mace_tensor_nbytes(t));
    }
    for (int k = 0; k < s->n_out; ++k) {
      const mace_tensor *t = mace_subnet_output(&s->body, s->n_state + k);
      mace_tensor *y = op->outputs[s->n_state + k];
      int64_t outer, len;
      size_t inner;
      scan_split(y->dims, y->ndim, s->out_axis[k], mace_dtype_size(y->dtype), &outer, &len, &inner);
      const int64_t at = s->out_rev[k] ? len - 1 - it : it;
      for (int64_t o = 0; o < outer; ++o)
        memcpy((char *)y->data + ((size_t)(o * len + at)) * inner,
               (const char *)t->data + (size_t)o * inner, inner);
    }
  }
  for (int j = 0; j < s->n_state; ++j) {
    const size_t bytes = mace_tensor_nbytes(op->outputs[j]);
    const void *src = s->trips > 0 ? (char *)op->scratch + s->slot[j] : op->inputs[j]->data;
    if (bytes) memcpy(op->outputs[j]->data, src, bytes);
  }
  return MACE_OK;
}

const mace_op_kind mace_op_scan = {.type = "Scan", .device = MACE_DEVICE_CPU,
                                   .dtype = MACE_DT_INVALID, .state_size = sizeof(scan_state),
                                   .init = scan_init, .infer = scan_infer, .run = scan_run,
                                   .release = scan_release};
