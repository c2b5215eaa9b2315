/* Reference (portable C) OneHot: on/off values by comparing indices with positions. */
#include "kernels/cpu/ref/onehot.h"

#include <string.h>

void mace_x_onehot__ref(const void *indices, mace_onehot_index kind, int64_t depth,
                        int64_t inner, const void *off, const void *on, size_t elem_size,
                        void *out, int64_t begin, int64_t end) {
  char *dst = (char *)out;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t i = p % inner, d = (p / inner) % depth, o = p / (inner * depth);
    const int64_t q = o * inner + i;
    int64_t idx;
    switch (kind) {
      case MACE_ONEHOT_I32: idx = ((const int32_t *)indices)[q]; break;
      case MACE_ONEHOT_I64: idx = ((const int64_t *)indices)[q]; break;
      default: idx = (int64_t)((const float *)indices)[q]; break;
    }
    if (idx < 0) idx += depth;
    memcpy(dst + p * (int64_t)elem_size, idx == d ? on : off, elem_size);
  }
}
