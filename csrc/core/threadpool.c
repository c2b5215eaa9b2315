/* Persistent worker threads: a job is a window [0, n) cut into one contiguous chunk per
 * thread, thread t taking chunk t unless another gets to it first; workers poll for the next
 * job for up to 50 ms (MACE_SPIN_MS; yielding the core now and then), then sleep on a condition
 * variable. */
#define _GNU_SOURCE
#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/status.h"

/* How long a worker keeps polling for the next job before sleeping on the condition variable
 * (MACE_SPIN_MS overrides it; 0 sleeps at once). Time-based: on a virtual machine a sleeping
 * core's vCPU is halted, and a worker that has slept for more than a few milliseconds comes
 * back late and runs little of the next runs: with a spin of a few milliseconds, a 2-thread
 * run after an idle gap took about one thread's time; a spin counted in polls rather than
 * time was far too short (benchmarks/HISTORY.md). Like OpenMP's blocktime and onnxruntime's
 * spinning workers, a finished run leaves the workers polling, yielding the core to any other
 * runnable thread every microsecond or so. */
#define MACE_SPIN_NS_DEFAULT 50000000

static int64_t spin_ns_config(void) {
  const char *env = getenv("MACE_SPIN_MS");
  if (env && *env) {
    char *end = NULL;
    const long ms = strtol(env, &end, 10);
    if (end && *end == 0 && ms >= 0 && ms <= 10000) return (int64_t)ms * 1000000;
  }
  return MACE_SPIN_NS_DEFAULT;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause");
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Polls until *gen differs from seen (or, with gen NULL, *count drops to 0) or the spin
 * time is over; returns whether the condition was met. */
static int spin_wait_generation(atomic_uint_fast64_t *gen, uint64_t seen, int64_t spin_ns) {
  if (spin_ns <= 0) return 0;
  const int64_t deadline = now_ns() + spin_ns;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (atomic_load_explicit(gen, memory_order_acquire) != seen) return 1;
      cpu_relax();
    }
    if (now_ns() > deadline) return 0;
    sched_yield();  /* a thread of another pool (or process) waiting for this core runs */
  }
}

/* A job is published as one atomic word: job number (the generation, low 40 bits) and chunk
 * count (12 bits). Chunk c is claimed by raising chunk_job[c] to the job number (a CAS from a
 * lower number), so a late worker still holding an older job number can never take a chunk of
 * a newer job, and the caller waits only for claimed chunks to finish: a worker that has not
 * woken yet (its core busy with another process) holds nothing up, the caller runs its chunk
 * too. (The pool used to wait for every worker to check in: with one core taken by a compiler,
 * a 2-thread run then took several times its normal time.) Thread t runs its own chunks
 * first (t * per_thread on), so consecutive ops give a thread the same part of their window,
 * the part whose data its core already holds, then takes what is left of the others'. */
#define CLAIM_JOB_SHIFT 24
#define CLAIM_COUNT_SHIFT 12
#define CLAIM_MASK 0xfffu
#define CLAIM_JOB_MASK 0xffffffffffull
#define MAX_THREADS 256
#define CHUNKS_PER_THREAD 4

typedef struct worker_arg {
  struct mace_threadpool *p;
  int id;                   /* 1 .. size - 1 (the caller is 0) */
} worker_arg;

struct mace_threadpool {
  int size;                 /* threads including the caller */
  int64_t spin_ns;          /* spin_ns_config(), or 0 with more threads than cores: polling
                             * threads would then hold the cores the others need */
  mace_affinity affinity;
  int caller_cpu;           /* the caller's core under the policy, or -1 */
  int refs;                 /* shared pools: engines holding it (under g_shared_mu) */
  struct mace_threadpool *next_shared;
  pthread_mutex_t job_mu;   /* one job at a time (callers from several engines) */
  pthread_t *workers;       /* owned, size - 1 */
  worker_arg *args;         /* owned, size - 1 */
  pthread_mutex_t mu;
  pthread_cond_t wake;
  atomic_uint_fast64_t generation; /* the current job's number */
  atomic_uint_fast64_t claim;      /* job | chunk count (above) */
  atomic_uint_fast64_t chunk_job[MAX_THREADS]; /* the last job that claimed each chunk */
  atomic_int done;                 /* chunks of the current job finished */
  int stop;
  /* current job, written by the caller before publishing `claim` */
  mace_range_fn fn;
  void *ctx;
  int64_t n;                /* chunk c is [c * n / count, (c + 1) * n / count) */
  int per_thread;           /* chunks per thread: thread t's own are t * per_thread on */
};

/* Claims and runs chunks of job `job` (own chunk `self` first) until none is left or the job
 * is over. */
static void run_chunks(mace_threadpool *p, uint64_t job, int self) {
  const uint_fast64_t w = atomic_load_explicit(&p->claim, memory_order_acquire);
  if ((w >> CLAIM_JOB_SHIFT) != (job & CLAIM_JOB_MASK)) return;
  const unsigned count = (unsigned)(w >> CLAIM_COUNT_SHIFT) & CLAIM_MASK;
  const unsigned first = (unsigned)self * (unsigned)p->per_thread;
  for (unsigned i = 0; i < count; ++i) {
    const unsigned c = (first + i) % count;
    uint_fast64_t v = atomic_load_explicit(&p->chunk_job[c], memory_order_relaxed);
    if (v >= job ||
        !atomic_compare_exchange_strong_explicit(&p->chunk_job[c], &v, job,
                                                 memory_order_acq_rel, memory_order_relaxed))
      continue;
    /* The job cannot end before this chunk is counted done: its fields are stable. */
    const int64_t begin = (int64_t)c * p->n / count, end = (int64_t)(c + 1) * p->n / count;
    if (begin < end) p->fn(p->ctx, begin, end);
    atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
  }
}

static void *worker_main(void *arg) {
  const worker_arg *wa = arg;
  mace_threadpool *p = wa->p;
  uint64_t seen = 0;
  for (;;) {
    spin_wait_generation(&p->generation, seen, p->spin_ns);
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->generation) == seen && !p->stop) pthread_cond_wait(&p->wake, &p->mu);
    int stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    if (stop) return NULL;
    seen = atomic_load(&p->generation);
    run_chunks(p, seen, wa->id);
  }
}

/* The cores of `affinity` into cpus (CPU_SETSIZE), returns their count (0 for NONE or when
 * unknown): among the cores this process may run on, those of the highest (BIG_ONLY) or
 * lowest (LITTLE_ONLY) max frequency. Thread t gets cpus[t % count] (the caller is 0). */
static int policy_cpus(mace_affinity affinity, int *cpus) {
  if (affinity == MACE_AFFINITY_NONE) return 0;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 0;
  long best = -1, worst = -1;
  long freq[CPU_SETSIZE];
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    freq[c] = -1;
    if (!CPU_ISSET(c, &allowed)) continue;
    char path[128];
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", c);
    FILE *f = fopen(path, "r");
    freq[c] = 0;
    if (f) {
      if (fscanf(f, "%ld", &freq[c]) != 1) freq[c] = 0;
      fclose(f);
    }
    if (best < 0 || freq[c] > best) best = freq[c];
    if (worst < 0 || freq[c] < worst) worst = freq[c];
  }
  const long want = affinity == MACE_AFFINITY_BIG_ONLY ? best : worst;
  int count = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (freq[c] >= 0 && freq[c] == want) cpus[count++] = c;
  return count;
}

static void pin_thread(pthread_t t, int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(t, sizeof(set), &set);
}

/* This thread's armed binding (bind_caller), taken up by its first parallel job. */
static _Thread_local mace_caller_binding *tl_armed;

void mace_threadpool_bind_caller(const mace_threadpool *p, mace_caller_binding *saved) {
  _Static_assert(sizeof(cpu_set_t) <= sizeof(saved->mask), "mace_caller_binding is too small");
  saved->bound = 0;
  saved->pool = p && p->caller_cpu >= 0 ? p : NULL;
  saved->outer = tl_armed;
  tl_armed = saved;
}

/* The armed binding's pool is about to hand chunks to workers: the caller takes its core. */
static void bind_armed(const mace_threadpool *p) {
  mace_caller_binding *saved = tl_armed;
  if (!saved || saved->pool != p || saved->bound) return;
  cpu_set_t own;
  if (pthread_getaffinity_np(pthread_self(), sizeof(own), &own) != 0) return;
  memcpy(saved->mask, &own, sizeof(own));
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(p->caller_cpu, &set);
  saved->bound = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

void mace_threadpool_unbind_caller(mace_caller_binding *saved) {
  if (tl_armed == saved) tl_armed = saved->outer;
  if (!saved->bound) return;
  cpu_set_t own;
  memcpy(&own, saved->mask, sizeof(own));
  pthread_setaffinity_np(pthread_self(), sizeof(own), &own);
  saved->bound = 0;
}

mace_status mace_threadpool_create(int num_threads, mace_affinity affinity,
                                   mace_threadpool **out) {
  *out = NULL;
  if (num_threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    num_threads = n > 0 ? (int)n : 1;
  }
  if (num_threads > MAX_THREADS)
    return mace_error(MACE_INVALID_ARGS, "num_threads %d > %d", num_threads, MAX_THREADS);
  mace_threadpool *p = calloc(1, sizeof(*p));
  if (!p) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory for the thread pool");
  p->size = num_threads;
  p->affinity = affinity;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  p->spin_ns = cores > 0 && num_threads > cores ? 0 : spin_ns_config();
  pthread_mutex_init(&p->job_mu, NULL);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->claim, 0);
  for (int i = 0; i < MAX_THREADS; ++i) atomic_init(&p->chunk_job[i], 0);
  atomic_init(&p->done, 0);
  /* The policy's cores, read once (the sysfs files of every allowed core). */
  int cpus[CPU_SETSIZE];
  const int n_cpus = num_threads > 1 ? policy_cpus(affinity, cpus) : 0;
  if (num_threads > 1) {
    p->workers = calloc((size_t)num_threads - 1, sizeof(pthread_t));
    p->args = calloc((size_t)num_threads - 1, sizeof(worker_arg));
    if (!p->workers || !p->args) {
      free(p->args);
      p->args = NULL;
      free(p->workers);
      p->workers = NULL;
      mace_threadpool_destroy(p);
      return mace_error(MACE_OUT_OF_RESOURCES, "out of memory for the thread pool");
    }
    for (int i = 0; i < num_threads - 1; ++i) {
      p->args[i] = (worker_arg){p, i + 1};
      if (pthread_create(&p->workers[i], NULL, worker_main, &p->args[i]) != 0) {
        p->size = i + 1;
        mace_threadpool_destroy(p);
        return mace_error(MACE_OUT_OF_RESOURCES, "could not start worker thread %d", i);
      }
      pin_thread(p->workers[i], n_cpus ? cpus[(i + 1) % n_cpus] : -1);
    }
  }
  p->caller_cpu = n_cpus ? cpus[0] : -1;
  *out = p;
  return MACE_OK;
}

void mace_threadpool_destroy(mace_threadpool *p) {
  if (!p) return;
  if (p->workers) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    atomic_fetch_add(&p->generation, 1);  /* polling workers see it at once */
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->size - 1; ++i) pthread_join(p->workers[i], NULL);
    free(p->workers);
    free(p->args);
  }
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->mu);
  pthread_mutex_destroy(&p->job_mu);
  free(p);
}

static pthread_mutex_t g_shared_mu = PTHREAD_MUTEX_INITIALIZER;
static mace_threadpool *g_shared; /* list of shared pools */

mace_status mace_threadpool_acquire(int num_threads, mace_affinity affinity,
                                    mace_threadpool **out) {
  *out = NULL;
  if (num_threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    num_threads = n > 0 ? (int)n : 1;
  }
  pthread_mutex_lock(&g_shared_mu);
  mace_status st = MACE_OK;
  mace_threadpool *p = g_shared;
  while (p && !(p->size == num_threads && p->affinity == affinity)) p = p->next_shared;
  if (!p) {
    st = mace_threadpool_create(num_threads, affinity, &p);
    if (st == MACE_OK) {
      p->next_shared = g_shared;
      g_shared = p;
    }
  }
  if (st == MACE_OK) {
    ++p->refs;
    *out = p;
  }
  pthread_mutex_unlock(&g_shared_mu);
  return st;
}

void mace_threadpool_release(mace_threadpool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&g_shared_mu);
  int last = --pool->refs == 0;
  if (last) {
    mace_threadpool **link = &g_shared;
    while (*link && *link != pool) link = &(*link)->next_shared;
    if (*link) *link = pool->next_shared;
  }
  pthread_mutex_unlock(&g_shared_mu);
  if (last) mace_threadpool_destroy(pool);
}

int mace_threadpool_size(const mace_threadpool *p) { return p ? p->size : 1; }

void mace_threadpool_parallel_for(mace_threadpool *p, int64_t n, int64_t grain,
                                  mace_range_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int threads = p ? p->size : 1;
  const int64_t max_chunks = (n + grain - 1) / grain;
  /* CHUNKS_PER_THREAD chunks a thread where the window has them: a thread slowed by another
   * process on its core then holds up the op by a quarter of its share, not all of it. The
   * chunks differ by one item at most (chunks of ceil(n / count) had left the last thread
   * short: 10 items in 8 chunks were 5 chunks of 2, 3 of them for one thread). */
  const int per = threads > 1 && max_chunks >= (int64_t)threads * CHUNKS_PER_THREAD &&
                          threads * CHUNKS_PER_THREAD <= MAX_THREADS
                      ? CHUNKS_PER_THREAD
                      : 1;
  int n_chunks = max_chunks < threads * per ? (int)max_chunks : threads * per;
  if (n_chunks <= 1) {
    fn(ctx, 0, n);
    return;
  }
  bind_armed(p);
  pthread_mutex_lock(&p->job_mu);
  p->fn = fn;
  p->ctx = ctx;
  p->n = n;
  p->per_thread = per;
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  const uint64_t job = atomic_load(&p->generation) + 1;
  atomic_store_explicit(&p->claim,
                        ((job & CLAIM_JOB_MASK) << CLAIM_JOB_SHIFT) |
                            ((uint_fast64_t)n_chunks << CLAIM_COUNT_SHIFT),
                        memory_order_release);
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->generation, job);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  run_chunks(p, job, 0);
  /* Only chunks being run by workers are left: poll (yielding the core now and then). */
  while (atomic_load_explicit(&p->done, memory_order_acquire) < n_chunks) {
    for (int i = 0; i < 64; ++i) cpu_relax();
    sched_yield();
  }
  pthread_mutex_unlock(&p->job_mu);
}
