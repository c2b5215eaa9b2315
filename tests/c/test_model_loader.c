/* Unit test of model loading: a NetDef built in C with protobuf-c, run for correctness, then
 * truncated, bit-flipped and made inconsistent in many ways; every bad model must be refused
 * with a message (or, for a harmless change, run), never crash (ASan checks the reads). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mace.pb-c.h"
#include "mace/mace.h"
#include "test_util.h"
#include "tiny_model.h"

static const char *const kWant[V_COUNT] = {
    [V_UNKNOWN_OP] = "NoSuchOp",     [V_BAD_OUTPUT_SHAPE] = "the model says",
    [V_CYCLE] = "cycle",            [V_DUP_TENSOR] = "more than once",
    [V_NO_OUTPUTS] = "no outputs",  [V_OUTPUT_MISSING] = "ghost",
    [V_CONST_SIZE] = "data_size",   [V_CONST_UNALIGNED] = "aligned",
    [V_CONST_PAST_END] = "past the end", [V_BAD_DTYPE] = "data type",
    [V_RANK9] = "rank",             [V_NEGATIVE_DIM] = "dim",
    [V_BROADCAST_MISMATCH] = "",    [V_EMPTY_TYPE] = "no type",
    [V_MISSING_INPUT] = "nothing_here", [V_WEIGHTS_SIZE] = "weights",
};

static uint64_t g_rng = 12345;
static uint64_t rnd_u64(void) {
  g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
  return g_rng >> 17;
}
static float rnd(void) {
  g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(g_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Runs whatever loaded with random inputs of its declared shapes; returns the status. Skips
 * (returns MACE_OK) models whose inputs would be huge. */
static mace_status run_any(mace_engine *eng) {
  int n_in = mace_engine_num_inputs(eng), n_out = mace_engine_num_outputs(eng);
  if (n_in > 16 || n_out > 16) return MACE_OK;
  mace_io in[16], out[16];
  memset(in, 0, sizeof(in));
  memset(out, 0, sizeof(out));
  mace_status st = MACE_OK;
  for (int i = 0; i < n_in; ++i) {
    mace_tensor_info info;
    if ((st = mace_engine_input_info(eng, i, &info)) != MACE_OK) goto done;
    int64_t n = mace_tensor_info_numel(&info);
    size_t es = mace_dtype_size(info.dtype);
    if (n < 0 || n > (1 << 20) || es == 0) goto done;
    in[i].name = info.name;
    in[i].ndim = info.ndim;
    memcpy(in[i].dims, info.dims, sizeof(info.dims));
    in[i].dtype = info.dtype;
    in[i].format = info.format;
    in[i].data = calloc((size_t)n + 1, es);
    if (!in[i].data) goto done;
  }
  mace_memory_stat mem;
  if (mace_engine_memory_stat(eng, &mem) == MACE_OK && mem.arena_bytes > (64 << 20)) goto done;
  if ((st = mace_engine_run(eng, in, n_in, NULL, 0)) != MACE_OK) goto done;
  for (int i = 0; i < n_out; ++i) {
    mace_tensor_info info;
    if ((st = mace_engine_output_info(eng, i, &info)) != MACE_OK) goto done;
    int64_t n = mace_tensor_info_numel(&info);
    size_t es = mace_dtype_size(info.dtype);
    if (n < 0 || n > (1 << 22) || es == 0) goto done;
    out[i].name = info.name;
    out[i].data = calloc((size_t)n + 1, es);
    if (!out[i].data) goto done;
  }
  st = mace_engine_run(eng, in, n_in, out, n_out);
done:
  for (int i = 0; i < 16; ++i) {
    free(in[i].data);
    free(out[i].data);
  }
  return st;
}

static void test_valid_model(void) {
  size_t size;
  uint8_t *g = tiny_model_build(V_OK, &size), *w = tiny_model_weights();
  mace_engine *eng = NULL;
  mace_status st = mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, NULL, &eng);
  CHECK(st == MACE_OK, "valid model refused: %s", mace_last_error());
  if (st != MACE_OK) goto done;
  CHECK(mace_engine_num_inputs(eng) == 1 && mace_engine_num_outputs(eng) == 1 && mace_engine_num_ops(eng) == 2,
        "counts %d %d %d", mace_engine_num_inputs(eng), mace_engine_num_outputs(eng), mace_engine_num_ops(eng));
  mace_tensor_info ii, oi;
  CHECK(mace_engine_input_info(eng, 0, &ii) == MACE_OK && strcmp(ii.name, "x") == 0 && ii.ndim == 4 &&
            ii.dims[3] == 4 && ii.dtype == MACE_DT_F32,
        "input info");
  CHECK(mace_engine_output_info(eng, 0, &oi) == MACE_OK && strcmp(oi.name, "y") == 0 &&
            mace_tensor_info_numel(&oi) == 48,
        "output info");
  CHECK(mace_engine_input_info(eng, 1, &ii) != MACE_OK, "input 1 exists");
  CHECK(mace_engine_output_info(eng, -1, &oi) != MACE_OK, "output -1 exists");

  /* Two shapes: the declared one and a reshape to [2,3,5,7], then back. */
  int64_t shapes[3][4] = {{1, 3, 4, 4}, {2, 3, 5, 7}, {1, 3, 4, 4}};
  for (int s = 0; s < 3; ++s) {
    int64_t n = shapes[s][0] * shapes[s][1] * shapes[s][2] * shapes[s][3];
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; ++i) x[i] = rnd();
    mace_io in = {"x", x, 4, {0}, MACE_DT_F32, MACE_DF_NCHW, 0};
    memcpy(in.dims, shapes[s], sizeof(shapes[s]));
    mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0};
    st = mace_engine_run(eng, &in, 1, NULL, 0); /* reshape first, so output_info is current */
    CHECK(st == MACE_OK, "shape %d: %s", s, mace_last_error());
    st = mace_engine_output_info(eng, 0, &oi);
    CHECK(st == MACE_OK && mace_tensor_info_numel(&oi) == n, "output numel after reshape %lld vs %lld",
          (long long)mace_tensor_info_numel(&oi), (long long)n);
    st = mace_engine_run(eng, &in, 1, &out, 1);
    CHECK(st == MACE_OK, "shape %d: %s", s, mace_last_error());
    if (st == MACE_OK) {
      CHECK(out.ndim == 4 && memcmp(out.dims, shapes[s], sizeof(shapes[s])) == 0, "output dims");
      int64_t hw = shapes[s][2] * shapes[s][3], bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        float want = x[i] + kTinyBias[(i / hw) % 3];
        if (want < 0) want = 0;
        if (y[i] != want) ++bad;
      }
      CHECK(bad == 0, "shape %d: %lld wrong values", s, (long long)bad);
    }
    free(x);
    free(y);
  }

  /* Bad run requests are refused with a message. */
  float x[48] = {0}, y[48];
  mace_io in = {"x", x, 4, {1, 3, 4, 4}, MACE_DT_I32, MACE_DF_NCHW, 0};
  mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0};
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_INVALID_INPUT && strstr(mace_last_error(), "dtype"),
        "wrong dtype: %s", mace_last_error());
  in.dtype = MACE_DT_F32;
  in.name = "z";
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_INVALID_INPUT && strstr(mace_last_error(), "'x'"),
        "wrong name: %s", mace_last_error());
  in.name = "x";
  in.ndim = 3;
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_INVALID_INPUT, "wrong rank: %s", mace_last_error());
  in.ndim = 4;
  in.dims[1] = 5; /* b has 3 channels: cannot broadcast */
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_INVALID_INPUT, "bad channels accepted");
  in.dims[1] = 3;
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_OK, "the engine does not recover after a bad shape: %s",
        mace_last_error());
  /* An output buffer declared smaller than the output of the shapes bound is refused before
   * anything is written (the declared [1,3,4,4] input, then [1,3,4,5] into the same 48 floats). */
  out.data_bytes = sizeof(y);
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_OK, "data_bytes that fit: %s", mace_last_error());
  {
    float big[60] = {0};
    mace_io in2 = {"x", big, 4, {1, 3, 4, 5}, MACE_DT_F32, MACE_DF_NCHW, 0};
    for (int i = 0; i < 48; ++i) y[i] = -7.0f;
    mace_status s2 = mace_engine_run(eng, &in2, 1, &out, 1);
    int untouched = 1;
    for (int i = 0; i < 48; ++i) untouched &= y[i] == -7.0f;
    CHECK(s2 == MACE_INVALID_ARGS && strstr(mace_last_error(), "192 bytes") &&
              strstr(mace_last_error(), "240 bytes") && untouched,
          "a too-small output buffer: status %d, %s, untouched %d", (int)s2, mace_last_error(),
          untouched);
  }
  out.data_bytes = 0;
  out.name = "t9";
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) != MACE_OK, "unknown output accepted");
  CHECK(mace_engine_run(eng, &in, 0, NULL, 0) != MACE_OK, "missing inputs accepted");

  /* Profiling and memory statistics. */
  out.name = "y";
  CHECK(mace_engine_set_profiling(eng, 1) == MACE_OK, "set_profiling");
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_OK, "%s", mace_last_error());
  mace_op_stat os;
  CHECK(mace_engine_op_stat(eng, 0, &os) == MACE_OK && strcmp(os.type, "Eltwise") == 0 && os.ms >= 0,
        "op stat 0");
  CHECK(mace_engine_op_stat(eng, 2, &os) != MACE_OK, "op stat 2 exists");
  mace_memory_stat ms;
  CHECK(mace_engine_memory_stat(eng, &ms) == MACE_OK && ms.weights_bytes == 12 && ms.arena_bytes > 0 &&
            ms.arena_bytes <= ms.naive_bytes + 64 * 8,
        "memory stat arena %lld naive %lld weights %lld", (long long)ms.arena_bytes,
        (long long)ms.naive_bytes, (long long)ms.weights_bytes);
  CHECK(mace_engine_release_intermediate_buffers(eng) == MACE_OK, "release");
  CHECK(mace_engine_run(eng, &in, 1, &out, 1) == MACE_OK, "run after release: %s", mace_last_error());
done:
  mace_engine_destroy(eng);
  free(g);
  free(w);
}

static void test_bad_models(void) {
  uint8_t *w = tiny_model_weights();
  for (int v = V_OK + 1; v < V_COUNT; ++v) {
    size_t size;
    uint8_t *g = tiny_model_build((enum tiny_variant)v, &size);
    mace_engine *eng = NULL;
    mace_status st = mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, NULL, &eng);
    if (st == MACE_OK) {
      /* Only allowed when the problem shows at run time; it must then be an error status. */
      mace_status rs = run_any(eng);
      CHECK(rs != MACE_OK, "variant %d loaded and ran", v);
      mace_engine_destroy(eng);
      free(g);
      continue;
    }
    CHECK(eng == NULL, "variant %d: engine set on failure", v);
    const char *msg = mace_last_error();
    CHECK(msg && *msg && strstr(msg, kWant[v]) != NULL, "variant %d: message '%s' does not mention '%s'", v,
          msg ? msg : "(null)", kWant[v]);
    printf("variant %2d refused (%s): %s\n", v, mace_status_name(st), msg);
    free(g);
  }
  /* Weights shorter than the constant's offsets need (no weights_size in the graph to warn). */
  size_t size;
  uint8_t *g = tiny_model_build(V_NO_WEIGHTS_SIZE, &size);
  mace_engine *eng = NULL;
  for (size_t wsize = 0; wsize < 76; wsize += 4) {
    mace_status st = mace_engine_create_from_buffers(g, size, w, wsize, NULL, &eng);
    CHECK(st != MACE_OK && strstr(mace_last_error(), "'b'"), "weights of %zu bytes: %s", wsize,
          st == MACE_OK ? "accepted" : mace_last_error());
    if (st == MACE_OK) {
      mace_engine_destroy(eng);
      eng = NULL;
    }
  }
  CHECK(mace_engine_create_from_buffers(g, size, w, 76, NULL, &eng) == MACE_OK, "76 bytes: %s",
        mace_last_error());
  mace_engine_destroy(eng);
  eng = NULL;
  CHECK(mace_engine_create_from_buffers(g, size, NULL, 0, NULL, &eng) != MACE_OK, "no weights accepted");
  CHECK(mace_engine_create_from_buffers(NULL, 0, w, TINY_WEIGHTS_BYTES, NULL, &eng) != MACE_OK, "NULL graph");
  CHECK(mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, NULL, NULL) != MACE_OK, "NULL out");
  CHECK(mace_engine_create_from_buffers(g, 0, w, TINY_WEIGHTS_BYTES, NULL, &eng) != MACE_OK, "empty graph");
  CHECK(mace_engine_create_from_files("/nonexistent/m.pb", "/nonexistent/m.data", NULL, &eng) != MACE_OK &&
            strstr(mace_last_error(), "/nonexistent/m.pb"),
        "missing file: %s", mace_last_error());
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.device = MACE_DEVICE_GPU;
  mace_status st = mace_engine_create_from_buffers(g, size, w, TINY_WEIGHTS_BYTES, &cfg, &eng);
  if (st == MACE_OK) mace_engine_destroy(eng);
  else CHECK(*mace_last_error() != '\0', "GPU refusal without a message");
  /* Borrowed weights work and are used in place (the buffer is 64-byte aligned). */
  cfg.device = MACE_DEVICE_CPU;
  cfg.borrow_weights = 1;
  cfg.num_threads = 3;
  uint8_t *aligned = NULL;
  if (posix_memalign((void **)&aligned, 64, TINY_WEIGHTS_BYTES) == 0) {
    memcpy(aligned, w, TINY_WEIGHTS_BYTES);
    eng = NULL;
    CHECK(mace_engine_create_from_buffers(g, size, aligned, TINY_WEIGHTS_BYTES, &cfg, &eng) == MACE_OK,
          "borrowed: %s", mace_last_error());
    if (eng) CHECK(run_any(eng) == MACE_OK, "borrowed run: %s", mace_last_error());
    mace_engine_destroy(eng);
    free(aligned);
  }
  free(g);
  free(w);
}

/* A second model with argument-heavy ops, so corruption reaches their argument checks:
 * x [1,2,6,5] -> Conv2D (w [4,2,3,3], bias [4], strides [2,1], pads [1,0,1,1], RELU) -> [1,4,3,4]
 *             -> Pooling MAX 2x2 stride 1 -> y [1,4,2,3] -> Softmax -> z. */
#define CONV_WEIGHTS_BYTES 384

static uint8_t *build_conv_model(size_t *size) {
  int64_t xdims[4] = {1, 2, 6, 5}, wdims[4] = {4, 2, 3, 3}, bdims[1] = {4}, zdims[4] = {1, 4, 2, 3};
  Mace__InputOutputInfo in = MACE__INPUT_OUTPUT_INFO__INIT, out = MACE__INPUT_OUTPUT_INFO__INIT;
  in.name = "x";
  in.n_dims = 4;
  in.dims = xdims;
  in.has_data_format = 1;
  in.data_format = MACE__DATA_FORMAT__NCHW;
  out.name = "z";
  out.n_dims = 4;
  out.dims = zdims;
  Mace__ConstTensor w = MACE__CONST_TENSOR__INIT, b = MACE__CONST_TENSOR__INIT;
  w.name = "w";
  w.n_dims = 4;
  w.dims = wdims;
  w.has_offset = w.has_data_size = 1;
  w.offset = 0;
  w.data_size = 4 * 2 * 3 * 3 * 4;
  b.name = "bias";
  b.n_dims = 1;
  b.dims = bdims;
  b.has_offset = b.has_data_size = 1;
  b.offset = 320;
  b.data_size = 16;

  int64_t strides[2] = {2, 1}, pads[4] = {1, 0, 1, 1}, dil[2] = {1, 1}, kernels[2] = {2, 2}, one[2] = {1, 1};
  Mace__Argument a[10];
  Mace__Argument *conv_args[4] = {tiny_arg_ints(&a[0], "strides", strides, 2),
                                  tiny_arg_ints(&a[1], "padding_values", pads, 4),
                                  tiny_arg_ints(&a[2], "dilations", dil, 2),
                                  tiny_arg_str(&a[3], "activation", "RELU")};
  Mace__Argument *pool_args[3] = {tiny_arg_str(&a[4], "pooling_type", "MAX"),
                                  tiny_arg_ints(&a[5], "kernels", kernels, 2),
                                  tiny_arg_ints(&a[6], "strides", one, 2)};
  char *conv_in[3] = {"x", "w", "bias"}, *conv_out[1] = {"c"}, *pool_in[1] = {"c"}, *pool_out[1] = {"p"};
  char *sm_in[1] = {"p"}, *sm_out[1] = {"z"};
  Mace__OperatorDef conv, pool, sm;
  tiny_op(&conv, "conv", "Conv2D", conv_in, 3, conv_out, 1, conv_args, 4);
  tiny_op(&pool, "pool", "Pooling", pool_in, 1, pool_out, 1, pool_args, 3);
  tiny_op(&sm, "softmax", "Softmax", sm_in, 1, sm_out, 1, NULL, 0);
  Mace__OperatorDef *ops[3] = {&conv, &pool, &sm};
  Mace__ConstTensor *consts[2] = {&w, &b};
  Mace__InputOutputInfo *ins[1] = {&in}, *outs[1] = {&out};
  Mace__NetDef net = MACE__NET_DEF__INIT;
  net.n_op = 3;
  net.op = ops;
  net.n_tensors = 2;
  net.tensors = consts;
  net.n_input_info = 1;
  net.input_info = ins;
  net.n_output_info = 1;
  net.output_info = outs;
  return tiny_pack(&net, size);
}

static uint8_t *build_conv_weights(void) {
  uint8_t *w = calloc(1, CONV_WEIGHTS_BYTES);
  if (!w) return NULL;
  float *f = (float *)w;
  for (int i = 0; i < 72; ++i) f[i] = rnd();
  for (int i = 0; i < 4; ++i) f[80 + i] = rnd();
  return w;
}

/* Loads (and runs, when it loads) one corrupted graph; counts the outcome. */
static void try_graph(const char *what, size_t k, const uint8_t *g, size_t len, const uint8_t *w, size_t wsize,
                      int *loaded, int *ran, int *refused) {
  uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees overreads */
  memcpy(copy, g, len);
  mace_engine *eng = NULL;
  if (mace_engine_create_from_buffers(copy, len, w, wsize, NULL, &eng) == MACE_OK) {
    ++*loaded;
    if (run_any(eng) == MACE_OK) ++*ran;
    else CHECK(*mace_last_error() != '\0', "%s %zu: run failed without a message", what, k);
    mace_engine_destroy(eng);
  } else {
    ++*refused;
    CHECK(eng == NULL, "%s %zu: engine set on failure", what, k);
    CHECK(*mace_last_error() != '\0', "%s %zu: no message", what, k);
  }
  free(copy);
}

/* Every truncation and every single-bit flip of the graph: load fails with a message, or the
 * model loads and runs (or fails to run) with a status; never a crash or a sanitizer report. */
static void fuzz_graph(const char *name, const uint8_t *g, size_t size, const uint8_t *w, size_t wsize) {
  int loaded = 0, refused = 0, ran = 0;
  for (size_t len = 0; len < size; ++len) try_graph("truncation", len, g, len, w, wsize, &loaded, &ran, &refused);
  printf("%s: %zu truncations: loaded %d (ran %d), refused %d\n", name, size, loaded, ran, refused);
  loaded = refused = ran = 0;
  uint8_t *copy = malloc(size);
  for (size_t bit = 0; bit < size * 8; ++bit) {
    memcpy(copy, g, size);
    copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    try_graph("bit flip", bit, copy, size, w, wsize, &loaded, &ran, &refused);
  }
  printf("%s: %zu bit flips: loaded %d (ran %d), refused %d\n", name, size * 8, loaded, ran, refused);
  /* Random 1-4 byte overwrites with values that matter to protobuf (varint continuation, wire
   * types, small and huge numbers). */
  static const uint8_t kVals[] = {0x00, 0x01, 0x02, 0x08, 0x0a, 0x10, 0x12, 0x22, 0x7f, 0x80, 0xfe, 0xff};
  loaded = refused = ran = 0;
  int rounds = 3000;
  for (int r = 0; r < rounds; ++r) {
    memcpy(copy, g, size);
    int k = 1 + (int)(rnd_u64() % 4);
    for (int j = 0; j < k; ++j)
      copy[rnd_u64() % size] = rnd_u64() % 2 ? kVals[rnd_u64() % sizeof(kVals)] : (uint8_t)rnd_u64();
    try_graph("random mutation", (size_t)r, copy, size, w, wsize, &loaded, &ran, &refused);
  }
  free(copy);
  printf("%s: %d random mutations: loaded %d (ran %d), refused %d\n", name, rounds, loaded, ran, refused);
}

static void test_corruptions(void) {
  size_t size;
  uint8_t *g = tiny_model_build(V_OK, &size), *w = tiny_model_weights();
  fuzz_graph("eltwise+relu", g, size, w, TINY_WEIGHTS_BYTES);
  /* Corrupt weights only change values: the model still loads and runs. */
  uint8_t *w2 = tiny_model_weights();
  memset(w2 + 64, 0xff, 12); /* NaN bias */
  mace_engine *eng = NULL;
  CHECK(mace_engine_create_from_buffers(g, size, w2, TINY_WEIGHTS_BYTES, NULL, &eng) == MACE_OK, "%s",
        mace_last_error());
  if (eng) CHECK(run_any(eng) == MACE_OK, "NaN weights: %s", mace_last_error());
  mace_engine_destroy(eng);
  free(w2);
  free(g);
  free(w);

  g = build_conv_model(&size);
  w = build_conv_weights();
  eng = NULL;
  CHECK(mace_engine_create_from_buffers(g, size, w, CONV_WEIGHTS_BYTES, NULL, &eng) == MACE_OK,
        "conv model refused: %s", mace_last_error());
  if (eng) {
    mace_tensor_info oi;
    CHECK(run_any(eng) == MACE_OK, "conv model run: %s", mace_last_error());
    CHECK(mace_engine_output_info(eng, 0, &oi) == MACE_OK && oi.ndim == 4 && oi.dims[2] == 2 && oi.dims[3] == 3,
          "conv model output shape");
    mace_engine_destroy(eng);
    fuzz_graph("conv+pool+softmax", g, size, w, CONV_WEIGHTS_BYTES);
  }
  free(g);
  free(w);
}

int main(void) {
  printf("mace %s\n", mace_version());
  test_valid_model();
  test_bad_models();
  test_corruptions();
  return TEST_FINISH("%ld checks", test_checks);
}
