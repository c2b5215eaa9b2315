/* Loop and WhileLoop: a subgraph run for a trip count and while a condition holds (ONNX Loop). */
/*
 * Inputs:  0 M (int64/int32, one element): the most iterations;
 *          1 cond (bool or numeric, one element): the condition checked before the first;
 *          2 .. 2+N-1 the N loop-carried values' initial values;
 *          then the outer-scope tensors the body reads (lifted by the converter).
 * Outputs: N final loop-carried values, then K scan outputs: the body's per-iteration values
 *          stacked along a new axis 0 ([iterations, ...]).
 * Body:    inputs (iteration number int64 scalar, cond bool scalar, N carried, outer...);
 *          outputs (cond, N carried, K scan).
 * Arguments:
 *   body        bytes: the body's serialized NetDef (a closed net on the model's weights)
 *   n_carried   int N
 *   body_outer  ints: for each outer input of the body, the index of the op input feeding it
 *
 * Two kinds, because what infer must read differs:
 *   Loop       the body passes its condition through unchanged (the converter checks), so the
 *              iteration count is cond ? M : 0, known from the VALUES of M and cond (value
 *              inputs). Infer walks the body's shape inference iteration by iteration (it stops
 *              early once the carried shapes stop changing and the body does not size anything
 *              from the iteration number); run runs the body.
 *   WhileLoop  the body computes its condition from data: how many iterations run, and so the
 *              scan outputs' shapes, is known only by running it. Every input is a value input,
 *              so infer has all values: it runs the whole loop into buffers of its own and run
 *              copies them out. The net re-infers (re-runs the loop) whenever the model inputs
 *              those values come from change (docs/design.md, "Subgraphs").
 */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "ops/subnet.h"

typedef struct loop_buf {      /* an owned, growing host buffer and what it holds */
  void *data;
  size_t cap;
  mace_dtype dtype;
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
} loop_buf;

typedef struct loop_state {
  mace_subnet body;
  int n_carried, n_scan, n_outer;
  const int64_t *outer;        /* borrowed from the argument */
  int eager;                   /* WhileLoop */
  int64_t trips;               /* iterations found by infer */
  loop_buf *carry;             /* owned, n_carried: the values between iterations */
  loop_buf *scan;              /* owned, n_scan: per-iteration dims; WhileLoop: the stacked data */
} loop_state;

static mace_status loop_init(mace_op *op) {
  loop_state *s = (loop_state *)op->state;
  s->eager = strcmp(op->kind->type, "WhileLoop") == 0;
  s->n_carried = (int)mace_op_arg_int(op, "n_carried", 0);
  int n_outer = mace_op_arg_ints(op, "body_outer", &s->outer);
  s->n_outer = n_outer < 0 ? 0 : n_outer;
  if (s->n_carried < 0 || op->n_inputs != 2 + s->n_carried + s->n_outer ||
      op->n_outputs < s->n_carried)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): %d inputs and %d outputs do not fit "
                      "n_carried %d and %d outer inputs", op->name, op->type, op->n_inputs,
                      op->n_outputs, s->n_carried, s->n_outer);
  s->n_scan = op->n_outputs - s->n_carried;
  if (s->eager && op->n_inputs > 32)  /* value_inputs has a bit for the first 32 inputs only */
    return mace_error(MACE_UNSUPPORTED, "op '%s' (WhileLoop): %d inputs; at most 32 (loop-carried "
                      "values and outer tensors together)", op->name, op->n_inputs);
  for (int i = 0; i < s->n_outer; ++i)
    if (s->outer[i] < 2 + s->n_carried || s->outer[i] >= op->n_inputs)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): body_outer[%d] = %lld is not an outer "
                        "input index", op->name, op->type, i, (long long)s->outer[i]);
  MACE_RETURN_IF_ERROR(mace_subnet_create(op, "body", 0, &s->body));
  if (s->body.n_in != 2 + s->n_carried + s->n_outer || s->body.n_out != 1 + op->n_outputs)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): the body has %d inputs and %d outputs, "
                      "expects %d and %d", op->name, op->type, s->body.n_in, s->body.n_out,
                      2 + s->n_carried + s->n_outer, 1 + op->n_outputs);
  s->carry = calloc((size_t)(s->n_carried ? s->n_carried : 1), sizeof(loop_buf));
  s->scan = calloc((size_t)(s->n_scan ? s->n_scan : 1), sizeof(loop_buf));
  if (!s->carry || !s->scan) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  return MACE_OK;
}

static void loop_release(mace_op *op) {
  loop_state *s = (loop_state *)op->state;
  for (int j = 0; s->carry && j < s->n_carried; ++j) mace_aligned_free(s->carry[j].data);
  for (int k = 0; s->scan && k < s->n_scan; ++k) mace_aligned_free(s->scan[k].data);
  free(s->carry);
  free(s->scan);
  mace_subnet_destroy(&s->body);
}

/* Makes b hold at least `bytes` (keeping its first `keep` bytes). */
static mace_status loop_buf_reserve(const mace_op *op, loop_buf *b, size_t bytes, size_t keep) {
  if (bytes <= b->cap) return MACE_OK;
  size_t cap = bytes > 2 * b->cap ? bytes : 2 * b->cap;
  void *p = mace_aligned_alloc(cap);
  if (!p) return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (%s): out of memory for %zu bytes",
                            op->name, op->type, cap);
  if (keep) memcpy(p, b->data, keep);
  mace_aligned_free(b->data);
  b->data = p;
  b->cap = cap;
  return MACE_OK;
}

static void loop_buf_set(loop_buf *b, const mace_tensor *t) {
  b->dtype = t->dtype;
  b->ndim = t->ndim;
  memcpy(b->dims, t->dims, sizeof(b->dims));
}

static size_t loop_buf_bytes(const loop_buf *b) {
  int64_t n = 1;
  for (int d = 0; d < b->ndim; ++d) n *= b->dims[d];
  return (size_t)n * mace_dtype_size(b->dtype);
}

/* The one element of t as an integer (bool and float: 1 when nonzero). `computed`: t is a
 * body output just computed, whose data holds its values; otherwise t must be a constant or a
 * value tensor whose values are ready. */
static mace_status loop_scalar(const mace_op *op, const mace_tensor *t, int computed, int64_t *v) {
  if (!computed && t->role != MACE_TENSOR_CONST && !t->value_ready)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): the value of '%s' is not known",
                      op->name, op->type, t->name);
  if (mace_tensor_numel(t) != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): '%s' has %lld elements, expects 1",
                      op->name, op->type, t->name, (long long)mace_tensor_numel(t));
  switch (t->dtype) {
    case MACE_DT_I64: *v = *(const int64_t *)t->data; break;
    case MACE_DT_I32: *v = *(const int32_t *)t->data; break;
    case MACE_DT_BOOL:
    case MACE_DT_U8: *v = *(const uint8_t *)t->data != 0; break;
    case MACE_DT_I8: *v = *(const int8_t *)t->data; break;
    case MACE_DT_F32: *v = *(const float *)t->data != 0.0f; break;
    default:
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): '%s' has dtype %s", op->name,
                        op->type, t->name, mace_dtype_name(t->dtype));
  }
  return MACE_OK;
}

/* Body arguments for iteration `it`: the counter and condition (pointed at *it and *cond), the
 * carried values (from the op's inputs on the first iteration, else from the carry buffers,
 * whose values are known only when `known`), the outer inputs. */
static void loop_args(mace_op *op, loop_state *s, const int64_t *it, const uint8_t *cond,
                      int first, int at_run) {
  mace_subnet_arg *a = s->body.args;
  memset(&a[0], 0, sizeof(a[0]));
  a[0].dtype = MACE_DT_I64;
  a[0].data = it;
  memset(&a[1], 0, sizeof(a[1]));
  a[1].dtype = MACE_DT_BOOL;
  a[1].data = cond;
  for (int j = 0; j < s->n_carried; ++j) {
    if (first) {
      a[2 + j] = mace_subnet_arg_of(op->inputs[2 + j], at_run);
      continue;
    }
    const loop_buf *b = &s->carry[j];
    a[2 + j].dtype = b->dtype;
    a[2 + j].ndim = b->ndim;
    memcpy(a[2 + j].dims, b->dims, sizeof(b->dims));
    a[2 + j].data = at_run ? b->data : NULL;
  }
  for (int i = 0; i < s->n_outer; ++i)
    a[2 + s->n_carried + i] = mace_subnet_arg_of(op->inputs[s->outer[i]], at_run);
}

/* Checks scan output k of this iteration has the dims of the earlier ones (the first sets
 * them). */
static mace_status loop_scan_dims(const mace_op *op, loop_buf *b, const mace_tensor *t,
                                  int first) {
  if (first) {
    loop_buf_set(b, t);
    return MACE_OK;
  }
  if (b->dtype != t->dtype || !mace_dims_equal(b->dims, b->ndim, t->dims, t->ndim))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): scan output '%s' changes shape from one "
                      "iteration to the next: it cannot be stacked", op->name, op->type, t->name);
  return MACE_OK;
}

/* Runs the loop: the body on real data. Carried values go through the carry buffers; scan
 * outputs go straight into the op's outputs (Loop) or are stacked in the scan buffers
 * (WhileLoop, which reads the body's condition after each iteration). */
static mace_status loop_exec(mace_op *op, loop_state *s) {
  int64_t m, c;
  MACE_RETURN_IF_ERROR(loop_scalar(op, op->inputs[0], 0, &m));
  MACE_RETURN_IF_ERROR(loop_scalar(op, op->inputs[1], 0, &c));
  uint8_t cond = c != 0;
  int64_t it = 0;
  for (; it < m && cond; ++it) {
    loop_args(op, s, &it, &cond, it == 0, 1);
    MACE_RETURN_IF_ERROR(mace_subnet_run(op, &s->body, s->body.args));
    if (s->eager) {
      const mace_tensor *ct = mace_subnet_output(&s->body, 0);
      int64_t v;
      MACE_RETURN_IF_ERROR(loop_scalar(op, ct, 1, &v));
      cond = v != 0;
    }
    for (int j = 0; j < s->n_carried; ++j) {
      const mace_tensor *t = mace_subnet_output(&s->body, 1 + j);
      size_t bytes = mace_tensor_nbytes(t);
      if (!s->eager && bytes > s->carry[j].cap)
        return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): carried value '%s' outgrew what "
                          "infer planned", op->name, op->type, t->name);
      MACE_RETURN_IF_ERROR(loop_buf_reserve(op, &s->carry[j], bytes, 0));
      loop_buf_set(&s->carry[j], t);
      if (bytes) memcpy(s->carry[j].data, t->data, bytes);
    }
    for (int k = 0; k < s->n_scan; ++k) {
      const mace_tensor *t = mace_subnet_output(&s->body, 1 + s->n_carried + k);
      size_t bytes = mace_tensor_nbytes(t);
      loop_buf *b = &s->scan[k];
      if (s->eager) {
        MACE_RETURN_IF_ERROR(loop_scan_dims(op, b, t, it == 0));
        MACE_RETURN_IF_ERROR(loop_buf_reserve(op, b, (size_t)(it + 1) * bytes, (size_t)it * bytes));
        if (bytes) memcpy((char *)b->data + (size_t)it * bytes, t->data, bytes);
      } else {
        MACE_RETURN_IF_ERROR(loop_scan_dims(op, b, t, 0));
        if (it >= s->trips)
          return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): more iterations than planned",
                            op->name, op->type);
        if (bytes) memcpy((char *)op->outputs[s->n_carried + k]->data + (size_t)it * bytes,
                          t->data, bytes);
      }
    }
  }
  if (it == 0)  /* no iteration: the carried values are the initial ones */
    for (int j = 0; j < s->n_carried; ++j) {
      const mace_tensor *t = op->inputs[2 + j];
      MACE_RETURN_IF_ERROR(loop_buf_reserve(op, &s->carry[j], mace_tensor_nbytes(t), 0));
      loop_buf_set(&s->carry[j], t);
      if (mace_tensor_nbytes(t)) memcpy(s->carry[j].data, t->data, mace_tensor_nbytes(t));
    }
  if (!s->eager && it != s->trips)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): ran %lld iterations, infer planned "
                      "%lld", op->name, op->type, (long long)it, (long long)s->trips);
  s->trips = it;
  return MACE_OK;
}

/* Loop's infer: the iteration count from M and cond, the shapes by walking the body's shape
 * inference (each carried value's largest size gives its buffer). */
static mace_status loop_infer_static(mace_op *op, loop_state *s) {
  int64_t m, c;
  MACE_RETURN_IF_ERROR(loop_scalar(op, op->inputs[0], 0, &m));
  MACE_RETURN_IF_ERROR(loop_scalar(op, op->inputs[1], 0, &c));
  const int64_t trips = c && m > 0 ? m : 0;
  const mace_net *body = s->body.net;
  const int counter_read =
      mace_net_tensor_const(body, mace_net_input(body, 0)->tensor)->is_value ||
      mace_net_tensor_const(body, mace_net_input(body, 1)->tensor)->is_value;
  size_t *need = calloc((size_t)(s->n_carried ? s->n_carried : 1), sizeof(size_t));
  if (!need) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_status st = MACE_OK;
  for (int j = 0; j < s->n_carried; ++j) {
    loop_buf_set(&s->carry[j], op->inputs[2 + j]);
    need[j] = mace_tensor_nbytes(op->inputs[2 + j]);
  }
  const uint8_t one = 1;
  for (int64_t it = 0; it < (trips ? trips : 1); ++it) {
    loop_args(op, s, &it, &one, it == 0, 0);
    if ((st = mace_subnet_shape(op, &s->body, s->body.args)) != MACE_OK) goto done;
    int changed = 0;
    for (int k = 0; k < s->n_scan; ++k)
      if ((st = loop_scan_dims(op, &s->scan[k],
                               mace_subnet_output(&s->body, 1 + s->n_carried + k), it == 0)) !=
          MACE_OK)
        goto done;
    if (!trips) break;  /* the carried values stay the inputs; only the scan shapes were needed */
    for (int j = 0; j < s->n_carried; ++j) {
      const mace_tensor *t = mace_subnet_output(&s->body, 1 + j);
      loop_buf *b = &s->carry[j];
      changed |= b->dtype != t->dtype || !mace_dims_equal(b->dims, b->ndim, t->dims, t->ndim);
      loop_buf_set(b, t);
      if (mace_tensor_nbytes(t) > need[j]) need[j] = mace_tensor_nbytes(t);
    }
    if (!changed && !counter_read) break;  /* every later iteration has these shapes */
  }
  for (int j = 0; j < s->n_carried; ++j) {
    if ((st = loop_buf_reserve(op, &s->carry[j], need[j], 0)) != MACE_OK) goto done;
    const loop_buf *b = &s->carry[j];
    if ((st = mace_op_set_output(op, j, b->dtype, b->dims, b->ndim)) != MACE_OK) goto done;
  }
  s->trips = trips;
done:
  free(need);
  return st;
}

static mace_status loop_infer(mace_op *op) {
  loop_state *s = (loop_state *)op->state;
  if (s->eager) {
    MACE_RETURN_IF_ERROR(loop_exec(op, s));
    for (int j = 0; j < s->n_carried; ++j)
      MACE_RETURN_IF_ERROR(
          mace_op_set_output(op, j, s->carry[j].dtype, s->carry[j].dims, s->carry[j].ndim));
    if (s->trips == 0 && s->n_scan) {  /* the scan outputs' per-iteration shapes, inferred */
      const int64_t zero = 0;
      const uint8_t one = 1;
      loop_args(op, s, &zero, &one, 1, 0);
      MACE_RETURN_IF_ERROR(mace_subnet_shape(op, &s->body, s->body.args));
      for (int k = 0; k < s->n_scan; ++k)
        loop_buf_set(&s->scan[k], mace_subnet_output(&s->body, 1 + s->n_carried + k));
    }
  } else {
    MACE_RETURN_IF_ERROR(loop_infer_static(op, s));
  }
  for (int k = 0; k < s->n_scan; ++k) {
    const loop_buf *b = &s->scan[k];
    if (b->ndim + 1 > MACE_MAX_DIMS)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): scan output %d would have rank %d",
                        op->name, op->type, k, b->ndim + 1);
    int64_t dims[MACE_MAX_DIMS];
    dims[0] = s->trips;
    memcpy(dims + 1, b->dims, (size_t)b->ndim * sizeof(int64_t));
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, s->n_carried + k, b->dtype, dims, b->ndim + 1));
  }
  return MACE_OK;
}

static mace_status loop_run(mace_op *op) {
  loop_state *s = (loop_state *)op->state;
  if (!s->eager) MACE_RETURN_IF_ERROR(loop_exec(op, s));
  for (int j = 0; j < s->n_carried; ++j) {
    size_t bytes = mace_tensor_nbytes(op->outputs[j]);
    if (bytes != loop_buf_bytes(&s->carry[j]))
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): carried value %d changed size",
                        op->name, op->type, j);
    if (bytes) memcpy(op->outputs[j]->data, s->carry[j].data, bytes);
  }
  if (s->eager)
    for (int k = 0; k < s->n_scan; ++k) {
      size_t bytes = mace_tensor_nbytes(op->outputs[s->n_carried + k]);
      if (bytes) memcpy(op->outputs[s->n_carried + k]->data, s->scan[k].data, bytes);
    }
  return MACE_OK;
}

const mace_op_kind mace_op_loop = {.type = "Loop", .device = MACE_DEVICE_CPU,
                                   .dtype = MACE_DT_INVALID, .state_size = sizeof(loop_state),
                                   .value_inputs = 3u, .init = loop_init, .infer = loop_infer,
                                   .run = loop_run, .release = loop_release};

const mace_op_kind mace_op_while_loop = {.type = "WhileLoop", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_INVALID,
                                         .state_size = sizeof(loop_state), .value_inputs = ~0u,
                                         .init = loop_init, .infer = loop_infer, .run = loop_run,
                                         .release = loop_release};
