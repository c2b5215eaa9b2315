/* The public GPU buffers (mace_gpu_buffer in mace/mace.h) over the runtime's mace_cl_buffer. */
#include <stdlib.h>
#include <string.h>

#include "api/engine_internal.h"
#include "core/status.h"

/* Owned: cl (mace_cl_buffer_destroy). */
struct mace_gpu_buffer {
  mace_cl_buffer *cl;
};

mace_cl_buffer *mace_gpu_buffer_cl(const mace_gpu_buffer *buffer) { return buffer->cl; }

mace_status mace_gpu_buffer_create(mace_engine *engine, size_t bytes, mace_gpu_buffer **out) {
  if (!out) return mace_error(MACE_INVALID_ARGS, "out is NULL");
  *out = NULL;
  if (!engine) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  mace_cl_runtime *rt = mace_engine_cl_runtime(engine);
  if (!rt)
    return mace_error(MACE_INVALID_ARGS, "a GPU buffer needs a GPU engine (this one runs on "
                      "the CPU)");
  mace_gpu_buffer *b = calloc(1, sizeof(*b));
  if (!b) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_status st = mace_cl_buffer_create(rt, bytes, &b->cl);
  if (st != MACE_OK) {
    free(b);
    return mace_error_wrap(st, "allocating a %zu-byte GPU buffer", bytes);
  }
  *out = b;
  return MACE_OK;
}

void mace_gpu_buffer_destroy(mace_gpu_buffer *buffer) {
  if (!buffer) return;
  mace_cl_buffer_destroy(buffer->cl);
  free(buffer);
}

size_t mace_gpu_buffer_size(const mace_gpu_buffer *buffer) {
  return buffer ? mace_cl_buffer_size(buffer->cl) : 0;
}

mace_gpu_precision mace_gpu_buffer_precision(const mace_gpu_buffer *buffer) {
  return buffer && mace_cl_buffer_precision(buffer->cl) == MACE_CL_FP16 ? MACE_GPU_FP16
                                                                        : MACE_GPU_FP32;
}

void *mace_gpu_buffer_cl_mem(const mace_gpu_buffer *buffer) {
  return buffer ? mace_cl_buffer_mem(buffer->cl) : NULL;
}

mace_status mace_gpu_buffer_read(const mace_gpu_buffer *buffer, size_t offset, void *dst,
                                 size_t bytes) {
  if (!buffer || (!dst && bytes)) return mace_error(MACE_INVALID_ARGS, "NULL argument");
  return mace_cl_buffer_read(buffer->cl, offset, dst, bytes);
}

mace_status mace_gpu_buffer_write(mace_gpu_buffer *buffer, size_t offset, const void *src,
                                  size_t bytes) {
  if (!buffer || (!src && bytes)) return mace_error(MACE_INVALID_ARGS, "NULL argument");
  return mace_cl_buffer_write(buffer->cl, offset, src, bytes);
}

size_t mace_engine_gpu_tensor_bytes(const mace_engine *engine, const mace_tensor_info *info) {
  const mace_cl_runtime *rt = engine ? mace_engine_cl_runtime(engine) : NULL;
  if (!rt || !info) return 0;
  const size_t es =
      info->dtype == MACE_DT_F32 ? mace_cl_runtime_elem_size(rt) : mace_dtype_size(info->dtype);
  const int64_t n = mace_tensor_info_numel(info);
  return n > 0 ? (size_t)n * es : 0;
}

int mace_engine_shares_gpu_buffer(const mace_engine *engine, const mace_gpu_buffer *buffer) {
  const mace_cl_runtime *rt = engine ? mace_engine_cl_runtime(engine) : NULL;
  return rt && buffer && mace_cl_runtime_context(rt) == mace_cl_buffer_context(buffer->cl);
}

mace_status mace_gpu_buffer_check(const mace_engine *engine, const mace_gpu_buffer *buffer,
                                  const char *what, const char *name, int is_float,
                                  size_t bytes) {
  const mace_cl_runtime *rt = mace_engine_cl_runtime(engine);
  if (!rt)
    return mace_error(MACE_INVALID_INPUT, "%s '%s' is a GPU buffer, but the engine runs on the "
                      "CPU", what, name);
  if (!mace_engine_shares_gpu_buffer(engine, buffer))
    return mace_error(MACE_INVALID_INPUT, "%s '%s': its GPU buffer belongs to another engine's "
                      "OpenCL queue (create this engine sharing the queue of the one that made "
                      "it: share_gpu_with)", what, name);
  const mace_cl_precision p = mace_cl_buffer_precision(buffer->cl);
  if (is_float && p != mace_cl_runtime_precision(rt))
    return mace_error(MACE_INVALID_INPUT, "%s '%s': its GPU buffer holds %s floats, the engine "
                      "stores %s (give both engines the same gpu_precision)", what, name,
                      p == MACE_CL_FP16 ? "fp16" : "fp32",
                      mace_cl_runtime_precision(rt) == MACE_CL_FP16 ? "fp16" : "fp32");
  if (mace_cl_buffer_size(buffer->cl) < bytes)
    return mace_error(MACE_INVALID_INPUT, "%s '%s' needs %zu bytes on the GPU, its buffer has "
                      "%zu", what, name, bytes, mace_cl_buffer_size(buffer->cl));
  return MACE_OK;
}

mace_status mace_engine_gpu_launch_stat(const mace_engine *engine, mace_gpu_launch_stat *stat) {
  if (!engine || !stat) return mace_error(MACE_INVALID_ARGS, "NULL argument");
  memset(stat, 0, sizeof(*stat));
  const mace_cl_runtime *rt = mace_engine_cl_runtime(engine);
  if (!rt) return MACE_OK;
  mace_cl_launch_stats s;
  mace_cl_runtime_launch_stats(rt, &s);
  stat->launches = s.launches;
  stat->chunked_launches = s.chunked_launches;
  stat->chunks = s.chunks;
  return MACE_OK;
}
