/* mace_run: load a converted model with the public C API, run it on .npy or random inputs, report
 * outputs, latency and (with --profile) per-op times.
 *
 *   mace_run --model m.pb --weights m.data [--input x.npy | --input name=x.npy ...] [--round N]
 *            [--num_threads T] [--output_dir D] [--profile] [--seed S]
 *            [--device cpu|gpu] [--gpu_precision fp16|fp32|fp16_storage]
 *
 * Inputs not given are filled with uniform random values in [-1, 1] (integers in [0, 3], bools
 * 0/1) from a fixed seed, so two runs see the same data. A positional --input goes to the
 * first model input not named by another --input. Every error prints `mace_run: <message>` and
 * exits non-zero (2 for a bad command line, 1 otherwise).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "mace/mace.h"
#include "npy.h"

#define MAX_IO 256
#define SUMMARY_VALUES 8
#define ARGMAX_ROWS 8

static const char kUsage[] =
    "usage: mace_run --model m.pb [--weights m.data] [--input x.npy | --input name=x.npy ...]\n"
    "                [--round N] [--num_threads T] [--output_dir D] [--profile] [--seed S]\n"
    "                [--device cpu|gpu] [--gpu_precision fp16|fp32|fp16_storage]\n"
    "  --model        graph file (.pb) written by `mace convert`\n"
    "  --weights      weights blob (.data); may be left out for a model without constants\n"
    "  --input        .npy for the next model input, or name=file.npy; repeatable. Inputs not\n"
    "                 given are random (uniform [-1, 1], fixed seed)\n"
    "  --round        timed runs after the first one (default 10)\n"
    "  --num_threads  worker threads (default: one per core)\n"
    "  --output_dir   write every output to D/<output name>.npy\n"
    "  --profile      print the time of every op in the last run\n"
    "  --seed         seed of the random inputs (default 0)\n"
    "  --device       cpu (default) or gpu: OpenCL, ops without a GPU kernel on the CPU\n"
    "  --gpu_precision  with --device gpu: fp16 (default: half where the device has\n"
    "                   cl_khr_fp16, else fp32), fp32, or fp16_storage (half everywhere)\n";

typedef struct options {
  const char *model, *weights, *output_dir;
  const char *inputs[MAX_IO];
  int n_inputs;
  int rounds, num_threads, profile;
  uint64_t seed;
  mace_device device;
  mace_gpu_precision gpu_precision;
} options;

/* Everything main acquires, released in one place. */
typedef struct run_state {
  mace_engine *engine;
  mace_io in[MAX_IO], out[MAX_IO];
  int n_in, n_out;
  double *times;
} run_state;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mace_run: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mace_run: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fputs(kUsage, stderr);
  return 2;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* Returns 0 to go on, otherwise the exit code (help prints usage and exits 0 via *done). */
static int parse_args(int argc, char **argv, options *o, int *done) {
  memset(o, 0, sizeof(*o));
  o->rounds = 10;
  o->num_threads = -1;
  o->device = MACE_DEVICE_CPU;
  o->gpu_precision = MACE_GPU_FP16;
  *done = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(kUsage, stdout);
      *done = 1;
      return 0;
    }
    if (strncmp(a, "--", 2) != 0) return usage_error("unexpected argument '%s'", a);
    char flag[64];
    const char *eq = strchr(a, '=');
    const char *val = NULL;
    size_t flen = eq ? (size_t)(eq - a) : strlen(a);
    if (flen >= sizeof(flag)) return usage_error("unknown option '%s'", a);
    memcpy(flag, a, flen);
    flag[flen] = '\0';
    if (strcmp(flag, "--profile") == 0) {
      if (eq) return usage_error("--profile takes no value");
      o->profile = 1;
      continue;
    }
    static const char *const kWithValue[] = {"--model", "--weights", "--input", "--round",
                                             "--num_threads", "--output_dir", "--seed",
                                             "--device", "--gpu_precision"};
    int known = 0;
    for (size_t k = 0; k < sizeof(kWithValue) / sizeof(kWithValue[0]); ++k)
      if (strcmp(flag, kWithValue[k]) == 0) known = 1;
    if (!known) return usage_error("unknown option '%s'", flag);
    if (eq) {
      val = eq + 1;
    } else {
      if (i + 1 >= argc) return usage_error("%s needs a value", flag);
      val = argv[++i];
    }
    long v;
    if (strcmp(flag, "--model") == 0) {
      o->model = val;
    } else if (strcmp(flag, "--weights") == 0) {
      o->weights = val;
    } else if (strcmp(flag, "--output_dir") == 0) {
      o->output_dir = val;
    } else if (strcmp(flag, "--input") == 0) {
      if (o->n_inputs >= MAX_IO) return usage_error("more than %d --input", MAX_IO);
      o->inputs[o->n_inputs++] = val;
    } else if (strcmp(flag, "--round") == 0) {
      if (parse_int(val, 1, 1000000, &v) != 0)
        return usage_error("--round must be an integer in [1, 1000000], got '%s'", val);
      o->rounds = (int)v;
    } else if (strcmp(flag, "--num_threads") == 0) {
      if (parse_int(val, -1, 1024, &v) != 0)
        return usage_error("--num_threads must be an integer in [-1, 1024], got '%s'", val);
      o->num_threads = (int)v;
    } else if (strcmp(flag, "--device") == 0) {
      if (strcmp(val, "cpu") != 0 && strcmp(val, "gpu") != 0)
        return usage_error("--device must be cpu or gpu, got '%s'", val);
      o->device = strcmp(val, "gpu") == 0 ? MACE_DEVICE_GPU : MACE_DEVICE_CPU;
    } else if (strcmp(flag, "--gpu_precision") == 0) {
      if (strcmp(val, "fp16") == 0) o->gpu_precision = MACE_GPU_FP16;
      else if (strcmp(val, "fp32") == 0) o->gpu_precision = MACE_GPU_FP32;
      else if (strcmp(val, "fp16_storage") == 0) o->gpu_precision = MACE_GPU_FP16_STORAGE;
      else return usage_error("--gpu_precision must be fp16, fp32 or fp16_storage, got '%s'",
                              val);
    } else if (strcmp(flag, "--seed") == 0) {
      if (parse_int(val, 0, 0x7fffffffL, &v) != 0)
        return usage_error("--seed must be a non-negative integer, got '%s'", val);
      o->seed = (uint64_t)v;
    }
  }
  if (!o->model) return usage_error("--model is required");
  return 0;
}

/* ---- values ------------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) / 9007199254740992.0; }

static float half_to_float(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 0x400), e - 25);
  return sign ? -v : v;
}

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int e = (int)((x >> 23) & 0xff) - 127 + 15;
  uint32_t m = x & 0x7fffff;
  if (e <= 0) return sign; /* tiny values flush to zero; random inputs never need them */
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  return (uint16_t)(sign | (e << 10) | (m >> 13));
}

static double value_at(const void *data, mace_dtype dt, int64_t i) {
  const char *p = (const char *)data;
  switch (dt) {
    case MACE_DT_F32: { float v; memcpy(&v, p + i * 4, 4); return v; }
    case MACE_DT_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case MACE_DT_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
    case MACE_DT_U8: return (unsigned char)p[i];
    case MACE_DT_I8: return (signed char)p[i];
    case MACE_DT_BOOL: return p[i] != 0;
    case MACE_DT_F16: { uint16_t v; memcpy(&v, p + i * 2, 2); return half_to_float(v); }
    case MACE_DT_BF16: {
      uint16_t v;
      memcpy(&v, p + i * 2, 2);
      uint32_t b = (uint32_t)v << 16;
      float f;
      memcpy(&f, &b, 4);
      return f;
    }
    default: return 0;
  }
}

static void fill_random(void *data, mace_dtype dt, int64_t n, uint64_t *rng) {
  for (int64_t i = 0; i < n; ++i) {
    double u = rng_uniform(rng);
    float f = (float)(2.0 * u - 1.0);
    int64_t k = (int64_t)(u * 4.0); /* 0..3 */
    switch (dt) {
      case MACE_DT_F32: ((float *)data)[i] = f; break;
      case MACE_DT_F16: ((uint16_t *)data)[i] = float_to_half(f); break;
      case MACE_DT_BF16: {
        uint32_t b;
        memcpy(&b, &f, 4);
        ((uint16_t *)data)[i] = (uint16_t)(b >> 16);
        break;
      }
      case MACE_DT_I32: ((int32_t *)data)[i] = (int32_t)k; break;
      case MACE_DT_I64: ((int64_t *)data)[i] = k; break;
      case MACE_DT_U8: ((uint8_t *)data)[i] = (uint8_t)k; break;
      case MACE_DT_I8: ((int8_t *)data)[i] = (int8_t)k; break;
      case MACE_DT_BOOL: ((uint8_t *)data)[i] = (uint8_t)(k & 1); break;
      default: break;
    }
  }
}

static const char *dtype_str(mace_dtype dt) {
  switch (dt) {
    case MACE_DT_F32: return "f32";
    case MACE_DT_U8: return "u8";
    case MACE_DT_F16: return "f16";
    case MACE_DT_I32: return "i32";
    case MACE_DT_BF16: return "bf16";
    case MACE_DT_I8: return "i8";
    case MACE_DT_I64: return "i64";
    case MACE_DT_BOOL: return "bool";
    default: return "invalid";
  }
}

static const char *shape_str(const int64_t *dims, int ndim, char *buf, size_t size) {
  size_t o = 0;
  o += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && o < size; ++i)
    o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (o < size) snprintf(buf + o, size - o, "]");
  return buf;
}

static int64_t numel_of(const int64_t *dims, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= dims[i];
  return n;
}

/* Bytes of n elements of dt, or -1 when that would not fit in memory anyway. */
static int64_t bytes_of(int64_t n, mace_dtype dt) {
  size_t es = mace_dtype_size(dt);
  if (n < 0 || es == 0 || n > (INT64_C(1) << 40)) return -1;
  return n * (int64_t)es;
}

static void print_summary(const mace_io *y) {
  char sh[256];
  int64_t n = numel_of(y->dims, y->ndim);
  printf("output '%s': %s %s\n", y->name, dtype_str(y->dtype), shape_str(y->dims, y->ndim, sh, sizeof(sh)));
  if (n == 0) {
    printf("  (empty)\n");
    return;
  }
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t finite = 0, nan = 0, inf = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = value_at(y->data, y->dtype, i);
    if (isnan(v)) { ++nan; continue; }
    if (isinf(v)) { ++inf; continue; }
    if (v < mn) mn = v;
    if (v > mx) mx = v;
    sum += v;
    ++finite;
  }
  if (finite)
    printf("  min %.6g  max %.6g  mean %.6g", mn, mx, sum / (double)finite);
  if (nan || inf) printf("%s%lld NaN, %lld Inf", finite ? "  " : "  ", (long long)nan, (long long)inf);
  printf("\n  first values:");
  for (int64_t i = 0; i < n && i < SUMMARY_VALUES; ++i) printf(" %.6g", value_at(y->data, y->dtype, i));
  printf("%s\n", n > SUMMARY_VALUES ? " ..." : "");
  if (y->ndim == 2 && y->dims[1] > 0) {
    printf("  argmax per row:");
    for (int64_t r = 0; r < y->dims[0] && r < ARGMAX_ROWS; ++r) {
      int64_t best = 0;
      double bv = -INFINITY;
      for (int64_t c = 0; c < y->dims[1]; ++c) {
        double v = value_at(y->data, y->dtype, r * y->dims[1] + c);
        if (v > bv) {
          bv = v;
          best = c;
        }
      }
      printf(" %lld", (long long)best);
    }
    printf("%s\n", y->dims[0] > ARGMAX_ROWS ? " ..." : "");
  }
}

/* ---- inputs and outputs ------------------------------------------------------------------- */

static int find_input(const mace_engine *eng, const char *name, size_t len) {
  int n = mace_engine_num_inputs(eng);
  for (int i = 0; i < n; ++i) {
    mace_tensor_info info;
    if (mace_engine_input_info(eng, i, &info) != MACE_OK) continue;
    if (strlen(info.name) == len && strncmp(info.name, name, len) == 0) return i;
  }
  return -1;
}

/* Loads a .npy into io (allocating io->data in the model's dtype). */
static int load_input(const char *path, const mace_tensor_info *info, mace_io *io) {
  mace_npy_array a;
  char err[512];
  if (mace_npy_read(path, &a, err, sizeof(err)) != 0) return fail("input '%s': %s", info->name, err);
  int rc = 0;
  int64_t bytes = bytes_of(a.numel, info->dtype);
  mace_npy_type want;
  if (mace_npy_type_of(info->dtype, &want) != 0) {
    rc = fail("input '%s' has dtype %s, which .npy inputs cannot provide here", info->name,
              dtype_str(info->dtype));
    goto done;
  }
  if (bytes < 0) {
    rc = fail("input '%s': %s is too large", info->name, path);
    goto done;
  }
  io->data = malloc(bytes ? (size_t)bytes : 1);
  if (!io->data) {
    rc = fail("out of memory loading %s", path);
    goto done;
  }
  if (mace_npy_convert_to(&a, info->dtype, io->data) != 0) {
    rc = fail("input '%s': cannot convert %s to %s", info->name, mace_npy_type_descr(a.type),
              dtype_str(info->dtype));
    goto done;
  }
  io->ndim = a.ndim;
  memcpy(io->dims, a.dims, sizeof(a.dims[0]) * (size_t)a.ndim);
  if (a.type != want)
    printf("input '%s': converted %s from %s to %s\n", info->name, path, mace_npy_type_descr(a.type),
           dtype_str(info->dtype));
done:
  mace_npy_free(&a);
  return rc;
}

static int prepare_inputs(const options *o, run_state *rs) {
  mace_engine *eng = rs->engine;
  const char *given[MAX_IO] = {0};
  rs->n_in = mace_engine_num_inputs(eng);
  if (rs->n_in > MAX_IO) return fail("the model has %d inputs; mace_run handles %d", rs->n_in, MAX_IO);
  /* Named first, then positional into the inputs left. */
  for (int k = 0; k < o->n_inputs; ++k) {
    const char *eq = strchr(o->inputs[k], '=');
    if (!eq) continue;
    int i = find_input(eng, o->inputs[k], (size_t)(eq - o->inputs[k]));
    if (i < 0) {
      struct stat sb;
      if (stat(o->inputs[k], &sb) == 0) continue; /* a file name with '=' in it */
      return fail("--input %s: the model has no input named '%.*s'", o->inputs[k],
                  (int)(eq - o->inputs[k]), o->inputs[k]);
    }
    if (given[i]) return fail("input %d is given twice (%s and %s)", i, given[i], eq + 1);
    given[i] = eq + 1;
  }
  int next = 0;
  for (int k = 0; k < o->n_inputs; ++k) {
    const char *eq = strchr(o->inputs[k], '=');
    if (eq && find_input(eng, o->inputs[k], (size_t)(eq - o->inputs[k])) >= 0) continue;
    while (next < rs->n_in && given[next]) ++next;
    if (next >= rs->n_in)
      return fail("too many --input files: the model has %d input%s", rs->n_in, rs->n_in == 1 ? "" : "s");
    given[next++] = o->inputs[k];
  }
  uint64_t rng = o->seed * 0x2545F4914F6CDD1Dull + 1;
  for (int i = 0; i < rs->n_in; ++i) {
    mace_tensor_info info;
    if (mace_engine_input_info(eng, i, &info) != MACE_OK) return fail("%s", mace_last_error());
    mace_io *io = &rs->in[i];
    io->name = info.name;
    io->dtype = info.dtype;
    io->format = info.format;
    char sh[256];
    if (given[i]) {
      if (load_input(given[i], &info, io) != 0) return 1;
      printf("input '%s': %s %s from %s\n", info.name, dtype_str(info.dtype),
             shape_str(io->dims, io->ndim, sh, sizeof(sh)), given[i]);
    } else {
      io->ndim = info.ndim;
      memcpy(io->dims, info.dims, sizeof(io->dims));
      int64_t bytes = bytes_of(numel_of(io->dims, io->ndim), info.dtype);
      if (bytes < 0) return fail("input '%s' has dtype %s or a shape mace_run cannot fill", info.name,
                                 dtype_str(info.dtype));
      io->data = malloc(bytes ? (size_t)bytes : 1);
      if (!io->data) return fail("out of memory for input '%s'", info.name);
      fill_random(io->data, info.dtype, numel_of(io->dims, io->ndim), &rng);
      printf("input '%s': %s %s random (seed %llu)\n", info.name, dtype_str(info.dtype),
             shape_str(io->dims, io->ndim, sh, sizeof(sh)), (unsigned long long)o->seed);
    }
  }
  return 0;
}

/* Output buffers sized from output_info, which reflects the shapes of the last run. */
static int prepare_outputs(run_state *rs) {
  rs->n_out = mace_engine_num_outputs(rs->engine);
  if (rs->n_out > MAX_IO) return fail("the model has %d outputs; mace_run handles %d", rs->n_out, MAX_IO);
  for (int i = 0; i < rs->n_out; ++i) {
    mace_tensor_info info;
    if (mace_engine_output_info(rs->engine, i, &info) != MACE_OK) return fail("%s", mace_last_error());
    mace_io *io = &rs->out[i];
    int64_t bytes = bytes_of(numel_of(info.dims, info.ndim), info.dtype);
    if (bytes < 0) return fail("output '%s' has dtype %s, which mace_run cannot read", info.name,
                               dtype_str(info.dtype));
    free(io->data);
    io->data = malloc(bytes ? (size_t)bytes : 1);
    if (!io->data) return fail("out of memory for output '%s'", info.name);
    io->name = info.name;
    io->format = info.format;
  }
  return 0;
}

static void safe_file_name(const char *name, char *buf, size_t size) {
  size_t n = 0;
  for (const char *p = name; *p && n + 1 < size; ++p) {
    char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
             c == '_' || (c == '.' && n > 0);
    buf[n++] = ok ? c : '_';
  }
  if (n == 0) buf[n++] = '_';
  buf[n] = '\0';
}

static int write_outputs(const char *dir, const run_state *rs) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return fail("cannot create output directory '%s': %s", dir, strerror(errno));
  for (int i = 0; i < rs->n_out; ++i) {
    const mace_io *y = &rs->out[i];
    char file[256], path[4096], err[512];
    safe_file_name(y->name, file, sizeof(file));
    snprintf(path, sizeof(path), "%s/%s.npy", dir, file);
    mace_npy_type t;
    const void *data = y->data;
    float *tmp = NULL;
    if (mace_npy_type_of(y->dtype, &t) != 0) { /* f16 / bf16: write as f32 */
      int64_t n = numel_of(y->dims, y->ndim);
      tmp = malloc(n ? (size_t)n * sizeof(float) : 1);
      if (!tmp) return fail("out of memory writing '%s'", path);
      for (int64_t k = 0; k < n; ++k) tmp[k] = (float)value_at(y->data, y->dtype, k);
      t = MACE_NPY_F32;
      data = tmp;
    }
    int rc = mace_npy_write(path, t, y->dims, y->ndim, data, err, sizeof(err));
    free(tmp);
    if (rc != 0) return fail("%s", err);
    printf("wrote %s\n", path);
  }
  return 0;
}

/* ---- timing and profile ------------------------------------------------------------------- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int print_profile(mace_engine *eng) {
  int n = mace_engine_num_ops(eng);
  double total = 0;
  for (int i = 0; i < n; ++i) {
    mace_op_stat s;
    if (mace_engine_op_stat(eng, i, &s) != MACE_OK) return fail("%s", mace_last_error());
    total += s.ms;
  }
  printf("\nprofile of the last run (%d ops, %.3f ms in ops):\n", n, total);
  printf("%5s  %-16s %-32s %10s %6s %12s %9s  %s\n", "#", "type", "name", "ms", "%", "MACs", "GMAC/s",
         "output");
  for (int i = 0; i < n; ++i) {
    mace_op_stat s;
    if (mace_engine_op_stat(eng, i, &s) != MACE_OK) return fail("%s", mace_last_error());
    char sh[256];
    double gmacs = s.ms > 0 ? (double)s.macs / (s.ms * 1e6) : 0;
    printf("%5d  %-16.16s %-32.32s %10.4f %6.2f %12lld %9.2f  %s%s\n", i, s.type ? s.type : "",
           s.name ? s.name : "", s.ms, total > 0 ? 100.0 * s.ms / total : 0.0, (long long)s.macs, gmacs,
           shape_str(s.out_dims, s.ndim, sh, sizeof(sh)), s.device == MACE_DEVICE_GPU ? "  gpu" : "");
  }
  /* Per type, in order of first appearance. */
  printf("\nby op type:\n");
  for (int i = 0; i < n; ++i) {
    mace_op_stat s;
    if (mace_engine_op_stat(eng, i, &s) != MACE_OK) return fail("%s", mace_last_error());
    int seen = 0;
    for (int j = 0; j < i && !seen; ++j) {
      mace_op_stat p;
      if (mace_engine_op_stat(eng, j, &p) == MACE_OK && strcmp(p.type, s.type) == 0) seen = 1;
    }
    if (seen) continue;
    double ms = 0;
    int count = 0;
    for (int j = i; j < n; ++j) {
      mace_op_stat p;
      if (mace_engine_op_stat(eng, j, &p) == MACE_OK && strcmp(p.type, s.type) == 0) {
        ms += p.ms;
        ++count;
      }
    }
    printf("  %-16s %4d ops %10.4f ms %6.2f%%\n", s.type, count, ms, total > 0 ? 100.0 * ms / total : 0.0);
  }
  return 0;
}

static void release(run_state *rs) {
  for (int i = 0; i < MAX_IO; ++i) {
    free(rs->in[i].data);
    free(rs->out[i].data);
  }
  free(rs->times);
  mace_engine_destroy(rs->engine);
}

int main(int argc, char **argv) {
  options o;
  int done;
  int rc = parse_args(argc, argv, &o, &done);
  if (rc != 0 || done) return rc;

  run_state rs;
  memset(&rs, 0, sizeof(rs));
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = o.num_threads;
  cfg.device = o.device;
  cfg.gpu_precision = o.gpu_precision;

  printf("mace %s\n", mace_version());
  double t0 = now_ms();
  if (mace_engine_create_from_files(o.model, o.weights, &cfg, &rs.engine) != MACE_OK) {
    rc = fail("cannot load the model: %s", mace_last_error());
    goto finally;
  }
  double load_ms = now_ms() - t0;
  printf("model %s: %d ops, %d inputs, %d outputs, loaded in %.2f ms\n", o.model,
         mace_engine_num_ops(rs.engine), mace_engine_num_inputs(rs.engine),
         mace_engine_num_outputs(rs.engine), load_ms);
  if ((rc = prepare_inputs(&o, &rs)) != 0) goto finally;

  /* The first run takes no outputs: it may reshape the net for the inputs' shapes, after which
   * output_info tells the sizes to allocate. */
  t0 = now_ms();
  if (mace_engine_run(rs.engine, rs.in, rs.n_in, NULL, 0) != MACE_OK) {
    rc = fail("run failed: %s", mace_last_error());
    goto finally;
  }
  double first_ms = now_ms() - t0;
  if ((rc = prepare_outputs(&rs)) != 0) goto finally;

  if (o.profile && mace_engine_set_profiling(rs.engine, 1) != MACE_OK) {
    rc = fail("%s", mace_last_error());
    goto finally;
  }
  rs.times = malloc((size_t)o.rounds * sizeof(double));
  if (!rs.times) {
    rc = fail("out of memory");
    goto finally;
  }
  for (int r = 0; r < o.rounds; ++r) {
    t0 = now_ms();
    if (mace_engine_run(rs.engine, rs.in, rs.n_in, rs.out, rs.n_out) != MACE_OK) {
      rc = fail("run %d failed: %s", r + 1, mace_last_error());
      goto finally;
    }
    rs.times[r] = now_ms() - t0;
  }

  printf("\n");
  for (int i = 0; i < rs.n_out; ++i) print_summary(&rs.out[i]);

  double sum = 0;
  for (int r = 0; r < o.rounds; ++r) sum += rs.times[r];
  qsort(rs.times, (size_t)o.rounds, sizeof(double), cmp_double);
  double median = o.rounds % 2 ? rs.times[o.rounds / 2]
                               : 0.5 * (rs.times[o.rounds / 2 - 1] + rs.times[o.rounds / 2]);
  printf("\nlatency: first run %.3f ms; over %d round%s: median %.3f ms, min %.3f ms, mean %.3f ms\n",
         first_ms, o.rounds, o.rounds == 1 ? "" : "s", median, rs.times[0], sum / o.rounds);
  mace_memory_stat mem;
  if (mace_engine_memory_stat(rs.engine, &mem) == MACE_OK)
    printf("memory: arena %.3f MB (without reuse %.3f MB), weights %.3f MB\n", mem.arena_bytes / 1e6,
           mem.naive_bytes / 1e6, mem.weights_bytes / 1e6);

  if (o.profile && (rc = print_profile(rs.engine)) != 0) goto finally;
  if (o.output_dir && (rc = write_outputs(o.output_dir, &rs)) != 0) goto finally;
  rc = 0;

finally:
  release(&rs);
  return rc;
}
