/* MACE Micro: the C99 runtime for microcontrollers (no malloc, no threads, no files): the model,
 * tensor and op records that `mace micro` emits as const code, and the graph executor.
 *
 * Worked example (the converter writes mnist.c / mnist.h; python/mace/micro.py):
 *
 *     $ mace micro --model mnist.pb --weights mnist.data --name mnist --out gen/
 *
 *     #include "mnist.h"
 *     static float out[MACE_MICRO_MNIST_OUTPUT_SIZE];
 *     int main(void) {
 *       // input: MACE_MICRO_MNIST_INPUT_SIZE floats in the model's layout (NCHW)
 *       int status = mace_micro_mnist_run(input, out);  // 0: MACE_MICRO_OK
 *       ...
 *     }
 *
 * The generated run function owns a static arena of MACE_MICRO_<NAME>_ARENA_BYTES (in .bss);
 * mace_micro_model_run() runs any model record with an arena the caller gives instead.
 * Nothing here allocates, blocks, or calls abort(); every failure is a status.
 */
#ifndef MACE_MICRO_H_
#define MACE_MICRO_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mace_micro_status {
  MACE_MICRO_OK = 0,
  MACE_MICRO_INVALID_ARGUMENT = 1, /* a NULL input/output, or an arena too small */
  MACE_MICRO_INVALID_MODEL = 2     /* a model record that is inconsistent (a bad tensor index) */
} mace_micro_status;

/* Where a tensor lives. */
typedef enum mace_micro_mem {
  MACE_MICRO_MEM_ARENA = 0,  /* arena + offset, planned at conversion */
  MACE_MICRO_MEM_CONST = 1,  /* data: a const array in flash */
  MACE_MICRO_MEM_INPUT = 2,  /* the caller's input number `index` (read only) */
  MACE_MICRO_MEM_OUTPUT = 3  /* the caller's output number `index` */
} mace_micro_mem;

/* A value that ops read or write; its shape and dtype are baked into the ops' parameters. */
typedef struct mace_micro_tensor {
  const void *data;  /* MEM_CONST: the values (borrowed, const); else NULL */
  uint32_t offset;   /* MEM_ARENA: bytes into the arena */
  uint8_t mem;       /* mace_micro_mem */
  uint8_t index;     /* MEM_INPUT / MEM_OUTPUT: which one */
} mace_micro_tensor;

/* An op's kernel: reads x0 (and x1 for binary ops, else NULL), writes y; params is the op's
 * own const parameter struct (mace_micro_ops.h). */
typedef mace_micro_status (*mace_micro_op_fn)(const void *params, const void *x0,
                                              const void *x1, void *y);

#define MACE_MICRO_NO_TENSOR 0xFFFFu

/* One op of the graph: tensor indices into the model's tensor table (NO_TENSOR: absent). */
typedef struct mace_micro_op {
  mace_micro_op_fn run;
  const void *params;
  uint16_t x0, x1, y;
} mace_micro_op;

/* A whole model, const: ops run in order over one arena of arena_bytes. */
typedef struct mace_micro_model {
  const char *name;
  const mace_micro_tensor *tensors;
  const mace_micro_op *ops;
  uint16_t n_tensors, n_ops;
  uint8_t n_inputs, n_outputs;
  uint32_t arena_bytes;
} mace_micro_model;

/* Runs `model` on inputs[0..n_inputs) into outputs[0..n_outputs) using `arena` (arena_bytes
 * long, aligned to 8 bytes; its contents are scratch). */
mace_micro_status mace_micro_model_run(const mace_micro_model *model, void *arena,
                                       uint32_t arena_bytes, const void *const *inputs,
                                       void *const *outputs);

#ifdef __cplusplus
}
#endif

#endif /* MACE_MICRO_H_ */
