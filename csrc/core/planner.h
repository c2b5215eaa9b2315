/* The arena planner: one buffer per intermediate tensor and op scratch, placed by lifetime so
 * that buffers alive at the same time never overlap and the arena (peak) stays small.
 *
 * Two levels. mace_arena_plan places items whose sizes and lifetimes are given. mace_planner
 * works for the net: the net describes its tensors (bytes, the ops that write and last read
 * them, which are views of which, which a caller may keep or lend a buffer for), its ops'
 * scratch and the ops that gather their inputs into their output (a Concat); the planner
 * derives the buffers' lifetimes (a buffer lives as long as any view of it or slice in it),
 * places the inputs of gathering ops inside the gathered output, plans the arena and hands
 * back every tensor's and scratch's offset. Plans are remembered by their description, so a
 * shape (or kept set) seen before is not planned again. */
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

/* ---- the net's planner ----------------------------------------------------------------- */

/* Tensor flags (mace_plan_tensor.flags). */
#define MACE_PLAN_OUTSIDE 1u   /* not in the arena (weights, host value tensors) */
#define MACE_PLAN_COMPUTED 2u  /* an op writes it: it may be computed inside a gather's output */
#define MACE_PLAN_CALLER 4u    /* a model input, or an output an op writes: may be on the
                                * caller's buffer for a run where nothing aliases it */
#define MACE_PLAN_KEEP 8u      /* read after the run: its buffer lives to the end */

/* What the net says about one tensor. */
typedef struct mace_plan_tensor {
  int64_t bytes;  /* bytes stored (ignored for views and MACE_PLAN_OUTSIDE) */
  int first;      /* op that writes it; 0 for model inputs; -1 before an op does */
  int last;       /* last op that reads it; n_ops when the caller reads it after the run */
  int view_of;    /* the tensor whose bytes it shares (itself no view), or -1 */
  unsigned flags; /* MACE_PLAN_* */
} mace_plan_tensor;

/* Owns its description, results and remembered plans; mace_planner_destroy frees them. */
typedef struct mace_planner mace_planner;

mace_status mace_planner_create(int n_tensors, int n_ops, mace_planner **out);
void mace_planner_destroy(mace_planner *p);

/* The description, filled by the net: tensor i (created {0, -1, -1, -1, 0}) and op i's
 * scratch bytes. Valid while the planner lives. */
mace_plan_tensor *mace_planner_tensor(mace_planner *p, int i);
void mace_planner_set_scratch(mace_planner *p, int op, int64_t bytes);

/* Gathering ops of the next plan, in op order: `output` holds its n inputs at the byte
 * offsets given (what kind->inputs_in_output says for the current shapes). Cleared by
 * mace_planner_clear_gathers. The planner places them inside the output where it can: each
 * input computed, no view nor root of one, in no other gather, at an aligned offset. */
void mace_planner_clear_gathers(mace_planner *p);
mace_status mace_planner_add_gather(mace_planner *p, int output, int n, const int *inputs,
                                    const int64_t *offsets);

/* Plans the arena for the current description (or takes the remembered plan of an equal one).
 * On failure the previous plan stays. */
mace_status mace_planner_plan(mace_planner *p);

/* Results of the latest plan: each tensor's byte offset in the arena (a view's is its root's,
 * a slice's inside its gather's output), each op's scratch offset, whether a tensor may be on
 * the caller's buffer (MACE_PLAN_CALLER, not kept, no view nor slice of it or in it), the
 * arena's bytes and the bytes with no reuse at all. Arrays are valid until the next plan. */
const int64_t *mace_planner_offsets(const mace_planner *p);
int64_t mace_planner_scratch_offset(const mace_planner *p, int op);
int mace_planner_borrowable(const mace_planner *p, int tensor);
int64_t mace_planner_arena_bytes(const mace_planner *p);
int64_t mace_planner_naive_bytes(const mace_planner *p);

#endif /* MACE_CORE_PLANNER_H_ */
