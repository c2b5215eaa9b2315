/* Reference (portable C) dtype-generic concatenation along one axis. */
#include "kernels/cpu/ref/concat.h"

#include <string.h>

void mace_x_concat__ref(const void *const *ins, const int64_t *row_bytes,
                        const int64_t *offsets, int n_in, int64_t out_row_bytes, void *out,
                        int64_t begin, int64_t end) {
  for (int64_t t = begin; t < end; ++t) {
    const int64_t o = t / n_in;
    const int i = (int)(t % n_in);
    if (row_bytes[i] == 0) continue;
    memcpy((char *)out + o * out_row_bytes + offsets[i],
           (const char *)ins[i] + o * row_bytes[i], (size_t)row_bytes[i]);
  }
}

void mace_f32_concat_nchwc_lanes__ref(const float *const *ins, const int64_t *chans, int n_in,
                                      int block, int64_t hw, float *out, int64_t begin,
                                      int64_t end) {
  int64_t total = 0;
  for (int i = 0; i < n_in; ++i) total += chans[i];
  const int64_t out_blocks = (total + block - 1) / block;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t img = t / out_blocks, ob = t % out_blocks;
    float *y = out + t * hw * block;
    /* The block's lanes in runs that come from one input block (contiguous lanes there):
     * at most a few, each copied pixel by pixel as a short contiguous move. */
    int j = 0;
    int64_t c = ob * block;  /* output channel of lane j, then the channel within input i */
    int i = 0;
    while (i < n_in && c >= chans[i]) c -= chans[i++];
    while (j < block && i < n_in) {
      const int64_t left_in_block = block - c % block, left_in_input = chans[i] - c;
      int len = block - j;
      if (len > left_in_block) len = (int)left_in_block;
      if (len > left_in_input) len = (int)left_in_input;
      const int64_t in_blocks = (chans[i] + block - 1) / block;
      const float *x = ins[i] + ((img * in_blocks + c / block) * hw) * block + c % block;
      for (int64_t p = 0; p < hw; ++p)
        for (int l = 0; l < len; ++l) y[p * block + j + l] = x[p * block + l];
      j += len;
      c += len;
      while (i < n_in && c >= chans[i]) c -= chans[i++];
    }
    for (int64_t p = 0; j < block && p < hw; ++p)  /* the output's channel tail */
      for (int l = j; l < block; ++l) y[p * block + l] = 0.0f;
  }
}
