/* Test of the public API's GPU buffers (mace_gpu_buffer, mace_io.gpu_buffer,
 * mace_config.share_gpu_with): two engines of the tiny model (y = relu(x + b)) chained on the
 * GPU through a buffer, in fp32 and fp16, against the same chain computed in C
 * (|got - ref| <= tol * (1 + |ref|), tol 1e-5 in fp32, 1e-2 in fp16 storage); the second
 * engine's schedule has no transfer step for its input when fed the buffer and one when fed
 * host memory; the buffer survives its engine; misuse (another context, a CPU engine, the
 * other precision, a short buffer) is an error with a message. Without an OpenCL device it
 * prints why and passes, unless MACE_REQUIRE_OPENCL is set. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mace.pb-c.h"
#include "mace/mace.h"
#include "test_util.h"
#include "tiny_model.h"

#define N 48 /* [1, 3, 4, 4] */

static mace_engine *make_engine(mace_device device, mace_gpu_precision precision,
                                const mace_engine *share) {
  size_t size;
  uint8_t *g = tiny_model_build(V_OK, &size), *w = tiny_model_weights();
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = 1;
  cfg.device = device;
  cfg.gpu_precision = precision;
  cfg.share_gpu_with = share;
  mace_engine *eng = NULL;
  if (mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, &cfg, &eng) != MACE_OK)
    eng = NULL;
  free(g);
  free(w);
  return eng;
}

static int count_transfers(const mace_engine *eng) {
  int n = 0;
  for (int i = 0; i < mace_engine_num_ops(eng); ++i) {
    mace_op_stat s;
    if (mace_engine_op_stat(eng, i, &s) == MACE_OK && strcmp(s.type, "Transfer") == 0) ++n;
  }
  return n;
}

static void test_chain(mace_gpu_precision precision, float tol) {
  mace_engine *a = make_engine(MACE_DEVICE_GPU, precision, NULL);
  mace_engine *b = a ? make_engine(MACE_DEVICE_GPU, precision, a) : NULL;
  mace_gpu_buffer *mid = NULL;
  CHECK(a && b, "engines: %s", mace_last_error());
  if (!a || !b) goto done;
  float x[N], z[N], ref[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)((i * 37) % 23) / 4.0f - 2.5f;
    const float bias = kTinyBias[i / 16];
    float y = x[i] + bias > 0 ? x[i] + bias : 0;
    ref[i] = y + bias > 0 ? y + bias : 0;
  }
  mace_io in = {"x", x, 4, {1, 3, 4, 4}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
  CHECK(mace_engine_bind_inputs(a, &in, 1) == MACE_OK, "bind: %s", mace_last_error());
  mace_tensor_info info;
  mace_engine_output_info(a, 0, &info);
  const size_t bytes = mace_engine_gpu_tensor_bytes(a, &info);
  /* FP16_STORAGE stores half on every device; the buffer reports it as FP16 */
  const mace_gpu_precision stored = precision == MACE_GPU_FP32 ? MACE_GPU_FP32 : MACE_GPU_FP16;
  CHECK(mace_engine_gpu_precision(a) == (int)stored, "engine precision %d",
        mace_engine_gpu_precision(a));
  CHECK(bytes == (size_t)N * (stored == MACE_GPU_FP16 ? 2 : 4), "gpu bytes %zu", bytes);
  CHECK(mace_gpu_buffer_create(a, bytes, &mid) == MACE_OK, "create: %s", mace_last_error());
  if (!mid) goto done;
  CHECK(mace_gpu_buffer_size(mid) == bytes && mace_gpu_buffer_precision(mid) == stored &&
            mace_gpu_buffer_cl_mem(mid) != NULL && mace_engine_shares_gpu_buffer(b, mid),
        "buffer properties");
  mace_io y = {"y", NULL, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0, mid};
  CHECK(mace_engine_run_bound(a, &y, 1) == MACE_OK, "run a: %s", mace_last_error());
  CHECK(y.ndim == 4 && y.dims[1] == 3, "output dims");
  mace_engine_destroy(a); /* the buffer keeps its context */
  a = NULL;
  mace_io in_b = {"x", NULL, 4, {1, 3, 4, 4}, MACE_DT_F32, MACE_DF_NCHW, 0, mid};
  mace_io out_b = {"y", z, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
  CHECK(mace_engine_run(b, &in_b, 1, &out_b, 1) == MACE_OK, "run b: %s", mace_last_error());
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += !(fabsf(z[i] - ref[i]) <= tol * (1 + fabsf(ref[i])));
  CHECK(bad == 0, "precision %d: %d of %d differ from the C chain", (int)precision, bad, N);
  CHECK(count_transfers(b) == 0, "fed a GPU buffer, b still has %d transfer(s)",
        count_transfers(b));
  CHECK(mace_engine_run(b, &in, 1, &out_b, 1) == MACE_OK, "run b on host: %s",
        mace_last_error());
  CHECK(count_transfers(b) == 1, "fed host memory, b has %d transfer(s), not 1 upload",
        count_transfers(b));
  /* raw bytes back: in fp32 they are the first engine's output exactly */
  if (precision == MACE_GPU_FP32) {
    float back[N];
    CHECK(mace_gpu_buffer_read(mid, 0, back, sizeof(back)) == MACE_OK, "read: %s",
          mace_last_error());
    int diff = 0;
    for (int i = 0; i < N; ++i) {
      const float want = x[i] + kTinyBias[i / 16] > 0 ? x[i] + kTinyBias[i / 16] : 0;
      diff += back[i] != want;
    }
    CHECK(diff == 0, "buffer read: %d differ", diff);
    CHECK(mace_gpu_buffer_read(mid, 8, back, sizeof(back)) == MACE_INVALID_ARGS,
          "read past the end accepted");
  }
done:
  mace_gpu_buffer_destroy(mid);
  mace_engine_destroy(a);
  mace_engine_destroy(b);
}

static void test_misuse(void) {
  mace_engine *a = make_engine(MACE_DEVICE_GPU, MACE_GPU_FP16_STORAGE, NULL);
  mace_engine *alone = make_engine(MACE_DEVICE_GPU, MACE_GPU_FP16_STORAGE, NULL);
  mace_engine *fp32 = a ? make_engine(MACE_DEVICE_GPU, MACE_GPU_FP32, a) : NULL;
  mace_engine *cpu = make_engine(MACE_DEVICE_CPU, MACE_GPU_FP16, NULL);
  mace_gpu_buffer *buf = NULL, *small = NULL;
  CHECK(a && alone && fp32 && cpu, "engines: %s", mace_last_error());
  if (!a || !alone || !fp32 || !cpu) goto done;
  CHECK(make_engine(MACE_DEVICE_GPU, MACE_GPU_FP16, cpu) == NULL &&
            strstr(mace_last_error(), "share_gpu_with"),
        "sharing a CPU engine: %s", mace_last_error());
  CHECK(mace_gpu_buffer_create(cpu, 64, &buf) == MACE_INVALID_ARGS && buf == NULL,
        "a buffer of a CPU engine");
  CHECK(mace_gpu_buffer_create(a, N * 2, &buf) == MACE_OK, "%s", mace_last_error());
  CHECK(mace_gpu_buffer_create(a, N, &small) == MACE_OK, "%s", mace_last_error());
  float z[N];
  mace_io out = {"y", z, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
  struct {
    mace_engine *eng;
    mace_gpu_buffer *buf;
    const char *says;
  } cases[] = {{alone, buf, "another engine's OpenCL queue"},
               {cpu, buf, "CPU"},
               {fp32, buf, "fp16"},
               {a, small, "needs 96 bytes"}};
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
    mace_io in = {"x", NULL, 4, {1, 3, 4, 4}, MACE_DT_F32, MACE_DF_NCHW, 0, cases[k].buf};
    mace_status st = mace_engine_run(cases[k].eng, &in, 1, &out, 1);
    CHECK(st == MACE_INVALID_INPUT && strstr(mace_last_error(), cases[k].says),
          "case %zu: status %d, '%s'", k, (int)st, mace_last_error());
  }
done:
  mace_gpu_buffer_destroy(buf);
  mace_gpu_buffer_destroy(small);
  mace_engine_destroy(a);
  mace_engine_destroy(alone);
  mace_engine_destroy(fp32);
  mace_engine_destroy(cpu);
}

/* MACE_GPU_FP16 is half where the device has cl_khr_fp16, fp32 where it lacks it. */
static void test_precision_policy(const mace_gpu_info *dev) {
  mace_engine *auto16 = make_engine(MACE_DEVICE_GPU, MACE_GPU_FP16, NULL);
  mace_engine *cpu = make_engine(MACE_DEVICE_CPU, MACE_GPU_FP16, NULL);
  CHECK(auto16 && cpu, "engines: %s", mace_last_error());
  if (auto16)
    CHECK(mace_engine_gpu_precision(auto16) == (dev->has_fp16 ? MACE_GPU_FP16 : MACE_GPU_FP32),
          "MACE_GPU_FP16 on %s (cl_khr_fp16 %d) gave %d", dev->name, dev->has_fp16,
          mace_engine_gpu_precision(auto16));
  if (cpu) CHECK(mace_engine_gpu_precision(cpu) == -1, "a CPU engine's gpu precision");
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.device = MACE_DEVICE_GPU;
  cfg.gpu_precision = (mace_gpu_precision)3;
  size_t size;
  uint8_t *g = tiny_model_build(V_OK, &size), *w = tiny_model_weights();
  mace_engine *bad = NULL;
  CHECK(mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, &cfg, &bad) ==
                MACE_INVALID_ARGS && strstr(mace_last_error(), "gpu_precision 3"),
        "gpu_precision 3: %s", mace_last_error());
  mace_engine_destroy(bad);
  free(g);
  free(w);
  mace_engine_destroy(auto16);
  mace_engine_destroy(cpu);
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
    printf("test_gpu_buffer: skipped, no OpenCL device\n");
    return TEST_FINISH("skipped (no OpenCL)");
  }
  test_chain(MACE_GPU_FP32, 1e-5f);
  test_chain(MACE_GPU_FP16_STORAGE, 1e-2f);
  test_misuse();
  test_precision_policy(&dev);
  return TEST_FINISH("%s", dev.name);
}
