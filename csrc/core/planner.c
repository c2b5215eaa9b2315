/* The arena planner: greedy best-fit placement over buffer lifetimes, and the net's planner
 * (lifetimes of views and slices, gathers, borrowable tensors, remembered plans). */
#include "core/planner.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"

/* Largest first, ties by index (stable insertion sort: no global qsort context). */
static void sort_by_size_desc(const mace_arena_item *items, int *order, int n) {
  for (int i = 1; i < n; ++i) {
    int v = order[i], j = i - 1;
    while (j >= 0 && items[order[j]].bytes < items[v].bytes) {
      order[j + 1] = order[j];
      --j;
    }
    order[j + 1] = v;
  }
}

typedef struct span { int64_t begin, end; } span;

static int by_begin(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int64_t align_up(int64_t v) { return (v + MACE_ALIGN - 1) / MACE_ALIGN * MACE_ALIGN; }

mace_status mace_arena_plan(const mace_arena_item *items, int n, int64_t *offsets, int64_t *peak) {
  *peak = 0;
  if (n <= 0) return MACE_OK;
  int *order = malloc((size_t)n * sizeof(int));
  char *placed = calloc((size_t)n, 1);
  span *busy = malloc((size_t)n * sizeof(span));
  mace_status st = MACE_OK;
  if (!order || !placed || !busy) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory while planning the arena");
    goto cleanup;
  }
  for (int i = 0; i < n; ++i) {
    order[i] = i;
    if (items[i].bytes < 0 || items[i].first > items[i].last) {
      st = mace_error(MACE_INVALID_ARGS, "arena item %d: bad size or lifetime", i);
      goto cleanup;
    }
  }
  sort_by_size_desc(items, order, n);
  for (int k = 0; k < n; ++k) {
    int i = order[k];
    int nb = 0;
    for (int j = 0; j < n; ++j) {
      if (!placed[j]) continue;
      if (items[j].last < items[i].first || items[i].last < items[j].first) continue;
      busy[nb].begin = offsets[j];
      busy[nb].end = offsets[j] + align_up(items[j].bytes);
      ++nb;
    }
    qsort(busy, (size_t)nb, sizeof(span), by_begin);
    int64_t need = align_up(items[i].bytes), best = -1, best_gap = INT64_MAX, cursor = 0;
    for (int b = 0; b < nb; ++b) {
      int64_t gap = busy[b].begin - cursor;
      if (gap >= need && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
      if (busy[b].end > cursor) cursor = busy[b].end;
    }
    offsets[i] = best >= 0 ? best : cursor;
    placed[i] = 1;
    if (offsets[i] + need > *peak) *peak = offsets[i] + need;
  }
cleanup:
  free(order);
  free(placed);
  free(busy);
  return st;
}

/* ---- the net's planner ----------------------------------------------------------------- */

#define MACE_MAX_PLANS 8
#define MACE_MAX_GATHERED 1024

/* A plan remembered with the description it was made for. */
typedef struct mace_plan {
  mace_plan_tensor *tensors;  /* owned: the description (n_tensors) */
  int64_t *scratch;           /* owned: n_ops scratch bytes, then n_ops scratch offsets */
  int64_t *gathers;           /* owned: n_gather_words */
  int64_t n_gather_words;
  int64_t *offsets;           /* owned: n_tensors */
  unsigned char *borrowable;  /* owned: n_tensors */
  int64_t arena_bytes, naive_bytes;
} mace_plan;

struct mace_planner {
  int n_tensors, n_ops;
  /* The description. Gathers are words: output, n, then n inputs and n offsets. */
  mace_plan_tensor *tensors;  /* owned */
  int64_t *scratch;           /* owned: n_ops */
  int64_t *gathers;           /* owned: gather_cap words */
  int64_t n_gather_words, gather_cap;
  /* The latest plan. */
  int64_t *offsets;           /* owned: n_tensors */
  int64_t *scratch_offsets;   /* owned: n_ops */
  unsigned char *borrowable;  /* owned: n_tensors */
  int64_t arena_bytes, naive_bytes;
  mace_plan plans[MACE_MAX_PLANS];
  int n_plans, next_plan;     /* next_plan: the slot to replace once all are taken */
};

mace_status mace_planner_create(int n_tensors, int n_ops, mace_planner **out) {
  *out = NULL;
  mace_planner *p = calloc(1, sizeof(*p));
  if (!p) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  p->n_tensors = n_tensors;
  p->n_ops = n_ops;
  size_t nt = n_tensors ? (size_t)n_tensors : 1, no = n_ops ? (size_t)n_ops : 1;
  p->tensors = calloc(nt, sizeof(mace_plan_tensor));
  p->scratch = calloc(no, sizeof(int64_t));
  p->offsets = calloc(nt, sizeof(int64_t));
  p->scratch_offsets = calloc(no, sizeof(int64_t));
  p->borrowable = calloc(nt, 1);
  if (!p->tensors || !p->scratch || !p->offsets || !p->scratch_offsets || !p->borrowable) {
    mace_planner_destroy(p);
    return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  }
  for (int i = 0; i < n_tensors; ++i) {
    p->tensors[i].first = p->tensors[i].last = p->tensors[i].view_of = -1;
  }
  *out = p;
  return MACE_OK;
}

static void plan_free(mace_plan *pl) {
  free(pl->tensors);
  free(pl->scratch);
  free(pl->gathers);
  free(pl->offsets);
  free(pl->borrowable);
  memset(pl, 0, sizeof(*pl));
}

void mace_planner_destroy(mace_planner *p) {
  if (!p) return;
  for (int k = 0; k < p->n_plans; ++k) plan_free(&p->plans[k]);
  free(p->tensors);
  free(p->scratch);
  free(p->gathers);
  free(p->offsets);
  free(p->scratch_offsets);
  free(p->borrowable);
  free(p);
}

mace_plan_tensor *mace_planner_tensor(mace_planner *p, int i) { return &p->tensors[i]; }
void mace_planner_set_scratch(mace_planner *p, int op, int64_t bytes) { p->scratch[op] = bytes; }

void mace_planner_clear_gathers(mace_planner *p) { p->n_gather_words = 0; }

mace_status mace_planner_add_gather(mace_planner *p, int output, int n, const int *inputs,
                                    const int64_t *offsets) {
  if (n < 0 || n > MACE_MAX_GATHERED || output < 0 || output >= p->n_tensors)
    return mace_error(MACE_INVALID_ARGS, "a gather of %d inputs into tensor %d", n, output);
  for (int k = 0; k < n; ++k)
    if (inputs[k] < 0 || inputs[k] >= p->n_tensors || offsets[k] < 0)
      return mace_error(MACE_INVALID_ARGS, "gather input %d: tensor %d at offset %lld", k,
                        inputs[k], (long long)offsets[k]);
  int64_t need = p->n_gather_words + 2 + 2 * (int64_t)n;
  if (need > p->gather_cap) {
    int64_t cap = need > 2 * p->gather_cap ? need : 2 * p->gather_cap;
    int64_t *g = realloc(p->gathers, (size_t)cap * sizeof(int64_t));
    if (!g) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    p->gathers = g;
    p->gather_cap = cap;
  }
  int64_t *w = p->gathers + p->n_gather_words;
  w[0] = output;
  w[1] = n;
  for (int k = 0; k < n; ++k) {
    w[2 + k] = inputs[k];
    w[2 + n + k] = offsets[k];
  }
  p->n_gather_words = need;
  return MACE_OK;
}

/* The op after which a tensor's bytes may be reused: kept ones never. */
static int last_read(const mace_planner *p, const mace_plan_tensor *t) {
  return (t->flags & MACE_PLAN_KEEP) ? p->n_ops : t->last;
}

/* Puts the inputs of gathering ops inside their output (slice_of, slice_offset): only computed
 * tensors that are no one's view or root of a view, in no other gather, at offsets the kernels
 * may assume aligned. Later gathers go first, so an input of a gather whose output is itself a
 * slice lands in the outer buffer. */
static void place_slices(const mace_planner *p, int64_t *starts, int *slice_of,
                         int64_t *slice_offset, unsigned char *viewed) {
  const mace_plan_tensor *T = p->tensors;
  for (int i = 0; i < p->n_tensors; ++i) slice_of[i] = -1;
  for (int i = 0; i < p->n_tensors; ++i)
    if (T[i].view_of >= 0) viewed[T[i].view_of] = 1;
  int64_t n_gathers = 0;
  for (int64_t w = 0; w < p->n_gather_words; w += 2 + 2 * p->gathers[w + 1]) starts[n_gathers++] = w;
  for (int64_t g = n_gathers - 1; g >= 0; --g) {
    const int64_t *w = p->gathers + starts[g];
    const int y = (int)w[0], n = (int)w[1];
    const int64_t *inputs = w + 2, *offs = w + 2 + n;
    if ((T[y].flags & MACE_PLAN_OUTSIDE) || T[y].view_of >= 0) continue;
    const int root = slice_of[y] >= 0 ? slice_of[y] : y;
    const int64_t base = slice_of[y] >= 0 ? slice_offset[y] : 0;
    int ok = 1;
    for (int k = 0; ok && k < n; ++k) {
      const int x = (int)inputs[k];
      ok = (T[x].flags & MACE_PLAN_COMPUTED) && !(T[x].flags & MACE_PLAN_OUTSIDE) &&
           T[x].view_of < 0 && slice_of[x] < 0 && !viewed[x] && (base + offs[k]) % MACE_ALIGN == 0;
      for (int j = 0; ok && j < k; ++j) ok = inputs[j] != x;
    }
    for (int k = 0; ok && k < n; ++k) {
      slice_of[inputs[k]] = root;
      slice_offset[inputs[k]] = base + offs[k];
    }
  }
}

/* Plans the current description from scratch into the planner's results (left as they were
 * on failure). */
static mace_status plan_fresh(mace_planner *p) {
  const int nt = p->n_tensors, n_items = p->n_tensors + p->n_ops;
  const mace_plan_tensor *T = p->tensors;
  const size_t nt1 = nt ? (size_t)nt : 1;
  mace_arena_item *items = calloc(n_items ? (size_t)n_items : 1, sizeof(mace_arena_item));
  int64_t *item_offsets = calloc(n_items ? (size_t)n_items : 1, sizeof(int64_t));
  int64_t *starts = malloc((size_t)(p->n_gather_words / 2 + 1) * sizeof(int64_t));
  int *slice_of = malloc(nt1 * sizeof(int));
  int64_t *slice_offset = calloc(nt1, sizeof(int64_t));
  unsigned char *viewed = calloc(nt1, 1), *borrowable = calloc(nt1, 1);
  mace_status st = MACE_OK;
  if (!items || !item_offsets || !starts || !slice_of || !slice_offset || !viewed || !borrowable) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory while planning the arena");
    goto cleanup;
  }
  place_slices(p, starts, slice_of, slice_offset, viewed);
  for (int i = 0; i < nt; ++i) {
    borrowable[i] = (T[i].flags & MACE_PLAN_CALLER) && !(T[i].flags & MACE_PLAN_KEEP) &&
                    T[i].view_of < 0 && slice_of[i] < 0;
  }
  for (int i = 0; i < nt; ++i) {
    if (T[i].view_of >= 0) borrowable[T[i].view_of] = 0;
    if (slice_of[i] >= 0) borrowable[slice_of[i]] = 0;
  }
  int64_t naive = 0;
  for (int i = 0; i < nt; ++i) {
    if ((T[i].flags & MACE_PLAN_OUTSIDE) || T[i].view_of >= 0) continue;
    naive += T[i].bytes;
    if (slice_of[i] >= 0) continue;
    items[i].bytes = T[i].bytes;
    items[i].first = T[i].first < 0 ? 0 : T[i].first;
    items[i].last = last_read(p, &T[i]) < items[i].first ? items[i].first : last_read(p, &T[i]);
  }
  /* A buffer lives from the first write of any slice of it to the last read. */
  for (int i = 0; i < nt; ++i) {
    if (slice_of[i] < 0) continue;
    mace_arena_item *root = &items[slice_of[i]];
    if (T[i].first < root->first) root->first = T[i].first;
    if (last_read(p, &T[i]) > root->last) root->last = last_read(p, &T[i]);
  }
  /* A buffer lives until the last read of any view of it. */
  for (int i = 0; i < nt; ++i) {
    if (T[i].view_of < 0 || (T[T[i].view_of].flags & MACE_PLAN_OUTSIDE)) continue;
    mace_arena_item *root = &items[T[i].view_of];
    if (last_read(p, &T[i]) > root->last) root->last = last_read(p, &T[i]);
  }
  for (int i = 0; i < p->n_ops; ++i) {
    mace_arena_item *it = &items[nt + i];
    it->bytes = p->scratch[i];
    it->first = it->last = i;
    naive += it->bytes;
  }
  int64_t peak = 0;
  if ((st = mace_arena_plan(items, n_items, item_offsets, &peak)) != MACE_OK) goto cleanup;
  for (int i = 0; i < nt; ++i) {
    p->offsets[i] = T[i].view_of >= 0 ? item_offsets[T[i].view_of]
                    : slice_of[i] >= 0 ? item_offsets[slice_of[i]] + slice_offset[i]
                                       : item_offsets[i];
  }
  for (int i = 0; i < p->n_ops; ++i) p->scratch_offsets[i] = item_offsets[nt + i];
  memcpy(p->borrowable, borrowable, (size_t)nt);
  p->arena_bytes = peak;
  p->naive_bytes = naive;
cleanup:
  free(items);
  free(item_offsets);
  free(starts);
  free(slice_of);
  free(slice_offset);
  free(viewed);
  free(borrowable);
  return st;
}

static int plan_matches(const mace_planner *p, const mace_plan *pl) {
  return pl->n_gather_words == p->n_gather_words &&
         memcmp(pl->tensors, p->tensors, (size_t)p->n_tensors * sizeof(mace_plan_tensor)) == 0 &&
         memcmp(pl->scratch, p->scratch, (size_t)p->n_ops * sizeof(int64_t)) == 0 &&
         (p->n_gather_words == 0 ||
          memcmp(pl->gathers, p->gathers, (size_t)p->n_gather_words * sizeof(int64_t)) == 0);
}

static void plan_apply(mace_planner *p, const mace_plan *pl) {
  memcpy(p->offsets, pl->offsets, (size_t)p->n_tensors * sizeof(int64_t));
  memcpy(p->scratch_offsets, pl->scratch + p->n_ops, (size_t)p->n_ops * sizeof(int64_t));
  memcpy(p->borrowable, pl->borrowable, (size_t)p->n_tensors);
  p->arena_bytes = pl->arena_bytes;
  p->naive_bytes = pl->naive_bytes;
}

/* Remembers the latest plan (best effort: a failed allocation only skips remembering). */
static void plan_store(mace_planner *p) {
  int slot = p->n_plans < MACE_MAX_PLANS ? p->n_plans++ : p->next_plan;
  if (p->n_plans == MACE_MAX_PLANS) p->next_plan = (slot + 1) % MACE_MAX_PLANS;
  mace_plan *pl = &p->plans[slot];
  plan_free(pl);
  size_t nt = p->n_tensors ? (size_t)p->n_tensors : 1;
  pl->tensors = malloc(nt * sizeof(mace_plan_tensor));
  pl->scratch = malloc((size_t)(2 * p->n_ops + 1) * sizeof(int64_t));
  pl->gathers = malloc((size_t)(p->n_gather_words + 1) * sizeof(int64_t));
  pl->offsets = malloc(nt * sizeof(int64_t));
  pl->borrowable = malloc(nt);
  if (!pl->tensors || !pl->scratch || !pl->gathers || !pl->offsets || !pl->borrowable) {
    plan_free(pl); /* an empty slot (no tensors) matches nothing */
    return;
  }
  memcpy(pl->tensors, p->tensors, (size_t)p->n_tensors * sizeof(mace_plan_tensor));
  memcpy(pl->scratch, p->scratch, (size_t)p->n_ops * sizeof(int64_t));
  memcpy(pl->scratch + p->n_ops, p->scratch_offsets, (size_t)p->n_ops * sizeof(int64_t));
  if (p->n_gather_words)
    memcpy(pl->gathers, p->gathers, (size_t)p->n_gather_words * sizeof(int64_t));
  pl->n_gather_words = p->n_gather_words;
  memcpy(pl->offsets, p->offsets, (size_t)p->n_tensors * sizeof(int64_t));
  memcpy(pl->borrowable, p->borrowable, (size_t)p->n_tensors);
  pl->arena_bytes = p->arena_bytes;
  pl->naive_bytes = p->naive_bytes;
}

mace_status mace_planner_plan(mace_planner *p) {
  for (int k = 0; k < p->n_plans; ++k) {
    if (p->plans[k].tensors && plan_matches(p, &p->plans[k])) {
      plan_apply(p, &p->plans[k]);
      return MACE_OK;
    }
  }
  MACE_RETURN_IF_ERROR(plan_fresh(p));
  plan_store(p);
  return MACE_OK;
}

const int64_t *mace_planner_offsets(const mace_planner *p) { return p->offsets; }
int64_t mace_planner_scratch_offset(const mace_planner *p, int op) {
  return p->scratch_offsets[op];
}
int mace_planner_borrowable(const mace_planner *p, int tensor) { return p->borrowable[tensor]; }
int64_t mace_planner_arena_bytes(const mace_planner *p) { return p->arena_bytes; }
int64_t mace_planner_naive_bytes(const mace_planner *p) { return p->naive_bytes; }
