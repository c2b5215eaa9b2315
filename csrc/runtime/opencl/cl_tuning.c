/* Local work sizes: defaults, the tuned-parameter file and the MACE_TUNING=1 tuner (runtime/opencl/cl_tuning.h). */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime */
#ifdef MACE_HAVE_OPENCL_HEADERS  /* the stub runtime has no launches to tune */
#include "runtime/opencl/cl_tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void mace_cl_default_lws(int dims, const size_t *gws, size_t max_wg, size_t *lws) {
  size_t budget = max_wg < 64 ? max_wg : 64;
  if (budget < 1) budget = 1;
  for (int i = 0; i < dims; ++i) {
    size_t l = 1;
    while (l * 2 <= budget && l < gws[i]) l *= 2;
    lws[i] = l;
    budget /= l;
    if (budget < 1) budget = 1;
  }
}

static void free_entries(mace_cl_tuning *t) {
  for (int i = 0; i < t->n; ++i) free(t->entries[i].key);
  free(t->entries);
  t->entries = NULL;
  t->n = t->cap = 0;
}

static int add_entry(mace_cl_tuning *t, const char *key, int dims, const size_t *gws,
                     const size_t *lws) {
  if (t->n == t->cap) {
    const int cap = t->cap ? 2 * t->cap : 32;
    void *p = realloc(t->entries, (size_t)cap * sizeof(*t->entries));
    if (!p) return 0;
    t->entries = p;
    t->cap = cap;
  }
  const size_t len = strlen(key) + 1;
  mace_cl_tuning_entry *e = &t->entries[t->n];
  e->key = malloc(len);
  if (!e->key) return 0;
  memcpy(e->key, key, len);
  e->dims = dims;
  for (int i = 0; i < 3; ++i) {
    e->gws[i] = i < dims ? gws[i] : 1;
    e->lws[i] = i < dims ? lws[i] : 1;
  }
  ++t->n;
  return 1;
}

mace_status mace_cl_tuning_load(mace_cl_tuning *t, const char *path) {
  memset(t, 0, sizeof(*t));
  const char *env = getenv("MACE_TUNING");
  t->tuning = env && strcmp(env, "1") == 0;
  if (!path || !*path) return MACE_OK;
  const size_t plen = strlen(path) + 1;
  t->path = malloc(plen);
  if (!t->path) return mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
  memcpy(t->path, path, plen);
  FILE *f = fopen(path, "r");
  if (!f) return MACE_OK;  /* not written yet */
  char line[2048];
  int lineno = 0, bad = 0;
  while (fgets(line, sizeof(line), f)) {
    ++lineno;
    int dims, used = 0;
    unsigned long g[3], l[3];
    if (sscanf(line, "%d %lu %lu %lu %lu %lu %lu %n", &dims, &g[0], &g[1], &g[2], &l[0], &l[1],
               &l[2], &used) != 7 || dims < 1 || dims > 3 || !used) {
      ++bad;
      continue;
    }
    char *key = line + used;
    key[strcspn(key, "\r\n")] = 0;
    for (char *c = key; *c; ++c)
      if (*c == '|') *c = '\n';
    size_t gs[3] = {g[0], g[1], g[2]}, ls[3] = {l[0], l[1], l[2]};
    int ok = *key != 0;
    for (int i = 0; i < 3; ++i) ok = ok && ls[i] >= 1 && ls[i] <= 4096;
    if (!ok) {
      ++bad;
      continue;
    }
    if (!add_entry(t, key, dims, gs, ls)) {
      fclose(f);
      return mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory for the tuning file");
    }
  }
  fclose(f);
  if (bad)
    MACE_LOG(WARNING, "OpenCL tuning file %s: %d of %d lines did not parse and are ignored",
             path, bad, lineno);
  return MACE_OK;
}

void mace_cl_tuning_save(mace_cl_tuning *t) {
  if (!t->dirty || !t->path) return;
  FILE *f = fopen(t->path, "w");
  if (!f) {
    MACE_LOG(WARNING, "cannot write the OpenCL tuning file %s", t->path);
    return;
  }
  for (int i = 0; i < t->n; ++i) {
    const mace_cl_tuning_entry *e = &t->entries[i];
    fprintf(f, "%d %zu %zu %zu %zu %zu %zu ", e->dims, e->gws[0], e->gws[1], e->gws[2],
            e->lws[0], e->lws[1], e->lws[2]);
    for (const char *c = e->key; *c; ++c) fputc(*c == '\n' ? '|' : *c, f);
    fputc('\n', f);
  }
  if (fclose(f) != 0) MACE_LOG(WARNING, "cannot write the OpenCL tuning file %s", t->path);
  t->dirty = 0;
}

void mace_cl_tuning_free(mace_cl_tuning *t) {
  free_entries(t);
  free(t->path);
  t->path = NULL;
}

int mace_cl_tuning_active(const mace_cl_tuning *t) { return t->tuning; }

int mace_cl_tuning_find(const mace_cl_tuning *t, const char *key, int dims, const size_t *gws,
                        size_t *lws) {
  for (int i = 0; i < t->n; ++i) {
    const mace_cl_tuning_entry *e = &t->entries[i];
    int same = e->dims == dims && strcmp(e->key, key) == 0;
    for (int d = 0; same && d < dims; ++d) same = e->gws[d] == gws[d];
    if (same) {
      for (int d = 0; d < dims; ++d) lws[d] = e->lws[d];
      return 1;
    }
  }
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

mace_status mace_cl_tuning_run(mace_cl_tuning *t, mace_cl_runtime *rt, mace_cl_kernel *k,
                               int dims, const size_t *gws, size_t *lws) {
  const size_t max_wg = mace_cl_kernel_max_work_group(k);
  /* Candidates: work-groups of 16 to 256 items, spread as the default does, plus shapes that
   * put all of them in one dimension. */
  size_t cand[24][3];  /* 5 sizes, each spread and along each of up to 3 dims */
  int nc = 0;
  for (size_t total = 16; total <= 256 && total <= max_wg; total *= 2) {
    mace_cl_default_lws(dims, gws, total, cand[nc++]);
    for (int d = 0; d < dims; ++d) {
      for (int i = 0; i < 3; ++i) cand[nc][i] = 1;
      cand[nc][d] = total;
      if (cand[nc][d] <= gws[d] * 2) ++nc;
    }
  }
  mace_cl_default_lws(dims, gws, max_wg, lws);  /* the fallback */
  double best = -1.0;
  for (int c = 0; c < nc; ++c) {
    double ms = 0.0, sum = 0.0;
    int ok = 1;
    for (int rep = 0; rep < 3 && ok; ++rep) {  /* the first run warms up, not counted */
      const double t0 = now_ms();
      ok = mace_cl_launch_timed(rt, k, dims, gws, cand[c], &ms) == MACE_OK;
      if (rep) sum += ms >= 0.0 ? ms : now_ms() - t0;
    }
    if (ok && (best < 0.0 || sum < best)) {
      best = sum;
      for (int d = 0; d < dims; ++d) lws[d] = cand[c][d];
    }
  }
  if (!add_entry(t, mace_cl_kernel_key(k), dims, gws, lws))
    return mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory for the tuning results");
  t->dirty = 1;
  return MACE_OK;
}

#endif /* MACE_HAVE_OPENCL_HEADERS */
