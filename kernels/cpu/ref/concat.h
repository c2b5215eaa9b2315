/* Reference (portable C) dtype-generic concatenation along one axis. */
#ifndef MACE_KERNELS_CPU_REF_CONCAT_H_
#define MACE_KERNELS_CPU_REF_CONCAT_H_

#include <stdint.h>

/* Views every input as [outer, row_bytes[i]] and the output as [outer, out_row_bytes]
 * where out_row_bytes = sum(row_bytes) and offsets[i] = sum(row_bytes[0..i)).
 * Work item t in [begin, end) copies row t / n_in of input t % n_in. */
void mace_x_concat__ref(const void *const *ins, const int64_t *row_bytes,
                        const int64_t *offsets, int n_in, int64_t out_row_bytes, void *out,
                        int64_t begin, int64_t end);

/* Concatenation of f32 NCHWc tensors along the channels, lane by lane (for inputs whose
 * channel counts are not multiples of the block b, so their blocks do not line up with the
 * output's): input i is [N, ceil(chans[i] / b), hw, b], the output [N, ceil(C / b), hw, b]
 * with C = sum(chans); it gets channel c of input i at channel sum(chans[0..i)) + c, and
 * zeros in its tail lanes. Work item t in [begin, end) is output block t % ceil(C / b) of
 * image t / ceil(C / b). */
void mace_f32_concat_nchwc_lanes__ref(const float *const *ins, const int64_t *chans, int n_in,
                                      int block, int64_t hw, float *out, int64_t begin,
                                      int64_t end);

#endif /* MACE_KERNELS_CPU_REF_CONCAT_H_ */
