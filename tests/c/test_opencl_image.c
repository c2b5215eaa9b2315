/* The GPU image kinds (ops/opencl/image_*.c: image2d activations, mace_op_kind.cl_image) against
 * the CPU kind of the same type (the oracle) on the same random inputs over shape sweeps
 * (channels not a multiple of 4, odd heights and widths, strides, dilations, paddings,
 * broadcasts), fp32 (max error within 1e-4 of the output's largest magnitude) and fp16 storage
 * (1e-2, the inputs rounded to fp16 for both). Inputs go through the runtime's buffer -> image
 * transform and outputs back through image -> buffer, so the transforms are checked with every
 * case; a round trip alone is checked exactly, and an image kind refuses what it cannot run.
 * Without an OpenCL device it prints why and passes, unless MACE_REQUIRE_OPENCL is set. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/cpu/ref/half.h"
#include "mace.pb-c.h"
#include "mace/mace.h"
#include "runtime/opencl/cl_runtime.h"
#include "test_util.h"
#include "tiny_model.h"

#define MAX_IN 5
#define MAX_ARGS 12

typedef struct img_case {
  const char *type;
  mace_arg args[MAX_ARGS];
  int n_args;
  int n_in;
  int nd[MAX_IN];
  int64_t dims[MAX_IN][MACE_MAX_DIMS];
  int is_const[MAX_IN];
  float lo[MAX_IN], hi[MAX_IN];  /* 0, 0: [-1, 1] */
} img_case;

static void case_input(img_case *c, int nd, const int64_t *dims, int is_const) {
  const int k = c->n_in++;
  c->nd[k] = nd;
  memcpy(c->dims[k], dims, (size_t)nd * sizeof(int64_t));
  c->is_const[k] = is_const;
}
static mace_arg *case_arg(img_case *c, const char *name) {
  mace_arg *a = &c->args[c->n_args++];
  memset(a, 0, sizeof(*a));
  a->name = name;
  return a;
}
static void case_ints(img_case *c, const char *name, int n, const int64_t *vals) {
  mace_arg *a = case_arg(c, name);
  a->n_ints = n;
  a->ints = vals;
}
static void case_int(img_case *c, const char *name, int64_t v) {
  mace_arg *a = case_arg(c, name);
  a->has_i = 1;
  a->i = v;
}
static void case_float(img_case *c, const char *name, float v) {
  mace_arg *a = case_arg(c, name);
  a->has_f = 1;
  a->f = v;
}
static void case_str(img_case *c, const char *name, const char *v) {
  mace_arg *a = case_arg(c, name);
  a->has_s = 1;
  a->s = v;
}

static int64_t numel(int nd, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= dims[i];
  return n;
}

/* An image holding `host` ([N, C, H, W] floats) through the runtime's buffer -> image transform,
 * the buffer's tensor at an odd element offset. */
static mace_status upload_image(mace_cl_runtime *rt, const float *host, const int64_t *dims,
                                void **image) {
  const size_t es = mace_cl_runtime_elem_size(rt), n = (size_t)numel(4, dims), off = 3 * es;
  int64_t w, h;
  void *buf = NULL;
  mace_cl_image_shape(dims, &w, &h);
  mace_status st = mace_cl_image_alloc(rt, (size_t)(w ? w : 1), (size_t)(h ? h : 1), image);
  if (st == MACE_OK) st = mace_cl_alloc(rt, off + n * es + 64, &buf);
  if (st == MACE_OK && n) st = mace_cl_write(rt, buf, off, host, n, 1);
  if (st == MACE_OK && n) st = mace_cl_image_from_buffer(rt, buf, off, *image, dims, NULL);
  if (st == MACE_OK) st = mace_cl_finish(rt);
  if (buf) mace_cl_free(rt, buf);
  return st;
}

static mace_status download_image(mace_cl_runtime *rt, const void *image, const int64_t *dims,
                                  float *host) {
  const size_t es = mace_cl_runtime_elem_size(rt), n = (size_t)numel(4, dims), off = 5 * es;
  void *buf = NULL;
  if (!n) return MACE_OK;
  mace_status st = mace_cl_alloc(rt, off + n * es + 64, &buf);
  if (st == MACE_OK) st = mace_cl_image_to_buffer(rt, image, buf, off, dims, NULL);
  if (st == MACE_OK) st = mace_cl_read(rt, buf, off, host, n, 1);
  if (buf) mace_cl_free(rt, buf);
  return st;
}

/* Runs one op: init, infer, run. On the CPU with host data; on the GPU with the image kind,
 * computed inputs as images, constants as device buffers. *out (allocated) gets output 0. */
static mace_status run_op(const img_case *c, mace_cl_runtime *rt, float **host_in, float **out,
                          int64_t *od, int *ond) {
  mace_tensor tin[MAX_IN], tout;
  mace_tensor *pin[MAX_IN], *pout = &tout;
  void *mems[MAX_IN + 1] = {0}, *state = NULL, *scratch = NULL;
  *out = NULL;
  const mace_op_kind *kind = rt ? mace_registry_find_image(c->type, MACE_DT_F32)
                                : mace_registry_find(c->type, MACE_DEVICE_CPU, MACE_DT_F32);
  if (!kind) return mace_error(MACE_UNSUPPORTED, "no %s kind for %s", rt ? "image" : "CPU",
                               c->type);
  const size_t es = rt ? mace_cl_runtime_elem_size(rt) : 4;
  mace_status st = MACE_OK;
  for (int k = 0; k < c->n_in; ++k) {
    mace_tensor *t = &tin[k];
    memset(t, 0, sizeof(*t));
    t->name = "in";
    t->dtype = MACE_DT_F32;
    t->ndim = c->nd[k];
    memcpy(t->dims, c->dims[k], sizeof(int64_t) * (size_t)c->nd[k]);
    t->role = c->is_const[k] ? MACE_TENSOR_CONST : MACE_TENSOR_INTERMEDIATE;
    pin[k] = t;
    if (!rt) {
      t->data = host_in[k];
    } else if (c->is_const[k]) {  /* as the net uploads constants: a buffer of its own */
      const size_t n = (size_t)numel(t->ndim, t->dims);
      t->storage = MACE_STORAGE_CL_BUFFER;
      t->cl_offset = 2 * es;
      if ((st = mace_cl_alloc(rt, t->cl_offset + n * es + 64, &mems[k])) != MACE_OK) goto done;
      if (n && (st = mace_cl_write(rt, mems[k], t->cl_offset, host_in[k], n, 1)) != MACE_OK)
        goto done;
      t->cl_mem = mems[k];
    } else {
      t->storage = MACE_STORAGE_CL_IMAGE2D;
    }
  }
  memset(&tout, 0, sizeof(tout));
  tout.name = "out";
  mace_op op;
  memset(&op, 0, sizeof(op));
  op.kind = kind;
  op.name = "op";
  op.type = c->type;
  op.args = c->args;
  op.n_args = c->n_args;
  op.inputs = pin;
  op.n_inputs = c->n_in;
  op.outputs = &pout;
  op.n_outputs = 1;
  op.cl = rt;
  state = calloc(1, kind->state_size ? kind->state_size : 1);
  op.state = state;
  if (kind->init && (st = kind->init(&op)) != MACE_OK) goto done;
  if ((st = kind->infer(&op)) != MACE_OK) goto done;
  *ond = tout.ndim;
  memcpy(od, tout.dims, sizeof(tout.dims));
  const int64_t on = mace_tensor_numel(&tout);
  *out = malloc((size_t)(on ? on : 1) * sizeof(float));
  if (!rt) {
    tout.data = *out;
    if (op.scratch_bytes) scratch = mace_aligned_alloc(op.scratch_bytes);
    op.scratch = scratch;
    st = kind->run(&op);
    goto done;
  }
  for (int k = 0; k < c->n_in; ++k) {
    if (c->is_const[k]) continue;
    if ((st = upload_image(rt, host_in[k], tin[k].dims, &mems[k])) != MACE_OK) goto done;
    tin[k].cl_mem = mems[k];
  }
  int64_t w, h;
  mace_cl_image_shape(tout.dims, &w, &h);
  if ((st = mace_cl_image_alloc(rt, (size_t)(w ? w : 1), (size_t)(h ? h : 1), &mems[MAX_IN])) !=
      MACE_OK)
    goto done;
  tout.storage = MACE_STORAGE_CL_IMAGE2D;
  tout.cl_mem = mems[MAX_IN];
  if ((st = kind->run(&op)) != MACE_OK) goto done;
  st = download_image(rt, tout.cl_mem, tout.dims, *out);
done:
  if (kind->release) kind->release(&op);
  free(state);
  mace_aligned_free(scratch);
  for (int k = 0; k <= MAX_IN; ++k)
    if (mems[k]) mace_cl_free(rt, mems[k]);
  return st;
}

static int n_cases, n_case_failures;

/* The CPU and image kinds on the same inputs; tol relative to the CPU output's largest
 * magnitude. */
static void compare_case(mace_cl_runtime *rt, const img_case *c, float tol, const char *label,
                         unsigned seed) {
  float *in[MAX_IN] = {0}, *cpu = NULL, *gpu = NULL;
  int64_t cd[MACE_MAX_DIMS], gd[MACE_MAX_DIMS];
  int cn = 0, gn = 0;
  ++n_cases;
  for (int k = 0; k < c->n_in; ++k) {
    const int64_t n = numel(c->nd[k], c->dims[k]);
    in[k] = malloc((size_t)(n ? n : 1) * sizeof(float));
    const float lo = c->lo[k] == c->hi[k] ? -1.0f : c->lo[k];
    const float hi = c->lo[k] == c->hi[k] ? 1.0f : c->hi[k];
    for (int64_t i = 0; i < n; ++i) in[k][i] = frand_range(&seed, lo, hi);
    if (mace_cl_runtime_precision(rt) == MACE_CL_FP16) {  /* the values fp16 can hold */
      uint16_t *h16 = malloc((size_t)(n ? n : 1) * 2);
      mace_f32_to_f16__ref(in[k], h16, 0, n);
      mace_f16_to_f32__ref(h16, in[k], 0, n);
      free(h16);
    }
  }
  if (run_op(c, NULL, in, &cpu, cd, &cn) != MACE_OK) {
    FAIL("%s: CPU kind failed: %s", label, mace_last_error());
    goto done;
  }
  if (run_op(c, rt, in, &gpu, gd, &gn) != MACE_OK) {
    FAIL("%s: image kind failed: %s", label, mace_last_error());
    ++n_case_failures;
    goto done;
  }
  if (!mace_dims_equal(cd, cn, gd, gn)) {
    FAIL("%s: the image kind's output shape differs from the CPU's", label);
    ++n_case_failures;
    goto done;
  }
  const int64_t n = numel(cn, cd);
  double scale = 0.0, err = 0.0;
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i)
    if (fabs(cpu[i]) > scale) scale = fabs(cpu[i]);
  for (int64_t i = 0; i < n; ++i) {
    const double e = fabs((double)gpu[i] - cpu[i]);
    if (e > err || e != e) {
      err = e != e ? INFINITY : e;
      worst = i;
    }
  }
  if (scale < 1e-6) scale = 1e-6;
  const int ok = err <= tol * scale;
  CHECK(ok, "%s: max error %.3g at %lld (image %g, cpu %g) over %lld values, scale %.3g, tol %g",
        label, err, (long long)worst, n ? gpu[worst] : 0.0, n ? cpu[worst] : 0.0, (long long)n,
        scale, tol);
  if (!ok) ++n_case_failures;
done:
  for (int k = 0; k < c->n_in; ++k) free(in[k]);
  free(cpu);
  free(gpu);
}

/* ------------------------------------------------------------------------------------------ */

static const char *kActs[] = {"NOOP", "RELU", "RELUX", "LEAKYRELU", "SIGMOID", "TANH",
                              "HARDSWISH", "HARDSIGMOID"};
#define N_ACTS (sizeof(kActs) / sizeof(kActs[0]))

static void case_act(img_case *c, const char *act) {
  case_str(c, "activation", act);
  if (strcmp(act, "LEAKYRELU") == 0) case_float(c, "activation_coefficient", 0.1f);
  if (strcmp(act, "RELUX") == 0) case_float(c, "max_limit", 0.5f);
}

static void sweep_conv2d(mace_cl_runtime *rt, float tol, const char *prec) {
  /* n, c, h, w, oc, kh, kw, stride, dilation, pad, group (group = c: depthwise) */
  static const int64_t shapes[][11] = {
      {1, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1},   {2, 4, 8, 7, 6, 3, 3, 2, 1, 1, 1},
      {1, 8, 10, 10, 8, 1, 1, 1, 1, 0, 1},  {1, 5, 7, 9, 7, 1, 1, 1, 1, 0, 1},
      {1, 6, 9, 9, 6, 3, 3, 1, 1, 1, 6},    {1, 8, 12, 13, 8, 3, 3, 2, 1, 1, 8},
      {1, 7, 11, 10, 7, 5, 5, 1, 2, 4, 7},  {1, 4, 13, 12, 4, 5, 5, 1, 1, 2, 1},
      {2, 3, 6, 5, 4, 1, 1, 2, 1, 0, 1},    {1, 1, 8, 9, 5, 1, 1, 1, 1, 0, 1},
      {1, 13, 15, 15, 13, 3, 3, 2, 3, 3, 13}, {1, 16, 5, 5, 24, 1, 1, 1, 1, 0, 1},
      {1, 2, 11, 13, 3, 5, 5, 2, 1, 0, 1},  {1, 19, 7, 6, 10, 3, 3, 1, 2, 1, 1},
      {2, 9, 5, 8, 9, 3, 1, 1, 1, 1, 9},
  };
  static int64_t strides[2], dil[2], pads[4];
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    for (int variant = 0; variant < 4; ++variant) {
      img_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Conv2D";
      const int64_t x[4] = {s[0], s[1], s[2], s[3]}, w[4] = {s[4], s[1] / s[10], s[5], s[6]};
      const int64_t b[1] = {s[4]};
      case_input(&c, 4, x, 0);
      case_input(&c, 4, w, 1);
      if (variant >= 1) case_input(&c, 1, b, 1);
      strides[0] = strides[1] = s[7];
      dil[0] = dil[1] = s[8];
      pads[0] = pads[1] = pads[2] = pads[3] = s[9];
      case_ints(&c, "strides", 2, strides);
      case_ints(&c, "dilations", 2, dil);
      if (variant == 3) {
        case_str(&c, "padding", "SAME_UPPER");
      } else {
        case_ints(&c, "padding_values", 4, pads);
      }
      case_int(&c, "group", s[10]);
      const char *act = kActs[(si + (size_t)variant) % N_ACTS];
      case_act(&c, act);
      if (variant == 2) {  /* a fused residual of the output's shape, from the CPU kind */
        float *in[MAX_IN] = {0}, *out = NULL;
        int64_t od[MACE_MAX_DIMS];
        int ond = 0;
        for (int k = 0; k < c.n_in; ++k)
          in[k] = calloc((size_t)numel(c.nd[k], c.dims[k]), sizeof(float));
        if (run_op(&c, NULL, in, &out, od, &ond) == MACE_OK) case_input(&c, ond, od, 0);
        for (int k = 0; k < c.n_in; ++k) free(in[k]);
        free(out);
      }
      char label[160];
      snprintf(label, sizeof(label), "Conv2D %s x[%lld,%lld,%lld,%lld] oc %lld k %lldx%lld s %lld "
               "d %lld p %lld g %lld %s%s%s%s", prec, (long long)s[0], (long long)s[1],
               (long long)s[2], (long long)s[3], (long long)s[4], (long long)s[5],
               (long long)s[6], (long long)s[7], (long long)s[8], (long long)s[9],
               (long long)s[10], act, variant >= 1 ? " +bias" : "",
               variant == 2 ? " +residual" : "", variant == 3 ? " SAME_UPPER" : "");
      compare_case(rt, &c, tol, label, (unsigned)(si * 31 + (size_t)variant));
    }
  }
}

static void sweep_pooling(mace_cl_runtime *rt, float tol, const char *prec) {
  /* n, c, h, w, k, stride, pad, dilation */
  static const int64_t shapes[][8] = {
      {1, 3, 9, 11, 3, 2, 1, 1}, {2, 5, 8, 7, 2, 2, 0, 1}, {1, 8, 13, 13, 3, 1, 1, 1},
      {1, 6, 12, 9, 3, 2, 0, 2}, {1, 1, 7, 7, 7, 1, 0, 1}, {2, 13, 6, 10, 3, 3, 1, 1},
  };
  static int64_t kern[2], strides[2], pads[4], dil[2];
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    for (int variant = 0; variant < 6; ++variant) {
      img_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Pooling";
      const int64_t x[4] = {s[0], s[1], s[2], s[3]};
      case_input(&c, 4, x, 0);
      const int is_max = variant % 2 == 0, global = variant >= 4;
      case_str(&c, "pooling_type", is_max ? "MAX" : "AVG");
      if (global) {
        case_int(&c, "global", 1);
      } else {
        kern[0] = kern[1] = s[4];
        strides[0] = strides[1] = s[5];
        pads[0] = pads[1] = pads[2] = pads[3] = s[6];
        dil[0] = dil[1] = s[7];
        case_ints(&c, "kernels", 2, kern);
        case_ints(&c, "strides", 2, strides);
        case_ints(&c, "dilations", 2, dil);
        if (variant >= 2) {
          case_str(&c, "padding", "SAME_UPPER");
        } else {
          case_ints(&c, "padding_values", 4, pads);
        }
        if (!is_max && variant == 1) case_int(&c, "count_include_pad", 1);
      }
      char label[160];
      snprintf(label, sizeof(label), "Pooling %s %s%s x[%lld,%lld,%lld,%lld] k %lld s %lld p %lld "
               "d %lld%s", prec, is_max ? "MAX" : "AVG", global ? " global" : "",
               (long long)s[0], (long long)s[1], (long long)s[2], (long long)s[3],
               (long long)s[4], (long long)s[5], (long long)s[6], (long long)s[7],
               variant == 2 || variant == 3 ? " SAME_UPPER" : "");
      compare_case(rt, &c, tol, label, (unsigned)(si * 13 + (size_t)variant));
    }
  }
}

static const int64_t kPixelShapes[][4] = {{1, 3, 9, 11}, {2, 5, 8, 7}, {1, 8, 4, 4},
                                          {1, 1, 7, 5},  {2, 13, 3, 10}};
#define N_PIXEL_SHAPES (sizeof(kPixelShapes) / sizeof(kPixelShapes[0]))

static void sweep_activation(mace_cl_runtime *rt, float tol, const char *prec) {
  for (size_t a = 0; a < N_ACTS; ++a) {
    for (size_t si = 0; si < N_PIXEL_SHAPES; ++si) {
      img_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Activation";
      case_input(&c, 4, kPixelShapes[si], 0);
      c.lo[0] = -4.0f;
      c.hi[0] = 4.0f;
      case_act(&c, kActs[a]);
      char label[128];
      snprintf(label, sizeof(label), "Activation %s %s x[%lld,%lld,%lld,%lld]", prec, kActs[a],
               (long long)kPixelShapes[si][0], (long long)kPixelShapes[si][1],
               (long long)kPixelShapes[si][2], (long long)kPixelShapes[si][3]);
      compare_case(rt, &c, tol, label, (unsigned)(a * 7 + si));
    }
  }
}

static void sweep_channel(mace_cl_runtime *rt, float tol, const char *prec) {
  for (size_t si = 0; si < N_PIXEL_SHAPES; ++si) {
    const int64_t *x = kPixelShapes[si], ch[1] = {x[1]};
    for (int variant = 0; variant < 3; ++variant) {
      img_case c;
      memset(&c, 0, sizeof(c));
      c.type = variant == 2 ? "BiasAdd" : "BatchNorm";
      case_input(&c, 4, x, 0);
      const int n_params = variant == 0 ? 2 : variant == 1 ? 4 : 1;
      for (int p = 0; p < n_params; ++p) case_input(&c, 1, ch, 1);
      if (variant == 1) {  /* ONNX statistics: var > 0 */
        c.lo[4] = 0.1f;
        c.hi[4] = 2.0f;
        case_float(&c, "epsilon", 1e-3f);
      }
      if (variant != 2) case_act(&c, kActs[si % N_ACTS]);
      char label[128];
      snprintf(label, sizeof(label), "%s %s %s x[%lld,%lld,%lld,%lld]", c.type, prec,
               variant == 1 ? "stats" : "", (long long)x[0], (long long)x[1], (long long)x[2],
               (long long)x[3]);
      compare_case(rt, &c, tol, label, (unsigned)(si * 5 + (size_t)variant));
    }
  }
}

static void sweep_eltwise(mace_cl_runtime *rt, float tol, const char *prec) {
  static const char *types[] = {"ADD", "SUB", "PROD", "DIV", "MIN", "MAX"};
  static const int64_t shapes[][2][4] = {
      {{2, 3, 5, 7}, {2, 3, 5, 7}}, {{2, 5, 5, 7}, {2, 5, 1, 1}}, {{1, 6, 6, 5}, {1, 1, 6, 5}},
      {{1, 13, 4, 3}, {1, 13, 4, 3}}, {{1, 1, 4, 3}, {2, 7, 4, 3}}, {{2, 9, 1, 1}, {1, 9, 3, 5}},
  };
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
    for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
      img_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Eltwise";
      case_input(&c, 4, shapes[si][0], 0);
      case_input(&c, 4, shapes[si][1], 0);
      if (strcmp(types[t], "DIV") == 0) {  /* divisors away from 0 */
        c.lo[1] = 0.5f;
        c.hi[1] = 2.0f;
      }
      case_str(&c, "type", types[t]);
      const char *act = kActs[(t + si) % N_ACTS];
      case_act(&c, act);
      char label[160];
      snprintf(label, sizeof(label), "Eltwise %s %s %s a[%lld,%lld,%lld,%lld] b[%lld,%lld,%lld,%lld]",
               prec, types[t], act, (long long)shapes[si][0][0], (long long)shapes[si][0][1],
               (long long)shapes[si][0][2], (long long)shapes[si][0][3],
               (long long)shapes[si][1][0], (long long)shapes[si][1][1],
               (long long)shapes[si][1][2], (long long)shapes[si][1][3]);
      compare_case(rt, &c, tol, label, (unsigned)(t * 11 + si));
    }
  }
}

static void sweep_concat(mace_cl_runtime *rt, float tol, const char *prec) {
  static const int64_t chans[][4] = {{3, 5, 0, 0}, {4, 4, 0, 0}, {1, 2, 3, 0},
                                     {6, 7, 1, 9}, {13, 0, 0, 0}, {8, 3, 4, 5}};
  for (size_t si = 0; si < sizeof(chans) / sizeof(chans[0]); ++si) {
    for (int variant = 0; variant < 2; ++variant) {
      img_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Concat";
      for (int k = 0; k < 4 && chans[si][k]; ++k) {
        const int64_t x[4] = {variant ? 2 : 1, chans[si][k], 5, variant ? 3 : 7};
        case_input(&c, 4, x, 0);
      }
      case_int(&c, "axis", variant ? -3 : 1);
      char label[128];
      snprintf(label, sizeof(label), "Concat %s channels %lld,%lld,%lld,%lld axis %d", prec,
               (long long)chans[si][0], (long long)chans[si][1], (long long)chans[si][2],
               (long long)chans[si][3], variant ? -3 : 1);
      compare_case(rt, &c, tol, label, (unsigned)(si * 3 + (size_t)variant));
    }
  }
}

/* buffer -> image -> buffer gives back exactly what was stored, for odd shapes. */
static void test_round_trip(mace_cl_runtime *rt) {
  static const int64_t shapes[][4] = {{1, 1, 1, 1}, {2, 5, 3, 7}, {1, 4, 6, 6}, {3, 9, 1, 2}};
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t n = numel(4, shapes[si]);
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    unsigned seed = (unsigned)si + 1;
    for (int64_t i = 0; i < n; ++i) x[i] = frand_range(&seed, -8.0f, 8.0f);
    if (mace_cl_runtime_precision(rt) == MACE_CL_FP16) {
      uint16_t *h16 = malloc((size_t)n * 2);
      mace_f32_to_f16__ref(x, h16, 0, n);
      mace_f16_to_f32__ref(h16, x, 0, n);
      free(h16);
    }
    void *image = NULL;
    mace_status st = upload_image(rt, x, shapes[si], &image);
    if (st == MACE_OK) st = download_image(rt, image, shapes[si], y);
    CHECK(st == MACE_OK, "round trip %zu: %s", si, mace_last_error());
    if (st == MACE_OK) CHECK(memcmp(x, y, (size_t)n * sizeof(float)) == 0,
                             "round trip %zu: the values changed", si);
    if (image) mace_cl_free(rt, image);
    free(x);
    free(y);
  }
}

/* What an image kind cannot run it refuses with MACE_UNSUPPORTED (the net then falls back to
 * the buffer kind): a grouped (not depthwise) convolution, a constant Eltwise operand, a
 * Concat along another axis, more inputs than the kernel takes. */
static void test_refusals(mace_cl_runtime *rt) {
  float *in[MAX_IN] = {0}, *out = NULL;
  int64_t od[MACE_MAX_DIMS];
  int ond;
  img_case c;
  memset(&c, 0, sizeof(c));
  c.type = "Conv2D";
  const int64_t x[4] = {1, 8, 5, 5}, w[4] = {8, 4, 3, 3};
  case_input(&c, 4, x, 0);
  case_input(&c, 4, w, 1);
  case_int(&c, "group", 2);
  for (int k = 0; k < c.n_in; ++k) in[k] = calloc((size_t)numel(4, c.dims[k]), sizeof(float));
  mace_status st = run_op(&c, rt, in, &out, od, &ond);
  CHECK(st == MACE_UNSUPPORTED, "grouped Conv2D: status %d", (int)st);
  free(out);
  out = NULL;
  memset(&c, 0, sizeof(c));
  c.type = "Eltwise";
  case_input(&c, 4, x, 0);
  case_input(&c, 4, x, 1);
  case_str(&c, "type", "ADD");
  st = run_op(&c, rt, in, &out, od, &ond);
  CHECK(st == MACE_UNSUPPORTED, "Eltwise with a constant operand: status %d", (int)st);
  free(out);
  out = NULL;
  memset(&c, 0, sizeof(c));
  c.type = "Concat";
  case_input(&c, 4, x, 0);
  case_input(&c, 4, x, 0);
  case_int(&c, "axis", 2);
  st = run_op(&c, rt, in, &out, od, &ond);
  CHECK(st == MACE_UNSUPPORTED, "Concat along H: status %d", (int)st);
  free(out);
  for (int k = 0; k < MAX_IN; ++k) free(in[k]);
}

/* The C API's engine config: buffers by default, an unknown gpu_memory refused naming it, an
 * image engine created (the tiny model's one op gives the model output, so it stays a buffer
 * kind: the image path itself is tests/test_opencl_image.py's). */
static void test_engine_config(void) {
  size_t size;
  uint8_t *g = tiny_model_build(V_OK, &size), *w = tiny_model_weights();
  mace_config cfg;
  mace_config_init(&cfg);
  CHECK(cfg.gpu_memory == MACE_GPU_BUFFER, "gpu_memory defaults to %d", (int)cfg.gpu_memory);
  cfg.device = MACE_DEVICE_GPU;
  cfg.num_threads = 1;
  cfg.gpu_memory = (mace_gpu_memory)7;
  mace_engine *eng = NULL;
  mace_status st = mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, &cfg, &eng);
  CHECK(st == MACE_INVALID_ARGS && strstr(mace_last_error(), "gpu_memory 7"),
        "gpu_memory 7: status %d, '%s'", (int)st, mace_last_error());
  mace_engine_destroy(eng);
  eng = NULL;
  cfg.gpu_memory = MACE_GPU_IMAGE;
  st = mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, &cfg, &eng);
  CHECK(st == MACE_OK, "image engine: %s", mace_last_error());
  mace_engine_destroy(eng);
  free(g);
  free(w);
}

int main(void) {
  mace_cl_runtime *rt = NULL, *rt16 = NULL;
  mace_cl_config cfg = {.platform_index = -1, .device_index = -1, .precision = MACE_CL_FP32,
                        .image_memory = 1};
  mace_status st = mace_cl_runtime_create(&cfg, &rt);
  int64_t max_w = 0, max_h = 0;
  if (st == MACE_OK) st = mace_cl_image_limits(rt, &max_w, &max_h);
  if (st != MACE_OK) {
    const char *req = getenv("MACE_REQUIRE_OPENCL");
    if (req && *req) {
      FAIL("MACE_REQUIRE_OPENCL is set but no OpenCL runtime with images: %s", mace_last_error());
      mace_cl_runtime_destroy(rt);
      return TEST_FINISH("OpenCL required");
    }
    printf("test_opencl_image: skipped, no OpenCL device with images: %s\n", mace_last_error());
    mace_cl_runtime_destroy(rt);
    return TEST_FINISH("skipped (no OpenCL images)");
  }
  printf("device: %s, image2d up to %lld x %lld\n", mace_cl_runtime_device(rt)->name,
         (long long)max_w, (long long)max_h);
  CHECK(mace_cl_runtime_image_memory(rt) == 1, "image_memory not kept by the runtime");
  cfg.precision = MACE_CL_FP16;
  st = mace_cl_runtime_create(&cfg, &rt16);
  CHECK(st == MACE_OK, "fp16 runtime: %s", mace_last_error());
  test_round_trip(rt);
  if (rt16) test_round_trip(rt16);
  test_refusals(rt);
  test_engine_config();
  struct {
    const char *name;
    void (*fn)(mace_cl_runtime *, float, const char *);
  } sweeps[] = {{"Conv2D", sweep_conv2d},         {"Pooling", sweep_pooling},
                {"Activation", sweep_activation}, {"BatchNorm BiasAdd", sweep_channel},
                {"Eltwise", sweep_eltwise},       {"Concat", sweep_concat}};
  const char *only = getenv("MACE_TEST_OPS");
  for (size_t i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); ++i) {
    if (only && !strstr(sweeps[i].name, only)) continue;
    const int before = n_case_failures, cases = n_cases;
    sweeps[i].fn(rt, 1e-4f, "fp32");
    if (rt16) sweeps[i].fn(rt16, 1e-2f, "fp16");
    printf("%-18s %3d cases, %d failed\n", sweeps[i].name, n_cases - cases,
           n_case_failures - before);
  }
  mace_cl_runtime_destroy(rt16);
  mace_cl_runtime_destroy(rt);
  return TEST_FINISH("%d image op cases against the CPU", n_cases);
}
