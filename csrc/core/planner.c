/* Greedy best-fit arena planner over buffer lifetimes. */
#include "core/planner.h"

#include <stdlib.h>

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
