/* DLPack export of GPU buffers (mace_gpu_buffer_export_dlpack): a managed tensor whose data is
 * the buffer's cl_mem, as DLPack describes OpenCL memory. */
#include <stdlib.h>
#include <string.h>

#include "api/engine_internal.h"
#include "core/status.h"
#include "mace/mace_dlpack.h"

/* One allocation per export, freed by the deleter: the managed tensor first (the deleter's
 * `self` is the block), then what its pointers point at. release/release_ctx: the owner of
 * the buffer, called once by the deleter. */
typedef struct export_block {
  union {
    mace_dl_managed_tensor legacy;
    mace_dl_managed_tensor_versioned versioned;
  } m;
  void (*release)(void *ctx);
  void *release_ctx;
  int64_t shape[MACE_MAX_DIMS];
  int64_t strides[MACE_MAX_DIMS];
} export_block;

static void block_free(export_block *b) {
  if (b->release) b->release(b->release_ctx);
  free(b);
}
static void delete_legacy(mace_dl_managed_tensor *self) { block_free((export_block *)self); }
static void delete_versioned(mace_dl_managed_tensor_versioned *self) {
  block_free((export_block *)self);
}

/* DLPack's (code, bits) of a mace dtype; 0 when DLPack has none. */
static int dl_dtype(mace_dtype dtype, int fp16, mace_dl_dtype *out) {
  static const struct {
    mace_dtype dt;
    uint8_t code, bits;
  } kTable[] = {{MACE_DT_F32, MACE_DL_FLOAT, 32},  {MACE_DT_F16, MACE_DL_FLOAT, 16},
                {MACE_DT_F64, MACE_DL_FLOAT, 64},  {MACE_DT_BF16, MACE_DL_BFLOAT, 16},
                {MACE_DT_I8, MACE_DL_INT, 8},      {MACE_DT_I16, MACE_DL_INT, 16},
                {MACE_DT_I32, MACE_DL_INT, 32},    {MACE_DT_I64, MACE_DL_INT, 64},
                {MACE_DT_U8, MACE_DL_UINT, 8},     {MACE_DT_U16, MACE_DL_UINT, 16},
                {MACE_DT_U32, MACE_DL_UINT, 32},   {MACE_DT_U64, MACE_DL_UINT, 64},
                {MACE_DT_BOOL, MACE_DL_BOOL, 8}};
  if (dtype == MACE_DT_F32 && fp16) dtype = MACE_DT_F16;  /* the bytes are half */
  for (size_t i = 0; i < sizeof(kTable) / sizeof(kTable[0]); ++i)
    if (kTable[i].dt == dtype) {
      *out = (mace_dl_dtype){kTable[i].code, kTable[i].bits, 1};
      return 1;
    }
  return 0;
}

/* The index of device (platform_index, device_index) in mace_gpu_list_devices' list. */
static mace_status device_ordinal(int pi, int di, int32_t *out) {
  int n = 0;
  mace_gpu_info *all = NULL;
  mace_status st = mace_gpu_list_devices(NULL, 0, &n);
  if (st == MACE_OK && n > 0) {
    all = calloc((size_t)n, sizeof(*all));
    st = all ? mace_gpu_list_devices(all, n, &n)
             : mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  }
  if (st == MACE_OK) {
    st = mace_error(MACE_RUNTIME_ERROR, "DLPack: the buffer's OpenCL device (platform %d, "
                    "device %d) is not listed", pi, di);
    for (int i = 0; i < n; ++i)
      if (all[i].platform_index == pi && all[i].device_index == di) {
        *out = i;
        st = MACE_OK;
        break;
      }
  }
  free(all);
  return st;
}

mace_status mace_gpu_buffer_export_dlpack(const mace_gpu_buffer *buffer, int ndim,
                                          const int64_t *dims, mace_dtype dtype, int versioned,
                                          void (*release)(void *ctx), void *release_ctx,
                                          void **out) {
  if (!out) return mace_error(MACE_INVALID_ARGS, "out is NULL");
  *out = NULL;
  if (!buffer || (ndim > 0 && !dims))
    return mace_error(MACE_INVALID_ARGS, "DLPack export: NULL buffer or dims");
  if (ndim < 0 || ndim > MACE_MAX_DIMS)
    return mace_error(MACE_INVALID_ARGS, "DLPack export: ndim %d is outside [0, %d]", ndim,
                      MACE_MAX_DIMS);
  const mace_cl_buffer *cl = mace_gpu_buffer_cl(buffer);
  mace_dl_dtype dt;
  if (!dl_dtype(dtype, mace_cl_buffer_precision(cl) == MACE_CL_FP16, &dt))
    return mace_error(MACE_UNSUPPORTED, "DLPack export: mace dtype %d has no DLPack type",
                      (int)dtype);
  size_t numel = 1;
  for (int d = 0; d < ndim; ++d) {
    if (dims[d] < 0) return mace_error(MACE_INVALID_ARGS, "DLPack export: dim %d is negative", d);
    numel *= (size_t)dims[d];
  }
  if (numel * (dt.bits / 8u) > mace_cl_buffer_size(cl))
    return mace_error(MACE_INVALID_ARGS, "DLPack export: the tensor needs %zu bytes, the GPU "
                      "buffer has %zu", numel * (dt.bits / 8u), mace_cl_buffer_size(cl));
  int pi, di;
  int32_t ordinal = 0;
  mace_cl_buffer_device(cl, &pi, &di);
  MACE_RETURN_IF_ERROR(device_ordinal(pi, di, &ordinal));
  export_block *b = calloc(1, sizeof(*b));
  if (!b) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    b->shape[d] = dims[d];
    b->strides[d] = stride;
    stride *= dims[d];
  }
  const mace_dl_tensor t = {mace_cl_buffer_mem(cl), {MACE_DL_OPENCL, ordinal}, ndim, dt,
                            b->shape, b->strides, 0};
  if (versioned) {
    b->m.versioned = (mace_dl_managed_tensor_versioned){{1, 0}, NULL, delete_versioned, 0, t};
    b->m.versioned.manager_ctx = b;
  } else {
    b->m.legacy = (mace_dl_managed_tensor){t, NULL, delete_legacy};
    b->m.legacy.manager_ctx = b;
  }
  b->release = release;
  b->release_ctx = release_ctx;
  *out = b;
  return MACE_OK;
}

int mace_gpu_buffer_device(const mace_gpu_buffer *buffer) {
  if (!buffer) return -1;
  int pi, di;
  int32_t ordinal = -1;
  mace_cl_buffer_device(mace_gpu_buffer_cl(buffer), &pi, &di);
  return device_ordinal(pi, di, &ordinal) == MACE_OK ? ordinal : -1;
}
