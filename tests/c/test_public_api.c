/* Unit test of the public C API alone (mace/mace.h, linked against libmace.so): every function
 * resolves from the shared library, NULL and out-of-range arguments give statuses with messages,
 * and the last-error message is kept per thread. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mace/mace.h"
#include "test_util.h"

static void *other_thread(void *arg) {
  (void)arg;
  /* A failure here must not change the main thread's message. */
  mace_engine *eng = NULL;
  mace_engine_create_from_files("/nonexistent/other_thread.pb", NULL, NULL, &eng);
  return (void *)(strstr(mace_last_error(), "other_thread") != NULL ? (void *)1 : NULL);
}

int main(void) {
  const char *v = mace_version();
  CHECK(v && *v, "no version");
  printf("mace %s\n", v);

  mace_status all[] = {MACE_OK, MACE_INVALID_ARGS, MACE_OUT_OF_RESOURCES, MACE_UNSUPPORTED,
                       MACE_INVALID_MODEL, MACE_INVALID_INPUT, MACE_RUNTIME_ERROR};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    const char *n = mace_status_name(all[i]);
    CHECK(n && *n, "status %d has no name", (int)all[i]);
    for (size_t j = 0; j < i; ++j) CHECK(strcmp(n, mace_status_name(all[j])) != 0, "two statuses named %s", n);
  }
  CHECK(mace_status_name((mace_status)99) != NULL, "unknown status name is NULL");
  CHECK(mace_last_error() != NULL, "last_error is NULL before any error");

  mace_config cfg;
  memset(&cfg, 0x5a, sizeof(cfg));
  mace_config_init(&cfg);
  CHECK(cfg.device == MACE_DEVICE_CPU && cfg.num_threads <= 0 && cfg.affinity == MACE_AFFINITY_BIG_ONLY &&
            cfg.borrow_weights == 0,
        "config defaults: device %d threads %d affinity %d borrow %d", (int)cfg.device, cfg.num_threads,
        (int)cfg.affinity, cfg.borrow_weights);
  CHECK(cfg.gpu_platform == -1 && cfg.gpu_device == -1 && cfg.gpu_precision == MACE_GPU_FP16 &&
            cfg.opencl_binary_file == NULL && cfg.opencl_parameter_file == NULL &&
            cfg.opencl_queue_window_size == 0,
        "GPU config defaults: platform %d device %d precision %d window %d", cfg.gpu_platform,
        cfg.gpu_device, (int)cfg.gpu_precision, cfg.opencl_queue_window_size);
  {  /* the device listing: a count, or MACE_UNSUPPORTED with a message and none */
    mace_gpu_info gi[4];
    int n = -1;
    mace_status st = mace_gpu_list_devices(gi, 4, &n);
    CHECK((st == MACE_OK && n >= 0) || (st == MACE_UNSUPPORTED && n == 0 && *mace_last_error()),
          "gpu_list_devices: status %d, %d devices", (int)st, n);
    CHECK(mace_gpu_list_devices(NULL, 0, NULL) == MACE_INVALID_ARGS, "NULL count accepted");
  }

  struct { mace_dtype dt; size_t size; } sizes[] = {
      {MACE_DT_F32, 4}, {MACE_DT_U8, 1}, {MACE_DT_F16, 2}, {MACE_DT_I32, 4}, {MACE_DT_BF16, 2},
      {MACE_DT_I8, 1},  {MACE_DT_I64, 8}, {MACE_DT_BOOL, 1}, {MACE_DT_INVALID, 0}};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i)
    CHECK(mace_dtype_size(sizes[i].dt) == sizes[i].size, "dtype %d size %zu", (int)sizes[i].dt,
          mace_dtype_size(sizes[i].dt));

  mace_tensor_info info = {"t", 4, {2, 3, 4, 5}, MACE_DT_F32, MACE_DF_NCHW};
  CHECK(mace_tensor_info_numel(&info) == 120, "numel %lld", (long long)mace_tensor_info_numel(&info));
  info.ndim = 0;
  CHECK(mace_tensor_info_numel(&info) == 1, "scalar numel %lld", (long long)mace_tensor_info_numel(&info));

  /* NULL engine and arguments: statuses, never crashes. */
  mace_engine *eng = (mace_engine *)&cfg; /* must be reset to NULL on failure */
  CHECK(mace_engine_create_from_buffers(NULL, 0, NULL, 0, NULL, &eng) != MACE_OK && eng == NULL,
        "NULL graph accepted");
  CHECK(*mace_last_error(), "no message");
  CHECK(mace_engine_create_from_buffers("x", 1, NULL, 0, NULL, NULL) != MACE_OK, "NULL out accepted");
  CHECK(mace_engine_create_from_files(NULL, NULL, NULL, &eng) != MACE_OK, "NULL path accepted");
  CHECK(mace_engine_create_from_files("/nonexistent/model.pb", "/nonexistent/model.data", NULL, &eng) ==
                MACE_INVALID_ARGS ||
            strstr(mace_last_error(), "/nonexistent/model.pb"),
        "missing file: %s", mace_last_error());
  char main_msg[512];
  snprintf(main_msg, sizeof(main_msg), "%s", mace_last_error());
  CHECK(strstr(main_msg, "model.pb") != NULL, "message does not name the file: %s", main_msg);
  unsigned char junk[7] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(mace_engine_create_from_buffers(junk, sizeof(junk), NULL, 0, NULL, &eng) == MACE_INVALID_MODEL,
        "junk graph: %s", mace_last_error());
  snprintf(main_msg, sizeof(main_msg), "%s", mace_last_error());

  pthread_t t;
  void *other_ok = NULL;
  if (pthread_create(&t, NULL, other_thread, NULL) == 0) {
    pthread_join(t, &other_ok);
    CHECK(other_ok != NULL, "the other thread's message does not name its file");
    CHECK(strcmp(main_msg, mace_last_error()) == 0, "the other thread changed this thread's message: '%s' -> '%s'",
          main_msg, mace_last_error());
  }

  mace_engine_destroy(NULL);
  CHECK(mace_engine_num_inputs(NULL) == 0 && mace_engine_num_outputs(NULL) == 0 && mace_engine_num_ops(NULL) == 0,
        "counts of NULL");
  mace_tensor_info ti;
  CHECK(mace_engine_input_info(NULL, 0, &ti) != MACE_OK, "input_info(NULL)");
  CHECK(mace_engine_output_info(NULL, 0, &ti) != MACE_OK, "output_info(NULL)");
  CHECK(mace_engine_run(NULL, NULL, 0, NULL, 0) != MACE_OK, "run(NULL)");
  CHECK(mace_engine_release_intermediate_buffers(NULL) != MACE_OK, "release(NULL)");
  CHECK(mace_engine_set_profiling(NULL, 1) != MACE_OK, "set_profiling(NULL)");
  mace_op_stat os;
  CHECK(mace_engine_op_stat(NULL, 0, &os) != MACE_OK, "op_stat(NULL)");
  mace_memory_stat ms;
  CHECK(mace_engine_memory_stat(NULL, &ms) != MACE_OK, "memory_stat(NULL)");

  return TEST_FINISH("%ld checks", test_checks);
}
