/* Reference helper: walks a broadcast iteration space (mace_eltwise_shape) row by row. */
#ifndef MACE_KERNELS_CPU_REF_BCAST_ITER_H_
#define MACE_KERNELS_CPU_REF_BCAST_ITER_H_

#include <stdint.h>

#include "kernels/cpu/ref/eltwise.h"

/* For every flat output index in [BEGIN, END) of SHAPE (a const mace_eltwise_shape *),
 * runs the statement given last with `o` (output index), `ia` and `ib` (element offsets of operands a and b)
 * in scope (the statement may contain commas). */
#define MACE_BCAST2_FOR(SHAPE, BEGIN, END, ...)                                         \
  do {                                                                                 \
    const mace_eltwise_shape *bc_s_ = (SHAPE);                                         \
    const int bc_nd_ = bc_s_->ndim;                                                    \
    const int64_t bc_inner_ = bc_s_->dims[bc_nd_ - 1];                                 \
    const int64_t bc_sa_ = bc_s_->a_strides[bc_nd_ - 1];                               \
    const int64_t bc_sb_ = bc_s_->b_strides[bc_nd_ - 1];                               \
    int64_t bc_idx_[MACE_ELTWISE_MAX_DIMS];                                            \
    int64_t bc_rem_ = (BEGIN), bc_oa_ = 0, bc_ob_ = 0, bc_pos_ = (BEGIN);              \
    const int64_t bc_end_ = (END);                                                     \
    int bc_d_;                                                                         \
    for (bc_d_ = bc_nd_ - 1; bc_d_ >= 0; --bc_d_) {                                    \
      bc_idx_[bc_d_] = bc_rem_ % bc_s_->dims[bc_d_];                                   \
      bc_rem_ /= bc_s_->dims[bc_d_];                                                   \
      bc_oa_ += bc_idx_[bc_d_] * bc_s_->a_strides[bc_d_];                              \
      bc_ob_ += bc_idx_[bc_d_] * bc_s_->b_strides[bc_d_];                              \
    }                                                                                  \
    while (bc_pos_ < bc_end_) {                                                        \
      int64_t bc_run_ = bc_inner_ - bc_idx_[bc_nd_ - 1], bc_j_;                        \
      if (bc_run_ > bc_end_ - bc_pos_) bc_run_ = bc_end_ - bc_pos_;                    \
      for (bc_j_ = 0; bc_j_ < bc_run_; ++bc_j_) {                                      \
        const int64_t o = bc_pos_ + bc_j_;                                             \
        const int64_t ia = bc_oa_ + bc_j_ * bc_sa_;                                    \
        const int64_t ib = bc_ob_ + bc_j_ * bc_sb_;                                    \
        (void)ia;                                                                      \
        (void)ib;                                                                      \
        __VA_ARGS__;                                                                   \
      }                                                                                \
      bc_pos_ += bc_run_;                                                              \
      bc_idx_[bc_nd_ - 1] += bc_run_;                                                  \
      bc_oa_ += bc_run_ * bc_sa_;                                                      \
      bc_ob_ += bc_run_ * bc_sb_;                                                      \
      for (bc_d_ = bc_nd_ - 1; bc_d_ > 0 && bc_idx_[bc_d_] == bc_s_->dims[bc_d_];      \
           --bc_d_) {                                                                  \
        bc_oa_ -= bc_idx_[bc_d_] * bc_s_->a_strides[bc_d_];                            \
        bc_ob_ -= bc_idx_[bc_d_] * bc_s_->b_strides[bc_d_];                            \
        bc_idx_[bc_d_] = 0;                                                            \
        bc_idx_[bc_d_ - 1] += 1;                                                       \
        bc_oa_ += bc_s_->a_strides[bc_d_ - 1];                                         \
        bc_ob_ += bc_s_->b_strides[bc_d_ - 1];                                         \
      }                                                                                \
    }                                                                                  \
  } while (0)

#endif /* MACE_KERNELS_CPU_REF_BCAST_ITER_H_ */
