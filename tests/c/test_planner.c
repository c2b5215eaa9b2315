/* Unit test of the arena planner (core/planner.h): buffers alive at the same time never overlap,
 * offsets are 64-byte aligned, the arena is no larger than no reuse at all, bad items are refused. */
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

int main(void) {
  test_fixed_cases();
  test_random();
  return TEST_FINISH("%ld checks", test_checks);
}
