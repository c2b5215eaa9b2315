/* Bounded allocation (issue 37): a model whose input is 25 x 194,966,524 floats (19.5 GB) loads
 * without allocating for it (under a 4 GB address-space limit where no sanitizer needs more), and a
 * run under MACE_MAX_ARENA_BYTES, or under the engine's mace_config.max_arena_bytes, fails with
 * MACE_OUT_OF_RESOURCES naming the size and the ceiling, before the (small) caller buffer is
 * read. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mace/mace.h"
#include "test_util.h"
#include "tiny_model.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

#define BIG_DIM INT64_C(194966524)

/* x[25, BIG_DIM] -> Relu -> t -> Relu -> y: t is an intermediate the arena must hold. */
static uint8_t *big_model(size_t *size) {
  int64_t dims[2] = {25, BIG_DIM};
  Mace__InputOutputInfo in = MACE__INPUT_OUTPUT_INFO__INIT, out = MACE__INPUT_OUTPUT_INFO__INIT;
  in.name = "x";
  out.name = "y";
  Mace__InputOutputInfo *io[2] = {&in, &out};
  for (int i = 0; i < 2; ++i) {
    io[i]->n_dims = 2;
    io[i]->dims = dims;
    io[i]->has_data_type = 1;
    io[i]->data_type = MACE__DATA_TYPE__DT_FLOAT;
  }
  char *in0[1] = {"x"}, *out0[1] = {"t"}, *in1[1] = {"t"}, *out1[1] = {"y"};
  Mace__Argument a0, a1;
  Mace__Argument *args0[1] = {tiny_arg_str(&a0, "activation", "RELU")};
  Mace__Argument *args1[1] = {tiny_arg_str(&a1, "activation", "RELU")};
  Mace__OperatorDef op0, op1;
  tiny_op(&op0, "relu0", "Activation", in0, 1, out0, 1, args0, 1);
  tiny_op(&op1, "relu1", "Activation", in1, 1, out1, 1, args1, 1);
  Mace__OperatorDef *ops[2] = {&op0, &op1};
  Mace__InputOutputInfo *ins[1] = {&in}, *outs[1] = {&out};
  Mace__NetDef net = MACE__NET_DEF__INIT;
  net.name = "big";
  net.n_op = 2;
  net.op = ops;
  net.n_input_info = 1;
  net.input_info = ins;
  net.n_output_info = 1;
  net.output_info = outs;
  return tiny_pack(&net, size);
}

int main(void) {
  size_t size = 0;
  uint8_t *graph = big_model(&size);
  if (!graph) return 1;
#ifndef SANITIZED
  /* nothing of 19.5 GB fits: a load that allocated for the input or the arena would fail */
  struct rlimit lim = {(rlim_t)4 << 30, (rlim_t)4 << 30};
  struct rlimit old;
  CHECK(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit");
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_max) lim.rlim_max = old.rlim_max;
  if (lim.rlim_cur > lim.rlim_max) lim.rlim_cur = lim.rlim_max;
  CHECK(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit");
#endif
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = 1;
  mace_engine *eng = NULL;
  mace_status st = mace_engine_create_from_buffers(graph, size, NULL, 0, &cfg, &eng);
  CHECK(st == MACE_OK, "load: %s", mace_last_error());
  if (st == MACE_OK) {
    mace_tensor_info info;
    CHECK(mace_engine_input_info(eng, 0, &info) == MACE_OK && info.ndim == 2 &&
              info.dims[0] == 25 && info.dims[1] == BIG_DIM, "input info");
    float small[16] = {0}, y[16];
    mace_io in = {"x", small, 2, {25, BIG_DIM}, MACE_DT_F32, MACE_DF_NONE, 0};
    mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NONE, 0};
    setenv("MACE_MAX_ARENA_BYTES", "1073741824", 1);
    st = mace_engine_run(eng, &in, 1, &out, 1);
    CHECK(st == MACE_OUT_OF_RESOURCES, "run under the ceiling: %s (%s)", mace_status_name(st),
          mace_last_error());
    const char *msg = mace_last_error();
    const char *needs = strstr(msg, "needs ");
    long long need = needs ? strtoll(needs + 6, NULL, 10) : 0;
    CHECK(need >= 25 * BIG_DIM * 4 && strstr(msg, "ceiling of 1073741824 bytes") &&
              strstr(msg, "MACE_MAX_ARENA_BYTES"),
          "the message names the size (t alone is 19496652400 bytes) and the ceiling: %s", msg);
    /* a bad shape is still refused before anything, and the engine stays usable */
    mace_io bad = {"x", small, 2, {25, -1}, MACE_DT_F32, MACE_DF_NONE, 0};
    st = mace_engine_run(eng, &bad, 1, &out, 1);
    CHECK(st == MACE_INVALID_INPUT, "negative dim: %s", mace_status_name(st));
    mace_engine_destroy(eng);
  }
  /* mace_config.max_arena_bytes: a ceiling of the engine's own, over the environment's */
  cfg.max_arena_bytes = INT64_C(1) << 20;
  eng = NULL;
  st = mace_engine_create_from_buffers(graph, size, NULL, 0, &cfg, &eng);
  CHECK(st == MACE_OK, "load with max_arena_bytes: %s", mace_last_error());
  if (st == MACE_OK) {
    float small[16] = {0}, y[16];
    mace_io in = {"x", small, 2, {25, BIG_DIM}, MACE_DT_F32, MACE_DF_NONE};
    mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NONE};
    st = mace_engine_run(eng, &in, 1, &out, 1);
    const char *msg = mace_last_error();
    CHECK(st == MACE_OUT_OF_RESOURCES && strstr(msg, "ceiling of 1048576 bytes") &&
              strstr(msg, "max_arena_bytes"),
          "run under max_arena_bytes 1 MiB: %s (%s)", mace_status_name(st), msg);
    mace_engine_destroy(eng);
  }
#ifndef SANITIZED
  /* < 0: no ceiling, whatever the environment says: the 19.5 GB arena is attempted and the
   * address-space limit refuses it ("could not allocate"), not the 1 GiB ceiling */
  cfg.max_arena_bytes = -1;
  eng = NULL;
  st = mace_engine_create_from_buffers(graph, size, NULL, 0, &cfg, &eng);
  CHECK(st == MACE_OK, "load without a ceiling: %s", mace_last_error());
  if (st == MACE_OK) {
    float small[16] = {0}, y[16];
    mace_io in = {"x", small, 2, {25, BIG_DIM}, MACE_DT_F32, MACE_DF_NONE};
    mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NONE};
    st = mace_engine_run(eng, &in, 1, &out, 1);
    const char *msg = mace_last_error();
    CHECK(st == MACE_OUT_OF_RESOURCES && strstr(msg, "could not allocate") &&
              !strstr(msg, "ceiling"),
          "run without a ceiling under a 4 GB address space: %s (%s)", mace_status_name(st), msg);
    mace_engine_destroy(eng);
  }
#endif
  free(graph);
  return TEST_FINISH("19.5 GB input loads lazily and is refused at run by the ceiling");
}
