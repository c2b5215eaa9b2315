/* Test of the GPU buffers' DLPack export (mace_gpu_buffer_export_dlpack) and of
 * limit_opencl_kernel_time (launches split into chunks) through the public API.
 * DLPack: the managed tensor (legacy and versioned) of a buffer holding the tiny model's output
 * says what DLPack's kDLOpenCL convention says (data is the buffer's cl_mem, device (4, its
 * index in mace_gpu_list_devices), shape, row-major strides, float32 or float16 for fp16
 * storage, byte_offset 0, version 1.0, no flags); its deleter calls the owner's release once
 * (a counter; the ASan build of ctest catches a leak or a double free of the block); exports
 * that do not fit are errors with a message.
 * Chunks: the tiny model (y = relu(x + b)) at [1, 3, 64, 64] on an engine with
 * limit_opencl_kernel_time 1 and MACE_OPENCL_CHUNK_ITEMS=256 gives the bytes of the engine
 * without (bit for bit, fp32 and fp16 storage) while its launch counters show chunked launches;
 * bad values of the key and of the variable are errors naming them. Without an OpenCL device it
 * prints why and passes, unless MACE_REQUIRE_OPENCL is set. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mace.pb-c.h"
#include "mace/mace.h"
#include "mace/mace_dlpack.h"
#include "test_util.h"
#include "tiny_model.h"

static mace_engine *make_engine(mace_gpu_precision precision, int limit, mace_status *st) {
  size_t size;
  uint8_t *g = tiny_model_build(V_OK, &size), *w = tiny_model_weights();
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = 1;
  cfg.device = MACE_DEVICE_GPU;
  cfg.gpu_precision = precision;
  cfg.limit_opencl_kernel_time = limit;
  mace_engine *eng = NULL;
  *st = mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, &cfg, &eng);
  free(g);
  free(w);
  return eng;
}

static int releases;
static void count_release(void *ctx) {
  CHECK(ctx == &releases, "release got ctx %p", ctx);
  ++releases;
}

static void check_tensor(const mace_dl_tensor *t, const mace_gpu_buffer *buf, int fp16,
                         int ordinal, const char *what) {
  CHECK(t->data == mace_gpu_buffer_cl_mem(buf), "%s: data is not the cl_mem", what);
  CHECK(t->device.device_type == MACE_DL_OPENCL && t->device.device_id == ordinal,
        "%s: device (%d, %d)", what, t->device.device_type, t->device.device_id);
  CHECK(t->ndim == 4 && t->shape[0] == 1 && t->shape[1] == 3 && t->shape[2] == 4 &&
            t->shape[3] == 4, "%s: shape", what);
  CHECK(t->strides && t->strides[0] == 48 && t->strides[1] == 16 && t->strides[2] == 4 &&
            t->strides[3] == 1, "%s: strides", what);
  CHECK(t->dtype.code == MACE_DL_FLOAT && t->dtype.bits == (fp16 ? 16 : 32) &&
            t->dtype.lanes == 1, "%s: dtype (%d, %d, %d)", what, t->dtype.code, t->dtype.bits,
        t->dtype.lanes);
  CHECK(t->byte_offset == 0, "%s: byte_offset %llu", what, (unsigned long long)t->byte_offset);
}

static void test_dlpack(mace_gpu_precision precision) {
  mace_status st;
  mace_engine *eng = make_engine(precision, 0, &st);
  CHECK(eng != NULL, "engine: %s", mace_last_error());
  if (!eng) return;
  const int fp16 = mace_engine_gpu_precision(eng) == MACE_GPU_FP16;
  mace_tensor_info info;
  mace_engine_output_info(eng, 0, &info);
  mace_gpu_buffer *buf = NULL;
  st = mace_gpu_buffer_create(eng, mace_engine_gpu_tensor_bytes(eng, &info), &buf);
  CHECK(st == MACE_OK, "buffer: %s", mace_last_error());
  if (st != MACE_OK) goto done;
  const int ordinal = mace_gpu_buffer_device(buf);
  CHECK(ordinal >= 0, "the buffer's device is not listed");
  for (int versioned = 0; versioned < 2; ++versioned) {
    void *out = NULL;
    releases = 0;
    st = mace_gpu_buffer_export_dlpack(buf, info.ndim, info.dims, info.dtype, versioned,
                                       count_release, &releases, &out);
    CHECK(st == MACE_OK && out, "export (versioned %d): %s", versioned, mace_last_error());
    if (!out) continue;
    if (versioned) {
      mace_dl_managed_tensor_versioned *m = out;
      CHECK(m->version.major == 1 && m->version.minor == 0 && m->flags == 0,
            "version %u.%u flags %llu", m->version.major, m->version.minor,
            (unsigned long long)m->flags);
      check_tensor(&m->dl_tensor, buf, fp16, ordinal, "versioned");
      CHECK(releases == 0, "released before the deleter");
      m->deleter(m);
    } else {
      mace_dl_managed_tensor *m = out;
      check_tensor(&m->dl_tensor, buf, fp16, ordinal, "legacy");
      CHECK(releases == 0, "released before the deleter");
      m->deleter(m);
    }
    CHECK(releases == 1, "versioned %d: the deleter released %d times", versioned, releases);
  }
  /* a NULL release is allowed: the deleter frees the block alone */
  void *out = NULL;
  st = mace_gpu_buffer_export_dlpack(buf, info.ndim, info.dims, info.dtype, 1, NULL, NULL, &out);
  CHECK(st == MACE_OK && out, "export without release: %s", mace_last_error());
  if (out) ((mace_dl_managed_tensor_versioned *)out)->deleter(out);
  /* what does not fit */
  int64_t big[4] = {1, 3, 4, 5};
  st = mace_gpu_buffer_export_dlpack(buf, 4, big, MACE_DT_F32, 1, count_release, &releases, &out);
  CHECK(st == MACE_INVALID_ARGS && out == NULL && strstr(mace_last_error(), "bytes"),
        "a tensor larger than the buffer: %d %s", (int)st, mace_last_error());
  st = mace_gpu_buffer_export_dlpack(buf, 9, big, MACE_DT_F32, 1, count_release, &releases, &out);
  CHECK(st == MACE_INVALID_ARGS && strstr(mace_last_error(), "ndim 9"), "ndim 9: %s",
        mace_last_error());
  st = mace_gpu_buffer_export_dlpack(buf, 4, info.dims, MACE_DT_INVALID, 1, count_release,
                                     &releases, &out);
  CHECK(st == MACE_UNSUPPORTED && strstr(mace_last_error(), "DLPack"), "dtype 0: %s",
        mace_last_error());
  CHECK(releases == 1, "a refused export called release");
done:
  mace_gpu_buffer_destroy(buf);
  mace_engine_destroy(eng);
}

#define H 64
#define NX (3 * H * H)

/* One run of the tiny model at [1, 3, H, H]; 0 on failure. */
static int run_big(mace_engine *eng, const float *x, float *y) {
  mace_io in = {"x", (void *)x, 4, {1, 3, H, H}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
  mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, NX * sizeof(float), NULL};
  const mace_status st = mace_engine_run(eng, &in, 1, &out, 1);
  CHECK(st == MACE_OK, "run: %s", mace_last_error());
  return st == MACE_OK;
}

static void test_chunks(mace_gpu_precision precision) {
  static float x[NX], plain[NX], chunked[NX];
  unsigned seed = 7;
  for (int i = 0; i < NX; ++i) x[i] = frand_range(&seed, -2.0f, 2.0f);
  setenv("MACE_OPENCL_CHUNK_ITEMS", "256", 1);
  mace_status st;
  mace_engine *a = make_engine(precision, 0, &st), *b = make_engine(precision, 1, &st);
  CHECK(a && b, "engines: %s", mace_last_error());
  if (a && b && run_big(a, x, plain) && run_big(b, x, chunked)) {
    CHECK(memcmp(plain, chunked, sizeof(plain)) == 0, "precision %d: chunked launches changed "
          "the output", (int)precision);
    mace_gpu_launch_stat sa, sb;
    mace_engine_gpu_launch_stat(a, &sa);
    mace_engine_gpu_launch_stat(b, &sb);
    CHECK(sa.launches > 0 && sa.chunked_launches == 0 && sa.chunks == 0,
          "without the limit: %lld launches, %lld chunked", (long long)sa.launches,
          (long long)sa.chunked_launches);
    CHECK(sb.launches == sa.launches && sb.chunked_launches > 0 &&
              sb.chunks > sb.chunked_launches, "with the limit: %lld launches, %lld chunked in "
          "%lld chunks", (long long)sb.launches, (long long)sb.chunked_launches,
          (long long)sb.chunks);
  }
  mace_engine_destroy(a);
  mace_engine_destroy(b);
  mace_engine *bad = make_engine(precision, 2, &st);
  CHECK(!bad && st == MACE_INVALID_ARGS && strstr(mace_last_error(), "limit_opencl_kernel_time"),
        "limit 2: %s", mace_last_error());
  mace_engine_destroy(bad);
  setenv("MACE_OPENCL_CHUNK_ITEMS", "many", 1);
  bad = make_engine(precision, 1, &st);
  CHECK(!bad && st == MACE_INVALID_ARGS && strstr(mace_last_error(), "MACE_OPENCL_CHUNK_ITEMS"),
        "MACE_OPENCL_CHUNK_ITEMS=many: %s", mace_last_error());
  mace_engine_destroy(bad);
  unsetenv("MACE_OPENCL_CHUNK_ITEMS");
}

int main(void) {
  mace_gpu_info dev;
  int n = 0;
  if (mace_gpu_list_devices(&dev, 1, &n) != MACE_OK || n == 0) {
    const char *req = getenv("MACE_REQUIRE_OPENCL");
    if (req && *req) {
      FAIL("MACE_REQUIRE_OPENCL is set but no OpenCL device: %s", mace_last_error());
      return TEST_FINISH("OpenCL required");
    }
    printf("test_gpu_dlpack: skipped, no OpenCL device\n");
    return TEST_FINISH("skipped (no OpenCL)");
  }
  test_dlpack(MACE_GPU_FP32);
  test_dlpack(MACE_GPU_FP16_STORAGE);
  test_chunks(MACE_GPU_FP32);
  test_chunks(MACE_GPU_FP16_STORAGE);
  return TEST_FINISH("%s", dev.name);
}
