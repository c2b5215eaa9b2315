/* The arena planner: offsets for buffers with known lifetimes so that buffers alive at the
 * same time never overlap, and the arena (peak) stays small. */
#ifndef MACE_CORE_PLANNER_H_
#define MACE_CORE_PLANNER_H_

#include <stdint.h>

#include "mace/mace.h"

typedef struct mace_arena_item {
  int64_t bytes;
  int first;  /* first op index that uses it (its producer; -1 for model inputs) */
  int last;   /* last op index that uses it (inclusive) */
} mace_arena_item;

/* Fills offsets[i] (64-byte aligned) and *peak (arena bytes). Greedy: largest first, each
 * into the best-fitting gap among the buffers whose lifetime overlaps its own. */
mace_status mace_arena_plan(const mace_arena_item *items, int n, int64_t *offsets, int64_t *peak);

#endif /* MACE_CORE_PLANNER_H_ */
