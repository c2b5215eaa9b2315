/* The GPU Deconv2D and DepthwiseDeconv2d kinds against the CPU kinds (the oracle) over a shape
 * sweep: odd sizes, strides 1-3, dilations, explicit and asymmetric pads, SAME_UPPER,
 * SAME_LOWER, VALID, output_shape, output_padding, groups, depthwise with multipliers, bias and
 * fused activations; each case through both GPU paths (MACE_CL_DECONV=direct and gemm) and the
 * automatic choice, the GEMM path also under fixed GEMM variants (MACE_CL_GEMM), in fp32 (1e-4
 * of the output's largest magnitude) and fp16 storage (1e-2). Also the errors: a bad
 * MACE_CL_DECONV, and the CPU kind's checks reaching the GPU kind. Without an OpenCL device it
 * prints why and passes, unless MACE_REQUIRE_OPENCL is set. */
#define _POSIX_C_SOURCE 200809L  /* setenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "cl_op_case.h"

static const char *kActs[] = {"NOOP", "RELU", "RELUX", "LEAKYRELU", "SIGMOID", "TANH",
                              "HARDSWISH"};

/* n, c, h, w, oc, kh, kw, stride h/w, dilation h/w, pads t/l/b/r, output_padding h/w, group */
#define NS 18
static const int64_t kShapes[][NS] = {
    {1, 3, 5, 7, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 8, 6, 5, 6, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 1},      /* U-Net's 4x4 stride 2 */
    {1, 16, 7, 9, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 1},     /* 2x2 stride 2 */
    {1, 6, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 6},      /* depthwise */
    {1, 8, 7, 6, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 8},     /* depthwise, multiplier 2 */
    {1, 12, 5, 6, 9, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 2, 2, 3},     /* groups, stride 3 */
    {1, 16, 6, 7, 12, 3, 3, 2, 1, 2, 2, 2, 1, 1, 2, 1, 0, 2},    /* dilation, asymmetric */
    {2, 24, 9, 8, 20, 5, 3, 1, 2, 1, 1, 2, 1, 0, 0, 0, 1, 4},
    {1, 40, 4, 5, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1},    /* past one GEMM tile */
    {1, 1, 8, 9, 3, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 1},      /* one input channel */
    {1, 64, 3, 3, 32, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 1},    /* K = 64 */
    {1, 5, 1, 1, 7, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1},      /* a 1x1 input */
    {1, 9, 11, 13, 5, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1},    /* 1x1 window, stride 2 */
    {1, 10, 6, 4, 10, 2, 3, 3, 2, 3, 2, 0, 2, 1, 0, 2, 1, 5},    /* dilation 3, 2 in a group */
    {1, 300, 2, 3, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 1},    /* K deep enough to split */
};

/* Variants: 0 EXPLICIT, 1 + bias, 2 SAME_UPPER + bias, 3 SAME_LOWER, 4 output_shape (one
 * row short of the full extent, one column past it) + bias, 5 VALID. */
#define N_VARIANTS 6

/* The full extent of one axis (ONNX ConvTranspose). */
static int64_t full_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t op) {
  return s * (in - 1) + op + d * (k - 1) + 1;
}

/* Fills c with shape si, variant v; args point at the static arrays given. */
static void make_case(op_case *c, const char *type, const int64_t *s, int v, const char *act,
                      int64_t ints[5][4]) {
  memset(c, 0, sizeof(*c));
  c->type = type;
  const int64_t x[4] = {s[0], s[1], s[2], s[3]}, w[4] = {s[1], s[4] / s[17], s[5], s[6]};
  const int64_t b[1] = {s[4]};
  case_input(c, 4, x, 0);
  case_input(c, 4, w, 1);
  if (v == 1 || v == 2 || v == 4) case_input(c, 1, b, 1);
  memcpy(ints[0], (int64_t[4]){s[7], s[8], 0, 0}, sizeof(ints[0]));
  memcpy(ints[1], (int64_t[4]){s[9], s[10], 0, 0}, sizeof(ints[1]));
  memcpy(ints[2], (int64_t[4]){s[11], s[12], s[13], s[14]}, sizeof(ints[2]));
  memcpy(ints[3], (int64_t[4]){s[15], s[16], 0, 0}, sizeof(ints[3]));
  case_ints(c, "strides", 2, ints[0]);
  case_ints(c, "dilations", 2, ints[1]);
  case_ints(c, "output_padding", 2, ints[3]);
  if (v <= 1) case_ints(c, "padding_values", 4, ints[2]);
  if (v == 2) case_str(c, "padding", "SAME_UPPER");
  if (v == 3) case_str(c, "padding", "SAME_LOWER");
  if (v == 5) case_str(c, "padding", "VALID");
  if (v == 4) {
    ints[4][0] = full_extent(s[2], s[5], s[7], s[9], s[15]) - 1;
    ints[4][1] = full_extent(s[3], s[6], s[8], s[10], s[16]) + 1;
    case_ints(c, "output_shape", 2, ints[4]);
  }
  case_int(c, "group", s[17]);
  case_str(c, "activation", act);
  if (strcmp(act, "LEAKYRELU") == 0) case_float(c, "activation_coefficient", 0.1f);
  if (strcmp(act, "RELUX") == 0) case_float(c, "max_limit", 0.5f);
}

static void sweep(mace_cl_runtime *rt, float tol, const char *prec, const char *path,
                  int variants) {
  const size_t n_shapes = sizeof(kShapes) / sizeof(kShapes[0]);
  for (size_t si = 0; si < n_shapes; ++si) {
    const int64_t *s = kShapes[si];
    for (int v = 0; v < variants; ++v) {
      const char *act = kActs[(si + (size_t)v) % (sizeof(kActs) / sizeof(kActs[0]))];
      /* DepthwiseDeconv2d where the group is the input channels, else Deconv2D. */
      for (int dw = 0; dw < (s[17] == s[1] ? 2 : 1); ++dw) {
        op_case c;
        int64_t ints[5][4];
        make_case(&c, dw ? "DepthwiseDeconv2d" : "Deconv2D", s, v, act, ints);
        char label[200];
        snprintf(label, sizeof(label), "%s %s %s x[%lld,%lld,%lld,%lld] oc %lld k %lldx%lld "
                 "s %lldx%lld d %lldx%lld g %lld variant %d %s", c.type, prec, path,
                 (long long)s[0], (long long)s[1], (long long)s[2], (long long)s[3],
                 (long long)s[4], (long long)s[5], (long long)s[6], (long long)s[7],
                 (long long)s[8], (long long)s[9], (long long)s[10], (long long)s[17], v, act);
        compare_case(rt, &c, tol, label, (unsigned)(si * 37 + (size_t)v));
      }
    }
  }
}

/* One op through the GPU kind's init and infer: its status. */
static mace_status gpu_infer_status(mace_cl_runtime *rt, const op_case *c) {
  float *in[MAX_IN] = {0}, *out[MAX_OUT] = {0};
  int64_t od[MAX_OUT][MACE_MAX_DIMS];
  int ond[MAX_OUT];
  for (int k = 0; k < c->n_in; ++k)
    in[k] = calloc((size_t)numel(c->nd[k], c->dims[k]), sizeof(float));
  const mace_status st = run_op(c, MACE_DEVICE_GPU, rt, in, out, od, ond);
  for (int k = 0; k < c->n_in; ++k) free(in[k]);
  for (int o = 0; o < MAX_OUT; ++o) free(out[o]);
  return st;
}

static void test_errors(mace_cl_runtime *rt) {
  op_case c;
  int64_t ints[5][4];
  make_case(&c, "Deconv2D", kShapes[0], 1, "RELU", ints);
  setenv("MACE_CL_DECONV", "fast", 1);
  mace_status st = gpu_infer_status(rt, &c);
  CHECK(st == MACE_INVALID_ARGS && strstr(mace_last_error(), "MACE_CL_DECONV='fast'"),
        "a bad MACE_CL_DECONV: status %d, %s", st, mace_last_error());
  unsetenv("MACE_CL_DECONV");
  /* output_padding not below the stride: the CPU kind's error, from the GPU kind. */
  ints[3][0] = 2;
  st = gpu_infer_status(rt, &c);
  CHECK(st == MACE_INVALID_MODEL && strstr(mace_last_error(), "output_padding"),
        "output_padding 2 with stride 2: status %d, %s", st, mace_last_error());
  /* DepthwiseDeconv2d whose group is not the input channels. */
  make_case(&c, "DepthwiseDeconv2d", kShapes[0], 0, "NOOP", ints);
  st = gpu_infer_status(rt, &c);
  CHECK(st == MACE_INVALID_MODEL && strstr(mace_last_error(), "group"),
        "DepthwiseDeconv2d with group 1 of 3 channels: status %d, %s", st, mace_last_error());
}

int main(void) {
  mace_cl_runtime *rt = NULL, *rt16 = NULL;
  mace_cl_config cfg = {.platform_index = -1, .device_index = -1, .precision = MACE_CL_FP32};
  mace_status st = mace_cl_runtime_create(&cfg, &rt);
  if (st != MACE_OK) {
    const char *req = getenv("MACE_REQUIRE_OPENCL");
    if (req && *req) {
      FAIL("MACE_REQUIRE_OPENCL is set but no OpenCL runtime: %s", mace_last_error());
      return TEST_FINISH("OpenCL required");
    }
    printf("test_opencl_deconv: skipped, no OpenCL device: %s\n", mace_last_error());
    return TEST_FINISH("skipped (no OpenCL)");
  }
  printf("device: %s (%s)\n", mace_cl_runtime_device(rt)->name,
         mace_cl_runtime_device(rt)->platform);
  cfg.precision = MACE_CL_FP16;
  st = mace_cl_runtime_create(&cfg, &rt16);
  CHECK(st == MACE_OK, "fp16 runtime: %s", mace_last_error());
  /* path, MACE_CL_GEMM, variants swept */
  static const struct {
    const char *path, *gemm;
    int variants;
  } kModes[] = {{"auto", NULL, N_VARIANTS}, {"direct", NULL, N_VARIANTS},
                {"gemm", NULL, N_VARIANTS}, {"gemm", "64", 2}, {"gemm", "32:3", 2},
                {"gemm", "16:2", 2}};
  for (size_t m = 0; m < sizeof(kModes) / sizeof(kModes[0]); ++m) {
    setenv("MACE_CL_DECONV", kModes[m].path, 1);
    if (kModes[m].gemm) setenv("MACE_CL_GEMM", kModes[m].gemm, 1);
    char prec[2][48];
    snprintf(prec[0], sizeof(prec[0]), "fp32%s%s", kModes[m].gemm ? " gemm " : "",
             kModes[m].gemm ? kModes[m].gemm : "");
    snprintf(prec[1], sizeof(prec[1]), "fp16%s%s", kModes[m].gemm ? " gemm " : "",
             kModes[m].gemm ? kModes[m].gemm : "");
    const int before = n_case_failures, cases = n_cases;
    sweep(rt, 1e-4f, prec[0], kModes[m].path, kModes[m].variants);
    if (rt16) sweep(rt16, 1e-2f, prec[1], kModes[m].path, kModes[m].variants);
    unsetenv("MACE_CL_GEMM");
    unsetenv("MACE_CL_DECONV");
    printf("Deconv2D %-6s %-5s %3d cases, %d failed\n", kModes[m].path,
           kModes[m].gemm ? kModes[m].gemm : "", n_cases - cases, n_case_failures - before);
  }
  test_errors(rt);
  mace_cl_runtime_destroy(rt16);
  mace_cl_runtime_destroy(rt);
  return TEST_FINISH("%d deconvolution cases on the GPU against the CPU", n_cases);
}
