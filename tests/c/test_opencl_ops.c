/* The OpenCL runtime and every GPU op kind against the CPU kind of the same type (the oracle),
 * on the same random inputs over shape sweeps, in fp32 (max error within 1e-4 of the output's
 * largest magnitude) and fp16 storage (1e-2). Also: the runtime's errors without a library or
 * a device, fp16 transfers, and the on-disk binary cache (a corrupt file is rebuilt).
 * Without an OpenCL device it prints why and passes, unless MACE_REQUIRE_OPENCL is set. */
#define _POSIX_C_SOURCE 200809L  /* setenv, getpid */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/op.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/cpu/ref/half.h"
#include "runtime/opencl/cl_runtime.h"
#include "test_util.h"

#include "cl_op_case.h"

/* ------------------------------------------------------------------------------------------ */

static const char *kActs[] = {"NOOP", "RELU", "RELUX", "LEAKYRELU", "SIGMOID", "TANH",
                              "HARDSWISH"};

static void sweep_conv2d(mace_cl_runtime *rt, float tol, const char *prec) {
  /* n, c, h, w, oc, kh, kw, stride, dilation, pad, group */
  static const int64_t shapes[][11] = {
      {1, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1},  {2, 4, 8, 7, 6, 3, 3, 2, 1, 1, 1},
      {1, 8, 10, 10, 8, 1, 1, 1, 1, 0, 1},  {1, 5, 7, 9, 7, 1, 1, 1, 1, 0, 1},
      {1, 6, 9, 9, 6, 3, 3, 1, 1, 1, 6},  {1, 8, 12, 13, 16, 3, 3, 2, 1, 1, 8},
      {1, 6, 11, 10, 9, 3, 3, 1, 2, 2, 3}, {1, 4, 13, 12, 4, 5, 5, 1, 1, 2, 1},
      {1, 4, 9, 9, 8, 2, 3, 3, 1, 0, 2},   {2, 3, 6, 5, 4, 1, 1, 2, 1, 0, 1},
      {1, 8, 15, 15, 8, 3, 3, 1, 3, 3, 8}, {1, 16, 5, 5, 24, 1, 1, 1, 1, 0, 1},
      /* GEMM paths past one tile (64 and 32), K < the K step, K deep enough to split, groups */
      {1, 16, 17, 19, 70, 3, 3, 1, 1, 1, 1}, {2, 24, 9, 9, 40, 1, 1, 1, 1, 0, 1},
      {1, 12, 14, 14, 33, 3, 3, 2, 2, 2, 1}, {1, 16, 10, 11, 24, 3, 3, 1, 1, 1, 2},
      {2, 12, 7, 8, 16, 1, 1, 1, 1, 0, 4},   {1, 1, 8, 9, 5, 1, 1, 1, 1, 0, 1},
      {1, 64, 6, 6, 20, 3, 3, 1, 1, 1, 1},   {1, 40, 9, 7, 65, 1, 1, 2, 1, 0, 1},
      {1, 2, 11, 13, 3, 5, 5, 2, 1, 0, 1},
  };
  static int64_t strides[2], dil[2], pads[4];
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    for (int variant = 0; variant < 4; ++variant) {
      op_case c;
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
      const char *act = kActs[(si + (size_t)variant) % (sizeof(kActs) / sizeof(kActs[0]))];
      case_str(&c, "activation", act);
      if (strcmp(act, "LEAKYRELU") == 0) case_float(&c, "activation_coefficient", 0.1f);
      if (strcmp(act, "RELUX") == 0) case_float(&c, "max_limit", 0.5f);
      if (variant == 2) {  /* a fused residual: its shape is the output's, from the CPU kind */
        op_case probe = c;
        float *in[MAX_IN] = {0}, *out[MAX_OUT];
        int64_t od[MAX_OUT][MACE_MAX_DIMS];
        int ond[MAX_OUT];
        for (int k = 0; k < c.n_in; ++k)
          in[k] = calloc((size_t)numel(c.nd[k], c.dims[k]), sizeof(float));
        if (run_op(&probe, MACE_DEVICE_CPU, NULL, in, out, od, ond) == MACE_OK)
          case_input(&c, ond[0], od[0], 0);
        for (int k = 0; k < probe.n_in; ++k) free(in[k]);
        for (int o = 0; o < MAX_OUT; ++o) free(out[o]);
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

static void sweep_eltwise(mace_cl_runtime *rt, float tol, const char *prec) {
  static const char *types[] = {"ADD", "SUB", "PROD", "DIV", "MIN", "MAX", "SQR_DIFF", "POW",
                                "NEG", "ABS", "EXP", "SQRT", "GELU", "SOFTPLUS"};
  static const int64_t shapes[][2][4] = {
      {{2, 3, 5, 7}, {2, 3, 5, 7}}, {{2, 3, 5, 7}, {1, 3, 1, 1}}, {{1, 4, 6, 5}, {1, 1, 6, 5}},
      {{3, 1, 5, 1}, {1, 4, 1, 6}}, {{2, 3, 4, 5}, {1, 1, 1, 1}},
  };
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
    for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Eltwise";
      const int unary = t >= 8;
      case_input(&c, 4, shapes[si][0], 0);
      if (!unary) case_input(&c, si == 4 ? 1 : 4, shapes[si][1], si == 1);
      if (strcmp(types[t], "DIV") == 0 || strcmp(types[t], "POW") == 0 ||
          strcmp(types[t], "SQRT") == 0) {  /* away from 0 and negative bases */
        c.lo[0] = 0.5f;
        c.hi[0] = 2.0f;
        c.lo[1] = 0.5f;
        c.hi[1] = 2.0f;
      }
      case_str(&c, "type", types[t]);
      if (si == 2) case_str(&c, "activation", "RELU");
      char label[128];
      snprintf(label, sizeof(label), "Eltwise %s %s shapes #%zu%s", prec, types[t], si,
               si == 2 ? " +RELU" : "");
      compare_case(rt, &c, tol, label, (unsigned)(t * 7 + si));
      if (unary) break;
    }
  }
}

static void sweep_activation(mace_cl_runtime *rt, float tol, const char *prec) {
  static const char *acts[] = {"RELU", "RELUX", "LEAKYRELU", "SIGMOID", "TANH", "HARDSIGMOID",
                               "HARDSWISH", "ELU", "SWISH", "GELU", "GELU_TANH", "MISH", "PRELU"};
  for (size_t a = 0; a < sizeof(acts) / sizeof(acts[0]); ++a) {
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "Activation";
    const int64_t x[4] = {2, 5, 7, 9}, slope[3] = {5, 1, 1};
    case_input(&c, 4, x, 0);
    c.lo[0] = -4.0f;
    c.hi[0] = 4.0f;
    if (strcmp(acts[a], "PRELU") == 0) case_input(&c, 3, slope, 1);
    case_str(&c, "activation", acts[a]);
    char label[96];
    snprintf(label, sizeof(label), "Activation %s %s", prec, acts[a]);
    compare_case(rt, &c, tol, label, (unsigned)a);
  }
}

static void sweep_pooling(mace_cl_runtime *rt, float tol, const char *prec) {
  /* n, c, h, w, k, stride, dilation, pad, ceil_mode, count_include_pad */
  static const int64_t geo[][10] = {
      {1, 3, 9, 11, 3, 2, 1, 1, 0, 0}, {2, 4, 8, 7, 2, 2, 1, 0, 0, 0},
      {1, 5, 13, 12, 3, 1, 2, 2, 0, 1}, {1, 2, 10, 9, 3, 2, 1, 1, 1, 0},
      {1, 3, 7, 7, 5, 3, 1, 2, 1, 1},   {1, 2, 6, 6, 2, 1, 1, 0, 0, 0},
  };
  static int64_t kern[2], strides[2], dil[2], pads[4];
  for (int is_max = 0; is_max < 2; ++is_max) {
    for (size_t g = 0; g <= sizeof(geo) / sizeof(geo[0]); ++g) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Pooling";
      const int global = g == sizeof(geo) / sizeof(geo[0]);
      const int64_t *s = geo[global ? 0 : g];
      const int64_t x[4] = {s[0], s[1], s[2] + (global ? 20 : 0), s[3] + (global ? 9 : 0)};
      case_input(&c, 4, x, 0);
      case_str(&c, "pooling_type", is_max ? "MAX" : "AVG");
      if (global) {
        case_int(&c, "global", 1);
      } else {
        kern[0] = kern[1] = s[4];
        strides[0] = strides[1] = s[5];
        dil[0] = dil[1] = s[6];
        pads[0] = pads[1] = pads[2] = pads[3] = s[7];
        case_ints(&c, "kernels", 2, kern);
        case_ints(&c, "strides", 2, strides);
        case_ints(&c, "dilations", 2, dil);
        case_ints(&c, "padding_values", 4, pads);
        case_int(&c, "ceil_mode", s[8]);
        case_int(&c, "count_include_pad", s[9]);
      }
      char label[128];
      snprintf(label, sizeof(label), "Pooling %s %s %s #%zu", prec, is_max ? "MAX" : "AVG",
               global ? "global" : "window", g);
      compare_case(rt, &c, tol, label, (unsigned)(g * 3 + (size_t)is_max));
    }
  }
}

static void sweep_softmax(mace_cl_runtime *rt, float tol, const char *prec) {
  static const int64_t x[4] = {2, 5, 3, 7};
  for (int axis = -1; axis < 4; ++axis) {
    for (int use_log = 0; use_log < 2; ++use_log) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Softmax";
      case_input(&c, 4, x, 0);
      c.lo[0] = -5.0f;
      c.hi[0] = 5.0f;
      case_int(&c, "axis", axis);
      case_int(&c, "use_log", use_log);
      if (axis == 1 && use_log == 0) case_int(&c, "coerce_2d", 1);
      char label[96];
      snprintf(label, sizeof(label), "Softmax %s axis %d%s", prec, axis, use_log ? " log" : "");
      compare_case(rt, &c, tol, label, (unsigned)(axis + 10 * use_log + 20));
    }
  }
  /* Contiguous rows of attention scores and longer (the row-parallel kernel): a row of one,
   * shorter than, equal to and longer than its work-group. */
  static const int64_t rows[][4] = {{1, 1, 4, 1}, {1, 12, 16, 16}, {1, 4, 5, 128},
                                    {1, 2, 3, 256}, {1, 1, 3, 1000}};
  for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); ++r) {
    for (int use_log = 0; use_log < 2; ++use_log) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Softmax";
      case_input(&c, 4, rows[r], 0);
      c.lo[0] = -8.0f;
      c.hi[0] = 8.0f;
      case_int(&c, "axis", -1);
      case_int(&c, "use_log", use_log);
      char label[96];
      snprintf(label, sizeof(label), "Softmax %s rows of %lld%s", prec, (long long)rows[r][3],
               use_log ? " log" : "");
      compare_case(rt, &c, tol, label, (unsigned)(r * 2 + (size_t)use_log + 40));
    }
  }
}

static void sweep_dense(mace_cl_runtime *rt, float tol, const char *prec) {
  /* FullyConnected: x [m, k] or [m, c, h, w]; weight [n, k]. */
  static const int64_t fc[][5] = {{1, 7, 0, 0, 5},     {3, 16, 0, 0, 10},  {2, 4, 3, 3, 9},
                                  {5, 33, 0, 0, 1},    {1, 700, 0, 0, 100}, {3, 70, 0, 0, 130},
                                  {130, 33, 0, 0, 65}, {2, 16, 4, 5, 70}};
  for (size_t i = 0; i < sizeof(fc) / sizeof(fc[0]); ++i) {
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "FullyConnected";
    const int64_t k = fc[i][2] ? fc[i][1] * fc[i][2] * fc[i][3] : fc[i][1];
    const int64_t x[4] = {fc[i][0], fc[i][1], fc[i][2], fc[i][3]}, w[2] = {fc[i][4], k};
    const int64_t b[1] = {fc[i][4]};
    case_input(&c, fc[i][2] ? 4 : 2, x, 0);
    case_input(&c, 2, w, 1);
    if (i != 1) case_input(&c, 1, b, 1);
    case_str(&c, "activation", kActs[i % 7]);
    char label[96];
    snprintf(label, sizeof(label), "FullyConnected %s #%zu", prec, i);
    compare_case(rt, &c, tol, label, (unsigned)i);
  }
  /* MatMul: a dims, b dims, transposes, bias. */
  static const struct {
    int na, nb;
    int64_t a[4], b[4];
    int ta, tb, bias;
  } mm[] = {
      {2, 2, {5, 7}, {7, 3}, 0, 0, 0},           {2, 2, {7, 5}, {3, 7}, 1, 1, 1},
      {3, 2, {4, 5, 6}, {6, 9}, 0, 0, 1},        {3, 3, {2, 5, 6}, {2, 4, 6}, 0, 1, 0},
      {4, 3, {2, 3, 4, 5}, {1, 5, 6}, 0, 0, 0},  {1, 2, {6}, {6, 4}, 0, 0, 0},
      {3, 1, {3, 4, 6}, {6}, 0, 0, 0},           {4, 4, {2, 1, 3, 8}, {1, 3, 8, 2}, 0, 0, 0},
      /* past one tile (64 and 32), every transpose, broadcast batches, K deep enough to split */
      {2, 2, {130, 70}, {70, 67}, 0, 0, 1},      {2, 2, {70, 130}, {67, 70}, 1, 1, 0},
      {4, 4, {2, 3, 40, 33}, {1, 3, 70, 33}, 0, 1, 1}, {3, 3, {2, 300, 9}, {1, 300, 35}, 1, 0, 0},
      {2, 2, {1, 600}, {600, 90}, 0, 0, 1},      {1, 2, {257}, {257, 40}, 0, 0, 0},
      /* B shared by every batch: the batches fold into one GEMM's rows (an exporter's
       * [seq, 1, d] x [d, 3d]); then A broadcast over B's batches, which cannot fold */
      {3, 2, {130, 1, 76}, {76, 230}, 0, 0, 1},  {4, 3, {2, 3, 1, 40}, {1, 70, 40}, 0, 1, 0},
      {3, 3, {1, 5, 6}, {3, 6, 4}, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof(mm) / sizeof(mm[0]); ++i) {
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "MatMul";
    case_input(&c, mm[i].na, mm[i].a, 0);
    case_input(&c, mm[i].nb, mm[i].b, 0);
    if (mm[i].bias) {
      const int64_t n[1] = {mm[i].tb ? mm[i].b[mm[i].nb - 2] : mm[i].b[mm[i].nb - 1]};
      case_input(&c, 1, n, 1);
    }
    case_int(&c, "transpose_a", mm[i].ta);
    case_int(&c, "transpose_b", mm[i].tb);
    if (i == 2) case_str(&c, "activation", "RELU");
    char label[96];
    snprintf(label, sizeof(label), "MatMul %s #%zu", prec, i);
    compare_case(rt, &c, tol, label, (unsigned)(i + 100));
  }
}

static void sweep_layout(mace_cl_runtime *rt, float tol, const char *prec) {
  for (int axis = -4; axis < 4; ++axis) {  /* Concat of 3 inputs, sizes 2, 3, 1 along axis */
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "Concat";
    const int a = axis < 0 ? axis + 4 : axis;
    for (int i = 0; i < 3; ++i) {
      int64_t d[4] = {2, 3, 4, 5};
      d[a] = i == 0 ? 2 : (i == 1 ? 3 : 1);
      case_input(&c, 4, d, i == 2);
    }
    case_int(&c, "axis", axis);
    char label[64];
    snprintf(label, sizeof(label), "Concat %s axis %d", prec, axis);
    compare_case(rt, &c, tol, label, (unsigned)(axis + 50));
  }
  static const int64_t split3[3] = {1, 3, 2};
  for (int axis = -4; axis < 4; ++axis) {  /* Split into 3 outputs: sizes 1, 3, 2, or equal */
    for (int equal = 0; equal < 2; ++equal) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Split";
      const int a = axis < 0 ? axis + 4 : axis;
      int64_t d[4] = {3, 4, 5, 6};
      d[a] = 6;
      case_input(&c, 4, d, 0);
      case_int(&c, "axis", axis);
      if (!equal) case_ints(&c, "split", 3, split3);
      c.n_out = 3;
      char label[64];
      snprintf(label, sizeof(label), "Split %s axis %d%s", prec, axis, equal ? " equal" : "");
      compare_case(rt, &c, tol, label, (unsigned)(axis + 150 + 10 * equal));
    }
  }
  /* Slice: starts, ends, axes, steps (negative steps, clamping, INT64_MAX ends). */
  static const int64_t sl[][4][3] = {
      {{1, 0, 0}, {3, 4, 0}, {1, 3, 0}, {1, 2, 0}},
      {{-1, 4, 0}, {-100, 0, 0}, {2, 3, 0}, {-1, -2, 0}},
      {{0, 1, 2}, {INT64_MAX, 3, 100}, {0, 1, -1}, {2, 1, 3}},
      {{3, 0, 0}, {1, 0, 0}, {3, 0, 0}, {-1, 0, 0}},
  };
  static const int nsl[] = {2, 2, 3, 1};
  for (size_t i = 0; i < sizeof(nsl) / sizeof(nsl[0]); ++i) {
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "Slice";
    const int64_t x[4] = {2, 5, 4, 7};
    case_input(&c, 4, x, 0);
    case_ints(&c, "starts", nsl[i], sl[i][0]);
    case_ints(&c, "ends", nsl[i], sl[i][1]);
    case_ints(&c, "axes", nsl[i], sl[i][2]);
    case_ints(&c, "steps", nsl[i], sl[i][3]);
    char label[64];
    snprintf(label, sizeof(label), "Slice %s #%zu", prec, i);
    compare_case(rt, &c, tol, label, (unsigned)(i + 190));
  }
  /* StridedSlice: begin, end, strides with begin/end/shrink masks. */
  static const int64_t ss[][3][4] = {
      {{0, 1, 1, 0}, {2, 4, 3, 7}, {1, 2, 1, 3}},
      {{1, -1, 0, 5}, {0, 0, 4, 0}, {1, -1, 2, -2}},
      {{0, 2, 0, 0}, {1, 3, 4, 7}, {1, 1, 1, 1}},
  };
  static const int64_t masks[][3] = {{0, 0, 0}, {1, 9, 0}, {0, 0, 3}};
  for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); ++i) {
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "StridedSlice";
    const int64_t x[4] = {2, 5, 4, 7};
    case_input(&c, 4, x, 0);
    case_ints(&c, "begin", 4, ss[i][0]);
    case_ints(&c, "end", 4, ss[i][1]);
    case_ints(&c, "strides", 4, ss[i][2]);
    case_int(&c, "begin_mask", masks[i][0]);
    case_int(&c, "end_mask", masks[i][1]);
    case_int(&c, "shrink_axis_mask", masks[i][2]);
    char label[64];
    snprintf(label, sizeof(label), "StridedSlice %s #%zu", prec, i);
    compare_case(rt, &c, tol, label, (unsigned)(i + 200));
  }
  static const int64_t perms[][4] = {{0, 2, 3, 1}, {0, 3, 1, 2}, {3, 2, 1, 0}, {1, 0, 2, 3},
                                     {-1, 0, 1, 2}};
  for (size_t i = 0; i <= sizeof(perms) / sizeof(perms[0]); ++i) {
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "Transpose";
    const int64_t x[4] = {2, 3, 4, 5};
    case_input(&c, 4, x, 0);
    if (i < sizeof(perms) / sizeof(perms[0])) case_ints(&c, "dims", 4, perms[i]);
    char label[64];
    snprintf(label, sizeof(label), "Transpose %s #%zu", prec, i);
    compare_case(rt, &c, tol, label, (unsigned)(i + 60));
  }
}

static void sweep_channel(mace_cl_runtime *rt, float tol, const char *prec) {
  static const int64_t xs[][4] = {{2, 5, 4, 3}, {1, 7, 1, 1}, {3, 4, 6, 0}};
  for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); ++i) {
    const int nd = xs[i][3] ? 4 : 3;
    const int64_t c1[1] = {xs[i][1]};
    for (int form = 0; form < 3; ++form) {  /* BatchNorm 3 inputs, 5 inputs, BiasAdd */
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = form == 2 ? "BiasAdd" : "BatchNorm";
      case_input(&c, nd, xs[i], 0);
      const int params = form == 0 ? 2 : (form == 1 ? 4 : 1);
      for (int p = 0; p < params; ++p) {
        case_input(&c, 1, c1, 1);
        if (form == 1 && p == 3) {  /* a variance */
          c.lo[4] = 0.1f;
          c.hi[4] = 2.0f;
        }
      }
      if (form == 1) case_float(&c, "epsilon", 1e-3f);
      if (form != 2 && i == 0) case_str(&c, "activation", "RELU");
      char label[96];
      snprintf(label, sizeof(label), "%s %s #%zu%s", c.type, prec, i,
               form == 1 ? " (statistics)" : "");
      compare_case(rt, &c, tol, label, (unsigned)(i * 3 + (size_t)form + 70));
    }
  }
}

static void sweep_reduce(mace_cl_runtime *rt, float tol, const char *prec) {
  static const char *types[] = {"MEAN", "MAX", "MIN", "SUM", "PROD", "SUM_SQUARE", "L1", "L2",
                                "LOG_SUM", "LOG_SUM_EXP"};
  static const int64_t axes[][3] = {{2, 3, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 2, 0}, {0, 0, 0}};
  static const int n_axes[] = {2, 1, 1, 2, 0};
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
    for (size_t a = 0; a < sizeof(n_axes) / sizeof(n_axes[0]); ++a) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Reduce";
      const int64_t x[4] = {2, 3, 5, 7};
      case_input(&c, 4, x, 0);
      if (strcmp(types[t], "PROD") == 0 || strcmp(types[t], "LOG_SUM") == 0) {
        c.lo[0] = 0.8f;  /* products that stay finite, sums that stay positive */
        c.hi[0] = 1.2f;
      }
      case_str(&c, "reduce_type", types[t]);
      if (n_axes[a]) case_ints(&c, "axis", n_axes[a], axes[a]);
      case_int(&c, "keepdims", (int64_t)(a & 1));
      char label[96];
      snprintf(label, sizeof(label), "Reduce %s %s axes #%zu keepdims %d", prec, types[t], a,
               (int)(a & 1));
      compare_case(rt, &c, tol, label, (unsigned)(t * 5 + a + 80));
    }
  }
}

static void sweep_layer_norm(mace_cl_runtime *rt, float tol, const char *prec) {
  /* x dims, axis, norm_dims, rms, per-element params, bias, outputs */
  static const struct {
    int64_t x[4];
    int axis, norm_dims, rms, per_elem, bias, n_out;
  } ln[] = {
      {{2, 3, 4, 16}, -1, 0, 0, 1, 1, 1}, {{2, 3, 4, 16}, 2, 0, 0, 1, 1, 3},
      {{2, 3, 4, 16}, -1, 0, 1, 1, 0, 1}, {{2, 6, 5, 7}, 1, 1, 0, 1, 1, 1},
      {{1, 5, 3, 9}, 1, 1, 1, 0, 1, 1},   {{3, 2, 8, 5}, -1, 0, 0, 0, 0, 2},
      /* contiguous rows (the row-parallel kernel): shorter than, equal to and longer than
       * its work-group, a row of one, and a transformer's 768 */
      {{1, 1, 3, 1}, -1, 0, 0, 1, 1, 3},  {{1, 2, 5, 256}, -1, 0, 0, 1, 1, 3},
      {{1, 1, 7, 300}, -1, 0, 1, 1, 1, 3}, {{1, 1, 6, 768}, -1, 0, 0, 1, 1, 1},
      {{1, 2, 3, 40}, 2, 0, 0, 1, 0, 3},
  };
  for (size_t i = 0; i < sizeof(ln) / sizeof(ln[0]); ++i) {
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "LayerNorm";
    case_input(&c, 4, ln[i].x, 0);
    const int a = ln[i].axis < 0 ? ln[i].axis + 4 : ln[i].axis;
    const int stop = ln[i].norm_dims ? a + ln[i].norm_dims : 4;
    int64_t len = 1;
    for (int d = a; d < stop; ++d) len *= ln[i].x[d];
    const int64_t p[1] = {ln[i].per_elem ? len : 1};
    case_input(&c, 1, p, 1);
    if (ln[i].bias) case_input(&c, 1, p, 1);
    case_int(&c, "axis", ln[i].axis);
    if (ln[i].norm_dims) case_int(&c, "norm_dims", ln[i].norm_dims);
    case_int(&c, "rms", ln[i].rms);
    case_float(&c, "epsilon", 1e-4f);
    c.n_out = ln[i].n_out;
    char label[96];
    snprintf(label, sizeof(label), "LayerNorm %s #%zu", prec, i);
    compare_case(rt, &c, tol, label, (unsigned)(i + 90));
  }
}

static void sweep_pad(mace_cl_runtime *rt, float tol, const char *prec) {
  static const int64_t pads[][8] = {{0, 0, 0, 0, 1, 2, 3, 1}, {0, 0, 1, 1, 2, 0, 0, 2},
                                    {0, 0, 0, 0, -1, 2, 1, -2}, {1, 0, 0, 2, 0, 0, 1, 1}};
  for (int mode = 0; mode <= 4; ++mode) {
    for (size_t i = 0; i < sizeof(pads) / sizeof(pads[0]); ++i) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "Pad";
      const int64_t x[4] = {2, 3, 4, 5};
      case_input(&c, 4, x, 0);
      case_ints(&c, "paddings", 8, pads[i]);
      case_int(&c, "pad_type", mode);
      if (mode == 0) case_float(&c, "constant_value", 0.75f);
      char label[64];
      snprintf(label, sizeof(label), "Pad %s mode %d #%zu", prec, mode, i);
      compare_case(rt, &c, tol, label, (unsigned)(mode * 5 + (int)i + 110));
    }
  }
}

static void sweep_resize(mace_cl_runtime *rt, float tol, const char *prec) {
  static const char *modes[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  static const char *nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  static const int64_t sizes[][4] = {{2, 3, 11, 7}, {2, 3, 3, 4}, {2, 3, 5, 5}};
  static const float scales[][4] = {{1.0f, 1.0f, 2.0f, 3.0f}, {1.0f, 1.0f, 0.5f, 0.75f}};
  for (int bil = 0; bil < 2; ++bil) {
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); ++m) {
      for (size_t z = 0; z < 5; ++z) {
        if (bil && m == 4) continue;  /* tf_half_pixel_for_nn is a nearest mode */
        op_case c;
        memset(&c, 0, sizeof(c));
        c.type = bil ? "ResizeBilinear" : "ResizeNearestNeighbor";
        const int64_t x[4] = {2, 3, 5, 5};
        case_input(&c, 4, x, 0);
        if (z < 3) case_ints(&c, "sizes", 4, sizes[z]);
        else case_floats(&c, "scales", 4, scales[z - 3]);
        case_str(&c, "coordinate_transformation_mode", modes[m]);
        if (!bil) case_str(&c, "nearest_mode", nearest[(m + z) % 4]);
        char label[128];
        snprintf(label, sizeof(label), "%s %s %s%s%s #%zu", c.type, prec, modes[m],
                 bil ? "" : " ", bil ? "" : nearest[(m + z) % 4], z);
        compare_case(rt, &c, tol, label, (unsigned)(m * 5 + z + 130));
      }
    }
  }
}

static void sweep_permute(mace_cl_runtime *rt, float tol, const char *prec) {
  for (int g = 1; g <= 4; g *= 2) {  /* ChannelShuffle of 8 channels, rank 4 and 3 */
    for (int rank = 3; rank <= 4; ++rank) {
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = "ChannelShuffle";
      const int64_t x[4] = {2, 8, 3, 5};
      case_input(&c, rank, x, 0);
      case_int(&c, "group", g);
      char label[64];
      snprintf(label, sizeof(label), "ChannelShuffle %s group %d rank %d", prec, g, rank);
      compare_case(rt, &c, tol, label, (unsigned)(g * 3 + rank + 170));
    }
  }
  for (int b = 2; b <= 3; ++b) {
    for (int mode = 0; mode < 3; ++mode) {  /* DepthToSpace DCR, CRD; SpaceToDepth */
      op_case c;
      memset(&c, 0, sizeof(c));
      c.type = mode == 2 ? "SpaceToDepth" : "DepthToSpace";
      const int64_t d2s[4] = {2, 3 * b * b, 4, 5}, s2d[4] = {2, 3, 4 * b, 5 * b};
      case_input(&c, 4, mode == 2 ? s2d : d2s, 0);
      case_int(&c, "block_size", b);
      if (mode < 2) case_str(&c, "mode", mode ? "CRD" : "DCR");
      char label[64];
      snprintf(label, sizeof(label), "%s %s b %d%s", c.type, prec, b,
               mode == 2 ? "" : (mode ? " CRD" : " DCR"));
      compare_case(rt, &c, tol, label, (unsigned)(b * 3 + mode + 180));
    }
  }
}

/* ------------------------------------------------------------------------------------------ */

static void test_runtime_errors(void) {
  mace_cl_config cfg = {.platform_index = -1, .device_index = -1,
                        .library = "/nonexistent/libOpenCL.so.1"};
  mace_cl_runtime *rt = NULL;
  mace_status st = mace_cl_runtime_create(&cfg, &rt);
  CHECK(st == MACE_UNSUPPORTED && rt == NULL, "bogus library: status %d", (int)st);
  CHECK(strstr(mace_last_error(), "OpenCL") && strstr(mace_last_error(), "/nonexistent/"),
        "bogus library: message \"%s\"", mace_last_error());
}

/* Needs a device: a device index past the last, fp16 transfers, programs, the binary cache. */
static void test_runtime_device(mace_cl_runtime *rt32) {
  mace_cl_config cfg = {.platform_index = 0, .device_index = 999};
  mace_cl_runtime *rt = NULL;
  mace_status st = mace_cl_runtime_create(&cfg, &rt);
  CHECK(st == MACE_UNSUPPORTED && strstr(mace_last_error(), "no OpenCL device"),
        "device 999: status %d, \"%s\"", (int)st, mace_last_error());

  mace_cl_kernel *k = NULL;
  st = mace_cl_get_kernel(rt32, "no_such_program", "k", "", &k);
  CHECK(st != MACE_OK && strstr(mace_last_error(), "no_such_program"), "missing program: \"%s\"",
        mace_last_error());
  st = mace_cl_get_kernel(rt32, "eltwise", "eltwise", "-cl-std=CL9.9", &k);
  CHECK(st == MACE_RUNTIME_ERROR && strstr(mace_last_error(), "failed to build"),
        "bad options: status %d \"%s\"", (int)st, mace_last_error());

  /* fp16 storage: values round to the nearest half both ways. */
  cfg = (mace_cl_config){.platform_index = -1, .device_index = -1, .precision = MACE_CL_FP16};
  st = mace_cl_runtime_create(&cfg, &rt);
  CHECK(st == MACE_OK, "fp16 runtime: %s", mace_last_error());
  if (st == MACE_OK) {
    enum { N = 1000 };
    float src[N], back[N], want[N];
    uint16_t h[N];
    unsigned seed = 5;
    for (int i = 0; i < N; ++i) src[i] = frand(&seed) * 1000.0f;
    src[0] = 70000.0f;  /* over the largest half: inf */
    src[1] = 1e-7f;     /* a subnormal half */
    mace_f32_to_f16__ref(src, h, 0, N);
    mace_f16_to_f32__ref(h, want, 0, N);
    void *mem = NULL;
    CHECK(mace_cl_runtime_elem_size(rt) == 2, "fp16 element size");
    st = mace_cl_alloc(rt, N * 2 + 8, &mem);
    if (st == MACE_OK) st = mace_cl_write(rt, mem, 8, src, N, 1);
    if (st == MACE_OK) st = mace_cl_read(rt, mem, 8, back, N, 1);
    CHECK(st == MACE_OK, "fp16 transfer: %s", mace_last_error());
    CHECK(memcmp(back, want, sizeof(back)) == 0, "fp16 round trip differs from the reference");
    CHECK(isinf(back[0]) && back[1] > 0.0f && back[1] < 1e-6f, "fp16 edges: %g %g",
          (double)back[0], (double)back[1]);
    mace_cl_free(rt, mem);
    mace_cl_runtime_destroy(rt);
  }

  /* The binary cache: written on build, read back, a corrupt file rebuilt (and rewritten). */
  char path[64];
  snprintf(path, sizeof(path), "/tmp/mace_test_clcache_%d.bin", (int)getpid());
  remove(path);
  /* A context of its own each round, so no program is found already built in a shared one. */
  cfg = (mace_cl_config){.platform_index = -1, .device_index = -1, .binary_cache = path,
                         .private_context = 1};
  for (int round = 0; round < 3; ++round) {
    if (round == 2) {
      FILE *f = fopen(path, "r+b");
      if (f) {
        fseek(f, 20, SEEK_SET);
        fputs("garbage garbage", f);
        fclose(f);
      }
    }
    st = mace_cl_runtime_create(&cfg, &rt);
    CHECK(st == MACE_OK, "cache round %d: %s", round, mace_last_error());
    if (st != MACE_OK) break;
    st = mace_cl_get_kernel(rt, "eltwise", "eltwise", "", &k);
    CHECK(st == MACE_OK, "cache round %d: get_kernel: %s", round, mace_last_error());
    mace_cl_runtime_destroy(rt);
    FILE *f = fopen(path, "rb");
    long size = 0;
    if (f) {
      fseek(f, 0, SEEK_END);
      size = ftell(f);
      fclose(f);
    }
    CHECK(size > 16, "cache round %d: file %s has %ld bytes", round, path, size);
  }
  remove(path);
  /* A program found built in the shared context (by a runtime with no cache) is still stored
   * in the cache of the runtime that finds it. */
  mace_cl_runtime *plain = NULL;
  mace_cl_registry_stats s0, s1;
  cfg = (mace_cl_config){.platform_index = -1, .device_index = -1};
  st = mace_cl_runtime_create(&cfg, &plain);
  if (st == MACE_OK) st = mace_cl_get_kernel(plain, "eltwise", "eltwise", "-DCACHE_TEST=1", &k);
  CHECK(st == MACE_OK, "runtime without a cache: %s", mace_last_error());
  cfg.binary_cache = path;
  mace_cl_registry_get_stats(&s0);
  if (st == MACE_OK) st = mace_cl_runtime_create(&cfg, &rt);
  if (st == MACE_OK) {
    st = mace_cl_get_kernel(rt, "eltwise", "eltwise", "-DCACHE_TEST=1", &k);
    mace_cl_runtime_destroy(rt);
  }
  mace_cl_registry_get_stats(&s1);
  CHECK(st == MACE_OK && s1.programs_built == s0.programs_built &&
            s1.programs_reused == s0.programs_reused + 1,
        "second runtime: %s; built %d, reused %d (want 0, 1)", mace_last_error(),
        s1.programs_built - s0.programs_built, s1.programs_reused - s0.programs_reused);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL, "the program found in the shared context is not in %s", path);
  if (f) fclose(f);
  mace_cl_runtime_destroy(plain);
  remove(path);
}

/* MACE_TUNING=1 tunes each launch and writes the parameter file; a later runtime reads it (a
 * damaged line is skipped); results stay right under tuned work sizes; profiling times them. */
static void test_tuning_and_profile(void) {
  char path[64];
  snprintf(path, sizeof(path), "/tmp/mace_test_cltune_%d.txt", (int)getpid());
  remove(path);
  op_case c;
  memset(&c, 0, sizeof(c));
  c.type = "Conv2D";
  /* Depthwise: the direct kernel, which the tuner tunes (GEMM launches fix their work group). */
  const int64_t x[4] = {1, 8, 13, 11}, w[4] = {8, 1, 3, 3};
  static const int64_t pads[4] = {1, 1, 1, 1};
  case_input(&c, 4, x, 0);
  case_input(&c, 4, w, 1);
  case_ints(&c, "padding_values", 4, pads);
  case_int(&c, "group", 8);
  for (int round = 0; round < 2; ++round) {
    if (round == 0) setenv("MACE_TUNING", "1", 1);
    mace_cl_config cfg = {.platform_index = -1, .device_index = -1, .tuning_file = path,
                          .profiling = 1};
    mace_cl_runtime *rt = NULL;
    mace_status st = mace_cl_runtime_create(&cfg, &rt);
    unsetenv("MACE_TUNING");
    CHECK(st == MACE_OK, "tuning round %d: %s", round, mace_last_error());
    if (st != MACE_OK) return;
    compare_case(rt, &c, 1e-4f, round ? "Conv2D with tuned work sizes" : "Conv2D while tuning",
                 7);
    CHECK(mace_cl_profile_ms(rt, "op") > 0.0, "profiling: no device time for tag 'op'");
    mace_cl_profile_reset(rt);
    CHECK(mace_cl_profile_ms(rt, "op") == 0.0, "profiling: reset left time");
    mace_cl_runtime_destroy(rt);
    FILE *f = fopen(path, "r");
    char line[512];
    int lines = 0, tuned = 0;
    while (f && fgets(line, sizeof(line), f)) {
      ++lines;
      tuned += strstr(line, "conv2d_direct") != NULL;
    }
    if (f) fclose(f);
    CHECK(tuned == 1, "tuning round %d: %d conv2d_direct lines in %d of %s", round, tuned, lines,
          path);
    f = fopen(path, "a");
    if (f && round == 0) fputs("this line is not a tuned launch\n", f);
    if (f) fclose(f);
  }
  remove(path);
}

/* A MACE_CL_GEMM the GEMM kinds do not know fails the op's infer, naming it. */
static void test_gemm_mode_error(mace_cl_runtime *rt) {
  op_case c;
  memset(&c, 0, sizeof(c));
  c.type = "MatMul";
  const int64_t a[2] = {4, 5}, b[2] = {5, 3};
  case_input(&c, 2, a, 0);
  case_input(&c, 2, b, 0);
  float *in[MAX_IN] = {0}, *out[MAX_OUT];
  int64_t od[MAX_OUT][MACE_MAX_DIMS];
  int ond[MAX_OUT];
  for (int k = 0; k < c.n_in; ++k) in[k] = calloc((size_t)numel(c.nd[k], c.dims[k]), 4);
  setenv("MACE_CL_GEMM", "48", 1);
  const mace_status st = run_op(&c, MACE_DEVICE_GPU, rt, in, out, od, ond);
  unsetenv("MACE_CL_GEMM");
  CHECK(st == MACE_INVALID_ARGS && strstr(mace_last_error(), "MACE_CL_GEMM='48'"),
        "MACE_CL_GEMM=48: status %d, %s", (int)st, mace_last_error());
  for (int k = 0; k < c.n_in; ++k) free(in[k]);
  for (int o = 0; o < MAX_OUT; ++o) free(out[o]);
}

int main(void) {
  test_runtime_errors();
  mace_cl_runtime *rt = NULL, *rt16 = NULL;
  mace_cl_config cfg = {.platform_index = -1, .device_index = -1, .precision = MACE_CL_FP32};
  mace_status st = mace_cl_runtime_create(&cfg, &rt);
  if (st != MACE_OK) {
    const char *req = getenv("MACE_REQUIRE_OPENCL");
    if (req && *req) {
      FAIL("MACE_REQUIRE_OPENCL is set but no OpenCL runtime: %s", mace_last_error());
      return TEST_FINISH("OpenCL required");
    }
    printf("test_opencl_ops: skipped, no OpenCL device: %s\n", mace_last_error());
    return TEST_FINISH("skipped (no OpenCL)");
  }
  printf("device: %s (%s, %s)\n", mace_cl_runtime_device(rt)->name,
         mace_cl_runtime_device(rt)->platform, mace_cl_runtime_device(rt)->version);
  test_runtime_device(rt);
  test_tuning_and_profile();
  cfg.precision = MACE_CL_FP16;
  st = mace_cl_runtime_create(&cfg, &rt16);
  CHECK(st == MACE_OK, "fp16 runtime: %s", mace_last_error());
  const char *only = getenv("MACE_TEST_OPS");  /* e.g. "Conv2D": one sweep while debugging */
  struct {
    const char *name;
    void (*fn)(mace_cl_runtime *, float, const char *);
  } sweeps[] = {{"Conv2D", sweep_conv2d}, {"Eltwise", sweep_eltwise},
                {"Activation", sweep_activation}, {"Pooling", sweep_pooling},
                {"Softmax", sweep_softmax}, {"FullyConnected MatMul", sweep_dense},
                {"Concat Split Slice StridedSlice Transpose", sweep_layout}, {"BatchNorm BiasAdd", sweep_channel},
                {"Reduce", sweep_reduce}, {"LayerNorm", sweep_layer_norm},
                {"Pad", sweep_pad}, {"Resize", sweep_resize},
                {"ChannelShuffle DepthToSpace SpaceToDepth", sweep_permute}};
  /* The GEMM kinds (Conv2D, FullyConnected, MatMul) again under each fixed variant of
   * MACE_CL_GEMM: every tile size, split K (the automatic choice depends on the device; the
   * GEMV kernel of few-row FullyConnected and MatMul cases runs in the automatic pass only). */
  static const char *gemm_modes[] = {"64", "32", "16", "32:3", "64:2", "16:2"};
  for (size_t i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); ++i) {
    if (only && !strstr(sweeps[i].name, only)) continue;
    const int gemm = strstr(sweeps[i].name, "Conv2D") || strstr(sweeps[i].name, "MatMul");
    const int n_modes = (int)(sizeof(gemm_modes) / sizeof(gemm_modes[0]));
    for (int mode = -1; mode < (gemm ? n_modes : 0); ++mode) {
      char prec[2][32];
      snprintf(prec[0], sizeof(prec[0]), "fp32%s%s", mode >= 0 ? " gemm " : "",
               mode >= 0 ? gemm_modes[mode] : "");
      snprintf(prec[1], sizeof(prec[1]), "fp16%s%s", mode >= 0 ? " gemm " : "",
               mode >= 0 ? gemm_modes[mode] : "");
      if (mode >= 0) setenv("MACE_CL_GEMM", gemm_modes[mode], 1);
      const int before = n_case_failures, cases = n_cases;
      sweeps[i].fn(rt, 1e-4f, prec[0]);
      if (rt16) sweeps[i].fn(rt16, 1e-2f, prec[1]);
      unsetenv("MACE_CL_GEMM");
      printf("%-12s %-10s %3d cases, %d failed\n", sweeps[i].name,
             mode >= 0 ? gemm_modes[mode] : "", n_cases - cases, n_case_failures - before);
    }
  }
  test_gemm_mode_error(rt);
  mace_cl_runtime_destroy(rt16);
  mace_cl_runtime_destroy(rt);
  return TEST_FINISH("%d op cases on the GPU against the CPU", n_cases);
}
