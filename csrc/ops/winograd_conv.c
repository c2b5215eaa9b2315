/* Winograd F(2,3) / F(4,3) 3x3 stride-1 convolution driver over the transform kernels and the GEMM. */
#include "ops/winograd_conv.h"

#include <stdlib.h>

#include "runtime/cpu/cpu_features.h"
#include "core/tensor.h"

int mace_winograd_conv_applies(int64_t k_h, int64_t k_w, int64_t stride_h, int64_t stride_w,
                               int64_t dil_h, int64_t dil_w, int64_t group) {
  return k_h == 3 && k_w == 3 && stride_h == 1 && stride_w == 1 && dil_h == 1 && dil_w == 1 &&
         group == 1;
}

int64_t mace_winograd_conv_auto_m(const mace_gemm_family *f, int64_t in_c, int64_t out_c,
                                  int64_t out_h, int64_t out_w) {
  if (!f || in_c < 16 || out_c < 16) return 0;
  /* Fewer than 16 F(2,3) tiles (outputs under 7x7): each of the 16 GEMMs has too few columns
   * to fill the microkernel's panels while the transformed filter (16/9 of the filter)
   * streams from memory, and im2col + GEMM is faster. At 7x7 (ResNet stage 4) F(2,3) wins
   * (mace_bench_winograd; benchmarks/HISTORY.md). (The threshold was 32 tiles, from a
   * measurement taken before short tile groups stopped copying point by point and before
   * few-tile layers stopped running one slot per thread.) */
  const int64_t tiles2 = (out_h + 1) / 2 * ((out_w + 1) / 2);
  if (tiles2 < 16) return 0;
  const int64_t tiles4 = (out_h + 3) / 4 * ((out_w + 3) / 4);
  return tiles4 >= (f->nr < 25 ? f->nr : 25) ? 4 : 2;
}

static int64_t round_up16(int64_t n) { return (n + 15) / 16 * 16; }

int mace_winograd_conv_plan(mace_winograd_conv *w, int64_t m, int64_t batch, int64_t in_c,
                            int64_t in_h, int64_t in_w, int64_t out_c, int64_t out_h,
                            int64_t out_w, int64_t pad_top, int64_t pad_left,
                            const float *filter, const mace_gemm_family *f, int threads) {
  mace_winograd_geom_init(&w->g, m, in_c, in_h, in_w, out_c, out_h, out_w, pad_top, pad_left);
  w->batch = batch;
  const int64_t npt = (m + 2) * (m + 2), tiles = w->g.tiles_h * w->g.tiles_w;
  if (w->u && (w->u_m != m || w->u_in_c != in_c || w->u_out_c != out_c || w->f != f))
    mace_winograd_conv_free(w);
  w->f = f;
  const mace_cpu_isa isa = mace_cpu_isa_active();
  w->use_avx2 = isa == MACE_ISA_AVX2 || isa == MACE_ISA_AVX512;
  /* Tiles per block: the block's V and M (npt * (in_c + out_c) floats a tile) near 2 MiB,
   * at least 64 tiles so each point's U streams through cache for enough columns. */
  int64_t block = (2 << 20) / (int64_t)(sizeof(float) * npt * (in_c + out_c));
  if (block < 64) block = 64;
  if (block > 1024) block = 1024;
  if (f) block = (block + f->nr - 1) / f->nr * f->nr;
  if (block > tiles * batch) block = tiles * batch; /* blocks run across images */
  /* Blocks of even size: 196 tiles (55x55, F(4,3)) in blocks of 192 left a last block of 4
   * tiles, transformed and multiplied on panels of NR columns for almost nothing. */
  {
    const int64_t n_blocks = (tiles * batch + block - 1) / block;
    block = (tiles * batch + n_blocks - 1) / n_blocks;
    if (f) block = (block + f->nr - 1) / f->nr * f->nr;
    if (block > tiles * batch) block = tiles * batch;
  }
  /* Slots (a thread per block of tiles, each streaming all of U) when each gets at least 64
   * tiles; with fewer the threads share each block (U read once, split by point and panel):
   * ResNet-18's 512-channel 7x7 layers by F(2,3), 16 tiles, ran no faster on 2 threads in
   * slots than on 1 thread, and about twice as fast shared. */
  w->slots = 1;
  if (f && threads > 1 && tiles * batch >= 64 * (int64_t)threads) {
    /* Whole blocks per thread: a multiple of `threads` blocks of (nearly) equal size. */
    int64_t n_blocks = (tiles * batch + block - 1) / block;
    n_blocks = (n_blocks + threads - 1) / threads * threads;
    block = (tiles * batch + n_blocks - 1) / n_blocks;
    w->slots = threads;
  }
  w->block = block;
  if (!w->u) {
    /* Becomes w->u itself without a GEMM family: from the allocator w->u is freed with. */
    float *raw = mace_filter_alloc(sizeof(float) * (size_t)(npt * out_c * in_c));
    if (!raw) return -1;
    mace_f32_winograd_filter__ref(&w->g, filter, raw, 0, out_c);
    if (f) {
      w->u_floats = round_up16(mace_gemm_packed_a_floats(f, out_c, in_c));
      w->u = mace_filter_alloc(sizeof(float) * (size_t)(w->u_floats * npt));
      if (!w->u) {
        mace_aligned_free(raw);
        return -1;
      }
      for (int64_t p = 0; p < npt; ++p)
        mace_gemm_pack_a(f, out_c, in_c, raw + p * out_c * in_c, in_c, 1, w->u + p * w->u_floats,
                         0, (out_c + f->mr - 1) / f->mr);
      mace_aligned_free(raw);
    } else {
      w->u_floats = out_c * in_c;
      w->u = raw;
    }
    w->u_m = m;
    w->u_in_c = in_c;
    w->u_out_c = out_c;
  }
  w->pb_floats = f ? round_up16(mace_gemm_packed_b_floats(f, in_c, block)) : 0;
  const int64_t floats = round_up16(npt * in_c * block) + round_up16(npt * out_c * block) +
                         npt * w->pb_floats;
  w->slot_floats = floats;
  w->scratch_bytes = (size_t)(floats * w->slots) * sizeof(float) + 64;
  return 0;
}

void mace_winograd_conv_free(mace_winograd_conv *w) {
  mace_aligned_free(w->u);
  w->u = NULL;
}

typedef struct wg_job {
  const mace_winograd_conv *w;
  const float *x, *bias;
  const mace_activation *act;
  float *y, *v, *mm, *pb;
  int64_t t0, nt, mp; /* tiles [t0, t0 + nt) over the batch (t / tiles: image); A panels */
} wg_job;

/* The block's tiles split by image: calls fn(image, first tile, end tile, column of the first). */
#define WG_FOR_IMAGE_SEGMENTS(j, img, lt0, lt1, col, body)                              \
  do {                                                                                 \
    const int64_t tiles_ = (j)->w->g.tiles_h * (j)->w->g.tiles_w;                      \
    for (int64_t gt_ = (j)->t0; gt_ < (j)->t0 + (j)->nt;) {                            \
      const int64_t img = gt_ / tiles_, lt0 = gt_ % tiles_;                            \
      const int64_t left_ = (j)->t0 + (j)->nt - gt_;                                   \
      const int64_t lt1 = tiles_ - lt0 < left_ ? tiles_ : lt0 + left_;                 \
      const int64_t col = gt_ - (j)->t0;                                               \
      body;                                                                            \
      gt_ += lt1 - lt0;                                                                \
    }                                                                                  \
  } while (0)

static void input_range(void *p, int64_t begin, int64_t end) {
  const wg_job *j = p;
  const mace_winograd_geom *g = &j->w->g;
  const int64_t in_size = g->in_c * g->in_h * g->in_w;
  WG_FOR_IMAGE_SEGMENTS(j, img, lt0, lt1, col, {
#if MACE_ENABLE_AVX2
    if (j->w->use_avx2)
      mace_f32_winograd_input__avx2(g, j->x + img * in_size, lt0, lt1, j->v + col, j->nt, begin,
                                    end);
    else
#endif
#if MACE_ENABLE_NEON
      mace_f32_winograd_input__neon(g, j->x + img * in_size, lt0, lt1, j->v + col, j->nt, begin,
                                    end);
#else
      mace_f32_winograd_input__ref(g, j->x + img * in_size, lt0, lt1, j->v + col, j->nt, begin,
                                   end);
#endif
  });
}

static void output_range(void *p, int64_t begin, int64_t end) {
  const wg_job *j = p;
  const mace_winograd_geom *g = &j->w->g;
  const int64_t out_size = g->out_c * g->out_h * g->out_w;
  WG_FOR_IMAGE_SEGMENTS(j, img, lt0, lt1, col, {
#if MACE_ENABLE_AVX2
    if (j->w->use_avx2)
      mace_f32_winograd_output__avx2(g, j->mm + col, j->nt, lt0, lt1, j->bias, j->act,
                                     j->y + img * out_size, begin, end);
    else
#endif
#if MACE_ENABLE_NEON
      mace_f32_winograd_output__neon(g, j->mm + col, j->nt, lt0, lt1, j->bias, j->act,
                                     j->y + img * out_size, begin, end);
#else
      mace_f32_winograd_output__ref(g, j->mm + col, j->nt, lt0, lt1, j->bias, j->act,
                                    j->y + img * out_size, begin, end);
#endif
  });
}

static void pack_range(void *p, int64_t begin, int64_t end) {
  const wg_job *j = p;
  const mace_winograd_conv *w = j->w;
  const int64_t np = (j->nt + w->f->nr - 1) / w->f->nr;
  for (int64_t q = begin; q < end; ++q)
    mace_gemm_pack_b(w->f, w->g.in_c, j->nt, j->v + q * w->g.in_c * j->nt, j->nt, 1,
                     j->pb + q * w->pb_floats, 0, np);
}

/* Items: (point, A panel) pairs. */
static void gemm_range(void *p, int64_t begin, int64_t end) {
  const wg_job *j = p;
  const mace_winograd_conv *w = j->w;
  for (int64_t it = begin; it < end;) {
    const int64_t q = it / j->mp, pb = it % j->mp;
    const int64_t pe = end - it < j->mp - pb ? pb + (end - it) : j->mp;
    mace_gemm_args g = {.f = w->f, .m = w->g.out_c, .n = j->nt, .k = w->g.in_c,
                        .c = j->mm + q * w->g.out_c * j->nt, .ldc = j->nt};
    mace_gemm_compute(&g, w->u + q * w->u_floats, j->pb + q * w->pb_floats, 1, pb, pe);
    it += pe - pb;
  }
}

static void ref_gemm_range(void *p, int64_t begin, int64_t end) {
  const wg_job *j = p;
  mace_f32_winograd_gemm__ref(&j->w->g, j->w->u, j->v, j->nt, j->mm, j->nt, j->nt, begin, end);
}

/* The scratch of one slot: V, M, packed B. */
static void wg_job_init(wg_job *j, const mace_winograd_conv *w, const float *x,
                        const float *bias, const mace_activation *act, float *y, float *base) {
  const mace_winograd_geom *g = &w->g;
  const int64_t npt = (g->m + 2) * (g->m + 2);
  *j = (wg_job){.w = w, .x = x, .y = y, .bias = bias, .act = act, .v = base};
  j->mm = j->v + round_up16(npt * g->in_c * w->block);
  j->pb = j->mm + round_up16(npt * g->out_c * w->block);
  j->mp = w->f ? (g->out_c + w->f->mr - 1) / w->f->mr : 0;
}

typedef struct wg_slots_job {
  const mace_winograd_conv *w;
  const float *x, *bias;
  const mace_activation *act;
  float *y, *base;
} wg_slots_job;

/* Slots [begin, end): slot s computes blocks s, s + slots, ... alone, in its own scratch. */
static void slots_range(void *p, int64_t begin, int64_t end) {
  const wg_slots_job *sj = p;
  const mace_winograd_conv *w = sj->w;
  const mace_winograd_geom *g = &w->g;
  const int64_t npt = (g->m + 2) * (g->m + 2), total = g->tiles_h * g->tiles_w * w->batch;
  for (int64_t s = begin; s < end; ++s) {
    wg_job j;
    wg_job_init(&j, w, sj->x, sj->bias, sj->act, sj->y, sj->base + s * w->slot_floats);
    for (j.t0 = s * w->block; j.t0 < total; j.t0 += w->slots * w->block) {
      j.nt = total - j.t0 < w->block ? total - j.t0 : w->block;
      input_range(&j, 0, g->in_c);
      pack_range(&j, 0, npt);
      gemm_range(&j, 0, npt * j.mp);
      output_range(&j, 0, g->out_c);
    }
  }
}

void mace_winograd_conv_run(const mace_winograd_conv *w, mace_threadpool *pool, const float *x,
                            const float *bias, const mace_activation *act, float *y,
                            void *scratch) {
  const mace_winograd_geom *g = &w->g;
  const int64_t npt = (g->m + 2) * (g->m + 2), tiles = g->tiles_h * g->tiles_w;
  float *base = (float *)(((uintptr_t)scratch + 63) / 64 * 64);
  if (w->slots > 1 && w->f) {
    const wg_slots_job sj = {w, x, bias, act, y, base};
    mace_threadpool_parallel_for(pool, w->slots, 1, slots_range, (void *)&sj);
    return;
  }
  wg_job j;
  wg_job_init(&j, w, x, bias, act, y, base);
  const int64_t total = tiles * w->batch;
  for (j.t0 = 0; j.t0 < total; j.t0 += w->block) {
    j.nt = total - j.t0 < w->block ? total - j.t0 : w->block;
    mace_threadpool_parallel_for(pool, g->in_c, 1, input_range, &j);
    if (w->f) {
      mace_threadpool_parallel_for(pool, npt, 1, pack_range, &j);
      mace_threadpool_parallel_for(pool, npt * j.mp, 1, gemm_range, &j);
    } else {
      mace_threadpool_parallel_for(pool, npt, 1, ref_gemm_range, &j);
    }
    mace_threadpool_parallel_for(pool, g->out_c, 1, output_range, &j);
  }
}
