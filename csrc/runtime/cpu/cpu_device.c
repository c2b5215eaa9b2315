/* The CPU's runtime behind the device interface (runtime/cpu/cpu_device.h). */
#include "runtime/cpu/cpu_device.h"

#include <string.h>

#include "runtime/cpu/layout.h"
#include "runtime/cpu/simd_dispatch.h"

/* The blocked-layout pass, for the active ISA's block (none when it is off). */
static mace_status cpu_prepare_graph(mace_runtime *rt, Mace__NetDef *def, int *n_inserted) {
  (void)rt;
  return mace_layout_nchwc(def, mace_nchwc_block(), n_inserted);
}

static size_t cpu_elem_size(const mace_runtime *rt, mace_dtype dtype) {
  (void)rt;
  return mace_dtype_size(dtype);
}

static mace_status cpu_alloc(mace_runtime *rt, size_t bytes, void **mem) {
  (void)rt;
  *mem = mace_aligned_alloc(bytes ? bytes : 1);
  if (!*mem) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory (%zu bytes)", bytes);
  return MACE_OK;
}

static void cpu_free(mace_runtime *rt, void *mem) {
  (void)rt;
  mace_aligned_free(mem);
}

static mace_status cpu_copy_in(mace_runtime *rt, void *mem, size_t offset, const void *src,
                               size_t numel, mace_dtype dtype) {
  (void)rt;
  if (numel) memcpy((char *)mem + offset, src, numel * mace_dtype_size(dtype));
  return MACE_OK;
}

static mace_status cpu_copy_out(mace_runtime *rt, const void *mem, size_t offset, void *dst,
                                size_t numel, mace_dtype dtype) {
  (void)rt;
  if (numel) memcpy(dst, (const char *)mem + offset, numel * mace_dtype_size(dtype));
  return MACE_OK;
}

static mace_status cpu_copy(mace_runtime *rt, const void *src, size_t src_offset, void *dst,
                            size_t dst_offset, size_t bytes) {
  (void)rt;
  if (bytes) memmove((char *)dst + dst_offset, (const char *)src + src_offset, bytes);
  return MACE_OK;
}

static mace_status cpu_run_op(mace_runtime *rt, mace_op *op) {
  (void)rt;
  return op->kind->run(op);
}

static mace_status cpu_sync(mace_runtime *rt) {
  (void)rt;
  return MACE_OK;  /* ops and copies are done when they return */
}

static void cpu_set_profiling(mace_runtime *rt, int on) { (void)rt, (void)on; }
static void cpu_profile_reset(mace_runtime *rt) { (void)rt; }
static double cpu_profile_ms(mace_runtime *rt, const char *tag) {
  (void)rt, (void)tag;
  return 0;
}

static const mace_device_ops cpu_ops = {.name = "cpu",
                                        .prepare_graph = cpu_prepare_graph,
                                        .elem_size = cpu_elem_size,
                                        .alloc = cpu_alloc,
                                        .free = cpu_free,
                                        .copy_in = cpu_copy_in,
                                        .copy_out = cpu_copy_out,
                                        .copy = cpu_copy,
                                        .bind_op = NULL,
                                        .run_op = cpu_run_op,
                                        .sync = cpu_sync,
                                        .set_profiling = cpu_set_profiling,
                                        .profile_reset = cpu_profile_reset,
                                        .profile_ms = cpu_profile_ms,
                                        /* no image memory */
                                        .image_memory = NULL,
                                        .image_extent = NULL,
                                        .image_alloc = NULL,
                                        .image_from_buffer = NULL,
                                        .image_to_buffer = NULL};

static mace_runtime cpu_runtime = {.ops = &cpu_ops, .device = MACE_DEVICE_CPU, .impl = NULL};

mace_runtime *mace_cpu_device(void) { return &cpu_runtime; }

void mace_cpu_f16_to_f32(const uint16_t *in, float *out, int64_t n) {
  const mace_simd_kernels *k = mace_simd_active();
  (k->f16_to_f32 ? k->f16_to_f32 : mace_f16_to_f32__ref)(in, out, 0, n);
}

void mace_cpu_bf16_to_f32(const uint16_t *in, float *out, int64_t n) {
  const mace_simd_kernels *k = mace_simd_active();
  (k->bf16_to_f32 ? k->bf16_to_f32 : mace_bf16_to_f32__ref)(in, out, 0, n);
}

void mace_cpu_f32_to_f16(const float *in, uint16_t *out, int64_t n) {
  const mace_simd_kernels *k = mace_simd_active();
  (k->f32_to_f16 ? k->f32_to_f16 : mace_f32_to_f16__ref)(in, out, 0, n);
}
