/* Winograd convolution on the blocked NCHWc layout (ops/winograd_nchwc.h). */
#include "ops/winograd_nchwc.h"

#include "core/tensor.h"
#include "runtime/cpu/simd_dispatch.h"

static int64_t round_up16(int64_t n) { return (n + 15) / 16 * 16; }

void mace_winograd_nchwc_free(mace_winograd_nchwc *w) {
  mace_aligned_free(w->u);
  w->u = NULL;
}

typedef struct filter_job {
  const mace_conv2d_shape *s;
  const float *filter;
  float *u;
  int64_t m, u_floats;
  int block;
} filter_job;

static void transform_range(void *p, int64_t begin, int64_t end) {
  const filter_job *j = p;
  mace_f32_winograd_filter_nchwc__ref(j->m, j->block, j->s->out_c, j->s->in_c, j->filter, j->u,
                                      j->u_floats, begin, end);
}

/* Transforms the filter (ref) straight into each point's pointwise filter (in_c x out_c, zeros
 * for the padded channels); output blocks shared out among the pool's threads. It went through
 * a plain-layout copy first (npt x out_c x in_c floats, tens of MB for ResNet-50), then
 * packed point by point, which made the engine build much slower (benchmarks/HISTORY.md). */
static int transform_filter(mace_winograd_nchwc *w, int64_t m, int block,
                            const mace_conv2d_shape *s, const float *filter,
                            mace_threadpool *pool) {
  const int64_t npt = (m + 2) * (m + 2), n_ob = MACE_NCHWC_PADDED(s->out_c, block) / block;
  w->u_floats = round_up16(mace_f32_nchwc_conv1x1_packed_floats(block, s->out_c, s->in_c));
  w->u = mace_filter_alloc(sizeof(float) * (size_t)(w->u_floats * npt));
  if (!w->u) return -1;
  filter_job j = {s, filter, w->u, m, w->u_floats, block};
  mace_threadpool_parallel_for(pool, n_ob, 1 + 4096 / (npt * s->in_c * block + 1),
                               transform_range, &j);
  w->u_m = m;
  w->u_in_c = s->in_c;
  w->u_out_c = s->out_c;
  w->u_block = block;
  return 0;
}

int mace_winograd_nchwc_plan(mace_winograd_nchwc *w, int64_t m, int block,
                             const mace_conv2d_shape *s, const float *filter,
                             mace_threadpool *pool) {
  const int threads = mace_threadpool_size(pool);
  const int64_t in_cp = MACE_NCHWC_PADDED(s->in_c, block);
  const int64_t out_cp = MACE_NCHWC_PADDED(s->out_c, block);
  w->a.block = block;
  mace_winograd_geom_init(&w->a.g, m, in_cp, s->in_h, s->in_w, out_cp, s->out_h, s->out_w,
                          s->pad_top, s->pad_left);
  w->batch = s->batch;
  if (w->u && (w->u_m != m || w->u_block != block || w->u_in_c != s->in_c ||
               w->u_out_c != s->out_c))
    mace_winograd_nchwc_free(w);
  if (!w->u && transform_filter(w, m, block, s, filter, pool) != 0) return -1;
  const mace_simd_kernels *k = mace_simd_active();
  const int simd = k->nchwc_block == block;
  w->pw = simd && k->nchwc_conv1x1 ? k->nchwc_conv1x1 : mace_f32_nchwc_conv1x1__ref;
  w->in = simd && k->nchwc_wino_input ? k->nchwc_wino_input : mace_f32_nchwc_wino_input__ref;
  w->out = simd && k->nchwc_wino_output ? k->nchwc_wino_output : mace_f32_nchwc_wino_output__ref;
  /* Tiles per block: the block's V and M (npt * (in_cp + out_cp) floats a tile) near 1 MiB
   * (L2), whole register tiles of the pointwise kernel, at least 4 of them so each point's
   * filter is used for enough tiles; blocks of an image of (nearly) equal size. */
  const int64_t npt = (m + 2) * (m + 2), tiles = w->a.g.tiles_h * w->a.g.tiles_w;
  const int64_t mr = MACE_NCHWC_C1_MR(block);
  int64_t nt = (1 << 20) / (int64_t)(sizeof(float) * npt * (in_cp + out_cp));
  if (nt < 4 * mr) nt = 4 * mr;
  if (nt > tiles) nt = tiles;
  w->n_blocks = (tiles + nt - 1) / nt;
  /* A share of the tiles a thread (slots_range) where each share holds at least 4 register
   * tiles; with fewer blocks than threads, blocks shrink to about a share (the scratch is a
   * block's V and M per thread). */
  w->slots = 1;
  if (threads > 1 && tiles * s->batch >= 4 * mr * (int64_t)threads) {
    if (w->n_blocks * s->batch < threads) w->n_blocks = (threads + s->batch - 1) / s->batch;
    w->slots = threads;
  }
  nt = (tiles + w->n_blocks - 1) / w->n_blocks;
  if (nt > mr) nt = (nt + mr - 1) / mr * mr;
  w->block = nt < tiles ? nt : tiles;
  w->n_blocks = (tiles + w->block - 1) / w->block;
  w->slot_floats = round_up16(npt * in_cp * w->block) + round_up16(npt * out_cp * w->block);
  w->scratch_bytes = (size_t)(w->slot_floats * w->slots) * sizeof(float) + 64;
  return 0;
}

typedef struct wn_job {
  const mace_winograd_nchwc *w;
  const float *x, *bias, *res;
  const mace_activation *act;
  float *y, *v, *mm;
  int64_t img, t0, t1;
} wn_job;

static int64_t wn_in_size(const mace_winograd_nchwc *w) {
  return w->a.g.in_c * w->a.g.in_h * w->a.g.in_w;
}
static int64_t wn_out_size(const mace_winograd_nchwc *w) {
  return w->a.g.out_c * w->a.g.out_h * w->a.g.out_w;
}

/* Items: input channel blocks. */
static void input_range(void *p, int64_t begin, int64_t end) {
  const wn_job *j = p;
  j->w->in(&j->w->a, j->x + j->img * wn_in_size(j->w), j->t0, j->t1, j->v, begin, end);
}

/* Items: (point, pair of output blocks); the pointwise kernel's tile is 2 blocks. */
static void products_range(void *p, int64_t begin, int64_t end) {
  const wn_job *j = p;
  const mace_winograd_nchwc *w = j->w;
  const int b = w->a.block;
  const int64_t nt = j->t1 - j->t0, nob = w->a.g.out_c / b, nop = (nob + 1) / 2;
  for (int64_t it = begin; it < end;) {
    const int64_t q = it / nop, op0 = it % nop;
    const int64_t op1 = end - it < nop - op0 ? op0 + (end - it) : nop;
    const int64_t next = it + (op1 - op0); /* the next call's first item: its pair's weights */
    const mace_nchwc_conv1x1 a = {
        .block = b, .in_c = w->a.g.in_c, .out_c = w->a.g.out_c, .hw = nt,
        .x = j->v + q * w->a.g.in_c * nt, .w = w->u + q * w->u_floats,
        .y = j->mm + q * w->a.g.out_c * nt,
        .w_next = next < end ? w->u + next / nop * w->u_floats + next % nop * 2 * w->a.g.in_c * b
                             : NULL};
    w->pw(&a, 2 * op0, 2 * op1 < nob ? 2 * op1 : nob, 0, nt);
    it += op1 - op0;
  }
}

/* Items: output channel blocks. */
static void output_range(void *p, int64_t begin, int64_t end) {
  const wn_job *j = p;
  const int64_t off = j->img * wn_out_size(j->w);
  j->w->out(&j->w->a, j->mm, j->t0, j->t1, j->bias, j->res ? j->res + off : NULL, j->act,
            j->y + off, begin, end);
}

static void wn_set_block(wn_job *j, int64_t bi) {
  const mace_winograd_nchwc *w = j->w;
  const int64_t tiles = w->a.g.tiles_h * w->a.g.tiles_w;
  j->img = bi / w->n_blocks;
  j->t0 = bi % w->n_blocks * w->block;
  j->t1 = j->t0 + w->block < tiles ? j->t0 + w->block : tiles;
}

/* Slots [begin, end): slot s computes, alone and in its own scratch, an equal share of all
 * images' tiles, cut at multiples of the pointwise register tile, in blocks of at most
 * w->block tiles of one image (equal-sized within an image, whole register tiles but the
 * last). A slot taking every slots-th block had left ResNet-50's 64 on 56x56 (196 F(4,3)
 * tiles, blocks of 56) with 112 tiles on one thread and 84 on the other. The shares are
 * contiguous, so a thread reads the rows the layer before wrote on it. */
static int64_t share_start(int64_t s, int64_t slots, int64_t total, int64_t mr) {
  return s >= slots ? total : (s * total / slots + mr / 2) / mr * mr;
}

static void slots_range(void *p, int64_t begin, int64_t end) {
  const wn_job *base = p;
  const mace_winograd_nchwc *w = base->w;
  const int64_t npt = (w->a.g.m + 2) * (w->a.g.m + 2), nob = w->a.g.out_c / w->a.block;
  const int64_t tiles = w->a.g.tiles_h * w->a.g.tiles_w, total = w->batch * tiles;
  const int64_t mr = MACE_NCHWC_C1_MR(w->a.block);
  for (int64_t s = begin; s < end; ++s) {
    wn_job j = *base;
    j.v += s * w->slot_floats;
    j.mm = j.v + round_up16(npt * w->a.g.in_c * w->block);
    const int64_t g0 = share_start(s, w->slots, total, mr);
    const int64_t g1 = share_start(s + 1, w->slots, total, mr);
    for (int64_t g = g0; g < g1;) {
      j.img = g / tiles;
      const int64_t t_end = g1 - j.img * tiles < tiles ? g1 - j.img * tiles : tiles;
      const int64_t len = t_end - g % tiles, n = (len + w->block - 1) / w->block;
      int64_t nt = ((len + n - 1) / n + mr - 1) / mr * mr;
      if (nt > w->block) nt = w->block;
      j.t0 = g % tiles;
      j.t1 = j.t0 + nt < t_end ? j.t0 + nt : t_end;
      input_range(&j, 0, w->a.g.in_c / w->a.block);
      products_range(&j, 0, npt * ((nob + 1) / 2));
      output_range(&j, 0, nob);
      g += j.t1 - j.t0;
    }
  }
}

void mace_winograd_nchwc_run(const mace_winograd_nchwc *w, mace_threadpool *pool,
                             const float *x, const float *bias, const float *res,
                             const mace_activation *act, float *y, void *scratch) {
  float *v = (float *)(((uintptr_t)scratch + 63) / 64 * 64);
  wn_job j = {.w = w, .x = x, .bias = bias, .res = res, .act = act, .y = y, .v = v};
  if (w->slots > 1) {
    mace_threadpool_parallel_for(pool, w->slots, 1, slots_range, &j);
    return;
  }
  const int64_t npt = (w->a.g.m + 2) * (w->a.g.m + 2), nob = w->a.g.out_c / w->a.block;
  j.mm = v + round_up16(npt * w->a.g.in_c * w->block);
  for (int64_t bi = 0; bi < w->batch * w->n_blocks; ++bi) {
    wn_set_block(&j, bi);
    mace_threadpool_parallel_for(pool, w->a.g.in_c / w->a.block, 1, input_range, &j);
    mace_threadpool_parallel_for(pool, npt * ((nob + 1) / 2), 1, products_range, &j);
    mace_threadpool_parallel_for(pool, nob, 1, output_range, &j);
  }
}
