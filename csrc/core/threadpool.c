/* Persistent worker threads: a job is a window [0, n) cut into chunks that any thread may claim,
 * each thread starting with its own; workers poll for the next job for up to 50 ms
 * (MACE_SPIN_MS), yielding the core, and sleep at once when a yield shows another thread wants
 * it; the pool drops to the calling thread alone, and unpins its threads, while its workers do
 * not get their cores (the adaptive policy below). */
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
 * back late and runs little of the next runs; a spin counted in polls rather than time was far
 * too short (benchmarks/HISTORY.md). Like OpenMP's blocktime and onnxruntime's spinning
 * workers, a finished run leaves the workers polling, yielding the core every microsecond or
 * so; a yield that comes back late means another thread ran on that core meanwhile (another
 * process, another library's pool), and the worker then sleeps at once instead of taking turns
 * with that thread for the rest of its spin. */
#define MACE_SPIN_NS_DEFAULT 50000000
/* A sched_yield that returns later than this ran another thread (one that finds nothing else
 * to run returns in about a microsecond); LATE_YIELDS of them end a worker's spin. */
#define LATE_YIELD_NS 50000
#define LATE_YIELDS 2

/* The adaptive policy (MACE_THREAD_ADAPT=0 turns it off: workers pinned under an affinity policy
 * whatever the load, full spins, the caller polls for its workers). Jobs are timed in windows of
 * WINDOW_NS; a window where the workers did not save SOLO_GAIN_PCT percent of the caller's own
 * pace (the time it would have taken the caller alone, from its time per chunk) means they were
 * not getting their cores, and the pool runs jobs on the caller alone for a backoff that doubles
 * from SOLO_MIN_NS up to SOLO_MAX_NS while windows keep failing (and halves with each window that
 * pays), then tries its workers again. UNPIN_STREAK failing windows in a row unpin the pool's
 * threads; they are pinned again when a load check finds the machine no longer oversubscribed. The
 * load is checked at creation and every LOAD_CHECK_NS: the runnable threads of /proc/loadavg other
 * than the pool's own, plus the pool's threads, above the machine's online cores means
 * oversubscribed, and then the pool does not pin, and its solo stretches last SOLO_OVER_MIN_NS
 * at least. */
#define WINDOW_NS 2000000
#define WINDOW_JOBS 256
#define SOLO_GAIN_PCT 10
#define SOLO_MIN_NS 4000000
/* While the load check finds the machine oversubscribed, solo stretches last at least this long
 * and one starts when it first finds so: a worker that shares its core with another runnable
 * thread is late on most jobs, and each try of the workers can cost a scheduler time slice. */
#define SOLO_OVER_MIN_NS 64000000
#define SOLO_MAX_NS 500000000
#define UNPIN_STREAK 3
#define LOAD_CHECK_NS 1000000000
/* The caller polls for workers' claimed chunks for the longer of this and its own time in the
 * job, then sleeps until the last one is done, so that a core left idle can take the late
 * worker. */
#define CALLER_SPIN_MIN_NS 50000

static int64_t spin_ns_config(void) {
  const char *env = getenv("MACE_SPIN_MS");
  if (env && *env) {
    char *end = NULL;
    const long ms = strtol(env, &end, 10);
    if (end && *end == 0 && ms >= 0 && ms <= 10000) return (int64_t)ms * 1000000;
  }
  return MACE_SPIN_NS_DEFAULT;
}

static int adapt_config(void) {
  const char *env = getenv("MACE_THREAD_ADAPT");
  return !(env && strcmp(env, "0") == 0);
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

/* A job is published as one atomic word: job number (the generation, low 40 bits), chunk count (12
 * bits) and chunks per thread (12 bits; read from the word, since a late worker may look at it
 * while the next job is being written). Chunk c is claimed by raising chunk_job[c] to the job
 * number (a CAS from a lower number), so a late worker still holding an older job number can never
 * take a chunk of a newer job, and the caller waits only for claimed chunks to finish: a worker
 * that has not woken yet (its core busy with another process) holds nothing up, the caller runs
 * its chunk too. (The pool used to wait for every worker to check in: with one core taken by a
 * compiler, a 2-thread run then took several times its normal time.) Thread t runs its own chunks
 * first (t times the chunks per thread on), so consecutive ops give a thread the same part of
 * their window, the part whose data its core already holds, then takes what is left of the
 * others'. */
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
  int adapt;                /* adapt_config() */
  mace_affinity affinity;
  int caller_cpu;           /* the caller's core under the policy, or -1 */
  int *cpu_of;              /* owned, size - 1: worker i + 1's core under the policy, or -1 */
  cpu_set_t allowed;        /* the process's cores at creation (unpinned threads get these) */
  int n_online;             /* the machine's online cores */
  atomic_int pinned;        /* the threads hold their policy's cores now */
  int refs;                 /* shared pools: engines holding it (under g_shared_mu) */
  struct mace_threadpool *next_shared;
  pthread_mutex_t job_mu;   /* one job at a time (callers from several engines) */
  pthread_t *workers;       /* owned, size - 1 */
  worker_arg *args;         /* owned, size - 1 */
  pthread_mutex_t mu;
  pthread_cond_t wake;      /* workers: a new job (or stop) */
  pthread_cond_t finished;  /* the caller: the job's last chunk is done */
  atomic_uint_fast64_t generation; /* the current job's number */
  atomic_uint_fast64_t claim;      /* job, chunk count, chunks per thread (above) */
  atomic_uint_fast64_t chunk_job[MAX_THREADS]; /* the last job that claimed each chunk */
  atomic_int done;                 /* chunks of the current job finished */
  atomic_int caller_waiting;       /* the caller sleeps on `finished` */
  atomic_int spinning;             /* workers polling for a job now */
  int stop;
  /* current job, written by the caller before publishing `claim` */
  mace_range_fn fn;
  void *ctx;
  int64_t n;                /* chunk c is [c * n / count, (c + 1) * n / count) */
  /* the adaptive policy's state (under job_mu) */
  int64_t win_actual_ns;    /* this window's jobs: their time */
  int64_t win_solo_ns;      /* the same jobs at the caller's pace alone */
  int win_jobs;
  int64_t solo_until_ns;    /* jobs run on the caller alone until then */
  int64_t solo_backoff_ns;  /* the next solo stretch */
  int fail_streak;          /* failing windows in a row */
  int64_t next_load_check_ns;
  int over_checks;          /* consecutive load checks that found the machine oversubscribed */
  mace_threadpool_stats stats;
};

/* Polls until *gen differs from seen or the spin time is over, or the core is wanted by another
 * thread (adaptive pools); returns whether the condition was met. */
static int spin_wait_generation(mace_threadpool *p, uint64_t seen) {
  if (p->spin_ns <= 0) return 0;
  atomic_fetch_add_explicit(&p->spinning, 1, memory_order_relaxed);
  const int64_t deadline = now_ns() + p->spin_ns;
  int late = 0, met = 0;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (atomic_load_explicit(&p->generation, memory_order_acquire) != seen) {
        met = 1;
        goto finally;
      }
      cpu_relax();
    }
    const int64_t t = now_ns();
    if (t > deadline) goto finally;
    sched_yield();  /* a thread of another pool (or process) waiting for this core runs */
    if (p->adapt && now_ns() - t > LATE_YIELD_NS && ++late >= LATE_YIELDS) goto finally;
  }
finally:
  atomic_fetch_sub_explicit(&p->spinning, 1, memory_order_relaxed);
  return met;
}

/* Claims and runs chunks of job `job` (own chunk `self` first) until none is left or the job
 * is over; returns how many it ran. */
static int run_chunks(mace_threadpool *p, uint64_t job, int self) {
  const uint_fast64_t w = atomic_load_explicit(&p->claim, memory_order_acquire);
  if ((w >> CLAIM_JOB_SHIFT) != (job & CLAIM_JOB_MASK)) return 0;
  const unsigned count = (unsigned)(w >> CLAIM_COUNT_SHIFT) & CLAIM_MASK;
  const unsigned first = (unsigned)self * ((unsigned)w & CLAIM_MASK);
  int ran = 0;
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
    ++ran;
    /* seq_cst pairs with the caller's store to caller_waiting before it sleeps: either it sees
     * this chunk done or this thread sees it waiting. */
    if (atomic_fetch_add(&p->done, 1) + 1 == (int)count && self != 0 &&
        atomic_load(&p->caller_waiting)) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_broadcast(&p->finished);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return ran;
}

static void *worker_main(void *arg) {
  const worker_arg *wa = arg;
  mace_threadpool *p = wa->p;
  uint64_t seen = 0;
  for (;;) {
    spin_wait_generation(p, seen);
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
static int policy_cpus(mace_affinity affinity, const cpu_set_t *allowed, int *cpus) {
  if (affinity == MACE_AFFINITY_NONE) return 0;
  long best = -1, worst = -1;
  long freq[CPU_SETSIZE];
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    freq[c] = -1;
    if (!CPU_ISSET(c, allowed)) continue;
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

/* Runnable threads on the machine now other than this pool's own (the caller and its polling
 * workers), from /proc/loadavg's "running/total" field; -1 when unknown. */
static int other_runnable(mace_threadpool *p) {
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return -1;
  double l1, l5, l15;
  int running = 0, total = 0;
  const int ok = fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) == 5;
  fclose(f);
  if (!ok) return -1;
  const int own = 1 + atomic_load_explicit(&p->spinning, memory_order_relaxed);
  return running > own ? running - own : 0;
}

/* Whether this pool's threads and the other runnable ones outnumber the machine's cores. The
 * machine's, not the process's: /proc/loadavg counts every core's threads, and a process kept to
 * a few cores of a large machine (a container's cpuset, a benchmark's pinning) would otherwise
 * count the whole machine's load against them. Contention on its own cores shows in the job
 * windows instead. */
static int machine_oversubscribed(mace_threadpool *p) {
  const int others = other_runnable(p);
  return others >= 0 && others + p->size > p->n_online;
}

/* This thread's armed binding (bind_caller), taken up by its first parallel job. */
static _Thread_local mace_caller_binding *tl_armed;

/* Pins the pool's threads to their policy's cores, or lets them run on every allowed core
 * (the caller: from its next job; one bound now by this thread is unbound at once). */
static void set_pinned(mace_threadpool *p, int on) {
  if (p->caller_cpu < 0 || atomic_load(&p->pinned) == on) return;
  atomic_store(&p->pinned, on);
  for (int i = 0; i < p->size - 1; ++i) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (on && p->cpu_of[i] >= 0)
      CPU_SET(p->cpu_of[i], &set);
    else
      set = p->allowed;
    pthread_setaffinity_np(p->workers[i], sizeof(set), &set);
  }
  mace_caller_binding *b = tl_armed;
  if (!on && b && b->pool == p && b->bound) {
    cpu_set_t own;
    memcpy(&own, b->mask, sizeof(own));
    pthread_setaffinity_np(pthread_self(), sizeof(own), &own);
    b->bound = 0;
  }
  if (on)
    ++p->stats.pins;
  else
    ++p->stats.unpins;
}

void mace_threadpool_bind_caller(const mace_threadpool *p, mace_caller_binding *saved) {
  _Static_assert(sizeof(cpu_set_t) <= sizeof(saved->mask), "mace_caller_binding is too small");
  saved->bound = 0;
  saved->pool = p && p->caller_cpu >= 0 ? p : NULL;
  saved->outer = tl_armed;
  tl_armed = saved;
}

/* The armed binding's pool is about to hand chunks to workers: the caller takes its core
 * (while the pool is pinned). */
static void bind_armed(mace_threadpool *p) {
  mace_caller_binding *saved = tl_armed;
  if (!saved || saved->pool != p || saved->bound || !atomic_load(&p->pinned)) return;
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
  p->adapt = adapt_config();
  p->caller_cpu = -1;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  p->spin_ns = cores > 0 && num_threads > cores ? 0 : spin_ns_config();
  p->n_online = cores > 0 ? (int)cores : 1;
  if (sched_getaffinity(0, sizeof(p->allowed), &p->allowed) != 0) {
    CPU_ZERO(&p->allowed);
    for (long c = 0; c < cores && c < CPU_SETSIZE; ++c) CPU_SET((int)c, &p->allowed);
  }
  p->solo_backoff_ns = SOLO_MIN_NS;
  pthread_mutex_init(&p->job_mu, NULL);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->finished, NULL);
  atomic_init(&p->pinned, 0);
  atomic_init(&p->generation, 0);
  atomic_init(&p->claim, 0);
  for (int i = 0; i < MAX_THREADS; ++i) atomic_init(&p->chunk_job[i], 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->caller_waiting, 0);
  atomic_init(&p->spinning, 0);
  if (num_threads == 1) goto done;
  /* The policy's cores, read once (the sysfs files of every allowed core). */
  int cpus[CPU_SETSIZE];
  const int n_cpus = policy_cpus(affinity, &p->allowed, cpus);
  p->workers = calloc((size_t)num_threads - 1, sizeof(pthread_t));
  p->args = calloc((size_t)num_threads - 1, sizeof(worker_arg));
  p->cpu_of = calloc((size_t)num_threads - 1, sizeof(int));
  if (!p->workers || !p->args || !p->cpu_of) {
    free(p->args);
    p->args = NULL;
    free(p->workers);
    p->workers = NULL;
    mace_threadpool_destroy(p);
    return mace_error(MACE_OUT_OF_RESOURCES, "out of memory for the thread pool");
  }
  for (int i = 0; i < num_threads - 1; ++i) {
    p->cpu_of[i] = n_cpus ? cpus[(i + 1) % n_cpus] : -1;
    p->args[i] = (worker_arg){p, i + 1};
    if (pthread_create(&p->workers[i], NULL, worker_main, &p->args[i]) != 0) {
      p->size = i + 1;
      mace_threadpool_destroy(p);
      return mace_error(MACE_OUT_OF_RESOURCES, "could not start worker thread %d", i);
    }
  }
  if (n_cpus) p->caller_cpu = cpus[0];
  /* Pinned, and workers used from the first job, unless the machine is oversubscribed now: the
   * least of three looks a fraction of a millisecond apart, so a thread that runs for a moment
   * (or a worker not yet polling) does not count. */
  int over = !p->adapt ? 0 : 1;
  for (int look = 0; over && look < 3; ++look) {
    if (look) nanosleep(&(struct timespec){0, 200000}, NULL);
    over = machine_oversubscribed(p);
  }
  if (over) {
    p->over_checks = 2;
    p->solo_until_ns = now_ns() + SOLO_OVER_MIN_NS;
    p->solo_backoff_ns = 2 * SOLO_OVER_MIN_NS;
  }
  set_pinned(p, !over);
done:
  p->next_load_check_ns = now_ns() + LOAD_CHECK_NS;
  *out = p;
  return MACE_OK;
}

void mace_threadpool_destroy(mace_threadpool *p) {
  if (!p) return;
  if (p->workers)
    MACE_VLOG(1, "thread pool of %d: %llu jobs to the workers (the caller ran %llu of their %llu "
              "chunks and slept on %llu), %llu on the caller alone; %llu of %llu windows without "
              "gain; %llu pins, %llu unpins", p->size, (unsigned long long)p->stats.jobs,
              (unsigned long long)p->stats.caller_chunks, (unsigned long long)p->stats.chunks,
              (unsigned long long)p->stats.caller_sleeps, (unsigned long long)p->stats.solo_jobs,
              (unsigned long long)p->stats.solo_windows, (unsigned long long)p->stats.windows,
              (unsigned long long)p->stats.pins, (unsigned long long)p->stats.unpins);
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
  free(p->cpu_of);
  pthread_cond_destroy(&p->finished);
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

void mace_threadpool_get_stats(mace_threadpool *p, mace_threadpool_stats *out) {
  memset(out, 0, sizeof(*out));
  if (!p) return;
  pthread_mutex_lock(&p->job_mu);
  *out = p->stats;
  out->pinned = atomic_load(&p->pinned);
  pthread_mutex_unlock(&p->job_mu);
}

/* The shortest solo stretch now. */
static int64_t solo_floor_ns(const mace_threadpool *p) {
  return p->over_checks >= 2 ? SOLO_OVER_MIN_NS : SOLO_MIN_NS;
}

/* The load check, at most every LOAD_CHECK_NS (under job_mu): two checks in a row that agree
 * unpin or pin the pool (the latter only while its workers keep up); the second that finds the
 * machine oversubscribed starts a solo stretch. */
static void check_load(mace_threadpool *p, int64_t now) {
  if (now < p->next_load_check_ns || !p->adapt) return;
  p->next_load_check_ns = now + LOAD_CHECK_NS;
  if (machine_oversubscribed(p)) {
    if (++p->over_checks == 2 && p->solo_until_ns < now + SOLO_OVER_MIN_NS) {
      p->solo_until_ns = now + SOLO_OVER_MIN_NS;
      if (p->solo_backoff_ns < 2 * SOLO_OVER_MIN_NS) p->solo_backoff_ns = 2 * SOLO_OVER_MIN_NS;
    }
    if (p->over_checks >= 2) set_pinned(p, 0);
  } else {
    p->over_checks = 0;
    if (p->fail_streak == 0 && now >= p->solo_until_ns) set_pinned(p, 1);
  }
}

/* Adds a job handed to the workers to the window; at the window's end decides whether the
 * workers paid (under job_mu). */
static void account_job(mace_threadpool *p, int64_t actual_ns, int64_t solo_ns, int64_t now) {
  p->win_actual_ns += actual_ns;
  p->win_solo_ns += solo_ns;
  if (++p->win_jobs < WINDOW_JOBS && p->win_actual_ns < WINDOW_NS) return;
  const int paid = p->win_actual_ns * 100 < p->win_solo_ns * (100 - SOLO_GAIN_PCT);
  p->win_actual_ns = p->win_solo_ns = 0;
  p->win_jobs = 0;
  ++p->stats.windows;
  if (paid) { /* halved, not reset: on a machine where the workers get their cores only now
                * and then, each failed try can cost a run's time */
    p->fail_streak = 0;
    const int64_t floor = solo_floor_ns(p);
    p->solo_backoff_ns = p->solo_backoff_ns / 2 < floor ? floor : p->solo_backoff_ns / 2;
    return;
  }
  ++p->stats.solo_windows;
  if (p->solo_backoff_ns < solo_floor_ns(p)) p->solo_backoff_ns = solo_floor_ns(p);
  p->solo_until_ns = now + p->solo_backoff_ns;
  p->solo_backoff_ns = p->solo_backoff_ns * 2 > SOLO_MAX_NS ? SOLO_MAX_NS : p->solo_backoff_ns * 2;
  if (++p->fail_streak >= UNPIN_STREAK) set_pinned(p, 0);
}

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
  pthread_mutex_lock(&p->job_mu);
  const int64_t t0 = p->adapt ? now_ns() : 0;
  if (p->adapt) {
    check_load(p, t0);
    if (t0 < p->solo_until_ns) { /* the workers are not getting their cores: run alone */
      ++p->stats.solo_jobs;
      pthread_mutex_unlock(&p->job_mu);
      fn(ctx, 0, n);
      return;
    }
  }
  bind_armed(p);
  ++p->stats.jobs;
  p->fn = fn;
  p->ctx = ctx;
  p->n = n;
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  const uint64_t job = atomic_load(&p->generation) + 1;
  atomic_store_explicit(&p->claim,
                        ((job & CLAIM_JOB_MASK) << CLAIM_JOB_SHIFT) |
                            ((uint_fast64_t)n_chunks << CLAIM_COUNT_SHIFT) | (uint_fast64_t)per,
                        memory_order_release);
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->generation, job);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  const int own = run_chunks(p, job, 0);
  p->stats.caller_chunks += (uint64_t)own;
  p->stats.chunks += (uint64_t)n_chunks;
  /* Only chunks being run by workers are left: poll (yielding the core now and then), then
   * (adaptive pools) sleep until the last is done. */
  const int64_t t1 = p->adapt ? now_ns() : 0;
  const int64_t spin_until = t1 + (t1 - t0 > CALLER_SPIN_MIN_NS ? t1 - t0 : CALLER_SPIN_MIN_NS);
  while (atomic_load_explicit(&p->done, memory_order_acquire) < n_chunks) {
    for (int i = 0; i < 64; ++i) cpu_relax();
    if (p->adapt && now_ns() > spin_until) {
      atomic_store(&p->caller_waiting, 1);
      pthread_mutex_lock(&p->mu);
      while (atomic_load(&p->done) < n_chunks) pthread_cond_wait(&p->finished, &p->mu);
      pthread_mutex_unlock(&p->mu);
      atomic_store(&p->caller_waiting, 0);
      ++p->stats.caller_sleeps;
      break;
    }
    sched_yield();
  }
  if (p->adapt && own > 0) {
    const int64_t t2 = now_ns();
    account_job(p, t2 - t0, (t1 - t0) * n_chunks / own, t2);
  }
  pthread_mutex_unlock(&p->job_mu);
}
