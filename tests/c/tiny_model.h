/* The tiny model of the C tests (a helper header, not a test): y = relu(x + b), x [1,3,4,4] NCHW
 * f32, b [1,3,1,1] a constant at offset 64 of a TINY_WEIGHTS_BYTES blob; as a valid NetDef or
 * made wrong in one way (enum tiny_variant). test_model_loader loads every variant;
 * mace_test_model writes the valid one for the mace_run tests. */
#ifndef MACE_TESTS_C_TINY_MODEL_H
#define MACE_TESTS_C_TINY_MODEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mace.pb-c.h"

/* ---- protobuf-c fillers shared by the models the tests build ---------------------------- */

static inline Mace__Argument *tiny_arg_ints(Mace__Argument *a, char *name, int64_t *v, size_t n) {
  Mace__Argument init = MACE__ARGUMENT__INIT;
  *a = init;
  a->name = name;
  a->n_ints = n;
  a->ints = v;
  return a;
}

static inline Mace__Argument *tiny_arg_str(Mace__Argument *a, char *name, char *v) {
  Mace__Argument init = MACE__ARGUMENT__INIT;
  *a = init;
  a->name = name;
  a->has_s = 1;
  a->s.data = (uint8_t *)v;
  a->s.len = strlen(v);
  return a;
}

/* An op reading in[n_in], writing out[n_out], with args[n_arg] (all borrowed). */
static inline void tiny_op(Mace__OperatorDef *op, char *name, char *type, char **in, size_t n_in,
                           char **out, size_t n_out, Mace__Argument **args, size_t n_arg) {
  Mace__OperatorDef init = MACE__OPERATOR_DEF__INIT;
  *op = init;
  op->name = name;
  op->type = type;
  op->n_input = n_in;
  op->input = in;
  op->n_output = n_out;
  op->output = out;
  op->n_arg = n_arg;
  op->arg = args;
}

/* The packed bytes of net (*size of them); NULL when out of memory; the caller frees them. */
static inline uint8_t *tiny_pack(const Mace__NetDef *net, size_t *size) {
  *size = mace__net_def__get_packed_size(net);
  uint8_t *buf = malloc(*size);
  if (buf) mace__net_def__pack(net, buf);
  return buf;
}

/* ---- the tiny model ------------------------------------------------------------------------ */

enum tiny_variant {
  V_OK,
  V_UNKNOWN_OP,
  V_BAD_OUTPUT_SHAPE,
  V_CYCLE,            /* op 0 reads the output of op 1 */
  V_DUP_TENSOR,       /* op 1 writes a name that exists */
  V_NO_OUTPUTS,
  V_OUTPUT_MISSING,   /* output_info names a tensor nobody produces */
  V_CONST_SIZE,       /* data_size disagrees with dims */
  V_CONST_UNALIGNED,  /* offset not a multiple of its element size (a 12-byte constant) */
  V_CONST_PAST_END,   /* offset + size past the weights */
  V_BAD_DTYPE,        /* input with data type 77 */
  V_RANK9,            /* input of rank 9 */
  V_NEGATIVE_DIM,
  V_BROADCAST_MISMATCH, /* b [1,5,1,1] cannot broadcast against x */
  V_EMPTY_TYPE,
  V_MISSING_INPUT,    /* op reads a tensor that does not exist */
  V_WEIGHTS_SIZE,     /* NetDef.weights_size larger than the blob */
  V_COUNT,
  V_NO_WEIGHTS_SIZE   /* valid, without NetDef.weights_size: only the offsets guard the blob */
};

#define TINY_WEIGHTS_BYTES 128

static const float kTinyBias[3] = {0.5f, -0.25f, 2.0f};

/* Packs the NetDef of variant v (*size its bytes); NULL when out of memory; the caller frees it. */
static inline uint8_t *tiny_model_build(enum tiny_variant v, size_t *size) {
  int64_t xdims[9] = {1, 3, 4, 4, 1, 1, 1, 1, 1};
  int64_t bdims[4] = {1, 3, 1, 1};
  int64_t ydims[4] = {1, 3, 4, 4};

  Mace__InputOutputInfo in = MACE__INPUT_OUTPUT_INFO__INIT;
  in.name = "x";
  in.n_dims = v == V_RANK9 ? 9 : 4;
  in.dims = xdims;
  in.has_data_type = 1;
  in.data_type = v == V_BAD_DTYPE ? (Mace__DataType)77 : MACE__DATA_TYPE__DT_FLOAT;
  in.has_data_format = 1;
  in.data_format = MACE__DATA_FORMAT__NCHW;
  if (v == V_NEGATIVE_DIM) xdims[2] = -4;

  Mace__InputOutputInfo out = MACE__INPUT_OUTPUT_INFO__INIT;
  out.name = v == V_OUTPUT_MISSING ? "ghost" : "y";
  out.n_dims = 4;
  out.dims = ydims;
  out.has_data_type = 1;
  out.data_type = MACE__DATA_TYPE__DT_FLOAT;

  Mace__ConstTensor b = MACE__CONST_TENSOR__INIT;
  b.name = "b";
  b.n_dims = 4;
  b.dims = bdims;
  b.has_data_type = 1;
  b.data_type = MACE__DATA_TYPE__DT_FLOAT;
  b.has_offset = 1;
  b.offset = v == V_CONST_UNALIGNED ? 2 : v == V_CONST_PAST_END ? 2 * TINY_WEIGHTS_BYTES : 64;
  b.has_data_size = 1;
  b.data_size = v == V_CONST_SIZE ? 16 : 12;
  if (v == V_BROADCAST_MISMATCH) {
    bdims[1] = 5;
    b.data_size = 20;
  }

  /* op 0: t1 = Eltwise ADD(x, b); op 1: y = Activation RELU(t1) */
  char *in0[2] = {"x", "b"}, *out0[1] = {"t1"};
  char *in1[1] = {"t1"}, *out1[1] = {"y"};
  if (v == V_CYCLE) in0[0] = "y";
  if (v == V_MISSING_INPUT) in1[0] = "nothing_here";
  if (v == V_DUP_TENSOR) out1[0] = "t1";
  Mace__Argument etype, act;
  Mace__Argument *args0[1] = {tiny_arg_str(&etype, "type", "ADD")};
  Mace__Argument *args1[1] = {tiny_arg_str(&act, "activation", "RELU")};

  Mace__OutputShape shape0 = MACE__OUTPUT_SHAPE__INIT;
  int64_t t1dims[4] = {1, 3, 4, v == V_BAD_OUTPUT_SHAPE ? 5 : 4};
  shape0.n_dims = 4;
  shape0.dims = t1dims;
  Mace__OutputShape *shapes0[1] = {&shape0};

  Mace__OperatorDef op0, op1;
  tiny_op(&op0, "add", v == V_UNKNOWN_OP ? "NoSuchOp" : v == V_EMPTY_TYPE ? "" : "Eltwise", in0, 2, out0,
          1, args0, 1);
  op0.n_output_shape = 1;
  op0.output_shape = shapes0;
  tiny_op(&op1, "relu", "Activation", in1, 1, out1, 1, args1, 1);

  Mace__OperatorDef *ops[2] = {&op0, &op1};
  Mace__ConstTensor *consts[1] = {&b};
  Mace__InputOutputInfo *ins[1] = {&in}, *outs[1] = {&out};
  Mace__NetDef net = MACE__NET_DEF__INIT;
  net.name = "tiny";
  net.n_op = 2;
  net.op = ops;
  net.n_tensors = 1;
  net.tensors = consts;
  net.n_input_info = 1;
  net.input_info = ins;
  net.n_output_info = v == V_NO_OUTPUTS ? 0 : 1;
  net.output_info = outs;
  net.has_weights_size = v != V_NO_WEIGHTS_SIZE;
  net.weights_size = v == V_WEIGHTS_SIZE ? 4 * TINY_WEIGHTS_BYTES : TINY_WEIGHTS_BYTES;

  return tiny_pack(&net, size);
}

/* The weights blob (TINY_WEIGHTS_BYTES, the bias at offset 64); the caller frees it. */
static inline uint8_t *tiny_model_weights(void) {
  uint8_t *w = calloc(1, TINY_WEIGHTS_BYTES);
  if (w) memcpy(w + 64, kTinyBias, sizeof(kTinyBias));
  return w;
}

#endif
