/* How ops on the blocked NCHWc layout share a tensor between threads.
 *
 * A tensor whose plane has at least as many pixels as it has (padded) channels - the early
 * layers of a network - is split by rows: each thread takes a band of rows across all channel
 * blocks, so the layers of a chain (pointwise, depthwise, direct KxK where the plane
 * outweighs the filter, pooling, activation, eltwise) hand each thread the rows it wrote
 * itself, still in its core's L2. Smaller planes with more channels (late layers,
 * weight-heavy) are split by channel blocks, so that each thread reads only its part of the
 * filter. The row bands made the MobileNets, MNASNet, ResNets and SqueezeNet faster at 2
 * threads (benchmarks/HISTORY.md). */
#ifndef MACE_RUNTIME_CPU_NCHWC_SPLIT_H_
#define MACE_RUNTIME_CPU_NCHWC_SPLIT_H_

#include <stdint.h>

#include "core/tensor.h"
#include "core/threadpool.h"

/* 1 when a plane of hw pixels and cp channels (padded) is split into row bands. */
static inline int mace_nchwc_row_split(int64_t cp, int64_t hw) { return cp <= hw; }

/* Row bands for a plane of h rows at `threads` threads: two a thread, at most h. */
static inline int64_t mace_nchwc_bands(int64_t h, int threads) {
  return h < 2 * (int64_t)threads ? h : 2 * (int64_t)threads;
}

/* Item `it` of a row-band split, the items ordered (image, band, block): its image, channel
 * block and output rows [y0, y1) (empty where a plane has fewer rows than bands). */
typedef struct mace_nchwc_band_item {
  int64_t img, block, y0, y1;
} mace_nchwc_band_item;

static inline mace_nchwc_band_item mace_nchwc_band_item_at(int64_t it, int64_t bands,
                                                            int64_t blocks, int64_t h) {
  const int64_t band = it / blocks % bands;
  const mace_nchwc_band_item r = {it / (bands * blocks), it % blocks, band * h / bands,
                                  (band + 1) * h / bands};
  return r;
}

/* fn over the storage of t ([0, storage numel), in contiguous ranges): for an NCHWc tensor
 * split into row bands, one call per (image, band, block) range; otherwise the pool's
 * parallel_for over the storage with `grain`. For elementwise ops whose operands all have
 * t's layout and shape. */
void mace_nchwc_parallel_for(mace_threadpool *pool, const mace_tensor *t, int64_t grain,
                             mace_range_fn fn, void *ctx);

#endif /* MACE_RUNTIME_CPU_NCHWC_SPLIT_H_ */
