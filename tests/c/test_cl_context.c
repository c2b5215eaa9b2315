/* Test of the process-wide OpenCL context registry (csrc/runtime/opencl/cl_registry.c): GPU
 * engines of one process share one context per device (counted by mace_cl_registry_get_stats)
 * and the programs built in it, each with its own queue; every engine's output equals the CPU
 * engine's on the same input (the tiny model, y = relu(x + b), exact in fp32); destroying one
 * engine leaves the other running; the last one leaves the context idle in the registry, where
 * the next engine finds it with its programs built, until mace_gpu_release_idle releases it;
 * engines created, run and
 * destroyed from several threads at once agree with the CPU too; at the runtime level, default
 * runtimes share the cl_context but not the queue, `share` shares both, private_context
 * neither. Without an OpenCL device it prints why and passes, unless MACE_REQUIRE_OPENCL is
 * set. */
#define _POSIX_C_SOURCE 200809L  /* pthread_barrier */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mace.pb-c.h"
#include "mace/mace.h"
#include "runtime/opencl/cl_runtime.h"
#include "test_util.h"
#include "tiny_model.h"

#define N 48 /* [1, 3, 4, 4] */
#define THREADS 4

static mace_engine *make_engine(mace_device device) {
  size_t size;
  uint8_t *g = tiny_model_build(V_OK, &size), *w = tiny_model_weights();
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = 1;
  cfg.device = device;
  cfg.gpu_precision = MACE_GPU_FP32;
  mace_engine *eng = NULL;
  if (mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, &cfg, &eng) != MACE_OK)
    eng = NULL;
  free(g);
  free(w);
  return eng;
}

static void fill_input(float *x, int seed) {
  for (int i = 0; i < N; ++i) x[i] = (float)(((i + seed) * 37) % 23) / 4.0f - 2.5f;
}

static mace_status run(mace_engine *eng, const float *x, float *y) {
  mace_io in = {"x", (void *)x, 4, {1, 3, 4, 4}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
  mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
  return mace_engine_run(eng, &in, 1, &out, 1);
}

/* How many of the engine's outputs differ from the CPU engine's on input `seed`; -1: a run
 * failed. */
static int differ_from_cpu(mace_engine *gpu, mace_engine *cpu, int seed) {
  float x[N], got[N], want[N];
  fill_input(x, seed);
  if (run(gpu, x, got) != MACE_OK || run(cpu, x, want) != MACE_OK) return -1;
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += got[i] != want[i];
  return bad;
}

static void test_two_engines(mace_engine *cpu) {
  mace_cl_registry_stats s0, s1, s2, s3;
  mace_gpu_release_idle();
  mace_cl_registry_get_stats(&s0);
  CHECK(s0.contexts_live == 0, "%d contexts live before any engine", s0.contexts_live);
  mace_engine *a = make_engine(MACE_DEVICE_GPU);
  mace_engine *b = make_engine(MACE_DEVICE_GPU);
  CHECK(a && b, "engines: %s", mace_last_error());
  if (!a || !b) goto done;
  mace_cl_registry_get_stats(&s1);
  CHECK(s1.contexts_created == s0.contexts_created + 1 && s1.contexts_live == 1,
        "two engines: %d context(s) created, %d live (want 1, 1)",
        s1.contexts_created - s0.contexts_created, s1.contexts_live);
  CHECK(differ_from_cpu(a, cpu, 0) == 0, "engine a vs CPU: %s", mace_last_error());
  mace_cl_registry_get_stats(&s2);
  CHECK(s2.programs_built > s1.programs_built, "a's first run built no program");
  CHECK(differ_from_cpu(b, cpu, 1) == 0, "engine b vs CPU: %s", mace_last_error());
  mace_cl_registry_get_stats(&s3);
  CHECK(s3.programs_built == s2.programs_built && s3.programs_reused > s2.programs_reused,
        "b's first run built %d program(s), reused %d (want 0, > 0)",
        s3.programs_built - s2.programs_built, s3.programs_reused - s2.programs_reused);
  mace_engine_destroy(a);
  a = NULL;
  CHECK(differ_from_cpu(b, cpu, 2) == 0, "engine b after a is gone: %s", mace_last_error());
  mace_cl_registry_get_stats(&s1);
  CHECK(s1.contexts_live == 1, "%d contexts live with b alone", s1.contexts_live);
done:
  mace_engine_destroy(a);
  mace_engine_destroy(b);
  mace_cl_registry_get_stats(&s1);
  CHECK(s1.contexts_live == 0 && s1.contexts_idle == 1 && s1.contexts_listed == 1,
        "after the last engine: %d live, %d idle, %d listed (want 0, 1, 1)", s1.contexts_live,
        s1.contexts_idle, s1.contexts_listed);
}

/* An engine made after the last one went finds the idle context and its programs: no context
 * created, no program built; mace_gpu_release_idle then releases it (and only idle ones). */
static void test_idle_reuse(mace_engine *cpu) {
  mace_cl_registry_stats s0, s1, s2;
  mace_engine *a = make_engine(MACE_DEVICE_GPU);
  CHECK(a != NULL && differ_from_cpu(a, cpu, 3) == 0, "first engine: %s", mace_last_error());
  mace_engine_destroy(a);
  mace_cl_registry_get_stats(&s0);
  CHECK(s0.contexts_idle == 1, "%d idle contexts after the engine went (want 1)",
        s0.contexts_idle);
  a = make_engine(MACE_DEVICE_GPU);
  CHECK(a != NULL && differ_from_cpu(a, cpu, 4) == 0, "engine on the idle context: %s",
        mace_last_error());
  mace_cl_registry_get_stats(&s1);
  CHECK(s1.contexts_created == s0.contexts_created && s1.programs_built == s0.programs_built &&
            s1.programs_reused > s0.programs_reused && s1.contexts_idle == 0 &&
            s1.contexts_live == 1,
        "reuse: %d created, %d built, %d reused, %d idle, %d live (want 0, 0, > 0, 0, 1)",
        s1.contexts_created - s0.contexts_created, s1.programs_built - s0.programs_built,
        s1.programs_reused - s0.programs_reused, s1.contexts_idle, s1.contexts_live);
  CHECK(mace_gpu_release_idle() == 0, "released a context an engine holds");
  mace_engine_destroy(a);
  CHECK(mace_gpu_release_idle() == 1, "the idle context was not released");
  mace_cl_registry_get_stats(&s2);
  CHECK(s2.contexts_idle == 0 && s2.contexts_listed == 0 && s2.contexts_live == 0,
        "after release: %d idle, %d listed, %d live", s2.contexts_idle, s2.contexts_listed,
        s2.contexts_live);
  a = make_engine(MACE_DEVICE_GPU);
  mace_cl_registry_get_stats(&s2);
  CHECK(a != NULL && differ_from_cpu(a, cpu, 5) == 0 &&
            s2.contexts_created == s1.contexts_created + 1,
        "engine after the release: %s; %d contexts created (want 1)", mace_last_error(),
        s2.contexts_created - s1.contexts_created);
  mace_engine_destroy(a);
}

typedef struct worker {
  pthread_barrier_t *created;  /* every engine exists before any is destroyed */
  mace_engine *cpu;
  int seed;
  int made, bad;
  char error[256];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  mace_engine *eng = make_engine(MACE_DEVICE_GPU);
  w->made = eng != NULL;
  if (!eng) snprintf(w->error, sizeof(w->error), "%s", mace_last_error());
  pthread_barrier_wait(w->created);
  if (eng) {
    for (int r = 0; r < 3 && !w->bad; ++r) {
      /* each worker has its own CPU engine (engines are not thread-safe) */
      w->bad = differ_from_cpu(eng, w->cpu, w->seed + r);
      if (w->bad < 0) snprintf(w->error, sizeof(w->error), "%s", mace_last_error());
    }
  }
  mace_engine_destroy(eng);
  return NULL;
}

static void test_threads(void) {
  mace_cl_registry_stats s0, s1;
  mace_gpu_release_idle();
  mace_cl_registry_get_stats(&s0);
  pthread_barrier_t created;
  pthread_barrier_init(&created, NULL, THREADS);
  pthread_t tid[THREADS];
  worker w[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    memset(&w[t], 0, sizeof(w[t]));
    w[t].created = &created;
    w[t].cpu = make_engine(MACE_DEVICE_CPU);  /* engines are not thread-safe: one a thread */
    w[t].seed = 10 * t;
  }
  for (int t = 0; t < THREADS; ++t) pthread_create(&tid[t], NULL, work, &w[t]);
  for (int t = 0; t < THREADS; ++t) pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&created);
  for (int t = 0; t < THREADS; ++t) {
    CHECK(w[t].cpu && w[t].made && w[t].bad == 0, "thread %d: made %d, %d differ from the CPU: %s",
          t, w[t].made, w[t].bad, w[t].error);
    mace_engine_destroy(w[t].cpu);
  }
  mace_cl_registry_get_stats(&s1);
  CHECK(s1.contexts_created == s0.contexts_created + 1 && s1.contexts_live == 0 &&
            s1.contexts_idle == 1,
        "%d threads: %d context(s) created (want 1), %d live, %d idle after (want 0, 1)", THREADS,
        s1.contexts_created - s0.contexts_created, s1.contexts_live, s1.contexts_idle);
}

/* At the runtime level: which handles runtimes share. */
static void test_runtimes(void) {
  mace_cl_config c = {.platform_index = -1, .device_index = -1, .precision = MACE_CL_FP32};
  mace_cl_runtime *a = NULL, *b = NULL, *shared = NULL, *own = NULL;
  CHECK(mace_cl_runtime_create(&c, &a) == MACE_OK && mace_cl_runtime_create(&c, &b) == MACE_OK,
        "runtimes: %s", mace_last_error());
  c.share = a;
  CHECK(mace_cl_runtime_create(&c, &shared) == MACE_OK, "shared runtime: %s", mace_last_error());
  c.share = NULL;
  c.private_context = 1;
  CHECK(mace_cl_runtime_create(&c, &own) == MACE_OK, "private runtime: %s", mace_last_error());
  if (a && b && shared && own) {
    CHECK(mace_cl_runtime_cl_context(a) == mace_cl_runtime_cl_context(b), "a, b: two contexts");
    CHECK(mace_cl_runtime_context(a) != mace_cl_runtime_context(b), "a, b: one queue");
    CHECK(mace_cl_runtime_cl_context(shared) == mace_cl_runtime_cl_context(a) &&
              mace_cl_runtime_context(shared) == mace_cl_runtime_context(a),
          "share: not a's context and queue");
    CHECK(mace_cl_runtime_cl_context(own) != mace_cl_runtime_cl_context(a),
          "private_context: a's context");
    mace_cl_registry_stats s;
    mace_cl_registry_get_stats(&s);
    CHECK(s.contexts_live == 2 && s.contexts_listed == 1, "%d live, %d listed (want 2, 1)",
          s.contexts_live, s.contexts_listed);
  }
  mace_cl_runtime_destroy(a);  /* shared keeps the context */
  mace_cl_runtime_destroy(b);
  mace_cl_runtime_destroy(shared);
  mace_cl_runtime_destroy(own);
  mace_cl_registry_stats s;
  mace_cl_registry_get_stats(&s);
  CHECK(s.contexts_live == 0 && s.contexts_listed == 1 && s.contexts_idle == 1,
        "%d live, %d listed, %d idle after all (want 0, 1, 1: the private one is gone)",
        s.contexts_live, s.contexts_listed, s.contexts_idle);
  CHECK(mace_gpu_release_idle() == 1, "release_idle: not the one idle context");
}

int main(void) {
  mace_gpu_info dev;
  int n = 0;
  if (mace_gpu_list_devices(&dev, 1, &n) != MACE_OK || n == 0) {
    const char *req = getenv("MACE_REQUIRE_OPENCL");
    if (req && *req) {
      FAIL("MACE_REQUIRE_OPENCL is set but no OpenCL device: %s", mace_last_error());
      return TEST_FINISH("OpenCL required");
    }
    printf("test_cl_context: skipped, no OpenCL device\n");
    return TEST_FINISH("skipped (no OpenCL)");
  }
  mace_engine *cpu = make_engine(MACE_DEVICE_CPU);
  CHECK(cpu != NULL, "CPU engine: %s", mace_last_error());
  if (cpu) test_two_engines(cpu);
  if (cpu) test_idle_reuse(cpu);
  mace_engine_destroy(cpu);
  test_threads();
  test_runtimes();
  return TEST_FINISH("%s", dev.name);
}
