/* GPU kinds added after test_opencl_ops.c (LocalResponseNorm, GroupNorm, Tile, Expand,
 * BatchToSpaceND, SpaceToBatchND, RotaryEmbedding, ResizeBicubic) against the CPU kinds of the
 * same types (the oracle) over shape sweeps, in fp32 (1e-4 of the output's largest magnitude)
 * and fp16 storage (1e-2).
 * Without an OpenCL device it prints why and passes, unless MACE_REQUIRE_OPENCL is set. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "cl_op_case.h"

static void sweep_lrn(mace_cl_runtime *rt, float tol, const char *prec) {
  /* rank, dims, size */
  static const int64_t shapes[][6] = {{4, 1, 7, 5, 3, 5}, {4, 2, 16, 4, 5, 3}, {3, 1, 3, 11, 0, 1},
                                      {4, 1, 5, 1, 1, 8}, {2, 3, 9, 0, 0, 4}, {4, 1, 6, 3, 2, 2}};
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "LocalResponseNorm";
    case_input(&c, (int)s[0], s + 1, 0);
    case_int(&c, "size", s[5]);
    case_float(&c, "alpha", si % 2 ? 1e-4f : 0.3f);
    case_float(&c, "beta", si % 3 ? 0.75f : 0.5f);
    case_float(&c, "bias", si % 2 ? 1.0f : 2.0f);
    c.lo[0] = -3.0f;
    c.hi[0] = 3.0f;
    char label[96];
    snprintf(label, sizeof(label), "LocalResponseNorm %s shape %zu size %lld", prec, si,
             (long long)s[5]);
    compare_case(rt, &c, tol, label, (unsigned)si);
  }
}

static void sweep_group_norm(mace_cl_runtime *rt, float tol, const char *prec) {
  /* rank, n, c, h, w, groups (0: instance), per_group */
  static const int64_t shapes[][7] = {{4, 2, 6, 5, 7, 0, 0},  {4, 1, 8, 9, 3, 2, 0},
                                      {4, 1, 8, 9, 3, 4, 1},  {3, 2, 12, 33, 0, 3, 0},
                                      {4, 1, 4, 1, 1, 1, 0},  {4, 1, 32, 16, 17, 8, 0},
                                      {2, 3, 5, 0, 0, 5, 1}};
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "GroupNorm";
    const int64_t groups = s[5] ? s[5] : s[2];
    const int64_t sb[1] = {s[6] ? groups : s[2]};
    case_input(&c, (int)s[0], s + 1, 0);
    case_input(&c, 1, sb, 1);
    case_input(&c, 1, sb, 1);
    case_int(&c, "groups", s[5]);
    case_int(&c, "per_group", s[6]);
    case_float(&c, "epsilon", 1e-5f);
    c.lo[0] = -2.0f;
    c.hi[0] = 4.0f;  /* a mean away from 0 */
    char label[96];
    snprintf(label, sizeof(label), "GroupNorm %s shape %zu groups %lld%s", prec, si,
             (long long)s[5], s[6] ? " per_group" : "");
    compare_case(rt, &c, tol, label, (unsigned)si);
  }
}

static void sweep_tile_expand(mace_cl_runtime *rt, float tol, const char *prec) {
  /* Tile: input rank and dims, repeats */
  static const int64_t tiles[][9] = {{2, 3, 5, 0, 0, 2, 3, 0, 0}, {3, 2, 1, 4, 0, 1, 3, 2, 0},
                                     {4, 1, 3, 2, 5, 2, 1, 3, 1}, {1, 7, 0, 0, 0, 0, 0, 0, 0},
                                     {4, 2, 1, 3, 1, 1, 4, 1, 5}};
  static int64_t reps[5][4];
  for (size_t si = 0; si < sizeof(tiles) / sizeof(tiles[0]); ++si) {
    const int64_t *s = tiles[si];
    const int nd = (int)s[0];
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "Tile";
    case_input(&c, nd, s + 1, 0);
    memcpy(reps[si], s + 5, sizeof(reps[si]));
    if (si == 3) reps[si][0] = 3;
    case_ints(&c, "repeats", nd, reps[si]);
    char label[64];
    snprintf(label, sizeof(label), "Tile %s shape %zu", prec, si);
    compare_case(rt, &c, tol, label, (unsigned)si);
  }
  /* Expand: input rank and dims, target rank and shape */
  static const int64_t expands[][10] = {{2, 3, 1, 0, 0, 3, 2, 3, 5, 0},
                                        {4, 1, 3, 1, 5, 4, 2, 3, 4, 5},
                                        {1, 1, 0, 0, 0, 4, 2, 3, 1, 6},
                                        {3, 4, 1, 6, 0, 2, 1, 1, 0, 0},
                                        {2, 1, 7, 0, 0, 4, 1, 1, 4, 1}};
  static int64_t shapes[5][4];
  for (size_t si = 0; si < sizeof(expands) / sizeof(expands[0]); ++si) {
    const int64_t *s = expands[si];
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "Expand";
    case_input(&c, (int)s[0], s + 1, 0);
    memcpy(shapes[si], s + 6, sizeof(shapes[si]));
    case_ints(&c, "shape", (int)s[5], shapes[si]);
    char label[64];
    snprintf(label, sizeof(label), "Expand %s shape %zu", prec, si);
    compare_case(rt, &c, tol, label, (unsigned)si + 10);
  }
}

static void sweep_space_batch(mace_cl_runtime *rt, float tol, const char *prec) {
  /* n, c, h, w (of the image side), bh, bw, top, bottom, left, right */
  static const int64_t shapes[][10] = {
      {1, 3, 4, 6, 2, 2, 0, 0, 0, 0}, {2, 2, 5, 7, 2, 3, 1, 0, 2, 0},
      {1, 4, 6, 6, 3, 3, 0, 0, 0, 0}, {3, 1, 3, 5, 1, 2, 1, 2, 0, 1},
      {1, 2, 7, 3, 4, 1, 0, 1, 0, 0}};
  static int64_t args[5][2][4];
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    const int64_t bh = s[4], bw = s[5];
    args[si][0][0] = bh;
    args[si][0][1] = bw;
    memcpy(args[si][1], s + 6, 4 * sizeof(int64_t));
    /* SpaceToBatch: pads grown so the padded sizes are multiples of the block */
    const int64_t ph = s[2] + s[6] + s[7], pw = s[3] + s[8] + s[9];
    args[si][1][1] += (bh - ph % bh) % bh;
    args[si][1][3] += (bw - pw % bw) % bw;
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "SpaceToBatchND";
    case_input(&c, 4, s, 0);
    case_ints(&c, "block_shape", 2, args[si][0]);
    case_ints(&c, "paddings", 4, args[si][1]);
    char label[64];
    snprintf(label, sizeof(label), "SpaceToBatchND %s shape %zu", prec, si);
    compare_case(rt, &c, tol, label, (unsigned)si);
    /* BatchToSpace of a batch of N * bh * bw images of h x w, cropped as padded above */
    memset(&c, 0, sizeof(c));
    c.type = "BatchToSpaceND";
    const int64_t xb[4] = {s[0] * bh * bw, s[1], s[2], s[3]};
    case_input(&c, 4, xb, 0);
    case_ints(&c, "block_shape", 2, args[si][0]);
    case_ints(&c, "crops", 4, args[si][1]);
    snprintf(label, sizeof(label), "BatchToSpaceND %s shape %zu", prec, si);
    compare_case(rt, &c, tol, label, (unsigned)si + 7);
  }
}

static void sweep_rotary(mace_cl_runtime *rt, float tol, const char *prec) {
  /* B, Hn, L, D, rank, rdim (0: D), interleaved, caches shared by the batch ([1, L, R/2]) */
  static const int64_t shapes[][8] = {{2, 3, 4, 8, 4, 0, 0, 0}, {2, 3, 4, 8, 4, 4, 1, 0},
                                      {3, 2, 5, 6, 3, 0, 1, 0}, {3, 2, 5, 10, 3, 6, 0, 1},
                                      {2, 4, 7, 16, 4, 0, 0, 1}, {1, 1, 1, 2, 4, 0, 1, 0}};
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    const int64_t rdim = s[5] ? s[5] : s[3];
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "RotaryEmbedding";
    const int64_t x4[4] = {s[0], s[1], s[2], s[3]}, x3[3] = {s[0], s[2], s[1] * s[3]};
    const int64_t cache[3] = {s[7] ? 1 : s[0], s[2], rdim / 2};
    if (s[4] == 4) case_input(&c, 4, x4, 0);
    else case_input(&c, 3, x3, 0);
    case_input(&c, 3, cache, 1);
    case_input(&c, 3, cache, 1);
    case_int(&c, "interleaved", s[6]);
    if (s[5]) case_int(&c, "rotary_embedding_dim", s[5]);
    if (s[4] == 3) case_int(&c, "num_heads", s[1]);
    char label[80];
    snprintf(label, sizeof(label), "RotaryEmbedding %s shape %zu", prec, si);
    compare_case(rt, &c, tol, label, (unsigned)si);
  }
}

static void sweep_bicubic(mace_cl_runtime *rt, float tol, const char *prec) {
  /* n, c, h, w -> oh, ow; coordinate mode; exclude_outside; cubic_coeff_a */
  static const int64_t shapes[][6] = {{1, 2, 5, 7, 9, 13}, {2, 1, 8, 6, 4, 3}, {1, 3, 4, 4, 11, 5},
                                      {1, 1, 1, 5, 3, 9}, {1, 2, 6, 6, 6, 12}};
  static const char *modes[] = {"half_pixel", "align_corners", "asymmetric",
                                "pytorch_half_pixel", "half_pixel"};
  static int64_t sizes[5][4];
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const int64_t *s = shapes[si];
    op_case c;
    memset(&c, 0, sizeof(c));
    c.type = "ResizeBicubic";
    case_input(&c, 4, s, 0);
    sizes[si][0] = s[0];
    sizes[si][1] = s[1];
    sizes[si][2] = s[4];
    sizes[si][3] = s[5];
    case_ints(&c, "sizes", 4, sizes[si]);
    case_str(&c, "coordinate_transformation_mode", modes[si]);
    case_int(&c, "exclude_outside", si % 2);
    case_float(&c, "cubic_coeff_a", si == 4 ? -0.5f : -0.75f);
    char label[80];
    snprintf(label, sizeof(label), "ResizeBicubic %s shape %zu %s", prec, si, modes[si]);
    compare_case(rt, &c, tol, label, (unsigned)si);
  }
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
    printf("test_opencl_ops_extra: skipped, no OpenCL device: %s\n", mace_last_error());
    return TEST_FINISH("skipped (no OpenCL)");
  }
  cfg.precision = MACE_CL_FP16;
  st = mace_cl_runtime_create(&cfg, &rt16);
  CHECK(st == MACE_OK, "fp16 runtime: %s", mace_last_error());
  struct {
    const char *name;
    void (*fn)(mace_cl_runtime *, float, const char *);
  } sweeps[] = {{"LocalResponseNorm", sweep_lrn}, {"GroupNorm", sweep_group_norm},
                {"Tile Expand", sweep_tile_expand},
                {"SpaceToBatchND BatchToSpaceND", sweep_space_batch},
                {"RotaryEmbedding", sweep_rotary}, {"ResizeBicubic", sweep_bicubic}};
  for (size_t i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); ++i) {
    const int before = n_case_failures, cases = n_cases;
    sweeps[i].fn(rt, 1e-4f, "fp32");
    if (rt16) sweeps[i].fn(rt16, 1e-2f, "fp16");
    printf("%-30s %3d cases, %d failed\n", sweeps[i].name, n_cases - cases,
           n_case_failures - before);
  }
  mace_cl_runtime_destroy(rt16);
  mace_cl_runtime_destroy(rt);
  return TEST_FINISH("%d op cases on the GPU against the CPU", n_cases);
}
