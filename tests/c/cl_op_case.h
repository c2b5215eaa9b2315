/* Scaffolding of the C tests that run a GPU op kind against the CPU kind of the same type (a
 * helper header, not a test; test_opencl_ops.c, test_opencl_ops_extra.c and
 * test_opencl_deconv.c include it): an op case (type, arguments, inputs), run_op (init, infer,
 * run on one device, every device tensor at an odd offset of one buffer as in an arena) and
 * compare_case (the same random inputs on both, the max error within tol of the CPU output's
 * largest magnitude; fp16 runtimes get inputs fp16 can hold). Include after test_util.h. */
#ifndef MACE_TESTS_C_CL_OP_CASE_H
#define MACE_TESTS_C_CL_OP_CASE_H

#include <math.h>

#include "core/op.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/cpu/ref/half.h"
#include "runtime/opencl/cl_runtime.h"

#define MAX_IN 6
#define MAX_ARGS 12

typedef struct op_case {
  const char *type;
  mace_arg args[MAX_ARGS];
  int n_args;
  int n_in;
  int nd[MAX_IN];
  int64_t dims[MAX_IN][MACE_MAX_DIMS];
  int is_const[MAX_IN];
  float lo[MAX_IN], hi[MAX_IN];  /* input value range; 0, 0: [-1, 1] */
  int n_out;                     /* 0: 1 */
} op_case;

#define MAX_OUT 3

static inline void case_input(op_case *c, int nd, const int64_t *dims, int is_const) {
  const int k = c->n_in++;
  c->nd[k] = nd;
  memcpy(c->dims[k], dims, (size_t)nd * sizeof(int64_t));
  c->is_const[k] = is_const;
}

static inline void case_ints(op_case *c, const char *name, int n, const int64_t *vals) {
  mace_arg *a = &c->args[c->n_args++];
  memset(a, 0, sizeof(*a));
  a->name = name;
  a->n_ints = n;
  a->ints = vals;
}
static inline void case_int(op_case *c, const char *name, int64_t v) {
  mace_arg *a = &c->args[c->n_args++];
  memset(a, 0, sizeof(*a));
  a->name = name;
  a->has_i = 1;
  a->i = v;
}
static inline void case_float(op_case *c, const char *name, float v) {
  mace_arg *a = &c->args[c->n_args++];
  memset(a, 0, sizeof(*a));
  a->name = name;
  a->has_f = 1;
  a->f = v;
}
static inline void case_floats(op_case *c, const char *name, int n, const float *vals) {
  mace_arg *a = &c->args[c->n_args++];
  memset(a, 0, sizeof(*a));
  a->name = name;
  a->n_floats = n;
  a->floats = vals;
}
static inline void case_str(op_case *c, const char *name, const char *v) {
  mace_arg *a = &c->args[c->n_args++];
  memset(a, 0, sizeof(*a));
  a->name = name;
  a->has_s = 1;
  a->s = v;
}

static inline int64_t numel(int nd, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= dims[i];
  return n;
}

/* Runs one op: init, infer, run; outputs' data allocated here (host) or in one device buffer
 * with the inputs. out[i] (allocated) gets output i's values, od/ond its shape. */
static inline mace_status run_op(const op_case *c, mace_device device, mace_cl_runtime *rt,
                          float **host_in, float **out, int64_t od[][MACE_MAX_DIMS], int *ond) {
  mace_tensor tin[MAX_IN], tout[MAX_OUT];
  mace_tensor *pin[MAX_IN], *pout[MAX_OUT];
  void *arena = NULL, *state = NULL, *scratch = NULL;
  const int n_out = c->n_out ? c->n_out : 1;
  for (int i = 0; i < MAX_OUT; ++i) out[i] = NULL;
  const mace_op_kind *kind = mace_registry_find(c->type, device, MACE_DT_F32);
  if (!kind) return mace_error(MACE_UNSUPPORTED, "no kind for %s on device %d", c->type, device);
  const size_t es = rt ? mace_cl_runtime_elem_size(rt) : 4;
  size_t offs[MAX_IN], ooffs[MAX_OUT], total = 0;
  for (int k = 0; k < c->n_in; ++k) {
    mace_tensor *t = &tin[k];
    memset(t, 0, sizeof(*t));
    t->name = "in";
    t->dtype = MACE_DT_F32;
    t->ndim = c->nd[k];
    memcpy(t->dims, c->dims[k], sizeof(int64_t) * (size_t)c->nd[k]);
    t->role = c->is_const[k] ? MACE_TENSOR_CONST : MACE_TENSOR_INTERMEDIATE;
    pin[k] = t;
    /* Device: every tensor at an odd element offset of one buffer, as in an arena. */
    offs[k] = total + 3 * es;
    total = offs[k] + (size_t)numel(t->ndim, t->dims) * es + 64;
  }
  for (int i = 0; i < n_out; ++i) {
    memset(&tout[i], 0, sizeof(tout[i]));
    tout[i].name = "out";
    pout[i] = &tout[i];
  }
  mace_op op;
  memset(&op, 0, sizeof(op));
  op.kind = kind;
  op.name = "op";
  op.type = c->type;
  op.args = c->args;
  op.n_args = c->n_args;
  op.inputs = pin;
  op.n_inputs = c->n_in;
  op.outputs = pout;
  op.n_outputs = n_out;
  op.cl = device == MACE_DEVICE_GPU ? rt : NULL;
  mace_status st = MACE_OK;
  state = calloc(1, kind->state_size ? kind->state_size : 1);
  op.state = state;
  if (device == MACE_DEVICE_CPU) {
    for (int k = 0; k < c->n_in; ++k) tin[k].data = host_in[k];
  } else {
    /* As the net places them: on the device, constants keeping their host copy too. */
    for (int k = 0; k < c->n_in; ++k) {
      tin[k].storage = MACE_STORAGE_CL_BUFFER;
      if (c->is_const[k]) tin[k].data = host_in[k];
    }
    for (int i = 0; i < n_out; ++i) tout[i].storage = MACE_STORAGE_CL_BUFFER;
  }
  if (kind->init && (st = kind->init(&op)) != MACE_OK) goto done;
  if ((st = kind->infer(&op)) != MACE_OK) goto done;
  for (int i = 0; i < n_out; ++i) {
    const int64_t on = mace_tensor_numel(&tout[i]);
    ond[i] = tout[i].ndim;
    memcpy(od[i], tout[i].dims, sizeof(tout[i].dims));
    out[i] = malloc((size_t)(on ? on : 1) * sizeof(float));
    ooffs[i] = total + 5 * es;
    total = ooffs[i] + (size_t)on * es + 64;
    if (device == MACE_DEVICE_CPU) tout[i].data = out[i];
  }
  if (device == MACE_DEVICE_CPU) {
    if (op.scratch_bytes) scratch = mace_aligned_alloc(op.scratch_bytes);
    op.scratch = scratch;
    st = kind->run(&op);
    goto done;
  }
  if ((st = mace_cl_alloc(rt, total, &arena)) != MACE_OK) goto done;
  for (int k = 0; k < c->n_in; ++k) {
    tin[k].cl_mem = arena;
    tin[k].cl_offset = offs[k];
    st = mace_cl_write(rt, arena, offs[k], host_in[k], (size_t)mace_tensor_numel(&tin[k]), 1);
    if (st != MACE_OK) goto done;
  }
  for (int i = 0; i < n_out; ++i) {
    tout[i].cl_mem = arena;
    tout[i].cl_offset = ooffs[i];
  }
  if ((st = kind->run(&op)) != MACE_OK) goto done;
  if ((st = mace_cl_finish(rt)) != MACE_OK) goto done;
  for (int i = 0; i < n_out && st == MACE_OK; ++i)
    st = mace_cl_read(rt, arena, ooffs[i], out[i], (size_t)mace_tensor_numel(&tout[i]), 1);
done:
  if (kind->release) kind->release(&op);
  free(state);
  mace_aligned_free(scratch);
  if (arena) mace_cl_free(rt, arena);
  return st;
}

static int n_cases, n_case_failures;

/* CPU and GPU kinds on the same inputs; tol relative to each CPU output's largest magnitude. */
static inline void compare_case(mace_cl_runtime *rt, const op_case *c, float tol, const char *label,
                         unsigned seed) {
  float *in[MAX_IN] = {0}, *cpu[MAX_OUT] = {0}, *gpu[MAX_OUT] = {0};
  int64_t cd[MAX_OUT][MACE_MAX_DIMS], gd[MAX_OUT][MACE_MAX_DIMS];
  int cn[MAX_OUT] = {0}, gn[MAX_OUT] = {0}, bad = 0;
  ++n_cases;
  for (int k = 0; k < c->n_in; ++k) {
    const int64_t n = numel(c->nd[k], c->dims[k]);
    in[k] = malloc((size_t)(n ? n : 1) * sizeof(float));
    const float lo = c->lo[k] == c->hi[k] ? -1.0f : c->lo[k];
    const float hi = c->lo[k] == c->hi[k] ? 1.0f : c->hi[k];
    for (int64_t i = 0; i < n; ++i) in[k][i] = frand_range(&seed, lo, hi);
    if (mace_cl_runtime_precision(rt) == MACE_CL_FP16) {  /* the values fp16 can hold */
      uint16_t *h = malloc((size_t)(n ? n : 1) * 2);
      mace_f32_to_f16__ref(in[k], h, 0, n);
      mace_f16_to_f32__ref(h, in[k], 0, n);
      free(h);
    }
  }
  mace_status st = run_op(c, MACE_DEVICE_CPU, NULL, in, cpu, cd, cn);
  if (st != MACE_OK) {
    FAIL("%s: CPU kind failed: %s", label, mace_last_error());
    goto done;
  }
  st = run_op(c, MACE_DEVICE_GPU, rt, in, gpu, gd, gn);
  if (st != MACE_OK) {
    FAIL("%s: GPU kind failed: %s", label, mace_last_error());
    ++n_case_failures;
    goto done;
  }
  for (int o = 0; o < (c->n_out ? c->n_out : 1); ++o) {
    if (!mace_dims_equal(cd[o], cn[o], gd[o], gn[o])) {
      FAIL("%s: GPU output %d's shape differs from the CPU's", label, o);
      bad = 1;
      continue;
    }
    const int64_t n = numel(cn[o], cd[o]);
    double scale = 0.0, err = 0.0;
    int64_t worst = 0;
    for (int64_t i = 0; i < n; ++i)
      if (fabs(cpu[o][i]) > scale) scale = fabs(cpu[o][i]);
    for (int64_t i = 0; i < n; ++i) {
      const double e = fabs((double)gpu[o][i] - cpu[o][i]);
      if (e > err || e != e) {
        err = e != e ? INFINITY : e;
        worst = i;
      }
    }
    if (scale < 1e-6) scale = 1e-6;
    const int ok = err <= tol * scale;
    CHECK(ok, "%s: output %d: max error %.3g at %lld (gpu %g, cpu %g) over %lld values, scale "
          "%.3g, tol %g", label, o, err, (long long)worst, n ? gpu[o][worst] : 0.0,
          n ? cpu[o][worst] : 0.0, (long long)n, scale, tol);
    if (!ok) bad = 1;
  }
  if (bad) ++n_case_failures;
done:
  for (int k = 0; k < c->n_in; ++k) free(in[k]);
  for (int o = 0; o < MAX_OUT; ++o) {
    free(cpu[o]);
    free(gpu[o]);
  }
}

/* ------------------------------------------------------------------------------------------ */

#endif /* MACE_TESTS_C_CL_OP_CASE_H */
