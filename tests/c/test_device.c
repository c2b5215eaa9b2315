/* Test of the device interface (csrc/runtime/device.h) on both runtimes: the CPU's and
 * OpenCL's (runtime/opencl/cl_device.h, in fp32 and fp16). For each: every entry a net calls is
 * filled; float and int tensors survive copy_in then copy_out (fp16 storage: the values are
 * exact halves, so the round trip is exact), at an offset, and through a device-side copy;
 * elem_size matches the storage (2 bytes a float in fp16); sync and the profile calls work
 * with nothing queued. The CPU's prepare_graph is the blocked-layout pass; OpenCL has none.
 * Image memory: the CPU has no image entries; OpenCL's say whether the engine asked images,
 * give seed 003's image extent, and a tensor with a channel tail survives buffer -> image ->
 * buffer (into another buffer, at an offset) unchanged.
 * Without an OpenCL device the OpenCL half prints why and passes, unless MACE_REQUIRE_OPENCL
 * is set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/cpu_device.h"
#include "runtime/opencl/cl_device.h"
#include "test_util.h"

#define N 37 /* not a multiple of any vector width */

static void check_table(const mace_runtime *rt) {
  const mace_device_ops *o = rt->ops;
  CHECK(o && o->name && o->elem_size && o->alloc && o->free && o->copy_in && o->copy_out &&
            o->copy && o->run_op && o->sync && o->set_profiling && o->profile_reset &&
            o->profile_ms,
        "device '%s': an entry of the table is missing", o && o->name ? o->name : "?");
}

/* Round trips of a float and an int32 tensor through the device's memory. */
static void check_copies(mace_runtime *rt, size_t float_bytes) {
  const char *name = rt->ops->name;
  CHECK(rt->ops->elem_size(rt, MACE_DT_F32) == float_bytes, "%s: elem_size(f32) %zu, want %zu",
        name, rt->ops->elem_size(rt, MACE_DT_F32), float_bytes);
  CHECK(rt->ops->elem_size(rt, MACE_DT_I32) == 4, "%s: elem_size(i32) %zu", name,
        rt->ops->elem_size(rt, MACE_DT_I32));
  float x[N], y[N];
  int32_t ix[N], iy[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i - 18) * 0.25f; /* exact in half */
    ix[i] = i * 1000003 - 7;
  }
  const size_t fb = N * float_bytes, off = 64;
  void *a = NULL, *b = NULL;
  if (rt->ops->alloc(rt, off + fb + N * 4, &a) != MACE_OK ||
      rt->ops->alloc(rt, off + fb, &b) != MACE_OK) {
    FAIL("%s: alloc: %s", name, mace_last_error());
    goto done;
  }
  CHECK(rt->ops->copy_in(rt, a, off, x, N, MACE_DT_F32) == MACE_OK, "%s: copy_in f32: %s",
        name, mace_last_error());
  CHECK(rt->ops->copy_in(rt, a, off + fb, ix, N, MACE_DT_I32) == MACE_OK,
        "%s: copy_in i32: %s", name, mace_last_error());
  memset(y, 0, sizeof(y));
  memset(iy, 0, sizeof(iy));
  CHECK(rt->ops->copy_out(rt, a, off, y, N, MACE_DT_F32) == MACE_OK, "%s: copy_out f32: %s",
        name, mace_last_error());
  CHECK(rt->ops->copy_out(rt, a, off + fb, iy, N, MACE_DT_I32) == MACE_OK,
        "%s: copy_out i32: %s", name, mace_last_error());
  CHECK(memcmp(x, y, sizeof(x)) == 0, "%s: f32 round trip differs", name);
  CHECK(memcmp(ix, iy, sizeof(ix)) == 0, "%s: i32 round trip differs", name);
  /* a device-side copy of the stored floats, then read back */
  memset(y, 0, sizeof(y));
  CHECK(rt->ops->copy(rt, a, off, b, off, fb) == MACE_OK, "%s: copy: %s", name,
        mace_last_error());
  CHECK(rt->ops->sync(rt) == MACE_OK, "%s: sync: %s", name, mace_last_error());
  CHECK(rt->ops->copy_out(rt, b, off, y, N, MACE_DT_F32) == MACE_OK,
        "%s: copy_out after copy: %s", name, mace_last_error());
  CHECK(memcmp(x, y, sizeof(x)) == 0, "%s: device copy differs", name);
  rt->ops->set_profiling(rt, 1);
  rt->ops->profile_reset(rt);
  CHECK(rt->ops->profile_ms(rt, "nothing") == 0, "%s: time of ops never run", name);
  rt->ops->set_profiling(rt, 0);
done:
  if (a) rt->ops->free(rt, a);
  if (b) rt->ops->free(rt, b);
}

static void test_cpu(void) {
  mace_runtime *cpu = mace_cpu_device();
  check_table(cpu);
  CHECK(cpu->device == MACE_DEVICE_CPU && strcmp(cpu->ops->name, "cpu") == 0,
        "the CPU device says it is %d '%s'", (int)cpu->device, cpu->ops->name);
  CHECK(cpu->ops->prepare_graph != NULL, "the CPU device has no graph pass (NCHWc)");
  CHECK(cpu->ops->bind_op == NULL, "the CPU device binds ops: its kinds need nothing");
  CHECK(!cpu->ops->image_memory && !cpu->ops->image_extent && !cpu->ops->image_alloc &&
            !cpu->ops->image_from_buffer && !cpu->ops->image_to_buffer,
        "the CPU device has an image entry: it has no image memory");
  check_copies(cpu, 4);
  /* an empty graph goes through the blocked-layout pass unchanged */
  Mace__NetDef def = MACE__NET_DEF__INIT;
  int inserted = -1;
  CHECK(cpu->ops->prepare_graph(cpu, &def, &inserted) == MACE_OK && inserted == 0,
        "prepare_graph on an empty graph: inserted %d: %s", inserted, mace_last_error());
}

/* A [2, 6, 3, 5] float tensor (channel tail of 2) through an image and back. */
static void check_images(mace_runtime *rt, size_t float_bytes) {
  const char *name = rt->ops->name;
  const int64_t dims[4] = {2, 6, 3, 5};
  enum { NUMEL = 2 * 6 * 3 * 5 };
  int64_t w = 0, h = 0;
  rt->ops->image_extent(rt, dims, &w, &h);
  CHECK(w == 5 * 2 && h == 2 * 3, "%s: image_extent %lld x %lld, want 10 x 6", name,
        (long long)w, (long long)h);
  float x[NUMEL], y[NUMEL];
  for (int i = 0; i < NUMEL; ++i) x[i] = (float)(i % 97 - 48) * 0.25f; /* exact in half */
  const size_t off = 8 * float_bytes;
  void *a = NULL, *b = NULL, *img = NULL;
  if (rt->ops->alloc(rt, NUMEL * float_bytes, &a) != MACE_OK ||
      rt->ops->alloc(rt, off + NUMEL * float_bytes, &b) != MACE_OK ||
      rt->ops->image_alloc(rt, w, h, &img) != MACE_OK) {
    FAIL("%s: image test memory: %s", name, mace_last_error());
    goto done;
  }
  CHECK(rt->ops->copy_in(rt, a, 0, x, NUMEL, MACE_DT_F32) == MACE_OK, "%s: copy_in: %s", name,
        mace_last_error());
  CHECK(rt->ops->image_from_buffer(rt, a, 0, img, dims, "to_image") == MACE_OK,
        "%s: image_from_buffer: %s", name, mace_last_error());
  CHECK(rt->ops->image_to_buffer(rt, img, b, off, dims, NULL) == MACE_OK,
        "%s: image_to_buffer: %s", name, mace_last_error());
  CHECK(rt->ops->sync(rt) == MACE_OK, "%s: sync: %s", name, mace_last_error());
  memset(y, 0, sizeof(y));
  CHECK(rt->ops->copy_out(rt, b, off, y, NUMEL, MACE_DT_F32) == MACE_OK, "%s: copy_out: %s",
        name, mace_last_error());
  for (int i = 0; i < NUMEL; ++i)
    if (y[i] != x[i]) {
      FAIL("%s: buffer -> image -> buffer: element %d is %g, want %g", name, i, y[i], x[i]);
      break;
    }
done:
  if (img) rt->ops->free(rt, img);
  if (a) rt->ops->free(rt, a);
  if (b) rt->ops->free(rt, b);
}

/* 1: tested, 0: no OpenCL device, -1: failed. */
static int test_opencl(mace_cl_precision precision, int image_memory) {
  mace_cl_config cc = {.platform_index = -1, .device_index = -1, .precision = precision,
                       .image_memory = image_memory};
  mace_cl_runtime *cl = NULL;
  if (mace_cl_runtime_create(&cc, &cl) != MACE_OK) return 0;
  mace_runtime dev;
  mace_cl_device_init(&dev, cl);
  check_table(&dev);
  CHECK(dev.device == MACE_DEVICE_GPU && dev.impl == cl, "the OpenCL device's kind or state");
  CHECK(dev.ops->prepare_graph == NULL, "OpenCL rewrites graphs: its kinds read plain tensors");
  mace_op op;
  memset(&op, 0, sizeof(op));
  CHECK(dev.ops->bind_op != NULL, "the OpenCL device has no bind_op");
  if (dev.ops->bind_op) dev.ops->bind_op(&dev, &op);
  CHECK(op.cl == cl, "bind_op did not give the op its runtime");
  const size_t float_bytes = mace_cl_runtime_precision(cl) == MACE_CL_FP16 ? 2 : 4;
  check_copies(&dev, float_bytes);
  CHECK(dev.ops->image_memory && dev.ops->image_extent && dev.ops->image_alloc &&
            dev.ops->image_from_buffer && dev.ops->image_to_buffer,
        "the OpenCL device lacks an image entry");
  if (dev.ops->image_memory) {
    CHECK(dev.ops->image_memory(&dev) == image_memory, "image_memory says %d, asked %d",
          dev.ops->image_memory(&dev), image_memory);
    int64_t mw, mh;
    if (mace_cl_image_limits(cl, &mw, &mh) == MACE_OK && dev.ops->image_alloc)
      check_images(&dev, float_bytes);
    else
      printf("test_device: image round trip skipped: %s\n", mace_last_error());
  }
  mace_cl_runtime_destroy(cl);
  return 1;
}

int main(void) {
  test_cpu();
  const int fp32 = test_opencl(MACE_CL_FP32, 0);
  if (fp32) test_opencl(MACE_CL_FP16, 1);
  if (!fp32) {
    const char *req = getenv("MACE_REQUIRE_OPENCL");
    if (req && *req) FAIL("MACE_REQUIRE_OPENCL is set but no OpenCL device: %s", mace_last_error());
    else printf("test_device: OpenCL half skipped: %s\n", mace_last_error());
  }
  return TEST_FINISH("cpu%s", fp32 ? ", opencl fp32 and fp16" : "");
}
