/* Mod: broadcasting remainder (Python-style or C fmod-style), f32 and integers. */
/*
 * Inputs:  0 A (f32 | f16 | f64 | i8 | u8 | i16 | u16 | i32 | u32 | i64 | u64), 1 B (dtype of A); broadcast by NumPy rules, any
 *          ranks up to 8.
 * Output:  0 broadcast(A, B), dtype of A.
 * Arguments:
 *   fmod  int (default 0): 0 the remainder takes the divisor's sign (integers; floats as
 *         NumPy mod), 1 the dividend's sign (C fmod / %). An integer divisor of 0 gives 0.
 */
#include "core/op.h"
#include "kernels/cpu/ref/int_binary.h"

#define MOD_GRAIN 16384

typedef struct mod_state {
  mace_int_binary_type type;
  mace_int_binary_elem elem;
  mace_eltwise_shape shape;
} mod_state;

static mace_status mod_infer(mace_op *op) {
  mod_state *s = (mod_state *)op->state;
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0;
  char b1[128], b2[128];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *a = op->inputs[0], *b = op->inputs[1];
  s->type = mace_op_arg_int(op, "fmod", 0) ? MACE_INT_BINARY_FMOD : MACE_INT_BINARY_MOD;
  switch (a->dtype) {
    case MACE_DT_F32: s->elem = MACE_INT_BINARY_F32; break;
    case MACE_DT_I32: s->elem = MACE_INT_BINARY_I32; break;
    case MACE_DT_I64: s->elem = MACE_INT_BINARY_I64; break;
    case MACE_DT_U8: s->elem = MACE_INT_BINARY_U8; break;
    case MACE_DT_I8: s->elem = MACE_INT_BINARY_I8; break;
    case MACE_DT_I16: s->elem = MACE_INT_BINARY_I16; break;
    case MACE_DT_U16: s->elem = MACE_INT_BINARY_U16; break;
    case MACE_DT_U32: s->elem = MACE_INT_BINARY_U32; break;
    case MACE_DT_U64: s->elem = MACE_INT_BINARY_U64; break;
    case MACE_DT_F64: s->elem = MACE_INT_BINARY_F64; break;
    case MACE_DT_F16: s->elem = MACE_INT_BINARY_F16; break;
    default:
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Mod): dtype %s is not supported", op->name,
                        mace_dtype_name(a->dtype));
  }
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, a->dtype));
  if (a->ndim > MACE_ELTWISE_MAX_DIMS || b->ndim > MACE_ELTWISE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Mod): rank above %d", op->name,
                      MACE_ELTWISE_MAX_DIMS);
  if (mace_eltwise_shape_init(&s->shape, a->dims, a->ndim, b->dims, b->ndim, out_dims,
                              &out_nd) >= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Mod): shapes %s and %s do not broadcast",
                      op->name, mace_dims_str(a->dims, a->ndim, b1, sizeof(b1)),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof(b2)));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, a->dtype, out_dims, out_nd));
  op->macs = mace_tensor_numel(op->outputs[0]);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mod_state *s;
  const void *a, *b;
  void *out;
} mod_job;

static void mod_range(void *ctx, int64_t begin, int64_t end) {
  const mod_job *j = (const mod_job *)ctx;
  mace_x_int_binary__ref(j->s->type, j->s->elem, &j->s->shape, j->a, j->b, j->out, begin, end);
}

static mace_status mod_run(mace_op *op) {
  mod_job job = {(const mod_state *)op->state, op->inputs[0]->data, op->inputs[1]->data,
                 op->outputs[0]->data};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, MOD_GRAIN, mod_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_mod = {.type = "Mod", .device = MACE_DEVICE_CPU,
                                  .dtype = MACE_DT_INVALID, .state_size = sizeof(mod_state),
                                  .infer = mod_infer, .run = mod_run};
