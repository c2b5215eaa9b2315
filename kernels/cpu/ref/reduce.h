/* Reference (portable C) reductions (mean/max/min/sum/prod/norms/log-sums) over any set of
 * axes, f32/i32/i64. */
#ifndef MACE_KERNELS_CPU_REF_REDUCE_H_
#define MACE_KERNELS_CPU_REF_REDUCE_H_

#include <stdint.h>

#define MACE_REDUCE_MAX_DIMS 8

/* MACE's ReduceType numbers where MACE has them. */
typedef enum mace_reduce_type {
  MACE_REDUCE_MEAN = 0,
  MACE_REDUCE_MIN = 1,
  MACE_REDUCE_MAX = 2,
  MACE_REDUCE_PROD = 3,
  MACE_REDUCE_SUM = 4,
  MACE_REDUCE_SUM_SQUARE = 100, /* sum x^2 */
  MACE_REDUCE_L1 = 101,         /* sum |x| */
  MACE_REDUCE_L2 = 102,         /* sqrt(sum x^2), f32 only */
  MACE_REDUCE_LOG_SUM = 103,    /* log(sum x), f32 only */
  MACE_REDUCE_LOG_SUM_EXP = 104 /* log(sum exp x), computed shifted by the max; f32 only */
} mace_reduce_type;

/* The input (row-major) split into kept dims, which index the output row-major, and
 * reduced dims, each with its input element stride. */
typedef struct mace_reduce_shape {
  int n_kept;
  int64_t kept_dims[MACE_REDUCE_MAX_DIMS];
  int64_t kept_strides[MACE_REDUCE_MAX_DIMS];
  int n_red;
  int64_t red_dims[MACE_REDUCE_MAX_DIMS];
  int64_t red_strides[MACE_REDUCE_MAX_DIMS];
  int64_t red_count;    /* elements reduced into each output */
} mace_reduce_shape;

/* Fills `shape` for an input of `ndim` dims where reduced[d] != 0 marks a reduced dim.
 * Dims of size 1 are dropped and neighbours of the same kind merged. */
void mace_reduce_shape_init(mace_reduce_shape *shape, const int64_t *dims, int ndim,
                            const int *reduced);

/* Computes output elements [begin, end). An empty reduction gives the identity of the
 * accumulation: 0 (sums), 1 (PROD), the lowest value (MAX), the highest (MIN); MEAN gives
 * NaN (f32) or 0 (integers). Integer MEAN truncates. f32 accumulates in double. */
void mace_f32_reduce__ref(mace_reduce_type type, const mace_reduce_shape *shape,
                          const float *in, float *out, int64_t begin, int64_t end);
void mace_f64_reduce__ref(mace_reduce_type type, const mace_reduce_shape *shape,
                          const double *in, double *out, int64_t begin, int64_t end);
void mace_i32_reduce__ref(mace_reduce_type type, const mace_reduce_shape *shape,
                          const int32_t *in, int32_t *out, int64_t begin, int64_t end);
void mace_i64_reduce__ref(mace_reduce_type type, const mace_reduce_shape *shape,
                          const int64_t *in, int64_t *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_REDUCE_H_ */
