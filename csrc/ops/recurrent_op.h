/* Shared engine of the recurrent ops LSTM, GRU and RNN (csrc/ops/{lstm,gru,rnn}.c). */
#ifndef MACE_OPS_RECURRENT_H_
#define MACE_OPS_RECURRENT_H_

#include "core/op.h"
#include "kernels/cpu/ref/recurrent.h"
#include "runtime/cpu/gemm_dispatch.h"

typedef enum mace_recurrent_cell {
  MACE_CELL_RNN = 0,
  MACE_CELL_GRU = 1,
  MACE_CELL_LSTM = 2
} mace_recurrent_cell;

#define MACE_RECURRENT_MAX_ACTS 6

typedef struct mace_recurrent_state {
  int cell;                   /* mace_recurrent_cell */
  int gates;                  /* G: 1, 3 or 4 */
  int n_acts;                 /* activations per direction: 1, 2 or 3 */
  int64_t hidden, direction, layout;
  float clip;
  int linear_before_reset, input_forget;
  mace_rnn_act acts[MACE_RECURRENT_MAX_ACTS];
  int in_b, in_seq, in_h0, in_c0, in_p; /* input index of each optional input, -1: absent */
  int64_t S, B, I, D;
  /* Constant W and R packed once as GEMM B panels, per direction: W^T [I, G*H], R^T [H, n_r]
   * (n_r = G*H, or 2H for a GRU with linear_before_reset 0, whose R_h^T [H, H] is apart).
   * gemm NULL: the reference GEMM (MACE_CPU_ISA=ref, or W / R computed at run time). */
  const mace_gemm_family *gemm;
  float *packed_w[2], *packed_r[2], *packed_rh[2];
  size_t gemm_scratch; /* bytes after the engine's own scratch */
  /* The cells' activations as the SIMD activation kernels' kinds (kernels/cpu/activation.h),
   * per direction and activation; vector_cells: all of them have one (sigmoid, tanh, relu)
   * and an LSTM has no peepholes, so a step's gates go through those kernels as whole rows. */
  int vector_cells;
  mace_activation vacts[MACE_RECURRENT_MAX_ACTS];
} mace_recurrent_state;

mace_status mace_recurrent_init(mace_op *op, int cell);
mace_status mace_recurrent_infer(mace_op *op);
mace_status mace_recurrent_run(mace_op *op);
void mace_recurrent_release(mace_op *op);

#endif /* MACE_OPS_RECURRENT_H_ */
