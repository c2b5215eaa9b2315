/* The blocked-layout pass: at net build, before any op exists, picks the chains of ops that
 * run on NCHWc activations and inserts the Reorder ops at their boundaries into the graph.
 *
 * An op may run blocked when its kind's accepts_nchwc says so for its arguments and
 * constant inputs (core/op.h). Ops that may run blocked and feed one another form a chain
 * (a connected component); its boundaries are the plain tensors it reads (a Reorder to
 * NCHWc before the first reader) and the blocked tensors something outside it reads or the
 * caller gets (a Reorder back to NCHW right after the producer, under the tensor's own name,
 * so the readers outside the chain and the model outputs are untouched). A chain is kept
 * only when it has more than two convolutions per Reorder: the reorders are real memory
 * passes (each costs about what blocking saves one or two convolutions) and show in the
 * profile. A convolution that gains much more (MACE_NCHWC_ALONE: dilated, grouped) counts as
 * five, so it is blocked even alone, and is never trimmed off a chain's end. A first
 * convolution (MACE_NCHWC_FIRST, core/op.h) belongs to the chain behind it but reads its input
 * plain: no Reorder in front, and it gets the argument MACE_NCHWC_OUT_ARG.
 * Blocked tensors are named "<name>@nchwc". */
#ifndef MACE_RUNTIME_CPU_LAYOUT_H_
#define MACE_RUNTIME_CPU_LAYOUT_H_

#include "core/op.h"
#include "mace.pb-c.h"

/* The block the active ISA's NCHWc kernels use (AVX2 8, AVX-512 16, NEON 4), or 0 when the
 * pass is off: MACE_CPU_ISA=ref, or the environment variable MACE_NCHWC=0. */
int mace_nchwc_block(void);

/* Rewrites def's op list in place (the new ops and strings are allocated as protobuf-c's
 * unpacker does, so mace__net_def__free_unpacked frees them). *n_reorders: how many Reorder
 * ops were inserted (0: def unchanged). */
mace_status mace_layout_nchwc(Mace__NetDef *def, int block, int *n_reorders);

#endif /* MACE_RUNTIME_CPU_LAYOUT_H_ */
