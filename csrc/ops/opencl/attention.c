/* Attention on the GPU (OpenCL, f32): ONNX scaled dot-product attention, 3-D or 4-D, grouped
 * kv heads, scale, softcap, a float or bool mask (broadcast, shorter than the keys), causal;
 * as the CPU kind (ops/attention.c), whose infer (on the shadow) checks the inputs and works
 * out the strides; kernels/opencl/attention.cl. past_key/value, nonpad_kv_seqlen, the
 * present/qk outputs, and rows too long for local memory are the CPU kind's
 * (MACE_UNSUPPORTED: the net runs the op on the CPU). */
#include <limits.h>

#include "core/op.h"
#include "ops/attention_state.h"
#include "ops/opencl/cl_op.h"

/* Floats of local memory a work-group may take: within the 32 KiB every OpenCL device
 * has (CL_DEVICE_LOCAL_MEM_SIZE's minimum), with room to spare. */
#define ATTN_LOCAL_FLOATS 7168

typedef struct attention_cl_state {
  mace_cl_shadow shadow;
} attention_cl_state;

static mace_status attention_cl_init(mace_op *op) {
  attention_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status attention_cl_infer(mace_op *op) {
  attention_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const attention_state *a = st->shadow.state;
  const mace_attention_params *p = &a->prm;
  if (a->in_pk >= 0 || a->in_nonpad >= 0 || op->n_outputs > 1)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Attention): past_key/value, nonpad_kv_seqlen "
                      "and the present/qk outputs on the GPU", op->name);
  if (p->S + p->E + 256 > ATTN_LOCAL_FLOATS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Attention): %lld keys of head size %lld "
                      "exceed the GPU kernel's local memory", op->name, (long long)p->S,
                      (long long)p->E);
  if (p->B * p->Hq * p->L >= INT_MAX)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Attention): too many query rows", op->name);
  return MACE_OK;
}

static mace_status arg_int4(mace_cl_kernel *k, int index, const int64_t *v, int n) {
  int32_t w[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; ++i) w[i] = (int32_t)v[i];
  return mace_cl_arg(k, index, w, sizeof(w));
}

static mace_status attention_cl_run(mace_op *op) {
  attention_cl_state *st = op->state;
  const attention_state *a = st->shadow.state;
  const mace_attention_params *p = &a->prm;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const int64_t rows = p->B * p->Hq * p->L;
  if (rows == 0 || p->Ev == 0) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "attention", "attention", "", &k));
  const mace_tensor *y = op->outputs[0];
  const mace_tensor *mask = a->in_mask >= 0 ? op->inputs[a->in_mask] : NULL;
  const int mask_kind = !mask ? 0 : mask->dtype == MACE_DT_BOOL ? 2 : 1;
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->inputs[1]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 4, op, op->inputs[2]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 6, op, y));
  /* the mask's slot of the other kind gets y, never read */
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 8, op, mask_kind == 1 ? mask : y));
  if (mask_kind == 2) {  /* bool: one byte an element, offset in bytes */
    if (mask->storage != MACE_STORAGE_CL_BUFFER || !mask->cl_mem || mask->cl_offset >= INT_MAX)
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (Attention): mask '%s' is not in a device "
                        "buffer", op->name, mask->name);
    MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 10, mask->cl_mem));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 11, (int64_t)mask->cl_offset));
  } else {
    MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 10, y->cl_mem));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 11, 0));
  }
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 12, mask_kind));
  MACE_RETURN_IF_ERROR(arg_int4(k, 13, p->mask_st, 4));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 14, p->mask_len));
  MACE_RETURN_IF_ERROR(arg_int4(k, 15, p->q_st, 3));
  MACE_RETURN_IF_ERROR(arg_int4(k, 16, p->k_st, 3));
  MACE_RETURN_IF_ERROR(arg_int4(k, 17, p->v_st, 3));
  MACE_RETURN_IF_ERROR(arg_int4(k, 18, p->y_st, 3));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 19, p->Hq));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 20, p->L));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 21, p->S));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 22, p->E));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 23, p->Ev));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 24, p->Hq / p->Hkv));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 25, p->is_causal));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 26, p->causal_offset));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 27, p->scale));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 28, p->softcap));
  const size_t group = mace_cl_row_group(k, p->S > p->Ev ? p->S : p->Ev);
  MACE_RETURN_IF_ERROR(
      mace_cl_arg_local(k, 29, (size_t)(p->S + p->E + (int64_t)group) * sizeof(float)));
  const size_t gws[1] = {(size_t)rows * group}, lws[1] = {group};
  return mace_cl_launch(rt, k, 1, gws, lws, op->name);
}

static void attention_cl_release(mace_op *op) {
  attention_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_attention_cl = {.type = "Attention", .device = MACE_DEVICE_GPU,
                                           .dtype = MACE_DT_F32,
                                           .state_size = sizeof(attention_cl_state),
                                           .init = attention_cl_init,
                                           .infer = attention_cl_infer,
                                           .run = attention_cl_run,
                                           .release = attention_cl_release};
