/* Tensor descriptors: dtype, dims, layout, quantization and (usually borrowed) storage. */
#ifndef MACE_CORE_TENSOR_H_
#define MACE_CORE_TENSOR_H_

#include <stddef.h>
#include <stdint.h>

#include "mace/mace.h"

#define MACE_ALIGN 64

typedef enum mace_layout {
  MACE_LAYOUT_NCHW = 0,   /* also "plain row-major" for tensors that are not images */
  MACE_LAYOUT_NHWC = 1,
  MACE_LAYOUT_NCHWC = 2   /* blocked [N, ceil(C/block), H, W, block], the channel tail zero-padded
                           * (kernels/cpu/nchwc.h, runtime/cpu/layout.h); dims stay [N, C, H, W] */
} mace_layout;

typedef enum mace_storage_kind {
  MACE_STORAGE_HOST = 0,
  MACE_STORAGE_CL_BUFFER = 1,
  MACE_STORAGE_CL_IMAGE2D = 2
} mace_storage_kind;

typedef enum mace_tensor_role {
  MACE_TENSOR_INTERMEDIATE = 0,  /* data: slice of the engine's arena (borrowed) */
  MACE_TENSOR_CONST = 1,         /* data: region of the weights blob (borrowed) or packed copy */
  MACE_TENSOR_INPUT = 2,         /* data: slice of the arena, filled by mace_engine_run */
} mace_tensor_role;

/* A tensor. The net owns the struct and `name`. `data` is owned only if `owns_data` is set
 * (then it came from mace_aligned_alloc and is freed with the tensor); otherwise it is
 * borrowed from the arena, the weights blob or the caller. */
typedef struct mace_tensor {
  char *name;
  mace_dtype dtype;
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
  mace_layout layout;
  int block;                 /* channels per block for NCHWC */
  float scale;               /* quantized dtypes */
  int32_t zero_point;
  mace_storage_kind storage;
  mace_tensor_role role;
  void *data;
  int owns_data;
  /* Set at net build when this tensor is a view (same bytes) of another: the root tensor
   * whose buffer it shares (borrowed; never itself a view). */
  struct mace_tensor *view_of;
  /* Value tensor: infer reads its values (shapes, axes, ...). Its data is owned host memory
   * outside the arena (owns_data), valid once value_ready is set. */
  int is_value;
  int value_ready;
  /* data is the caller's buffer for the current run (mace_net_borrow), not the arena. Where
   * each tensor lives in the arena, and for how long, is the planner's (core/planner.h). */
  int borrowed;
  /* storage MACE_STORAGE_CL_BUFFER: the device buffer (an opaque cl_mem, borrowed from the
   * net's device arena) and the tensor's byte offset in it (runtime/opencl/cl_runtime.h). */
  void *cl_mem;
  size_t cl_offset;
} mace_tensor;

size_t mace_dtype_size(mace_dtype dtype);
const char *mace_dtype_name(mace_dtype dtype);
/* Elements of the logical dims. */
int64_t mace_tensor_numel(const mace_tensor *t);
/* Elements stored: numel, but for NCHWc the channels rounded up to a multiple of the block. */
int64_t mace_tensor_storage_numel(const mace_tensor *t);
/* Bytes stored (what the planner allocates): storage_numel * the dtype's size. */
size_t mace_tensor_nbytes(const mace_tensor *t);
/* "[1,3,224,224]" into buf. */
const char *mace_dims_str(const int64_t *dims, int ndim, char *buf, size_t size);
int mace_dims_equal(const int64_t *a, int na, const int64_t *b, int nb);

/* 64-byte aligned allocation; NULL on failure or overflow. Freed with mace_aligned_free. */
void *mace_aligned_alloc(size_t bytes);

/* The most bytes a run arena may take: MACE_MAX_ARENA_BYTES from the environment when set (0: no
 * limit), else the machine's physical memory (0 where it cannot be read). A larger plan fails with
 * MACE_OUT_OF_RESOURCES instead of being allocated, touched and killed by the OOM killer. */
int64_t mace_arena_ceiling(void);
/* The same for a packed filter: from 2 MB up, 2 MB aligned in whole 2 MB pages with
 * transparent huge pages advised (Linux). Freed with mace_aligned_free. */
void *mace_filter_alloc(size_t bytes);
void mace_aligned_free(void *p);

#endif /* MACE_CORE_TENSOR_H_ */
