/* libFuzzer harness: runs one loaded model (the tiny model of tests/c/tiny_model.h, or the
 * fuzz_loader-format file named by MACE_FUZZ_MODEL) on fuzzed input names, ranks, dims, dtypes,
 * formats and bytes, in one engine across runs (a rejected shape must leave it usable).
 * Input: ndim byte, dtype byte, format byte, flags byte, ndim little-endian u16 dims (0xffff: -1,
 * 0xfffe: 2^40), then data bytes, repeated to fill the tensor.
 * A valid shape of more than FUZZ_RUN_MAX_BYTES is not run (a run would only measure memory
 * traffic); with the tiny model it is given to mace_engine_resize, whose shape inference reads no
 * data, and the engine keeps that shape (or its previous one) for the next input. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "tiny_model.h"

/* The largest input a run gets (bytes); larger valid shapes are resized only (above). The
 * kernels' vector bodies and tails, broadcasting and layouts are all reached well below it. */
#ifndef FUZZ_RUN_MAX_BYTES
#define FUZZ_RUN_MAX_BYTES ((int64_t)1 << 18)
#endif

static mace_engine *g_engine;
/* Whether a valid shape above FUZZ_RUN_MAX_BYTES goes to mace_engine_resize: only for the tiny
 * model, which has no input whose values set shapes (resize would read those values). */
static int g_resize_big;

/* buf[i] = src[i % src_n] for i < n (zeros when src_n is 0), by doubling memcpys. */
static void fuzz_fill(uint8_t *buf, size_t n, const uint8_t *src, size_t src_n) {
  if (!src_n) {
    memset(buf, 0, n);
    return;
  }
  size_t done = src_n < n ? src_n : n;
  memcpy(buf, src, done);
  while (done < n) {
    size_t k = done < n - done ? done : n - done;
    memcpy(buf + done, buf, k);
    done += k;
  }
}

static mace_engine *fuzz_engine_load(void) {
  uint8_t *graph = NULL, *weights = NULL, *file = NULL;
  size_t graph_size = 0, weights_size = TINY_WEIGHTS_BYTES;
  const char *path = getenv("MACE_FUZZ_MODEL");
  mace_engine *eng = NULL;
  if (path && *path) {
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (f && n >= 8 && fseek(f, 0, SEEK_SET) == 0 && (file = malloc((size_t)n)) &&
        fread(file, 1, (size_t)n, f) == (size_t)n && memcmp(file, FUZZ_MAGIC, 4) == 0) {
      graph_size = (size_t)file[4] | (size_t)file[5] << 8 | (size_t)file[6] << 16 |
                   (size_t)file[7] << 24;
      if (graph_size <= (size_t)n - 8) {
        graph = file + 8;
        weights = graph + graph_size;
        weights_size = (size_t)n - 8 - graph_size;
      }
    }
    if (f) fclose(f);
    if (!graph) fprintf(stderr, "fuzz_run: cannot read a fuzz_loader model from %s\n", path);
  } else {
    graph = tiny_model_build(V_OK, &graph_size);
    weights = tiny_model_weights();
    g_resize_big = 1;
  }
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = 1;
  if (graph && weights &&
      mace_engine_create_from_buffers(graph, graph_size, weights, weights_size, &cfg, &eng) !=
          MACE_OK)
    fprintf(stderr, "fuzz_run: the model does not load: %s\n", mace_last_error());
  if (file) {
    free(file);
  } else {
    free(graph);
    free(weights);
  }
  return eng;
}

static const mace_dtype kDtypes[] = {MACE_DT_F32, MACE_DT_U8,  MACE_DT_F16,  MACE_DT_I32,
                                     MACE_DT_BF16, MACE_DT_I8, MACE_DT_I64, MACE_DT_BOOL,
                                     MACE_DT_INVALID, (mace_dtype)77};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_engine) g_engine = fuzz_engine_load();
  if (!g_engine || size < 4) return 0;
  mace_tensor_info model_in;
  if (mace_engine_input_info(g_engine, 0, &model_in) != MACE_OK) return 0;
  mace_io in;
  memset(&in, 0, sizeof(in));
  in.ndim = data[0] % (MACE_MAX_DIMS + 1);
  in.dtype = kDtypes[data[1] % (sizeof(kDtypes) / sizeof(kDtypes[0]))];
  in.format = (mace_data_format)(data[2] % 4);
  int flags = data[3];
  in.name = flags & 1 ? "no_such_input" : model_in.name;
  size_t pos = 4;
  int must_reject = 0;  /* a negative dim or an element count past int64 */
  __int128 numel = 1;
  for (int d = 0; d < in.ndim; ++d) {
    unsigned v = pos + 1 < size ? (unsigned)data[pos] | (unsigned)data[pos + 1] << 8 : 1u;
    pos += 2;
    in.dims[d] = v == 0xffff ? -1 : v == 0xfffe ? (int64_t)1 << 40 : (int64_t)v;
    if (in.dims[d] < 0) must_reject = 1;
    if (numel <= INT64_MAX) numel *= in.dims[d] < 0 ? 0 : in.dims[d];  /* stays below 2^104 */
    if (numel > INT64_MAX) must_reject = 1;
  }
  size_t esize = mace_dtype_size(in.dtype);
  __int128 bytes = numel * (esize ? esize : 1);
  const int big = !must_reject && bytes > FUZZ_RUN_MAX_BYTES;
  if (big && !g_resize_big) return 0;
  size_t n = must_reject || big ? 64 : (size_t)bytes;
  uint8_t *buf = malloc(n + 1);
  if (!buf) return 0;
  fuzz_fill(buf, n, pos < size ? data + pos : NULL, pos < size ? size - pos : 0);
  in.data = buf;
  if (big) {
    (void)mace_engine_resize(g_engine, &in, 1);  /* shapes only: the 64 bytes are never read */
  } else if (flags & 2) {
    /* the one-call path: outputs sized for the model's own shapes */
    mace_tensor_info out_info;
    int64_t out_bytes = -1;
    if (mace_engine_output_info(g_engine, 0, &out_info) == MACE_OK)
      out_bytes = fuzz_tensor_bytes(&out_info);
    if (out_bytes >= 0 && mace_engine_num_outputs(g_engine) == 1) {
      mace_io out;
      memset(&out, 0, sizeof(out));
      out.name = out_info.name;
      out.dtype = out_info.dtype;
      out.data = calloc(1, (size_t)out_bytes + 1);
      out.data_bytes = (size_t)out_bytes + 1;  /* what calloc gave (never 0: 0 is "not given") */
      /* any shape: one whose output needs more than the buffer holds must be refused
       * (data_bytes) before anything is written */
      if (out.data) (void)mace_engine_run(g_engine, &in, 1, &out, 1);
      free(out.data);
    }
  } else if (mace_engine_bind_inputs(g_engine, &in, 1) == MACE_OK) {
    fuzz_run_bound(g_engine);
  }
  free(buf);
  return 0;
}
