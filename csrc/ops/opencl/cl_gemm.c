/* The tiled GEMM launch of the GPU Conv2D, FullyConnected and MatMul kinds: the variant and
 * split-K choice, the split-K scratch, the kernel arguments (kernels/opencl/gemm.cl). */
#include "ops/opencl/cl_gemm.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_TK 16
#define GEMM_MIN_SPLIT_K 128  /* K a split handles at least */
#define GEMM_MAX_SPLITS 32
#define GEMV_TILE 1           /* mace_cl_gemm.tile of the GEMV kernel (gemm.cl, gemv) */
#define GEMV_MAX_M 4          /* rows the GEMV kernel takes at most */
#define GEMV_WG 64            /* its work group (GV_WG) and outputs a group (GV_N) */
#define GEMV_N 4

/* The variants (gemm.cl's build-time TM x TN tile, RM x RN a work item, a work group of
 * (TN / RN, TM / RM), a multiple of 32 items), named by MACE_CL_GEMM's values: 64 for large
 * products, 32 for small ones, 16 for skinny ones (M <= 16: GEMV-shaped FullyConnected). */
typedef struct gemm_variant {
  int name, tm, tn, rm, rn;
  const char *options;
} gemm_variant;
static const gemm_variant kVariants[] = {
    {64, 64, 64, 4, 4, "-DTM=64 -DTN=64 -DTK=16 -DRM=4 -DRN=4"},
    {32, 32, 32, 4, 2, "-DTM=32 -DTN=32 -DTK=16 -DRM=4 -DRN=2"},
    {16, 16, 64, 2, 2, "-DTM=16 -DTN=64 -DTK=16 -DRM=2 -DRN=2"},
};

static const gemm_variant *variant(int name) {
  for (size_t i = 0; i < sizeof(kVariants) / sizeof(kVariants[0]); ++i)
    if (kVariants[i].name == name) return &kVariants[i];
  return &kVariants[1];
}
static void variant_lws(const gemm_variant *v, size_t lws[3]) {
  lws[0] = (size_t)(v->tn / v->rn);
  lws[1] = (size_t)(v->tm / v->rm);
  lws[2] = 1;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static mace_status parse_force(const char *force, int *tile, int *splits) {
  *tile = 0;
  *splits = 0;
  if (!force || !*force || strcmp(force, "auto") == 0) return MACE_OK;
  char *end = NULL;
  const long t = strtol(force, &end, 10);
  long s = 1;
  if (end && *end == ':') s = strtol(end + 1, &end, 10);
  if ((t != 64 && t != 32 && t != 16) || !end || *end || s < 1 || s > 64)
    return mace_error(MACE_INVALID_ARGS, "MACE_CL_GEMM='%s': expected auto, or 64, 32 or 16 "
                      "with an optional :SPLITS (1 to 64)", force);
  *tile = (int)t;
  *splits = (int)s;
  return MACE_OK;
}

/* Skinny tiles for M <= 16; large tiles when both sides exceed a small tile and the large
 * tiles alone give every compute unit a work group; else small tiles. With skinny or small
 * tiles that still leave compute units idle, K is split so about two work groups a compute
 * unit run (each split at least GEMM_MIN_SPLIT_K deep). */
mace_status mace_cl_gemm_choose(int64_t m, int64_t n, int64_t k, int64_t batch,
                                int compute_units, const char *force, int *tile, int *splits) {
  MACE_RETURN_IF_ERROR(parse_force(force, tile, splits));
  if (*tile) return MACE_OK;
  const int64_t cu = compute_units > 0 ? compute_units : 1;
  *splits = 1;
  if (m > 32 && n > 32 && ceil_div(m, 64) * ceil_div(n, 64) * batch >= cu) {
    *tile = 64;
    return MACE_OK;
  }
  *tile = m <= 16 ? 16 : 32;
  const gemm_variant *v = variant(*tile);
  const int64_t tiles = ceil_div(m, v->tm) * ceil_div(n, v->tn) * batch;
  if (tiles > 0 && tiles < cu) {
    int64_t s = ceil_div(2 * cu, tiles);
    if (s > k / GEMM_MIN_SPLIT_K) s = k / GEMM_MIN_SPLIT_K;
    if (s > GEMM_MAX_SPLITS) s = GEMM_MAX_SPLITS;
    *splits = s > 1 ? (int)s : 1;
  }
  return MACE_OK;
}

/* (Re)allocates *mem to hold `bytes` and uploads them. */
static mace_status upload(mace_op *op, void **mem, size_t *cap, const void *data, size_t bytes) {
  if (*cap < bytes) {
    mace_cl_free(op->cl, *mem);
    *mem = NULL;
    *cap = 0;
    MACE_RETURN_IF_ERROR(mace_cl_alloc(op->cl, bytes, mem));
    *cap = bytes;
  }
  return mace_cl_write(op->cl, *mem, 0, data, bytes, 0);
}

/* The implicit GEMM's table (gemm.cl, gemm_conv): per k = (ic * k_h + ky) * k_w + kx, the
 * input offset (ic * in_h + ky * dil_h) * in_w + kx * dil_w and (ky * dil_h) << 16 |
 * kx * dil_w, so that no work item divides by the window's sizes. */
static mace_status upload_ktab(mace_op *op, mace_cl_gemm *g) {
  const int64_t khw = g->k_h * g->k_w, n = g->k > 0 ? g->k : 1;
  if ((g->k_h - 1) * g->dil_h >= 32768 || (g->k_w - 1) * g->dil_w >= 65536)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): a window %lld x %lld with dilations "
                      "%lld x %lld is too wide for the GEMM kernel", op->name, op->type,
                      (long long)g->k_h, (long long)g->k_w, (long long)g->dil_h,
                      (long long)g->dil_w);
  int32_t *t = malloc((size_t)n * 2 * sizeof(int32_t));
  if (!t) return mace_error(MACE_OUT_OF_RESOURCES, "op '%s': no memory", op->name);
  for (int64_t k = 0; k < g->k; ++k) {
    const int64_t ic = k / khw, r = k % khw, dy = r / g->k_w * g->dil_h,
                  dx = r % g->k_w * g->dil_w;
    t[2 * k] = (int32_t)((ic * g->in_h + dy) * g->in_w + dx);
    t[2 * k + 1] = (int32_t)(dy << 16 | dx);
  }
  if (g->k <= 0) t[0] = t[1] = 0;
  const mace_status st = upload(op, &g->ktab, &g->ktab_bytes, t, (size_t)n * 2 * sizeof(int32_t));
  free(t);
  return st;
}

static const char *kernel_name(const mace_cl_gemm *g) { return g->conv ? "gemm_conv" : "gemm"; }

mace_status mace_cl_gemm_prepare(mace_op *op, mace_cl_gemm *g) {
  if (!op->cl)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): no OpenCL runtime at infer", op->name,
                      op->type);
  int64_t batch = 1;
  for (int i = 0; i < 4; ++i) batch *= g->zdims[i];
  int tile, splits;
  const char *force = getenv("MACE_CL_GEMM");
  MACE_RETURN_IF_ERROR(mace_cl_gemm_choose(g->m, g->n, g->k, batch,
                                           mace_cl_runtime_device(op->cl)->compute_units, force,
                                           &tile, &splits));
  /* A few rows against a B contiguous along K (FullyConnected's W): the GEMV kernel, unless
   * MACE_CL_GEMM fixes a GEMM variant. */
  const int forced = force && *force && strcmp(force, "auto") != 0;
  /* Programs are built at the first run; the plan goes by the device's work-group limit. */
  const size_t max_wg = mace_cl_runtime_device(op->cl)->max_work_group_size;
  if (!forced && !g->conv && g->m <= GEMV_MAX_M && g->b_rs == 1 &&
      (g->b_cs != 1 || g->n == 1) && max_wg >= GEMV_WG) {
    g->tile = GEMV_TILE;
    g->splits = 1;
    g->kchunk = g->k;
    return MACE_OK;
  }
  /* A device that cannot run the large work groups gets the small one. */
  size_t lws[3];
  variant_lws(variant(tile), lws);
  if (max_wg < lws[0] * lws[1]) tile = 32;
  variant_lws(variant(tile), lws);
  if (max_wg < lws[0] * lws[1])
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): the device runs at most %zu work items "
                      "a group (the GEMM kernels need %zu)", op->name, op->type, max_wg,
                      lws[0] * lws[1]);
  /* Splits cover K in whole K steps; their partial sums must fit int indices. */
  int64_t kchunk = g->k;
  if (splits > 1 && g->k > 0) {
    kchunk = ceil_div(ceil_div(g->k, splits), GEMM_TK) * GEMM_TK;
    splits = (int)ceil_div(g->k, kchunk);
    while (splits > 1 && (int64_t)splits * batch * g->m * g->n >= INT_MAX) {
      splits = splits / 2;
      kchunk = ceil_div(ceil_div(g->k, splits), GEMM_TK) * GEMM_TK;
      splits = (int)ceil_div(g->k, kchunk);
    }
    if (splits <= 1) kchunk = g->k;
  }
  if (splits < 1) splits = 1;
  g->tile = tile;
  g->splits = splits;
  g->kchunk = kchunk;
  if (g->conv) MACE_RETURN_IF_ERROR(upload_ktab(op, g));
  if (splits > 1) {
    const size_t bytes = (size_t)splits * (size_t)batch * (size_t)g->m * (size_t)g->n * 4;
    if (g->part_bytes < bytes) {
      mace_cl_free(op->cl, g->part);
      g->part = NULL;
      g->part_bytes = 0;
      MACE_RETURN_IF_ERROR(mace_cl_alloc(op->cl, bytes, &g->part));
      g->part_bytes = bytes;
    }
  }
  return MACE_OK;
}

static mace_status set_ints(mace_cl_kernel *k, int *a, const int64_t *v, int n) {
  for (int i = 0; i < n; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, (*a)++, v[i]));
  return MACE_OK;
}

static mace_status set_int4(mace_cl_kernel *k, int *a, const int32_t v[4]) {
  return mace_cl_arg(k, (*a)++, v, 4 * sizeof(int32_t));
}

/* The arguments every kernel of gemm.cl starts with after its operands: bias, residual, y. */
static mace_status set_epilogue_tensors(mace_cl_kernel *k, int *a, mace_op *op,
                                        const mace_cl_gemm *g, const mace_tensor *bias,
                                        const mace_tensor *res, const mace_tensor *y) {
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, *a, op, bias ? bias : y));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, *a + 2, bias ? g->bias_mode : 0));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, *a + 3, op, res ? res : y));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, *a + 5, res != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, *a + 6, op, y));
  *a += 8;
  return MACE_OK;
}

static mace_status set_act(mace_cl_kernel *k, int *a, const mace_activation *act) {
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, (*a)++, act->kind));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, (*a)++, act->alpha));
  return mace_cl_arg_float(k, (*a)++, act->beta);
}

static mace_status gemv_run(mace_op *op, const mace_cl_gemm *g, int64_t batch,
                            const mace_tensor *a, const mace_tensor *b, const mace_tensor *bias,
                            const mace_tensor *res, const mace_tensor *y,
                            const mace_activation *act) {
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(op->cl, "gemm", "gemv", variant(32)->options, &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, a));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, b));
  int i = 4;
  MACE_RETURN_IF_ERROR(set_epilogue_tensors(k, &i, op, g, bias, res, y));
  const int64_t ints[] = {g->m, g->n, g->k, g->a_rs, g->a_cs, g->b_rs, g->b_cs, g->ldy};
  MACE_RETURN_IF_ERROR(set_ints(k, &i, ints, 8));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->zdims));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->a_zs));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->b_zs));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->y_zs));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->bias_zs));
  MACE_RETURN_IF_ERROR(set_act(k, &i, act));
  const size_t lws[3] = {GEMV_WG, 1, 1};
  const size_t gws[3] = {(size_t)ceil_div(g->n, GEMV_N) * GEMV_WG, (size_t)g->m, (size_t)batch};
  return mace_cl_launch(op->cl, k, 3, gws, lws, op->name);
}

mace_status mace_cl_gemm_run(mace_op *op, const mace_cl_gemm *g, const mace_tensor *a,
                             const mace_tensor *b, const mace_tensor *bias,
                             const mace_tensor *res, const mace_tensor *y,
                             const mace_activation *act) {
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  if (!g->tile)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): GEMM run before its infer", op->name,
                      op->type);
  int64_t batch = 1;
  for (int i = 0; i < 4; ++i) batch *= g->zdims[i];
  if (g->tile == GEMV_TILE) return gemv_run(op, g, batch, a, b, bias, res, y, act);
  const gemm_variant *v = variant(g->tile);
  const char *opts = v->options;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "gemm", kernel_name(g), opts, &k));
  int i = 0;
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, a));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, b));
  i = 4;
  MACE_RETURN_IF_ERROR(set_epilogue_tensors(k, &i, op, g, bias, res, y));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, i++, g->splits > 1 ? g->part : y->cl_mem));
  if (g->conv) {
    const int64_t ints[] = {g->m, g->n, g->k, batch, g->kchunk};
    MACE_RETURN_IF_ERROR(set_ints(k, &i, ints, 5));
  } else {
    const int64_t ints[] = {g->m,    g->n,    g->k,   g->a_rs, g->a_cs,
                            g->a_cs == 1 && (g->a_rs != 1 || g->m == 1),
                            g->b_rs, g->b_cs, g->b_cs == 1 && g->b_rs != 1,
                            g->ldy,  batch,   g->kchunk};
    MACE_RETURN_IF_ERROR(set_ints(k, &i, ints, 12));
  }
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->zdims));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->a_zs));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->b_zs));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->y_zs));
  MACE_RETURN_IF_ERROR(set_int4(k, &i, g->bias_zs));
  if (g->conv) {
    MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, i++, g->ktab));
    const int64_t ints[] = {g->in_h,     g->in_w,  g->out_w, g->stride_h,
                            g->stride_w, g->pad_t, g->pad_l};
    MACE_RETURN_IF_ERROR(set_ints(k, &i, ints, 7));
  }
  MACE_RETURN_IF_ERROR(set_act(k, &i, act));
  size_t lws[3];
  variant_lws(v, lws);
  const size_t gws[3] = {(size_t)ceil_div(g->n, v->tn) * lws[0],
                         (size_t)ceil_div(g->m, v->tm) * lws[1],
                         (size_t)(batch * g->splits)};
  MACE_RETURN_IF_ERROR(mace_cl_launch(rt, k, 3, gws, lws, op->name));
  if (g->splits <= 1) return MACE_OK;

  mace_cl_kernel *r;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "gemm", "gemm_reduce", opts, &r));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(r, 0, g->part));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(r, 1, g->splits));
  i = 2;
  MACE_RETURN_IF_ERROR(set_epilogue_tensors(r, &i, op, g, bias, res, y));
  const int64_t ints[] = {g->m, g->n, g->ldy, batch};
  MACE_RETURN_IF_ERROR(set_ints(r, &i, ints, 4));
  MACE_RETURN_IF_ERROR(set_int4(r, &i, g->zdims));
  MACE_RETURN_IF_ERROR(set_int4(r, &i, g->y_zs));
  MACE_RETURN_IF_ERROR(set_int4(r, &i, g->bias_zs));
  MACE_RETURN_IF_ERROR(set_act(r, &i, act));
  const size_t rgws[1] = {(size_t)(batch * g->m * g->n)};
  return mace_cl_launch(rt, r, 1, rgws, NULL, op->name);
}

void mace_cl_gemm_release(mace_op *op, mace_cl_gemm *g) {
  mace_cl_free(op->cl, g->part);
  mace_cl_free(op->cl, g->ktab);
  g->part = g->ktab = NULL;
  g->part_bytes = g->ktab_bytes = 0;
}
