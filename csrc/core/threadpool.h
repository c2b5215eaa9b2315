/* Persistent worker threads that split an op's iteration window [0, n) across threads. */
#ifndef MACE_CORE_THREADPOOL_H_
#define MACE_CORE_THREADPOOL_H_

#include <stdint.h>

#include "mace/mace.h"

typedef struct mace_threadpool mace_threadpool;

/* Computes items [begin, end) of a window. Must not allocate or fail. */
typedef void (*mace_range_fn)(void *ctx, int64_t begin, int64_t end);

/* num_threads <= 0: one per online core. Thread 0 is the caller. */
mace_status mace_threadpool_create(int num_threads, mace_affinity affinity,
                                   mace_threadpool **out);
void mace_threadpool_destroy(mace_threadpool *pool);

/* Process-wide pools shared by engines: engines asking for the same thread count and
 * affinity get the same pool (reference counted), and jobs from different engines take
 * turns on it, so several sessions in one process do not oversubscribe the cores. */
mace_status mace_threadpool_acquire(int num_threads, mace_affinity affinity,
                                    mace_threadpool **out);
void mace_threadpool_release(mace_threadpool *pool);
int mace_threadpool_size(const mace_threadpool *pool);

/* With an affinity policy and workers, the pool's threads each have a core of the policy's set
 * while the pool is pinned (not while the machine is oversubscribed or its workers keep missing
 * their cores: threadpool.c): the workers from their start, the calling thread (thread 0) only
 * between bind_caller and unbind_caller (a net's run), since the caller is the application's
 * thread and threads it starts later inherit its mask. bind_caller only arms the binding: the
 * caller takes its core at its first parallel_for on that pool that hands chunks to workers, so a
 * run that never does (a small net) makes no affinity calls, which cost more than such a run
 * itself. `saved` keeps the caller's own mask meanwhile. Without a policy, workers or a core for
 * the caller, both do nothing. Bindings nest on a thread (an inner run's bind and unbind re-arm
 * the outer one). */
typedef struct mace_caller_binding {
  int bound;
  uint64_t mask[16]; /* the caller's cpu_set_t (1024 CPUs) */
  const mace_threadpool *pool;       /* armed for this pool (NULL: nothing to do) */
  struct mace_caller_binding *outer; /* the binding armed before this one */
} mace_caller_binding;
void mace_threadpool_bind_caller(const mace_threadpool *pool, mace_caller_binding *saved);
void mace_threadpool_unbind_caller(mace_caller_binding *saved);

/* Runs fn over [0, n) in contiguous chunks of at least `grain` items, four per thread where
 * there are enough items (else one): thread t (the caller is 0) takes its own chunks first,
 * so consecutive calls give a thread the same part of their windows; a late thread's chunks
 * are run by the others. Returns when all are done. pool may be NULL (runs inline). Callers on other
 * threads wait their turn; fn must not call parallel_for on the same pool.
 * While the pool's workers are not getting their cores (jobs handed to them take about as
 * long as the caller alone would), jobs run on the caller alone for a while (threadpool.c has
 * the policy; MACE_THREAD_ADAPT=0 turns it off). */
void mace_threadpool_parallel_for(mace_threadpool *pool, int64_t n, int64_t grain,
                                  mace_range_fn fn, void *ctx);

/* What the pool did since it was created, for tests and benchmarks. */
typedef struct mace_threadpool_stats {
  uint64_t jobs;          /* parallel jobs handed to the workers */
  uint64_t solo_jobs;     /* parallel jobs the caller ran alone (the adaptive policy) */
  uint64_t chunks;        /* chunks of the handed-out jobs */
  uint64_t caller_chunks; /* of those, run by the caller */
  uint64_t caller_sleeps; /* jobs where the caller slept until a worker's chunk was done */
  uint64_t windows;       /* windows of jobs judged */
  uint64_t solo_windows;  /* of those, where the workers did not pay */
  uint64_t pins, unpins;  /* changes of pinning */
  int pinned;             /* the threads hold their policy's cores now */
} mace_threadpool_stats;
void mace_threadpool_get_stats(mace_threadpool *pool, mace_threadpool_stats *out);

#endif /* MACE_CORE_THREADPOOL_H_ */
