/* Dispatched f32 GEMM (not an op): family table, packing, cache blocking, threading. */
#include "runtime/cpu/gemm_dispatch.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core/status.h"
#include "kernels/cpu/activation.h"

/* Cache blocking over packed panels: a KC x NC block of B (L2/L3) is swept by MC-row blocks
 * of A (L2); within them each NR-wide B micro-panel (L1) meets every MR-row A panel. */
#define GEMM_NC 512
#define GEMM_MC 96
/* Split along N, B is packed and consumed in blocks of about this many floats (512 KiB). */
#define GEMM_PACK_BLOCK_FLOATS (128 * 1024)
/* Split along N with one K block and A of at most GEMM_SMALL_A_BYTES: B packed a chunk of about
 * GEMM_CHUNK_B_FLOATS (256 KB, in L2) at a time, then swept by one A panel after another
 * (pack_compute_range). */
#define GEMM_SMALL_A_BYTES (256 * 1024)
#define GEMM_CHUNK_B_FLOATS (64 * 1024)
/* A last A panel of at most MR / GEMM_TAIL_DIV rows (and GEMM_TAIL_MAX_ROWS) goes through the
 * family's one-row kernel, a row at a time, instead of the MR-row tile: M = 16 under AVX-512 (MR
 * 14) computed 28 rows for 16, a 1x1 convolution with 16 outputs (SqueezeNet's squeeze layers,
 * EfficientNet's stage 1) costing as much as one with 28. The row kernel is load-bound at about
 * one K step per cycle, the 14-row tile at MR / 2 cycles: a row costs about two tile rows. A
 * short kernel of at most twice the rows takes them instead (the first 4 or 8 rows of the
 * panel at the tile's rate). */
#define GEMM_TAIL_DIV 3
#define GEMM_TAIL_MAX_ROWS 6
/* A thread's share should hold at least this many multiply-adds. */
#define GEMM_MIN_MACS_PER_THREAD 65536

/* One ISA's family from the manifest (MACE_TABLE_ISA): its MACE_GEMM_TILE line gives the name
 * ("14x32__avx512"), the tile and the narrow / short kernels' sizes, its MACE_GEMM_UKERNEL lines
 * the kernels (`.ukernel = mace_f32_gemm_14x32__avx512,` ...). The manifest #undefs the line
 * macros after each use, so each family defines them again. */
#define GEMM_TILE_(isa, mr_, nr_, narrow_nr_, short_mr0_, short_mr1_)                        \
  MACE_ISA_SELECT(isa, MACE_TABLE_ISA)(.name = #mr_ "x" #nr_ "__" #isa, .mr = mr_, .nr = nr_, \
                                       .narrow_nr = narrow_nr_,                             \
                                       .short_mr = {short_mr0_, short_mr1_}, )
#define GEMM_FIELD_(isa, unit, field, function, type) \
  MACE_ISA_SELECT(isa, MACE_TABLE_ISA)(.field = MACE_UKERNEL_NAME(function, isa), )

/* Best first; an ISA the build does not compile (MACE_ENABLE_<ISA> 0) has no family. */
static const mace_gemm_family g_all[] = {
#if MACE_ENABLE_AVX512
#define MACE_TABLE_ISA avx512
#define MACE_GEMM_TILE GEMM_TILE_
#define MACE_GEMM_UKERNEL GEMM_FIELD_
    {.isa = MACE_ISA_AVX512,
#include "kernels/cpu/manifest.inc"
    },
#undef MACE_TABLE_ISA
#endif
#if MACE_ENABLE_AVX2
#define MACE_TABLE_ISA avx2
#define MACE_GEMM_TILE GEMM_TILE_
#define MACE_GEMM_UKERNEL GEMM_FIELD_
    {.isa = MACE_ISA_AVX2,
#include "kernels/cpu/manifest.inc"
    },
#undef MACE_TABLE_ISA
#endif
#if MACE_ENABLE_NEON
#define MACE_TABLE_ISA neon
#define MACE_GEMM_TILE GEMM_TILE_
#define MACE_GEMM_UKERNEL GEMM_FIELD_
    {.isa = MACE_ISA_NEON,
#include "kernels/cpu/manifest.inc"
    },
#undef MACE_TABLE_ISA
#endif
    {.name = NULL, .isa = MACE_ISA_REF}};

_Static_assert(MACE_GEMM_ROW_MAX_M <= 4, "the rows kernels (gemm_row_impl.inc) hold 4 rows");

static const mace_gemm_family *g_supported[sizeof(g_all) / sizeof(g_all[0])];
static int g_n_supported;
static const mace_gemm_family *g_active;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void choose_once(void) {
  const mace_cpu_isa active = mace_cpu_isa_active();
  for (const mace_gemm_family *f = g_all; f->ukernel; ++f) {
    if (!mace_cpu_isa_supported(f->isa)) continue;
    g_supported[g_n_supported++] = f;
    /* Best first: the first supported family whose ISA the active level allows. */
    if (!g_active && active != MACE_ISA_REF &&
        (f->isa == active || (f->isa != MACE_ISA_NEON && active != MACE_ISA_NEON &&
                              f->isa < active)))
      g_active = f;
  }
}

int mace_gemm_families(const mace_gemm_family *const **list) {
  pthread_once(&g_once, choose_once);
  *list = g_supported;
  return g_n_supported;
}

const mace_gemm_family *mace_gemm_family_active(void) {
  pthread_once(&g_once, choose_once);
  return g_active;
}

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

int64_t mace_gemm_packed_a_floats(const mace_gemm_family *f, int64_t m, int64_t k) {
  return round_up(m, f->mr) * k;
}

int64_t mace_gemm_packed_b_floats(const mace_gemm_family *f, int64_t k, int64_t n) {
  return round_up(n, f->nr) * k;
}

void mace_gemm_pack_a(const mace_gemm_family *f, int64_t m, int64_t k, const float *a,
                      int64_t a_rs, int64_t a_cs, float *dst, int64_t p_begin, int64_t p_end) {
  const int64_t mr = f->mr, mpad = round_up(m, mr);
  const int gather = f->pack_cols && a_cs == 1 && a_rs >= 0 && (mr - 1) * a_rs <= INT32_MAX;
  for (int64_t k0 = 0; k0 < k; k0 += MACE_GEMM_KC) {
    const int64_t kl = k - k0 < MACE_GEMM_KC ? k - k0 : MACE_GEMM_KC;
    for (int64_t p = p_begin; p < p_end; ++p) {
      float *d = dst + k0 * mpad + p * mr * kl;
      const int64_t i0 = p * mr, rows = m - i0 < mr ? m - i0 : mr;
      if (gather) {
        f->pack_cols(kl, a + i0 * a_rs + k0, a_rs, rows, d);
        continue;
      }
      for (int64_t i = 0; i < rows; ++i) {
        const float *src = a + (i0 + i) * a_rs + k0 * a_cs;
        if (a_cs == 1)
          for (int64_t kk = 0; kk < kl; ++kk) d[kk * mr + i] = src[kk];
        else
          for (int64_t kk = 0; kk < kl; ++kk) d[kk * mr + i] = src[kk * a_cs];
      }
      for (int64_t i = rows; i < mr; ++i)
        for (int64_t kk = 0; kk < kl; ++kk) d[kk * mr + i] = 0.0f;
    }
  }
}

/* One K row of a B panel: a full row of every family's NR as a fixed-size copy the compiler
 * inlines (a memcpy call per 64-byte row was a large share of a pointwise convolution with few
 * input channels), else cols floats and zeros up to nr. */
static inline void copy_panel_row(float *row, const float *src, int64_t cols, int64_t nr) {
  if (cols == nr) {
    switch (nr) {
      case 8: memcpy(row, src, 8 * sizeof(float)); return;
      case 16: memcpy(row, src, 16 * sizeof(float)); return;
      case 32: memcpy(row, src, 32 * sizeof(float)); return;
      default: break;
    }
  }
  for (int64_t j = 0; j < cols; ++j) row[j] = src[j];
  for (int64_t j = cols; j < nr; ++j) row[j] = 0.0f;
}

void mace_gemm_pack_b(const mace_gemm_family *f, int64_t k, int64_t n, const float *b,
                      int64_t b_rs, int64_t b_cs, float *dst, int64_t p_begin, int64_t p_end) {
  const int64_t nr = f->nr, npad = round_up(n, nr);
  for (int64_t k0 = 0; k0 < k; k0 += MACE_GEMM_KC) {
    const int64_t kl = k - k0 < MACE_GEMM_KC ? k - k0 : MACE_GEMM_KC;
    for (int64_t p = p_begin; p < p_end; ++p) {
      float *d = dst + k0 * npad + p * nr * kl;
      const int64_t j0 = p * nr, cols = n - j0 < nr ? n - j0 : nr;
      if (b_cs == 1 && cols == nr && f->pack_rows) {
        f->pack_rows(kl, b + k0 * b_rs + j0, b_rs, d);
      } else if (b_cs == 1) {
        for (int64_t kk = 0; kk < kl; ++kk) {
          const float *src = b + (k0 + kk) * b_rs + j0;
          float *row = d + kk * nr;
          copy_panel_row(row, src, cols, nr);
        }
      } else {
        for (int64_t j = 0; j < cols; ++j) {
          const float *src = b + k0 * b_rs + (j0 + j) * b_cs;
          for (int64_t kk = 0; kk < kl; ++kk) d[kk * nr + j] = src[kk * b_rs];
        }
        for (int64_t kk = 0; kk < kl; ++kk)
          for (int64_t j = cols; j < nr; ++j) d[kk * nr + j] = 0.0f;
      }
    }
  }
}

/* The activations a microkernel applies in registers (mace_gemm_tile_ep's clamp); 0 for the
 * others, which epilogue() applies to the finished tile. */
static int tile_clamp(const mace_activation *act) {
  if (!act || act->kind == MACE_ACT_NONE) return 0;
  if (act->kind == MACE_ACT_RELU) return 1;
  if (act->kind == MACE_ACT_RELUX) return 2;
  return -1;
}

/* An activation the microkernel cannot apply, on a finished tile while it is in cache (the
 * bias is already in). */
static void epilogue(const mace_gemm_args *g, int64_t i0, int64_t rows, int64_t j0,
                     int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    float *row = g->c + (i0 + i) * g->ldc + j0;
    mace_f32_activation(g->act, row, row, cols);
  }
}

/* The residual's rows x cols tile into C's, where the first K block's microkernel then adds
 * the product to it (accumulate): the residual Add costs no pass of its own. Fixed-size copies
 * for whole panels (see copy_panel_row). */
static void copy_residual_tile(const float *r, float *c, int64_t ldc, int64_t rows, int64_t cols,
                               int64_t nr) {
  for (int64_t i = 0; i < rows; ++i, r += ldc, c += ldc) {
    if (cols == nr && nr == 16) {
      memcpy(c, r, 16 * sizeof(float));
    } else if (cols == nr && nr == 32) {
      memcpy(c, r, 32 * sizeof(float));
    } else {
      for (int64_t j = 0; j < cols; ++j) c[j] = r[j];
    }
  }
}

/* One tile through the family's kernel that wastes the fewest columns: the narrow one for up
 * to narrow_nr columns, the half one for up to NR/2, both side by side for up to NR/2 +
 * narrow_nr (N = 49: 7x7 planes under AVX-512 leave 17 columns; 27x27 and 13x13 under AVX2
 * leave 9), else the full one. */
static void run_tile(const mace_gemm_family *f, int64_t kl, const float *a, const float *b,
                     float *c, int64_t ldc, int64_t rows, int64_t cols, int accumulate,
                     const mace_gemm_tile_ep *ep) {
  const int64_t half = f->nr / 2;
  if (f->ukernel_narrow && cols <= f->narrow_nr) {
    f->ukernel_narrow(kl, a, b, c, ldc, rows, cols, accumulate, ep);
  } else if (f->ukernel_half && cols <= half) {
    f->ukernel_half(kl, a, b, c, ldc, rows, cols, accumulate, ep);
  } else if (f->ukernel_half && f->ukernel_narrow && cols <= half + f->narrow_nr) {
    f->ukernel_half(kl, a, b, c, ldc, rows, half, accumulate, ep);
    mace_gemm_tile_ep rest;
    if (ep) {
      rest = *ep;
      if (rest.bias && !rest.bias_per_row) rest.bias += half;
    }
    f->ukernel_narrow(kl, a, b + half, c + half, ldc, rows, cols - half, accumulate,
                      ep ? &rest : NULL);
  } else {
    mace_f32_gemm_fn k = f->ukernel;
    for (int i = 1; i >= 0; --i)
      if (f->ukernel_short[i] && rows <= f->short_mr[i]) k = f->ukernel_short[i];
    k(kl, a, b, c, ldc, rows, cols, accumulate, ep);
  }
}

/* rows x cols tile of C, rows (<= GEMM_TAIL_MAX_ROWS) one at a time through the one-row
 * kernel; a holds the rows contiguously (row r at a + r * kl). */
static void run_tail_rows(const mace_gemm_family *f, int64_t kl, const float *a, const float *b,
                          float *c, int64_t ldc, int64_t rows, int64_t cols, int accumulate,
                          const mace_gemm_tile_ep *ep) {
  for (int64_t r = 0; r < rows; ++r) {
    mace_gemm_tile_ep er;
    if (ep) {
      er = *ep;
      if (er.bias && er.bias_per_row) er.bias += r;
    }
    f->ukernel_row(kl, a + r * kl, b, c + r * ldc, ldc, 1, cols, accumulate, ep ? &er : NULL);
  }
}

/* Rows of the last A panel that go through the one-row kernel (GEMM_TAIL_DIV), or 0. */
static int64_t gemm_tail_rows(const mace_gemm_args *g, int64_t m_hi) {
  const mace_gemm_family *f = g->f;
  const int64_t mp = (g->m + f->mr - 1) / f->mr, rows = g->m - (mp - 1) * f->mr;
  int short_kernel = 0; /* a short kernel of at most twice the rows takes them */
  for (int i = 0; i < 2; ++i)
    if (f->ukernel_short[i] && rows <= f->short_mr[i] && f->short_mr[i] < 2 * rows)
      short_kernel = 1;
  const int tail = f->ukernel_row && f->mr > 1 && rows < f->mr && rows * GEMM_TAIL_DIV <= f->mr &&
                   rows <= GEMM_TAIL_MAX_ROWS && !short_kernel && m_hi == mp;
  return tail ? rows : 0;
}

/* The tail rows of K block k0 (length kl), each contiguous: tail_a[r * kl + kk] (the packed
 * panel interleaves them). */
static void gemm_tail_extract(const mace_gemm_args *g, const float *pa, int64_t k0, int64_t kl,
                              int64_t tail_rows, float *tail_a) {
  const int64_t mr = g->f->mr, mp = (g->m + mr - 1) / mr;
  const float *ap = pa + k0 * mp * mr + (mp - 1) * mr * kl;
  for (int64_t r = 0; r < tail_rows; ++r)
    for (int64_t kk = 0; kk < kl; ++kk) tail_a[r * kl + kk] = ap[kk * mr + r];
}

/* B's panels [p_begin, p_end) of K blocks k_lo to k_hi (k_lo a multiple of MACE_GEMM_KC) at dst,
 * laid out as the packed B from block k_lo on: through pack_b_fn, or from b. */
static void pack_b_blocks(const mace_gemm_args *g, float *dst, int64_t p_begin, int64_t p_end,
                          int64_t k_lo, int64_t k_hi) {
  if (g->pack_b_fn)
    g->pack_b_fn(g->pack_b_ctx, dst, p_begin, p_end, k_lo, k_hi);
  else
    mace_gemm_pack_b(g->f, k_hi - k_lo, g->n, g->b + k_lo * g->b_rs, g->b_rs, g->b_cs, dst,
                     p_begin, p_end);
}

/* mace_gemm_compute; with tail_ready (one K block), the tail rows already extracted there.
 * With pack_buf, B is not packed yet: each K block of it is packed there (all panels, the
 * block alone) just before it is used, and pb is not read. */
static void gemm_compute(const mace_gemm_args *g, const float *pa, const float *pb, int split_m,
                         int64_t p_begin, int64_t p_end, const float *tail_ready,
                         float *pack_buf) {
  const mace_gemm_family *f = g->f;
  const int64_t mr = f->mr, nr = f->nr;
  const int64_t mp = (g->m + mr - 1) / mr, np = (g->n + nr - 1) / nr;
  const int64_t mpad = mp * mr, npad = np * nr;
  const int64_t m_lo = split_m ? p_begin : 0, m_hi = split_m ? p_end : mp;
  const int64_t n_lo = split_m ? 0 : p_begin, n_hi = split_m ? np : p_end;
  const int64_t nc = GEMM_NC / nr > 0 ? GEMM_NC / nr : 1;   /* in panels */
  const int64_t mc = GEMM_MC / mr > 0 ? GEMM_MC / mr : 1;
  const int clamp = tile_clamp(g->act);
  const int has_ep = g->bias || clamp != 0;
  /* The last A panel's rows, when few, through the one-row kernel (GEMM_TAIL_DIV). */
  const int64_t tail_rows = gemm_tail_rows(g, m_hi);
  const int tail = tail_rows > 0;
  float tail_buf[GEMM_TAIL_MAX_ROWS * MACE_GEMM_KC];
  const float *tail_a = tail_ready ? tail_ready : tail_buf;
  for (int64_t k0 = 0; k0 < g->k; k0 += MACE_GEMM_KC) {
    const int64_t kl = g->k - k0 < MACE_GEMM_KC ? g->k - k0 : MACE_GEMM_KC;
    const int last = k0 + kl == g->k;
    const float *pak = pa + k0 * mpad, *pbk = pack_buf ? pack_buf : pb + k0 * npad;
    if (pack_buf) pack_b_blocks(g, pack_buf, 0, np, k0, k0 + kl);
    if (tail && !tail_ready) gemm_tail_extract(g, pa, k0, kl, tail_rows, tail_buf);
    for (int64_t jc = n_lo; jc < n_hi; jc += nc) {
      const int64_t jc_end = jc + nc < n_hi ? jc + nc : n_hi;
      for (int64_t ic = m_lo; ic < m_hi; ic += mc) {
        const int64_t ic_end = ic + mc < m_hi ? ic + mc : m_hi;
        for (int64_t jp = jc; jp < jc_end; ++jp) {
          const int64_t j0 = jp * nr, cols = g->n - j0 < nr ? g->n - j0 : nr;
          const float *bpanel = pbk + jp * nr * kl;
          for (int64_t ip = ic; ip < ic_end; ++ip) {
            const int64_t i0 = ip * mr, rows = g->m - i0 < mr ? g->m - i0 : mr;
            float *ct = g->c + i0 * g->ldc + j0;
            const mace_gemm_tile_ep ep = {
                g->bias ? g->bias + (g->bias_per_row ? i0 : j0) : NULL, g->bias_per_row,
                clamp > 0 ? clamp : 0, clamp == 2 ? g->act->beta : 0.0f};
            if (k0 == 0 && g->res)
              copy_residual_tile(g->res + i0 * g->ldc + j0, ct, g->ldc, rows, cols, nr);
            if (tail && ip == mp - 1)
              run_tail_rows(f, kl, tail_a, bpanel, ct, g->ldc, rows, cols, k0 > 0 || g->res,
                            last && has_ep ? &ep : NULL);
            else
              run_tile(f, kl, pak + ip * mr * kl, bpanel, ct, g->ldc, rows, cols,
                       k0 > 0 || g->res, last && has_ep ? &ep : NULL);
          }
        }
        /* Another activation: over the finished block (still in cache), a row at a time; not
         * per tile right after the tile's masked stores, whose data the loads would wait for
         * (SWISH fused that way made EfficientNet-B0's 1x1 convs much slower). */
        if (last && clamp < 0) {
          const int64_t i0 = ic * mr, i1 = ic_end * mr < g->m ? ic_end * mr : g->m;
          const int64_t j0 = jc * nr, j1 = jc_end * nr < g->n ? jc_end * nr : g->n;
          epilogue(g, i0, i1 - i0, j0, j1 - j0);
        }
      }
    }
  }
}

void mace_gemm_compute(const mace_gemm_args *g, const float *pa, const float *pb, int split_m,
                       int64_t p_begin, int64_t p_end) {
  gemm_compute(g, pa, pb, split_m, p_begin, p_end, NULL, NULL);
}

/* Split along M, a B of at most GEMM_SLOT_B_FLOATS packed goes to every thread whole (its
 * own copy, slots_range). Packed once and shared, each thread read all of it after a hand-off,
 * half of it from the other core, and two threads ran such a layer no faster than one. */
#define GEMM_SLOT_B_FLOATS (32 * 1024)
static int gemm_b_per_slot(const mace_gemm_family *f, int64_t k, int64_t n, int threads) {
  return threads > 1 && mace_gemm_packed_b_floats(f, k, n) <= GEMM_SLOT_B_FLOATS;
}

typedef struct gemm_job {
  const mace_gemm_args *g;
  float *pa, *pb;            /* packed operands (scratch or the caller's) */
  int split_m;
  int64_t slots, slot_floats; /* slots_range: B copies (slot s at pb + s * slot_floats) */
} gemm_job;

static void pack_a_range(void *p, int64_t begin, int64_t end) {
  const gemm_job *j = p;
  mace_gemm_pack_a(j->g->f, j->g->m, j->g->k, j->g->a, j->g->a_rs, j->g->a_cs, j->pa, begin,
                   end);
}

static void pack_b_range(void *p, int64_t begin, int64_t end) {
  const gemm_job *j = p;
  pack_b_blocks(j->g, j->pb, begin, end, 0, j->g->k);
}

static void compute_range(void *p, int64_t begin, int64_t end) {
  const gemm_job *j = p;
  mace_gemm_compute(j->g, j->pa, j->pb, j->split_m, begin, end);
}

/* Split along N: a thread's B panels are packed and used a cache block at a time, while
 * they are still in cache (no other thread reads them). */
static void pack_compute_range(void *p, int64_t begin, int64_t end) {
  const gemm_job *j = p;
  const mace_gemm_args *g = j->g;
  const int64_t nr = g->f->nr;
  if (!g->pack_b_fn && g->k <= MACE_GEMM_KC &&
      g->m * g->k * (int64_t)sizeof(float) <= GEMM_SMALL_A_BYTES) {
    /* One K block and an A that stays in L2 (1x1 convolutions with few input or output
     * channels): a chunk of B panels packed (into the start of this range's scratch, in L2),
     * then one A panel after another sweeps the whole chunk, so C's rows are written (and the
     * residual's read) MR streams at a time, a chunk wide, which the prefetchers follow.
     * Packing an L1-sized block of 2 panels and computing all of M over it wrote C M rows
     * apart, 256 bytes a row, a pattern the prefetchers did not follow (ResNet-50's 64->256 1x1
     * convolutions with the residual). */
    int64_t chunk = GEMM_CHUNK_B_FLOATS / (g->k * nr);
    if (chunk < 1) chunk = 1;
    const int64_t mp = (g->m + g->f->mr - 1) / g->f->mr;
    float *buf = j->pb + begin * nr * g->k;
    /* The tail rows extracted once for the range, not once a block (M = 32 under AVX-512,
     * 14 + 14 + 4 rows, one panel a block, re-extracted them for every block). */
    float tail_a[GEMM_TAIL_MAX_ROWS * MACE_GEMM_KC];
    const int64_t tail_rows = gemm_tail_rows(g, mp);
    if (tail_rows) gemm_tail_extract(g, j->pa, 0, g->k, tail_rows, tail_a);
    for (int64_t p0 = begin; p0 < end; p0 += chunk) {
      const int64_t p1 = p0 + chunk < end ? p0 + chunk : end, j0 = p0 * nr;
      mace_gemm_args sub = *g;
      sub.n = (p1 * nr < g->n ? p1 * nr : g->n) - j0;
      sub.b = g->b + j0 * g->b_cs;
      sub.c = g->c + j0;
      if (g->res) sub.res = g->res + j0;
      if (g->bias && !g->bias_per_row) sub.bias = g->bias + j0;
      mace_gemm_pack_b(g->f, sub.k, sub.n, sub.b, sub.b_rs, sub.b_cs, buf, 0, p1 - p0);
      for (int64_t ip = 0; ip < mp; ++ip)
        gemm_compute(&sub, j->pa, buf, 1, ip, ip + 1, tail_rows ? tail_a : NULL, NULL);
    }
    return;
  }
  /* About GEMM_PACK_BLOCK_FLOATS of packed B (all of K) per block. */
  int64_t block = GEMM_PACK_BLOCK_FLOATS / (g->k * nr);
  if (block < 1) block = 1;
  for (int64_t p0 = begin; p0 < end; p0 += block) {
    const int64_t p1 = p0 + block < end ? p0 + block : end;
    pack_b_range((void *)j, p0, p1);
    mace_gemm_compute(g, j->pa, j->pb, 0, p0, p1);
  }
}

/* Split along M with B to pack and small: each slot (one a thread) packs all of B into its
 * own copy and computes its share of A's panels over it, with no hand-off in between. */
static void slots_range(void *p, int64_t begin, int64_t end) {
  const gemm_job *j = p;
  const mace_gemm_args *g = j->g;
  const int64_t mp = (g->m + g->f->mr - 1) / g->f->mr, np = (g->n + g->f->nr - 1) / g->f->nr;
  for (int64_t s = begin; s < end; ++s) {
    float *pb = j->pb + s * j->slot_floats;
    pack_b_blocks(g, pb, 0, np, 0, g->k);
    mace_gemm_compute(g, j->pa, pb, 1, s * mp / j->slots, (s + 1) * mp / j->slots);
  }
}

size_t mace_gemm_scratch_bytes(const mace_gemm_family *f, int64_t m, int64_t n, int64_t k,
                               int a_packed, int b_packed, int threads) {
  size_t bytes = 0;
  if (!a_packed) bytes += (size_t)round_up(mace_gemm_packed_a_floats(f, m, k), 16) * sizeof(float);
  if (!b_packed) {
    const int copies = gemm_b_per_slot(f, k, n, threads) ? threads : 1;
    bytes += (size_t)(round_up(mace_gemm_packed_b_floats(f, k, n), 16) * copies) * sizeof(float);
  }
  return bytes;
}

void mace_gemm_run(mace_threadpool *pool, const mace_gemm_args *g, void *scratch) {
  const mace_gemm_family *f = g->f;
  /* A few rows: a one-row family of the same NR (the packed B is the same), so a batch-1
   * FullyConnected streams its weights once instead of computing MR rows for one. Its packed
   * A (M rows) fits in the scratch sized for MR-row panels. */
  mace_gemm_family row_f;
  mace_gemm_args row_g;
  if (!g->a_packed && g->m <= MACE_GEMM_ROW_MAX_M && g->m < f->mr && f->ukernel_row) {
    row_f = *f;
    /* With the rows kernel, all of A is one panel of M rows and each B panel is read once;
     * else one row at a time. */
    row_f.mr = f->ukernel_rows ? g->m : 1;
    row_f.ukernel = f->ukernel_rows ? f->ukernel_rows : f->ukernel_row;
    row_f.ukernel_half = NULL;  /* a 14-row kernel must not see a one-row panel */
    row_f.ukernel_narrow = NULL;
    row_f.ukernel_short[0] = row_f.ukernel_short[1] = NULL; /* nor its short ones */
    row_f.pack_cols = NULL;     /* it writes MR-row panels */
    row_g = *g;
    row_g.f = &row_f;
    g = &row_g;
    f = &row_f;
  }
  const int64_t mp = (g->m + f->mr - 1) / f->mr, np = (g->n + f->nr - 1) / f->nr;
  gemm_job j = {g, (float *)g->a_packed, (float *)g->b_packed, mp >= np, 0, 0};
  float *s = scratch;
  /* A problem too small to share: no thread hand-offs at all. */
  if (g->m * g->n * g->k < 2 * GEMM_MIN_MACS_PER_THREAD) pool = NULL;
  /* Shared by threads, B (packed here) goes along N where it has two panels a thread and A is
   * not much the larger (M <= 2N): each thread packs its own panels and uses them at once,
   * where split along M every thread read all of B, packed half on the other core, after one
   * more hand-off (ShuffleNetV2's plain 1x1 convolutions on 14x14 had run no faster on two
   * threads than on one). 464 -> 464 on 7x7 (A ten times B) and 1024 on 7x7 keep M. */
  const int threads = pool ? mace_threadpool_size(pool) : 1;
  if (j.split_m && threads > 1 && !g->b_packed && np >= 2 * threads && g->m <= 2 * g->n)
    j.split_m = 0;
  if (!g->a_packed) {
    j.pa = s;
    s += round_up(mace_gemm_packed_a_floats(f, g->m, g->k), 16);
    mace_threadpool_parallel_for(pool, mp, 1, pack_a_range, &j);
  }
  const int64_t panels = j.split_m ? mp : np;
  const int64_t macs_per_panel = (j.split_m ? f->mr * g->n : f->nr * g->m) * g->k;
  int64_t grain = GEMM_MIN_MACS_PER_THREAD / (macs_per_panel > 0 ? macs_per_panel : 1);
  if (grain < 1) grain = 1;
  if (!g->b_packed) {
    j.pb = s;
    if (!j.split_m) {
      mace_threadpool_parallel_for(pool, np, grain, pack_compute_range, &j);
      return;
    }
    /* One thread, several K blocks: B packed a K block at a time into the start of the
     * scratch (in L2) and used at once, all of M over it. Packing all of B first sent it
     * through L3 and back (mace_bench_gemm's ResNet-50 stage 3-4 GEMMs). */
    if (gemm_b_per_slot(f, g->k, g->n, threads)) {
      j.slot_floats = round_up(mace_gemm_packed_b_floats(f, g->k, g->n), 16);
      j.slots = threads;
      mace_threadpool_parallel_for(pool, threads, 1, slots_range, &j);
      return;
    }
    if (threads == 1 && g->k > MACE_GEMM_KC) {
      gemm_compute(g, j.pa, NULL, 1, 0, mp, NULL, j.pb);
      return;
    }
    mace_threadpool_parallel_for(pool, np, 1, pack_b_range, &j);
  }
  /* Split along M: one range of A panels a thread. Every range sweeps all of the packed B
   * (mace_gemm_compute), so the pool's four chunks a thread read it four times, from L3 once
   * it outgrows L2. A late thread's range is still taken over whole by the other. */
  if (j.split_m && pool) {
    const int64_t t = mace_threadpool_size(pool), share = (panels + t - 1) / t;
    if (grain < share) grain = share;
  }
  mace_threadpool_parallel_for(pool, panels, grain, compute_range, &j);
}
