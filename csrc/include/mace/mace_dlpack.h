/* The DLPack 1.x structures (github.com/dmlc/dlpack, include/dlpack/dlpack.h) that
 * mace_gpu_buffer_export_dlpack fills, with mace_ names so that a program may also include
 * dlpack.h itself: the layouts are DLPack's, field for field. */
#ifndef MACE_MACE_DLPACK_H_
#define MACE_MACE_DLPACK_H_

#include <stdint.h>

#define MACE_DL_CPU 1      /* kDLCPU */
#define MACE_DL_OPENCL 4   /* kDLOpenCL: data is the cl_mem */
#define MACE_DL_INT 0      /* kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool */
#define MACE_DL_UINT 1
#define MACE_DL_FLOAT 2
#define MACE_DL_BFLOAT 4
#define MACE_DL_BOOL 6
#define MACE_DL_FLAG_READ_ONLY 1u   /* DLPACK_FLAG_BITMASK_READ_ONLY */
#define MACE_DL_FLAG_IS_COPIED 2u   /* DLPACK_FLAG_BITMASK_IS_COPIED */

typedef struct mace_dl_device {
  int32_t device_type;     /* DLDeviceType */
  int32_t device_id;
} mace_dl_device;

typedef struct mace_dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} mace_dl_dtype;

typedef struct mace_dl_tensor {
  void *data;
  mace_dl_device device;
  int32_t ndim;
  mace_dl_dtype dtype;
  int64_t *shape;
  int64_t *strides;        /* in elements */
  uint64_t byte_offset;
} mace_dl_tensor;

/* DLManagedTensor (the legacy capsule "dltensor"). */
typedef struct mace_dl_managed_tensor {
  mace_dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct mace_dl_managed_tensor *self);
} mace_dl_managed_tensor;

typedef struct mace_dl_version {
  uint32_t major, minor;
} mace_dl_version;

/* DLManagedTensorVersioned (DLPack >= 1.0, the capsule "dltensor_versioned"). */
typedef struct mace_dl_managed_tensor_versioned {
  mace_dl_version version;
  void *manager_ctx;
  void (*deleter)(struct mace_dl_managed_tensor_versioned *self);
  uint64_t flags;
  mace_dl_tensor dl_tensor;
} mace_dl_managed_tensor_versioned;

#endif /* MACE_MACE_DLPACK_H_ */
