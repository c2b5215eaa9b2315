/* Unit test of the arena planner (core/planner.h): buffers alive at the same time never overlap,
 * offsets are 64-byte aligned, the arena is no larger than no reuse at all, bad items are refused.
 * The net's planner (mace_planner): views share their root's bytes and keep it alive, a gather's
 * inputs land inside its output where they may, kept tensors are never overwritten nor lent to
 * the caller, a description seen before gets its plan back; random graphs of views, gathers and
 * kept tensors never put two tensors alive at the same time on the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/planner.h"
#include "core/tensor.h"
#include "mace/mace.h"
#include "test_util.h"

static int64_t align_up(int64_t v) { return (v + MACE_ALIGN - 1) / MACE_ALIGN * MACE_ALIGN; }

static int live_together(const mace_arena_item *a, const mace_arena_item *b) {
  return !(a->last < b->first || b->last < a->first);
}

/* Checks one plan; returns the number of problems found (and reports the first few). */
static int verify(const char *what, const mace_arena_item *items, int n, const int64_t *off, int64_t peak) {
  int bad = 0;
  int64_t naive = 0, max_end = 0;
  for (int i = 0; i < n; ++i) {
    naive += align_up(items[i].bytes);
    if (off[i] < 0 || off[i] % MACE_ALIGN != 0) {
      if (bad++ < 5) fprintf(stderr, "%s: item %d offset %lld not 64-byte aligned\n", what, i, (long long)off[i]);
    }
    if (off[i] + items[i].bytes > max_end) max_end = off[i] + items[i].bytes;
  }
  if (max_end > peak) {
    if (bad++ < 5) fprintf(stderr, "%s: an item ends at %lld past the peak %lld\n", what, (long long)max_end, (long long)peak);
  }
  if (peak > naive) {
    if (bad++ < 5) fprintf(stderr, "%s: peak %lld > naive sum %lld\n", what, (long long)peak, (long long)naive);
  }
  for (int i = 0; i < n; ++i) {
    if (items[i].bytes == 0) continue;
    for (int j = i + 1; j < n; ++j) {
      if (items[j].bytes == 0 || !live_together(&items[i], &items[j])) continue;
      int64_t a0 = off[i], a1 = off[i] + items[i].bytes, b0 = off[j], b1 = off[j] + items[j].bytes;
      if (a0 < b1 && b0 < a1) {
        if (bad++ < 5)
          fprintf(stderr, "%s: items %d [%lld,%lld) life %d..%d and %d [%lld,%lld) life %d..%d overlap\n", what, i,
                  (long long)a0, (long long)a1, items[i].first, items[i].last, j, (long long)b0, (long long)b1,
                  items[j].first, items[j].last);
      }
    }
  }
  /* Lower bound: at every step the live items must fit. */
  int steps = 0;
  for (int i = 0; i < n; ++i)
    if (items[i].last + 2 > steps) steps = items[i].last + 2;
  for (int t = -1; t < steps; ++t) {
    int64_t live = 0;
    for (int i = 0; i < n; ++i)
      if (items[i].first <= t && t <= items[i].last) live += items[i].bytes;
    if (live > peak) {
      if (bad++ < 5) fprintf(stderr, "%s: %lld bytes live at step %d but peak %lld\n", what, (long long)live, t, (long long)peak);
    }
  }
  return bad;
}

static uint64_t g_rng = 88172645463325252ull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static void test_fixed_cases(void) {
  int64_t off[8], peak = -1;
  CHECK(mace_arena_plan(NULL, 0, off, &peak) == MACE_OK && peak == 0, "empty plan: peak %lld", (long long)peak);

  /* A chain a -> b -> c of equal buffers: a and c can share, so two buffers suffice. */
  mace_arena_item chain[3] = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  CHECK(mace_arena_plan(chain, 3, off, &peak) == MACE_OK, "%s", mace_last_error());
  CHECK(verify("chain", chain, 3, off, peak) == 0, "chain");
  CHECK(peak == 2 * align_up(1000), "chain peak %lld, want %lld", (long long)peak, (long long)(2 * align_up(1000)));

  /* Disjoint lifetimes: everything fits at offset 0. */
  mace_arena_item disjoint[4] = {{100, 0, 0}, {300, 1, 1}, {200, 2, 2}, {50, 3, 3}};
  CHECK(mace_arena_plan(disjoint, 4, off, &peak) == MACE_OK, "%s", mace_last_error());
  CHECK(verify("disjoint", disjoint, 4, off, peak) == 0 && peak == align_up(300), "disjoint peak %lld",
        (long long)peak);

  /* All alive together: the sum of aligned sizes. */
  mace_arena_item all[4] = {{1, 0, 5}, {64, 0, 5}, {65, 0, 5}, {0, 0, 5}};
  CHECK(mace_arena_plan(all, 4, off, &peak) == MACE_OK, "%s", mace_last_error());
  CHECK(verify("all", all, 4, off, peak) == 0 && peak == 64 + 64 + 128, "all-live peak %lld", (long long)peak);

  /* Model inputs start at -1. */
  mace_arena_item inputs[3] = {{256, -1, 0}, {128, 0, 1}, {256, 1, 2}};
  CHECK(mace_arena_plan(inputs, 3, off, &peak) == MACE_OK, "%s", mace_last_error());
  CHECK(verify("inputs", inputs, 3, off, peak) == 0, "inputs");

  /* Bad items are refused with a message. */
  mace_arena_item neg[1] = {{-1, 0, 0}};
  CHECK(mace_arena_plan(neg, 1, off, &peak) != MACE_OK && *mace_last_error(), "negative size accepted");
  mace_arena_item backwards[2] = {{64, 0, 1}, {64, 3, 2}};
  CHECK(mace_arena_plan(backwards, 2, off, &peak) != MACE_OK && *mace_last_error(), "last < first accepted");
}

static void test_random(void) {
  enum { MAX_N = 300 };
  static mace_arena_item items[MAX_N];
  static int64_t off[MAX_N], off2[MAX_N];
  int64_t total_peak = 0, total_naive = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int n = (int)(rnd() % (trial < 100 ? 12 : MAX_N)) + 1;
    int steps = (int)(rnd() % 60) + 1;
    for (int i = 0; i < n; ++i) {
      int kind = (int)(rnd() % 10);
      /* sizes: zero, tiny, odd, page-ish, large; some equal to each other */
      items[i].bytes = kind == 0 ? 0 : kind < 3 ? (int64_t)(rnd() % 64) + 1
                                               : kind < 8 ? (int64_t)(rnd() % 100000) + 1 : (int64_t)1 << (rnd() % 24);
      items[i].first = (int)(rnd() % (unsigned)(steps + 1)) - 1;
      int span = rnd() % 4 == 0 ? (int)(rnd() % (unsigned)(steps + 1)) : (int)(rnd() % 3);
      items[i].last = items[i].first + span;
      if (items[i].last < 0) items[i].last = 0;
    }
    int64_t peak = -1, peak2 = -1;
    mace_status st = mace_arena_plan(items, n, off, &peak);
    CHECK(st == MACE_OK, "trial %d: %s", trial, mace_last_error());
    if (st != MACE_OK) continue;
    char what[64];
    snprintf(what, sizeof(what), "trial %d (n=%d)", trial, n);
    int bad = verify(what, items, n, off, peak);
    CHECK(bad == 0, "%s: %d problems", what, bad);
    /* Deterministic: the same items give the same plan. */
    CHECK(mace_arena_plan(items, n, off2, &peak2) == MACE_OK && peak2 == peak &&
              memcmp(off, off2, (size_t)n * sizeof(int64_t)) == 0,
          "%s: plan differs between two calls", what);
    total_peak += peak;
    for (int i = 0; i < n; ++i) total_naive += align_up(items[i].bytes);
  }
  printf("random plans: arena %.1f%% of no reuse\n", 100.0 * (double)total_peak / (double)total_naive);
}


/* ---- the net's planner ------------------------------------------------------------------ */

static void set_tensor(mace_planner *p, int i, int64_t bytes, int first, int last, int view_of,
                       unsigned flags) {
  mace_plan_tensor *t = mace_planner_tensor(p, i);
  t->bytes = bytes;
  t->first = first;
  t->last = last;
  t->view_of = view_of;
  t->flags = flags;
}

static int ranges_overlap(int64_t a, int64_t n, int64_t b, int64_t m) {
  return n > 0 && m > 0 && a < b + m && b < a + n;
}

/* Ops: 0 a = f(x); 1 v = view(a); 2 b = g(x); 3 c = h(b); 4 y = c + v. */
static void test_views(void) {
  mace_planner *p = NULL;
  CHECK(mace_planner_create(6, 5, &p) == MACE_OK, "%s", mace_last_error());
  if (!p) return;
  enum { X, A, V, B, Cc, Y };
  set_tensor(p, X, 4096, 0, 2, -1, MACE_PLAN_CALLER);
  set_tensor(p, A, 4096, 0, 1, -1, MACE_PLAN_COMPUTED);
  set_tensor(p, V, 4096, 1, 4, A, MACE_PLAN_COMPUTED);
  set_tensor(p, B, 4096, 2, 3, -1, MACE_PLAN_COMPUTED);
  set_tensor(p, Cc, 4096, 3, 4, -1, MACE_PLAN_COMPUTED);
  set_tensor(p, Y, 4096, 4, 5, -1, MACE_PLAN_COMPUTED | MACE_PLAN_CALLER);
  CHECK(mace_planner_plan(p) == MACE_OK, "%s", mace_last_error());
  const int64_t *off = mace_planner_offsets(p);
  CHECK(off[V] == off[A], "the view at %lld, its root at %lld", (long long)off[V], (long long)off[A]);
  CHECK(!ranges_overlap(off[A], 4096, off[B], 4096) && !ranges_overlap(off[A], 4096, off[Cc], 4096),
        "a is reused while its view lives");
  CHECK(mace_planner_borrowable(p, X) && mace_planner_borrowable(p, Y), "x and y may be lent");
  CHECK(mace_planner_naive_bytes(p) == 5 * 4096, "naive %lld: the view takes no bytes",
        (long long)mace_planner_naive_bytes(p));
  mace_planner_destroy(p);
}

/* Ops: 0 p = f(x); 1 q = g(x); 2 c = concat(p, q); 3 y = h(c). */
static void test_gather(int64_t q_offset) {
  mace_planner *p = NULL;
  CHECK(mace_planner_create(5, 4, &p) == MACE_OK, "%s", mace_last_error());
  if (!p) return;
  enum { X, P, Q, Cc, Y };
  set_tensor(p, X, 2048, 0, 1, -1, MACE_PLAN_CALLER);
  set_tensor(p, P, 1024, 0, 2, -1, MACE_PLAN_COMPUTED);
  set_tensor(p, Q, 1024, 1, 2, -1, MACE_PLAN_COMPUTED);
  set_tensor(p, Cc, 2048, 2, 5, -1, MACE_PLAN_COMPUTED | MACE_PLAN_CALLER);  /* an output */
  set_tensor(p, Y, 2048, 3, 4, -1, MACE_PLAN_COMPUTED | MACE_PLAN_CALLER);
  const int in[2] = {P, Q};
  const int64_t offs[2] = {0, q_offset};
  CHECK(mace_planner_add_gather(p, Cc, 2, in, offs) == MACE_OK, "%s", mace_last_error());
  const int bad_in[2] = {P, 9};
  CHECK(mace_planner_add_gather(p, Cc, 2, bad_in, offs) == MACE_INVALID_ARGS, "tensor 9 accepted");
  CHECK(mace_planner_plan(p) == MACE_OK, "%s", mace_last_error());
  const int64_t *off = mace_planner_offsets(p);
  if (q_offset % MACE_ALIGN == 0) {
    CHECK(off[P] == off[Cc] && off[Q] == off[Cc] + q_offset, "slices at %lld and %lld in %lld",
          (long long)off[P], (long long)off[Q], (long long)off[Cc]);
    CHECK(!mace_planner_borrowable(p, Cc), "a Concat output holding slices was lent");
    CHECK(!ranges_overlap(off[X], 2048, off[Cc], 2048), "x under the Concat (p is written at op 0)");
  } else {
    CHECK(!ranges_overlap(off[P], 1024, off[Cc], 2048) && !ranges_overlap(off[Q], 1024, off[Cc], 2048),
          "an unaligned slice was placed");
    CHECK(mace_planner_borrowable(p, Cc), "a plain Concat output was not lent");
  }
  CHECK(mace_planner_naive_bytes(p) == 2048 + 1024 + 1024 + 2048 + 2048, "naive %lld",
        (long long)mace_planner_naive_bytes(p));
  mace_planner_destroy(p);
}

/* A chain x -> t1 -> ... -> t5 = y: keeping t2 keeps its bytes to the end and out of reach of
 * every later tensor; keeping y stops lending it; dropping the keeps gives the first plan back. */
static void test_keep_and_memo(void) {
  enum { NT = 6, NO = 5 };
  mace_planner *p = NULL;
  CHECK(mace_planner_create(NT, NO, &p) == MACE_OK, "%s", mace_last_error());
  if (!p) return;
  set_tensor(p, 0, 8192, 0, 0, -1, MACE_PLAN_CALLER);
  for (int i = 1; i < NT; ++i)
    set_tensor(p, i, 8192, i - 1, i == NT - 1 ? NO : i, -1, MACE_PLAN_COMPUTED);
  mace_planner_tensor(p, NT - 1)->flags |= MACE_PLAN_CALLER;
  mace_planner_set_scratch(p, 2, 100);
  CHECK(mace_planner_plan(p) == MACE_OK, "%s", mace_last_error());
  int64_t first[NT], arena0 = mace_planner_arena_bytes(p);
  memcpy(first, mace_planner_offsets(p), sizeof(first));
  const int64_t scratch0 = mace_planner_scratch_offset(p, 2);
  CHECK(arena0 <= 3 * 8192, "a chain needs two buffers and a scratch, planned %lld", (long long)arena0);
  mace_planner_tensor(p, 2)->flags |= MACE_PLAN_KEEP;
  mace_planner_tensor(p, NT - 1)->flags |= MACE_PLAN_KEEP;
  CHECK(mace_planner_plan(p) == MACE_OK, "%s", mace_last_error());
  const int64_t *off = mace_planner_offsets(p);
  for (int i = 3; i < NT; ++i)
    CHECK(!ranges_overlap(off[2], 8192, off[i], 8192), "kept t2 under t%d", i);
  CHECK(!ranges_overlap(off[2], 8192, mace_planner_scratch_offset(p, 3), 0) &&
            !ranges_overlap(off[2], 8192, mace_planner_scratch_offset(p, 2), 100),
        "kept t2 under op 2's scratch");
  CHECK(!mace_planner_borrowable(p, NT - 1), "a kept output was lent");
  CHECK(mace_planner_arena_bytes(p) > arena0, "keeping costs nothing?");
  mace_planner_tensor(p, 2)->flags &= ~MACE_PLAN_KEEP;
  mace_planner_tensor(p, NT - 1)->flags &= ~MACE_PLAN_KEEP;
  CHECK(mace_planner_plan(p) == MACE_OK, "%s", mace_last_error());
  CHECK(memcmp(first, mace_planner_offsets(p), sizeof(first)) == 0 &&
            mace_planner_arena_bytes(p) == arena0 && mace_planner_scratch_offset(p, 2) == scratch0,
        "the first description's plan did not come back");
  CHECK(mace_planner_borrowable(p, NT - 1), "y not lent again");
  /* Another size is another description. */
  mace_planner_tensor(p, 3)->bytes = 3 * 8192;
  CHECK(mace_planner_plan(p) == MACE_OK && mace_planner_arena_bytes(p) > arena0, "a larger t3");
  mace_planner_destroy(p);
}

/* Random graphs: op i writes tensor i + 1 from earlier tensors (a view of one, a gather of
 * several, or a plain op); some tensors kept. Any two tensors alive at the same op (a kept one
 * to the end) that do not share a buffer by design never share a byte. */
static void test_random_graphs(void) {
  enum { MAX_T = 40 };
  for (int trial = 0; trial < 300; ++trial) {
    const int nt = (int)(rnd() % (MAX_T - 2)) + 3, no = nt - 1;
    mace_planner *p = NULL;
    if (mace_planner_create(nt, no, &p) != MACE_OK) {
      CHECK(0, "%s", mace_last_error());
      return;
    }
    int root[MAX_T];
    unsigned char inside[MAX_T][MAX_T];  /* inside[t][y]: t may lie in y's bytes (a gather) */
    memset(inside, 0, sizeof(inside));
    int64_t bytes[MAX_T];
    set_tensor(p, 0, 64 * (int64_t)(rnd() % 20 + 1), 0, 0, -1, MACE_PLAN_CALLER);
    root[0] = 0;
    bytes[0] = mace_planner_tensor(p, 0)->bytes;
    for (int i = 1; i < nt; ++i) {
      const int op = i - 1, kind = (int)(rnd() % 4);
      const int src = (int)(rnd() % (unsigned)i);
      if (kind == 0 && i > 1) { /* a view of src */
        const int r = root[src];
        set_tensor(p, i, bytes[src], op, op, r, MACE_PLAN_COMPUTED);
        root[i] = r;
        bytes[i] = bytes[src];
      } else {
        bytes[i] = 64 * (int64_t)(rnd() % 20 + 1);
        set_tensor(p, i, bytes[i], op, op, -1, MACE_PLAN_COMPUTED);
        root[i] = i;
      }
      if (mace_planner_tensor(p, src)->last < op) mace_planner_tensor(p, src)->last = op;
      if (kind == 1 && i > 2) { /* a gather of up to 3 distinct earlier plain tensors */
        int in[3], n = 0;
        int64_t offs[3], at = 0;
        for (int k = 0; k < 3; ++k) {
          const int t = 1 + (int)(rnd() % (unsigned)(i - 1));
          int dup = 0;
          for (int j = 0; j < n; ++j) dup |= in[j] == t;
          if (dup || root[t] != t) continue;
          in[n] = t;
          offs[n++] = at;
          at += bytes[t];
          if (mace_planner_tensor(p, t)->last < op) mace_planner_tensor(p, t)->last = op;
        }
        if (n > 0 && at <= bytes[i]) {
          CHECK(mace_planner_add_gather(p, i, n, in, offs) == MACE_OK, "%s", mace_last_error());
          for (int k = 0; k < n; ++k) inside[in[k]][i] = 1;
        }
      }
      if (rnd() % 5 == 0) mace_planner_tensor(p, i)->flags |= MACE_PLAN_KEEP;
    }
    mace_planner_tensor(p, nt - 1)->last = no;
    for (int k = 0; k < nt; ++k) /* nested gathers: transitive */
      for (int t = 0; t < nt; ++t)
        for (int y = 0; y < nt; ++y) inside[t][y] |= inside[t][k] && inside[k][y];
    mace_status st = mace_planner_plan(p);
    CHECK(st == MACE_OK, "trial %d: %s", trial, mace_last_error());
    const int64_t *off = mace_planner_offsets(p);
    /* Bytes shared by design: a view's are its root's; a gathered tensor's lie inside the
     * gather's output (and its views), maybe nested. */
    for (int a = 0; st == MACE_OK && a < nt; ++a) {
      const mace_plan_tensor *ta = mace_planner_tensor(p, a);
      const int la = (ta->flags & MACE_PLAN_KEEP) ? no : ta->last;
      for (int b = a + 1; b < nt; ++b) {
        const mace_plan_tensor *tb = mace_planner_tensor(p, b);
        const int lb = (tb->flags & MACE_PLAN_KEEP) ? no : tb->last;
        if (la < tb->first || lb < ta->first) continue;
        if (root[a] == root[b]) continue;
        const int shared = inside[root[a]][root[b]] || inside[root[b]][root[a]];
        const int64_t ea = off[a], eb = off[b];
        if (shared || !ranges_overlap(ea, bytes[a], eb, bytes[b])) continue;
        CHECK(0, "trial %d: tensors %d [%lld,+%lld) life %d..%d and %d [%lld,+%lld) life %d..%d "
              "overlap", trial, a, (long long)ea, (long long)bytes[a], ta->first, la, b,
              (long long)eb, (long long)bytes[b], tb->first, lb);
      }
    }
    mace_planner_destroy(p);
  }
}

int main(void) {
  test_fixed_cases();
  test_random();
  test_views();
  test_gather(1024);
  test_gather(1000);
  test_keep_and_memo();
  test_random_graphs();
  return TEST_FINISH("%ld checks", test_checks);
}
