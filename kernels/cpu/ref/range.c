/* Reference (portable C) Range and Fill: arithmetic sequences and constant fills. */
#include "kernels/cpu/ref/range.h"

#include <string.h>

void mace_f32_range__ref(float start, float delta, float *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = start + (float)i * delta;
}

void mace_i32_range__ref(int32_t start, int32_t delta, int32_t *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    out[i] = (int32_t)((uint32_t)start + (uint32_t)i * (uint32_t)delta);
}

void mace_i64_range__ref(int64_t start, int64_t delta, int64_t *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    out[i] = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta);
}

/* The common element sizes as typed stores the compiler vectorizes (a memcpy call an element
 * was most of a small ConstantOfShape's time); other sizes a copy an element. */
void mace_x_fill__ref(const void *value, size_t elem_size, void *out, int64_t begin,
                      int64_t end) {
  if (elem_size == 1) {
    memset((char *)out + begin, *(const unsigned char *)value, (size_t)(end - begin));
  } else if (elem_size == 4) {
    uint32_t v;
    memcpy(&v, value, 4);
    uint32_t *dst = (uint32_t *)out;
    for (int64_t i = begin; i < end; ++i) dst[i] = v;
  } else if (elem_size == 8) {
    uint64_t v;
    memcpy(&v, value, 8);
    uint64_t *dst = (uint64_t *)out;
    for (int64_t i = begin; i < end; ++i) dst[i] = v;
  } else {
    char *dst = (char *)out;
    for (int64_t i = begin; i < end; ++i) memcpy(dst + i * (int64_t)elem_size, value, elem_size);
  }
}
