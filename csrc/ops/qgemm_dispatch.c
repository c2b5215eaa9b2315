/* Dispatched int8 GEMM (not an op): family table, packing, zero-point folding, threading. */
#include "ops/qgemm_dispatch.h"

#include <pthread.h>
#include <string.h>

/* A thread's share should hold at least this many multiply-adds. */
#define QGEMM_MIN_MACS_PER_JOB 65536
#define QGEMM_TILE_MAX (64 * 64) /* MR * NR of any family: the accumulator tile is on the stack */

/* Best first; the reference family last (always there). */
static const mace_qgemm_family g_all[] = {
    {.name = "4x8__ref", .isa = MACE_ISA_REF, .mr = MACE_QGEMM_REF_MR, .nr = MACE_QGEMM_REF_NR,
     .ku = MACE_QGEMM_REF_KU, .b_signed = 0, .ukernel = mace_qgemm_4x8__ref,
     .requant = mace_qgemm_requant__ref},
};
#define QGEMM_N_ALL ((int)(sizeof(g_all) / sizeof(g_all[0])))

static const mace_qgemm_family *g_supported[QGEMM_N_ALL];
static int g_n_supported;
static const mace_qgemm_family *g_active;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int isa_allows(mace_cpu_isa active, mace_cpu_isa isa) {
  if (isa == MACE_ISA_REF || isa == active) return 1;
  return active != MACE_ISA_REF && isa != MACE_ISA_NEON && active != MACE_ISA_NEON &&
         isa < active;
}

static void choose_once(void) {
  const mace_cpu_isa active = mace_cpu_isa_active();
  for (int i = 0; i < QGEMM_N_ALL; ++i) {
    const mace_qgemm_family *f = &g_all[i];
    if (!mace_cpu_isa_supported(f->isa) || (f->supported && !f->supported())) continue;
    g_supported[g_n_supported++] = f;
    if (!g_active && isa_allows(active, f->isa)) g_active = f;
  }
}

int mace_qgemm_families(const mace_qgemm_family *const **list) {
  pthread_once(&g_once, choose_once);
  *list = g_supported;
  return g_n_supported;
}

const mace_qgemm_family *mace_qgemm_family_active(void) {
  pthread_once(&g_once, choose_once);
  return g_active;
}

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

size_t mace_qgemm_packed_a_bytes(const mace_qgemm_family *f, int64_t m, int64_t k) {
  return (size_t)(round_up(m, f->mr) * round_up(k, f->ku));
}

void mace_qgemm_pack_a(const mace_qgemm_family *f, int64_t m, int64_t k, const int8_t *a,
                       int64_t a_rs, int64_t a_cs, int8_t *dst, int32_t *row_sums) {
  const int64_t mr = f->mr, ku = f->ku, kp = round_up(k, ku);
  for (int64_t p = 0; p < round_up(m, mr) / mr; ++p) {
    int8_t *d = dst + p * mr * kp;
    for (int64_t i = 0; i < mr; ++i) {
      const int64_t row = p * mr + i;
      int32_t sum = 0;
      for (int64_t kk = 0; kk < kp; ++kk) {
        const int8_t v = (row < m && kk < k) ? a[row * a_rs + kk * a_cs] : 0;
        d[(kk / ku) * mr * ku + i * ku + kk % ku] = v;
        sum += v;
      }
      if (row < m && row_sums) row_sums[row] = sum;
    }
  }
}

/* B's panels [p_begin, p_end) packed at dst (panel p at dst + p * NR * kp), each element flipped
 * with ^ 0x80 where the stored signedness is not the family's. */
static void pack_b(const mace_qgemm_args *g, uint8_t *dst, int64_t p_begin, int64_t p_end) {
  const mace_qgemm_family *f = g->f;
  const int64_t nr = f->nr, ku = f->ku, kp = round_up(g->k, ku);
  const uint8_t flip = (g->b_signed != f->b_signed) ? 0x80 : 0;
  const uint8_t pad = (uint8_t)((uint8_t)g->b_zp ^ flip); /* a K pad row times A's zero pad */
  const uint8_t *b = (const uint8_t *)g->b;
  for (int64_t p = p_begin; p < p_end; ++p) {
    uint8_t *d = dst + p * nr * kp;
    for (int64_t j = 0; j < nr; ++j) {
      const int64_t col = p * nr + j;
      for (int64_t kk = 0; kk < kp; ++kk) {
        const uint8_t v = (col < g->n && kk < g->k) ? (uint8_t)(b[kk * g->b_rs + col * g->b_cs] ^ flip)
                                                    : pad;
        d[(kk / ku) * nr * ku + j * ku + kk % ku] = v;
      }
    }
  }
}

size_t mace_qgemm_scratch_bytes(const mace_qgemm_family *f, int64_t m, int64_t n, int64_t k) {
  const size_t packed_b = (size_t)(round_up(n, f->nr) * round_up(k, f->ku));
  const size_t bias = (size_t)m * sizeof(int32_t);
  return (size_t)round_up((int64_t)packed_b, 64) + (size_t)round_up((int64_t)bias, 64);
}

typedef struct qgemm_job {
  const mace_qgemm_args *g;
  uint8_t *packed_b;
  const int32_t *bias; /* bias - b_zp_internal * row_sums */
  int split_m;         /* jobs are A panels (B packed already), else B panels (packed here) */
} qgemm_job;

/* Tile (A panel pa, B panel pb) into C. */
static void compute_tile(const qgemm_job *j, int64_t pa, int64_t pb) {
  const mace_qgemm_args *g = j->g;
  const mace_qgemm_family *f = g->f;
  const int64_t mr = f->mr, nr = f->nr, kp = round_up(g->k, f->ku);
  const int64_t i0 = pa * mr, j0 = pb * nr;
  const int64_t rows = g->m - i0 < mr ? g->m - i0 : mr;
  const int64_t cols = g->n - j0 < nr ? g->n - j0 : nr;
  int32_t acc[QGEMM_TILE_MAX];
  f->ukernel(kp, g->a_packed + pa * mr * kp, j->packed_b + pb * nr * kp, acc);
  f->requant(acc, nr, rows, cols, j->bias + i0, g->mult + i0, g->shift + i0, &g->out,
             (uint8_t *)g->c + i0 * g->c_rs + j0 * g->c_cs, g->c_rs, g->c_cs);
}

static void qgemm_range(void *ctx, int64_t begin, int64_t end) {
  const qgemm_job *j = (const qgemm_job *)ctx;
  const mace_qgemm_family *f = j->g->f;
  const int64_t pm = round_up(j->g->m, f->mr) / f->mr, pn = round_up(j->g->n, f->nr) / f->nr;
  if (j->split_m) {
    for (int64_t pb = 0; pb < pn; ++pb)
      for (int64_t pa = begin; pa < end; ++pa) compute_tile(j, pa, pb);
    return;
  }
  for (int64_t pb = begin; pb < end; ++pb) {
    pack_b(j->g, j->packed_b, pb, pb + 1);
    for (int64_t pa = 0; pa < pm; ++pa) compute_tile(j, pa, pb);
  }
}

void mace_qgemm_run(mace_threadpool *pool, const mace_qgemm_args *g, void *scratch) {
  const mace_qgemm_family *f = g->f;
  const int64_t pm = round_up(g->m, f->mr) / f->mr, pn = round_up(g->n, f->nr) / f->nr;
  const int64_t kp = round_up(g->k, f->ku);
  const int threads = pool ? mace_threadpool_size(pool) : 1;
  const size_t packed_b = (size_t)round_up(pn * f->nr * kp, 64);
  int32_t *bias = (int32_t *)((uint8_t *)scratch + packed_b);
  /* The zero point in the packed B's terms: a flip to u8 adds 128, a flip to i8 subtracts it. */
  int32_t zp = g->b_zp;
  qgemm_job job;
  int64_t grain;
  if (g->b_signed != f->b_signed) zp += f->b_signed ? -128 : 128;
  for (int64_t i = 0; i < g->m; ++i)
    bias[i] = (int32_t)((uint32_t)(g->bias ? g->bias[i] : 0) -
                        (uint32_t)zp * (uint32_t)g->a_row_sums[i]);
  job.g = g;
  job.packed_b = (uint8_t *)scratch;
  job.bias = bias;
  job.split_m = pn < 2 * threads && pm > pn;
  if (job.split_m) {
    pack_b(g, job.packed_b, 0, pn);
    grain = QGEMM_MIN_MACS_PER_JOB / (f->mr * kp * pn * f->nr) + 1;
    mace_threadpool_parallel_for(pool, pm, grain, qgemm_range, &job);
  } else {
    grain = QGEMM_MIN_MACS_PER_JOB / (f->nr * kp * pm * f->mr) + 1;
    mace_threadpool_parallel_for(pool, pn, grain, qgemm_range, &job);
  }
}
