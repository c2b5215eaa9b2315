/* Row-band splits of NCHWc tensors (runtime/cpu/nchwc_split.h). */
#include "runtime/cpu/nchwc_split.h"

#include "kernels/cpu/nchwc.h"

typedef struct band_job {
  mace_range_fn fn;
  void *ctx;
  int64_t blocks, bands, h, row; /* row: floats a row of one block */
} band_job;

/* Items (image, band, block): element range of rows [y0, y1) of that block's plane. */
static void band_range(void *p, int64_t begin, int64_t end) {
  const band_job *j = p;
  for (int64_t it = begin; it < end; ++it) {
    const mace_nchwc_band_item b = mace_nchwc_band_item_at(it, j->bands, j->blocks, j->h);
    const int64_t plane = b.img * j->blocks + b.block;
    if (b.y0 < b.y1) j->fn(j->ctx, (plane * j->h + b.y0) * j->row, (plane * j->h + b.y1) * j->row);
  }
}

void mace_nchwc_parallel_for(mace_threadpool *pool, const mace_tensor *t, int64_t grain,
                             mace_range_fn fn, void *ctx) {
  const int threads = mace_threadpool_size(pool);
  if (t->layout == MACE_LAYOUT_NCHWC && t->ndim == 4 && threads > 1 && t->block > 0) {
    const int64_t cp = MACE_NCHWC_PADDED(t->dims[1], t->block);
    const int64_t h = t->dims[2], w = t->dims[3];
    if (h > 1 && mace_nchwc_row_split(cp, h * w)) {
      band_job j = {fn, ctx, cp / t->block, mace_nchwc_bands(h, threads), h, w * t->block};
      mace_threadpool_parallel_for(pool, t->dims[0] * j.bands * j.blocks, 1, band_range, &j);
      return;
    }
  }
  mace_threadpool_parallel_for(pool, mace_tensor_storage_numel(t), grain, fn, ctx);
}
