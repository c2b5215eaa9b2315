/* Unit test of the thread pool: parallel_for covers [0, n) exactly once in few contiguous chunks for
 * many n / grain / thread counts; pools are created and destroyed repeatedly; errors are reported;
 * the caller is pinned only while bound, and only while the pool is pinned. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "test_util.h"

typedef struct cover {
  atomic_int *hits;      /* per index */
  atomic_int calls;
  atomic_int empty_calls;
  atomic_int out_of_range;
  atomic_int_fast64_t min_len, max_len; /* of the ranges passed */
  int64_t n;
} cover;

static void mark(void *ctx, int64_t begin, int64_t end) {
  cover *c = ctx;
  atomic_fetch_add(&c->calls, 1);
  if (begin >= end) atomic_fetch_add(&c->empty_calls, 1);
  if (begin < 0 || end > c->n) {
    atomic_fetch_add(&c->out_of_range, 1);
    return;
  }
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&c->hits[i], 1);
  int_fast64_t v = atomic_load(&c->min_len);
  while (end - begin < v && !atomic_compare_exchange_weak(&c->min_len, &v, end - begin)) {
  }
  v = atomic_load(&c->max_len);
  while (end - begin > v && !atomic_compare_exchange_weak(&c->max_len, &v, end - begin)) {
  }
}

static void check_cover(mace_threadpool *pool, int threads, int64_t n, int64_t grain) {
  cover c;
  c.n = n;
  c.hits = calloc((size_t)(n > 0 ? n : 1), sizeof(atomic_int));
  atomic_init(&c.calls, 0);
  atomic_init(&c.empty_calls, 0);
  atomic_init(&c.out_of_range, 0);
  atomic_init(&c.min_len, INT64_MAX);
  atomic_init(&c.max_len, 0);
  for (int64_t i = 0; i < n; ++i) atomic_init(&c.hits[i], 0);
  mace_threadpool_parallel_for(pool, n, grain, mark, &c);
  int64_t wrong = 0, first = -1;
  for (int64_t i = 0; i < n; ++i)
    if (atomic_load(&c.hits[i]) != 1) {
      if (first < 0) first = i;
      ++wrong;
    }
  CHECK(wrong == 0, "threads %d n %lld grain %lld: %lld indices not covered exactly once (first %lld hit %d times)",
        threads, (long long)n, (long long)grain, (long long)wrong, (long long)first,
        first >= 0 ? atomic_load(&c.hits[first]) : 0);
  int calls = atomic_load(&c.calls);
  int64_t g = grain < 1 ? 1 : grain;
  int64_t max_chunks = n <= 0 ? 0 : (n + g - 1) / g;
  /* four chunks a thread where the window has them, else at most one */
  int64_t limit = max_chunks < threads ? max_chunks : threads;
  if (threads > 1 && max_chunks >= 4 * (int64_t)threads) limit = 4 * (int64_t)threads;
  CHECK(calls <= limit, "threads %d n %lld grain %lld: %d calls, at most %lld expected", threads, (long long)n,
        (long long)grain, calls, (long long)limit);
  CHECK(n <= 0 || calls >= 1, "n %lld: no call", (long long)n);
  CHECK(atomic_load(&c.empty_calls) == 0, "threads %d n %lld grain %lld: empty ranges passed", threads,
        (long long)n, (long long)grain);
  CHECK(atomic_load(&c.out_of_range) == 0, "threads %d n %lld: range outside [0, n)", threads, (long long)n);
  /* equal shares: the chunks differ by one item at most */
  CHECK(n <= 0 || atomic_load(&c.max_len) - atomic_load(&c.min_len) <= 1,
        "threads %d n %lld grain %lld: chunks of %lld to %lld items", threads, (long long)n,
        (long long)grain, (long long)atomic_load(&c.min_len), (long long)atomic_load(&c.max_len));
  free(c.hits);
}

/* Many small jobs back to back: the pool must not lose or repeat a job between generations. */
static void sum_range(void *ctx, int64_t begin, int64_t end) {
  atomic_llong *sum = ctx;
  long long s = 0;
  for (int64_t i = begin; i < end; ++i) s += i;
  atomic_fetch_add(sum, s);
}

/* Two callers on different threads share one pool: each job still sums exactly. */
typedef struct shared_caller {
  mace_threadpool *pool;
  int bad;
} shared_caller;

static void *shared_caller_main(void *arg) {
  shared_caller *c = arg;
  for (int rep = 0; rep < 300; ++rep) {
    atomic_llong sum = 0;
    int64_t n = 1000 + rep;
    mace_threadpool_parallel_for(c->pool, n, 7, sum_range, &sum);
    if (atomic_load(&sum) != (long long)n * (n - 1) / 2) c->bad++;
  }
  return NULL;
}

static void check_shared_pools(void) {
  mace_threadpool *a = NULL, *b = NULL, *c = NULL;
  CHECK(mace_threadpool_acquire(3, MACE_AFFINITY_NONE, &a) == MACE_OK, "%s", mace_last_error());
  CHECK(mace_threadpool_acquire(3, MACE_AFFINITY_NONE, &b) == MACE_OK, "%s", mace_last_error());
  CHECK(mace_threadpool_acquire(2, MACE_AFFINITY_NONE, &c) == MACE_OK, "%s", mace_last_error());
  CHECK(a && a == b, "same thread count and affinity must share one pool");
  CHECK(c && c != a, "another thread count gets its own pool");
  if (!a || !b || !c) return;
  shared_caller callers[2] = {{a, 0}, {b, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, shared_caller_main, &callers[i]);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  CHECK(callers[0].bad == 0 && callers[1].bad == 0, "concurrent jobs on a shared pool: %d, %d wrong",
        callers[0].bad, callers[1].bad);
  mace_threadpool_release(a);
  mace_threadpool_release(c);
  mace_threadpool *d = NULL;
  CHECK(mace_threadpool_acquire(3, MACE_AFFINITY_NONE, &d) == MACE_OK && d == b,
        "a pool still held is handed out again");
  mace_threadpool_release(d);
  mace_threadpool_release(b);
  mace_threadpool_release(NULL);
}

static void noop_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
}

/* The caller's core count now, and whether the mask is its own. */
static int caller_cores(const cpu_set_t *own, int *is_own) {
  cpu_set_t now;
  pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
  *is_own = CPU_EQUAL(&now, own);
  return CPU_COUNT(&now);
}

/* The caller takes its core only between bind and unbind, and only from its first job that
 * goes to the workers (a serial one leaves it alone), and gets its own mask back; a pool
 * without a policy or without workers leaves it alone. Nested bindings: the inner one binds
 * for its own jobs and gives the mask back; the outer one is armed again. */
static void check_caller_binding(void) {
  cpu_set_t own;
  int is_own = 0;
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof(own), &own) == 0, "getaffinity");
  const mace_affinity affs[] = {MACE_AFFINITY_NONE, MACE_AFFINITY_BIG_ONLY};
  /* MACE_THREAD_ADAPT=0: pinned under a policy whatever the load; adaptive: the pool says. */
  for (int adapt = 0; adapt < 2; ++adapt)
    for (int a = 0; a < 2; ++a)
      for (int threads = 1; threads <= 2; ++threads) {
        mace_threadpool *pool = NULL;
        if (!adapt) setenv("MACE_THREAD_ADAPT", "0", 1);
        CHECK(mace_threadpool_create(threads, affs[a], &pool) == MACE_OK, "create");
        unsetenv("MACE_THREAD_ADAPT");
        if (!pool) continue;
        mace_threadpool_stats st;
        mace_threadpool_get_stats(pool, &st);
        const int pinned = affs[a] != MACE_AFFINITY_NONE && threads > 1 && (!adapt || st.pinned);
        CHECK(adapt || st.pinned == pinned, "threads %d affinity %d: pinned %d without adapting",
              threads, (int)affs[a], st.pinned);
        mace_caller_binding b;
        mace_threadpool_bind_caller(pool, &b);
        mace_threadpool_parallel_for(pool, 1, 1, noop_range, NULL); /* serial: no binding */
        caller_cores(&own, &is_own);
        CHECK(!b.bound && is_own, "affinity %d threads %d: bound before a parallel job",
              (int)affs[a], threads);
        check_cover(pool, threads, 1000, 1); /* works while bound */
        const int cores = caller_cores(&own, &is_own);
        CHECK(b.bound == pinned, "affinity %d threads %d: bound %d", (int)affs[a], threads, b.bound);
        CHECK(pinned ? cores == 1 : is_own,
              "affinity %d threads %d: the caller may run on %d cores while bound", (int)affs[a],
              threads, cores);
        mace_threadpool_unbind_caller(&b);
        caller_cores(&own, &is_own);
        CHECK(is_own, "affinity %d threads %d: caller's mask not restored", (int)affs[a], threads);
        if (pinned) { /* nested: inner binds and restores, then the outer binds on its job */
          mace_caller_binding outer, inner;
          mace_threadpool_bind_caller(pool, &outer);
          mace_threadpool_bind_caller(pool, &inner);
          check_cover(pool, threads, 1000, 1);
          CHECK(inner.bound && !outer.bound, "nested: the inner binding did not bind alone");
          mace_threadpool_unbind_caller(&inner);
          caller_cores(&own, &is_own);
          CHECK(is_own, "nested: the inner unbind did not restore the mask");
          check_cover(pool, threads, 1000, 1);
          CHECK(outer.bound && caller_cores(&own, &is_own) == 1, "nested: outer not re-armed");
          mace_threadpool_unbind_caller(&outer);
          caller_cores(&own, &is_own);
          CHECK(is_own, "nested: the outer unbind did not restore the mask");
        }
        mace_threadpool_destroy(pool);
      }
  mace_caller_binding none;
  mace_threadpool_bind_caller(NULL, &none);
  CHECK(!none.bound, "a NULL pool bound the caller");
  mace_threadpool_unbind_caller(&none);
}

int main(void) {
  static const int kThreads[] = {1, 2, 3, 4, 7, 8, 16};
  static const int64_t kN[] = {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 100, 1000, 4097, 100003};
  static const int64_t kGrain[] = {0, 1, 2, 3, 16, 1000, 1 << 20};
  for (size_t t = 0; t < sizeof(kThreads) / sizeof(kThreads[0]); ++t) {
    mace_threadpool *pool = NULL;
    mace_status st = mace_threadpool_create(kThreads[t], MACE_AFFINITY_NONE, &pool);
    CHECK(st == MACE_OK && pool, "create(%d): %s", kThreads[t], mace_last_error());
    if (!pool) continue;
    CHECK(mace_threadpool_size(pool) == kThreads[t], "size %d != %d", mace_threadpool_size(pool), kThreads[t]);
    for (size_t i = 0; i < sizeof(kN) / sizeof(kN[0]); ++i)
      for (size_t g = 0; g < sizeof(kGrain) / sizeof(kGrain[0]); ++g) check_cover(pool, kThreads[t], kN[i], kGrain[g]);
    check_cover(pool, kThreads[t], -5, 1); /* negative n: nothing to do */
    for (int rep = 0; rep < 2000; ++rep) {
      atomic_llong sum;
      atomic_init(&sum, 0);
      int64_t n = 1 + rep % 97;
      mace_threadpool_parallel_for(pool, n, 1, sum_range, &sum);
      if (atomic_load(&sum) != n * (n - 1) / 2) {
        CHECK(0, "threads %d rep %d: sum %lld, want %lld", kThreads[t], rep, (long long)atomic_load(&sum),
              (long long)(n * (n - 1) / 2));
        break;
      }
    }
    mace_threadpool_destroy(pool);
  }
  /* NULL pool runs inline; default size is at least one thread. */
  check_cover(NULL, 1, 1000, 1);
  CHECK(mace_threadpool_size(NULL) == 1, "size(NULL) = %d", mace_threadpool_size(NULL));
  mace_threadpool *pool = NULL;
  CHECK(mace_threadpool_create(0, MACE_AFFINITY_NONE, &pool) == MACE_OK && mace_threadpool_size(pool) >= 1,
        "default pool: %s", mace_last_error());
  if (pool) check_cover(pool, mace_threadpool_size(pool), 12345, 7);
  mace_threadpool_destroy(pool);
  mace_threadpool_destroy(NULL);
  /* Too many threads is an error with a message, not a crash. */
  pool = NULL;
  mace_status st = mace_threadpool_create(100000, MACE_AFFINITY_NONE, &pool);
  CHECK(st != MACE_OK && pool == NULL && *mace_last_error(), "100000 threads accepted");
  if (pool) mace_threadpool_destroy(pool);
  /* Create and destroy repeatedly, with and without work, with affinity requests. */
  for (int rep = 0; rep < 200; ++rep) {
    pool = NULL;
    mace_affinity aff = rep % 3 == 0 ? MACE_AFFINITY_NONE : rep % 3 == 1 ? MACE_AFFINITY_BIG_ONLY : MACE_AFFINITY_LITTLE_ONLY;
    st = mace_threadpool_create(1 + rep % 6, aff, &pool);
    CHECK(st == MACE_OK, "rep %d: %s", rep, mace_last_error());
    if (!pool) break;
    if (rep % 2) check_cover(pool, 1 + rep % 6, 1 + rep, 1);
    mace_threadpool_destroy(pool);
  }
  check_shared_pools();
  check_caller_binding();
  return TEST_FINISH("%ld checks", test_checks);
}
