/* Unit test of the thread pool on an oversubscribed machine: with busy sibling threads on every
 * core, many parallel_for calls on pools of several sizes and affinities (shared by two callers,
 * workers made slow so the caller steals, sleeps and runs alone) cover every index exactly once,
 * and nothing deadlocks (an alarm ends the test). Correctness only: no timing is asserted. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/threadpool.h"
#include "test_util.h"

#define DEADLINE_S 240
#define MAX_N 5000

static atomic_int g_stop_busy;
static pthread_t g_main;

/* A CPU-bound sibling: spins until told to stop. */
static void *busy_main(void *arg) {
  (void)arg;
  volatile uint64_t x = 0;
  while (!atomic_load_explicit(&g_stop_busy, memory_order_relaxed)) x = x * 6364136223846793005ull + 1;
  return NULL;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "FAIL test_threadpool_oversub: no progress in time (deadlock?)\n";
  ssize_t w = write(2, msg, sizeof(msg) - 1);
  (void)w;
  _exit(1);
}

typedef struct cover {
  atomic_int hits[MAX_N];
  atomic_int bad_range;
  int slow_workers; /* chunks run off the main thread spin this long (us) */
} cover;

static void spin_us(int us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void mark(void *ctx, int64_t begin, int64_t end) {
  cover *c = ctx;
  if (begin < 0 || end > MAX_N || begin >= end) {
    atomic_fetch_add(&c->bad_range, 1);
    return;
  }
  if (c->slow_workers && !pthread_equal(pthread_self(), g_main)) spin_us(c->slow_workers);
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
}

/* One call over [0, n): every index exactly once; returns 0 when not. */
static int cover_once(mace_threadpool *pool, cover *c, int64_t n, int64_t grain) {
  for (int64_t i = 0; i < n; ++i) atomic_store_explicit(&c->hits[i], 0, memory_order_relaxed);
  atomic_store(&c->bad_range, 0);
  mace_threadpool_parallel_for(pool, n, grain, mark, c);
  for (int64_t i = 0; i < n; ++i)
    if (atomic_load_explicit(&c->hits[i], memory_order_relaxed) != 1) return 0;
  return atomic_load(&c->bad_range) == 0;
}

static void sum_range(void *ctx, int64_t begin, int64_t end) {
  atomic_llong *sum = ctx;
  long long s = 0;
  for (int64_t i = begin; i < end; ++i) s += i;
  atomic_fetch_add(sum, s);
}

typedef struct caller {
  mace_threadpool *pool;
  int reps, bad;
} caller;

static void *caller_main(void *arg) {
  caller *c = arg;
  for (int rep = 0; rep < c->reps; ++rep) {
    atomic_llong sum;
    atomic_init(&sum, 0);
    const int64_t n = 1 + (rep * 37) % 3000;
    mace_threadpool_parallel_for(c->pool, n, 1 + rep % 5, sum_range, &sum);
    if (atomic_load(&sum) != (long long)n * (n - 1) / 2) c->bad++;
  }
  return NULL;
}

static void run_pool(int threads, mace_affinity aff, int slow_us, int reps) {
  mace_threadpool *pool = NULL;
  CHECK(mace_threadpool_acquire(threads, aff, &pool) == MACE_OK && pool, "acquire(%d): %s", threads,
        mace_last_error());
  if (!pool) return;
  static cover c;
  c.slow_workers = slow_us;
  int wrong = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const int64_t n = 1 + (rep * 131) % MAX_N;
    const int64_t grain = 1 + rep % 7;
    mace_caller_binding b;
    mace_threadpool_bind_caller(pool, &b); /* as a net's run does */
    if (!cover_once(pool, &c, n, grain) && wrong++ < 3)
      FAIL("threads %d affinity %d slow %d rep %d: n %lld grain %lld not covered exactly once",
           threads, (int)aff, slow_us, rep, (long long)n, (long long)grain);
    mace_threadpool_unbind_caller(&b);
  }
  ++test_checks;
  /* Two more callers sharing the pool, jobs taking turns. */
  caller callers[2] = {{pool, reps / 4, 0}, {pool, reps / 4, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, caller_main, &callers[i]);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  CHECK(callers[0].bad == 0 && callers[1].bad == 0, "threads %d: shared callers %d, %d sums wrong",
        threads, callers[0].bad, callers[1].bad);
  mace_threadpool_stats st;
  mace_threadpool_get_stats(pool, &st);
  printf("  threads %d affinity %d slow workers %d us: %llu jobs to workers (caller ran %llu of %llu "
         "chunks, slept %llu times), %llu alone; %llu of %llu windows without gain; pinned %d "
         "(%llu pins, %llu unpins)\n",
         threads, (int)aff, slow_us, (unsigned long long)st.jobs,
         (unsigned long long)st.caller_chunks, (unsigned long long)st.chunks,
         (unsigned long long)st.caller_sleeps, (unsigned long long)st.solo_jobs,
         (unsigned long long)st.solo_windows, (unsigned long long)st.windows, st.pinned,
         (unsigned long long)st.pins, (unsigned long long)st.unpins);
  mace_threadpool_release(pool);
}

int main(void) {
  signal(SIGALRM, on_alarm);
  alarm(DEADLINE_S);
  g_main = pthread_self();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  if (cores > 8) cores = 8;
  /* A busy thread per core: the pool's threads always outnumber the free cores. */
  pthread_t busy[8];
  atomic_init(&g_stop_busy, 0);
  for (long i = 0; i < cores; ++i) pthread_create(&busy[i], NULL, busy_main, NULL);
  const int sizes[] = {2, 3, (int)cores + 1};
  for (int s = 0; s < 3; ++s)
    for (int a = 0; a < 2; ++a) {
      const mace_affinity aff = a ? MACE_AFFINITY_BIG_ONLY : MACE_AFFINITY_NONE;
      run_pool(sizes[s], aff, 0, 1500);
      run_pool(sizes[s], aff, 200, 150); /* slow workers: the caller steals, waits, runs alone */
    }
  /* Workers that sleep at once after a job (MACE_SPIN_MS=0), and the policy turned off. */
  setenv("MACE_SPIN_MS", "0", 1);
  run_pool(2, MACE_AFFINITY_BIG_ONLY, 0, 1500);
  unsetenv("MACE_SPIN_MS");
  setenv("MACE_THREAD_ADAPT", "0", 1);
  run_pool(2, MACE_AFFINITY_BIG_ONLY, 0, 1500);
  run_pool(2, MACE_AFFINITY_NONE, 200, 150);
  unsetenv("MACE_THREAD_ADAPT");
  atomic_store(&g_stop_busy, 1);
  for (long i = 0; i < cores; ++i) pthread_join(busy[i], NULL);
  alarm(0);
  return TEST_FINISH("%ld checks, %ld busy threads", test_checks, cores);
}
