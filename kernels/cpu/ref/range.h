/* Reference (portable C) Range and Fill: arithmetic sequences and constant fills. */
#ifndef MACE_KERNELS_CPU_REF_RANGE_H_
#define MACE_KERNELS_CPU_REF_RANGE_H_

#include <stddef.h>
#include <stdint.h>

/* out[i] = start + i * delta for i in [begin, end). */
void mace_f32_range__ref(float start, float delta, float *out, int64_t begin, int64_t end);
void mace_i32_range__ref(int32_t start, int32_t delta, int32_t *out, int64_t begin, int64_t end);
void mace_i64_range__ref(int64_t start, int64_t delta, int64_t *out, int64_t begin, int64_t end);

/* Elements [begin, end) of out set to the elem_size bytes at value. */
void mace_x_fill__ref(const void *value, size_t elem_size, void *out, int64_t begin,
                      int64_t end);

#endif /* MACE_KERNELS_CPU_REF_RANGE_H_ */
