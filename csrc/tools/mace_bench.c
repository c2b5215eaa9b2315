/* mace_bench: per-op statistics of a converted model in the layout of MACE's model benchmark
 * (seed 003, "Model Benchmark"), from the public C API only.
 *
 *   mace_bench --model m.pb [--weights m.data] [--round N] [--warmup W] [--num_threads T] [--seed S]
 *   mace_bench m.pb ...                        (the model may also be given positionally)
 *
 * Runs W warm-up runs, N timed runs without profiling, then N runs with profiling on
 * (mace_engine_set_profiling / mace_engine_op_stat), and prints the sections
 *   Warm Up, Run without statistics, Run with statistics   wall time per run (ms)
 *   Sort by Run Order          every op: start, first, avg ms, %, cdf%, GMACPS, output shape, name
 *   Sort by Computation Time   the 10 slowest ops
 *   Stat by Op Type            count, avg ms, %, cdf%, MACs, GMACPS, called times per type
 *   Stat by MACs               total MACs, G MAC/s of the first round, the average, std
 *   Summary of Ops' Stat       the per-round sum of op times
 *   Peak Intermediate Memory   planned arena vs one buffer per tensor (mace_engine_memory_stat)
 * "std" is the sample standard deviation over rounds in its row's unit. python/mace/benchmark.py
 * (`mace benchmark`) prints the same sections, plus the graph columns Stride/Pad/Filter
 * Shape/Dilation that the public C API does not expose. Inputs are uniform random in [-1, 1]
 * (integer inputs 0, bools 0) from a fixed seed. Errors print `mace_bench: <message>` and exit
 * non-zero (2 for a bad command line, 1 otherwise).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mace/mace.h"

#define MAX_IO 256
#define TOP_N 10
#define CELL 256

static const char kUsage[] =
    "usage: mace_bench --model m.pb [--weights m.data] [--round N] [--warmup W] [--num_threads T]\n"
    "                  [--seed S]\n"
    "  --model        graph file (.pb) written by `mace convert` (or the first positional argument)\n"
    "  --weights      weights blob (default: the model path with .data, when it exists)\n"
    "  --round        timed runs and profiled runs (default 10)\n"
    "  --warmup       untimed runs first (default 1)\n"
    "  --num_threads  worker threads (default: one per core)\n"
    "  --seed         seed of the random inputs (default 0)\n";

typedef struct options {
  const char *model, *weights;
  int rounds, warmup, num_threads;
  long seed;
} options;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mace_bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mace_bench: ", stderr);
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

static int parse_args(int argc, char **argv, options *o, int *done) {
  memset(o, 0, sizeof(*o));
  o->rounds = 10;
  o->warmup = 1;
  o->num_threads = -1;
  *done = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(kUsage, stdout);
      *done = 1;
      return 0;
    }
    if (strncmp(a, "--", 2) != 0) {
      if (o->model) return usage_error("unexpected argument '%s'", a);
      o->model = a;
      continue;
    }
    char flag[64];
    const char *eq = strchr(a, '=');
    size_t flen = eq ? (size_t)(eq - a) : strlen(a);
    if (flen >= sizeof(flag)) return usage_error("unknown option '%s'", a);
    memcpy(flag, a, flen);
    flag[flen] = '\0';
    static const char *const kFlags[] = {"--model", "--weights", "--round", "--warmup",
                                         "--num_threads", "--seed"};
    int known = 0;
    for (size_t k = 0; k < sizeof(kFlags) / sizeof(kFlags[0]); ++k)
      if (strcmp(flag, kFlags[k]) == 0) known = 1;
    if (!known) return usage_error("unknown option '%s'", flag);
    const char *val;
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
    } else if (strcmp(flag, "--round") == 0) {
      if (parse_int(val, 1, 1000000, &v) != 0)
        return usage_error("--round must be an integer in [1, 1000000], got '%s'", val);
      o->rounds = (int)v;
    } else if (strcmp(flag, "--warmup") == 0) {
      if (parse_int(val, 0, 1000000, &v) != 0)
        return usage_error("--warmup must be an integer in [0, 1000000], got '%s'", val);
      o->warmup = (int)v;
    } else if (strcmp(flag, "--num_threads") == 0) {
      if (parse_int(val, -1, 1024, &v) != 0)
        return usage_error("--num_threads must be an integer in [-1, 1024], got '%s'", val);
      o->num_threads = (int)v;
    } else {
      if (parse_int(val, 0, 0x7fffffffL, &v) != 0)
        return usage_error("--seed must be a non-negative integer, got '%s'", val);
      o->seed = v;
    }
  }
  if (!o->model) return usage_error("--model is required");
  return 0;
}

/* ---- tables -------------------------------------------------------------------------------- */

/* A MACE-style table: rule, centred title, rule, "| head | ... |", rule, rows, rule, blank. Cells
 * are added left to right, row by row, with table_cell. The first `left` columns and the
 * columns from `left_from` on are left-aligned, the others right-aligned. */
typedef struct table {
  const char *title;
  const char *const *heads;
  int ncol, left, left_from;
  char (*cells)[CELL];
  int ncells, cap;
} table;

static void table_init(table *t, const char *title, const char *const *heads, int ncol, int left,
                       int left_from) {
  memset(t, 0, sizeof(*t));
  t->title = title;
  t->heads = heads;
  t->ncol = ncol;
  t->left = left;
  t->left_from = left_from;
}

static int table_cell(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int table_cell(table *t, const char *fmt, ...) {
  if (t->ncells == t->cap) {
    int cap = t->cap ? 2 * t->cap : 64;
    void *p = realloc(t->cells, (size_t)cap * CELL);
    if (!p) return fail("out of memory");
    t->cells = p;
    t->cap = cap;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->cells[t->ncells++], CELL, fmt, ap);
  va_end(ap);
  return 0;
}

static void print_centered(const char *s, int width) {
  int len = (int)strlen(s), padl = (width - len) / 2;
  printf("%*s%s%*s", padl > 0 ? padl : 0, "", s, width - len - padl > 0 ? width - len - padl : 0, "");
}

static void print_rule(int n) {
  for (int i = 0; i < n; ++i) putchar('-');
  putchar('\n');
}

static void table_print(table *t) {
  int w[32] = {0}, nrow = t->ncells / t->ncol, len = 1;
  for (int c = 0; c < t->ncol; ++c) w[c] = (int)strlen(t->heads[c]);
  for (int i = 0; i < nrow * t->ncol; ++i) {
    int l = (int)strlen(t->cells[i]);
    if (l > w[i % t->ncol]) w[i % t->ncol] = l;
  }
  for (int c = 0; c < t->ncol; ++c) len += w[c] + 3;
  print_rule(len);
  int tl = (int)strlen(t->title);
  printf("%*s%s\n", (len - tl) / 2 > 0 ? (len - tl) / 2 : 0, "", t->title);
  print_rule(len);
  printf("|");
  for (int c = 0; c < t->ncol; ++c) {
    putchar(' ');
    print_centered(t->heads[c], w[c]);
    printf(" |");
  }
  printf("\n");
  print_rule(len);
  for (int r = 0; r < nrow; ++r) {
    printf("|");
    for (int c = 0; c < t->ncol; ++c) {
      int left = c < t->left || c >= t->left_from;
      printf(left ? " %-*s |" : " %*s |", w[c], t->cells[r * t->ncol + c]);
    }
    printf("\n");
  }
  print_rule(len);
  printf("\n");
  free(t->cells);
  t->cells = NULL;
  t->ncells = t->cap = 0;
}

/* ---- numbers ------------------------------------------------------------------------------- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double mean_of(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i];
  return n ? s / n : 0;
}

static double std_of(const double *x, int n) { /* sample standard deviation */
  if (n < 2) return 0;
  double m = mean_of(x, n), s = 0;
  for (int i = 0; i < n; ++i) s += (x[i] - m) * (x[i] - m);
  return sqrt(s / (n - 1));
}

static const char *with_commas(int64_t v, char *buf, size_t size) {
  char raw[32];
  snprintf(raw, sizeof(raw), "%lld", (long long)(v < 0 ? -v : v));
  size_t n = strlen(raw), o = 0;
  if (v < 0 && o + 1 < size) buf[o++] = '-';
  for (size_t i = 0; i < n && o + 2 < size; ++i) {
    if (i > 0 && (n - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = raw[i];
  }
  buf[o] = '\0';
  return buf;
}

static const char *dims_str(const int64_t *dims, int ndim, char *buf, size_t size) {
  size_t o = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && o < size; ++i)
    o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "", (long long)dims[i]);
  if (o < size) snprintf(buf + o, size - o, "]");
  return buf;
}

static const char *const kSummaryHeads[] = {"round", "first(ms)", "curr(ms)", "min(ms)",
                                             "max(ms)", "avg(ms)", "std"};

static void print_summary(const char *title, const double *x, int n) {
  if (n <= 0) return;
  double mn = x[0], mx = x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < mn) mn = x[i];
    if (x[i] > mx) mx = x[i];
  }
  table t;
  table_init(&t, title, kSummaryHeads, 7, 0, 7);
  table_cell(&t, "%d", n);
  table_cell(&t, "%.3f", x[0]);
  table_cell(&t, "%.3f", x[n - 1]);
  table_cell(&t, "%.3f", mn);
  table_cell(&t, "%.3f", mx);
  table_cell(&t, "%.3f", mean_of(x, n));
  table_cell(&t, "%.3f", std_of(x, n));
  table_print(&t);
}

/* ---- the benchmark --------------------------------------------------------------------------- */

/* What was measured per op: names and types are borrowed from the engine. */
typedef struct op_rec {
  const char *name, *type;
  double first_ms, avg_ms, start_ms;
  int64_t macs;
  int ndim;
  int64_t out_dims[MACE_MAX_DIMS];
} op_rec;

typedef struct bench {
  mace_engine *engine;
  mace_io in[MAX_IO], out[MAX_IO];
  int n_in, n_out, n_ops;
  op_rec *ops;
  double *warm_ms, *plain_ms, *prof_ms, *op_round_ms;
} bench;

static void bench_free(bench *b) {
  for (int i = 0; i < b->n_in; ++i) free(b->in[i].data);
  for (int i = 0; i < b->n_out; ++i) free(b->out[i].data);
  free(b->ops);
  free(b->warm_ms);
  free(b->plain_ms);
  free(b->prof_ms);
  free(b->op_round_ms);
  if (b->engine) mace_engine_destroy(b->engine);
}

static int64_t numel_of(const int64_t *dims, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= dims[i] > 0 ? dims[i] : 1;
  return n;
}

static int prepare_io(bench *b, long seed) {
  b->n_in = mace_engine_num_inputs(b->engine);
  b->n_out = mace_engine_num_outputs(b->engine);
  if (b->n_in > MAX_IO || b->n_out > MAX_IO) return fail("the model has more than %d inputs or outputs", MAX_IO);
  uint64_t s = (uint64_t)seed * 0x2545F4914F6CDD1Dull + 1;
  for (int i = 0; i < b->n_in; ++i) {
    mace_tensor_info info;
    if (mace_engine_input_info(b->engine, i, &info) != MACE_OK) return fail("%s", mace_last_error());
    mace_io *io = &b->in[i];
    io->name = info.name;
    io->dtype = info.dtype;
    io->format = info.format;
    io->ndim = info.ndim;
    for (int d = 0; d < info.ndim; ++d) io->dims[d] = info.dims[d] > 0 ? info.dims[d] : 1;
    int64_t n = numel_of(io->dims, io->ndim);
    size_t es = mace_dtype_size(info.dtype);
    if (es == 0) return fail("input '%s' has a dtype mace_bench cannot fill", info.name);
    io->data = calloc((size_t)n ? (size_t)n : 1, es);
    if (!io->data) return fail("out of memory for input '%s'", info.name);
    if (info.dtype == MACE_DT_F32) {
      for (int64_t k = 0; k < n; ++k) { /* xorshift64 -> uniform [-1, 1] */
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((float *)io->data)[k] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
      }
    }
  }
  return 0;
}

static int prepare_outputs(bench *b) {
  for (int i = 0; i < b->n_out; ++i) {
    mace_tensor_info info;
    if (mace_engine_output_info(b->engine, i, &info) != MACE_OK) return fail("%s", mace_last_error());
    mace_io *io = &b->out[i];
    free(io->data);
    size_t bytes = (size_t)numel_of(info.dims, info.ndim) * mace_dtype_size(info.dtype);
    io->data = malloc(bytes ? bytes : 1);
    if (!io->data) return fail("out of memory for output '%s'", info.name);
    io->name = info.name;
    io->format = info.format;
  }
  return 0;
}

static int run_once(bench *b, double *ms) {
  double t0 = now_ms();
  if (mace_engine_run(b->engine, b->in, b->n_in, b->out, b->n_out) != MACE_OK)
    return fail("run: %s", mace_last_error());
  *ms = now_ms() - t0;
  return 0;
}

static int measure(bench *b, const options *o) {
  int R = o->rounds;
  b->warm_ms = calloc((size_t)o->warmup + 1, sizeof(double));
  b->plain_ms = calloc((size_t)R, sizeof(double));
  b->prof_ms = calloc((size_t)R, sizeof(double));
  b->op_round_ms = calloc((size_t)R, sizeof(double));
  if (!b->warm_ms || !b->plain_ms || !b->prof_ms || !b->op_round_ms) return fail("out of memory");
  if (mace_engine_resize(b->engine, b->in, b->n_in) != MACE_OK) return fail("%s", mace_last_error());
  if (prepare_outputs(b) != 0) return 1;
  for (int r = 0; r < o->warmup; ++r)
    if (run_once(b, &b->warm_ms[r]) != 0) return 1;
  for (int r = 0; r < R; ++r)
    if (run_once(b, &b->plain_ms[r]) != 0) return 1;
  if (mace_engine_set_profiling(b->engine, 1) != MACE_OK) return fail("%s", mace_last_error());
  b->n_ops = mace_engine_num_ops(b->engine);
  b->ops = calloc((size_t)b->n_ops + 1, sizeof(op_rec));
  if (!b->ops) return fail("out of memory");
  for (int r = 0; r < R; ++r) {
    if (run_once(b, &b->prof_ms[r]) != 0) return 1;
    for (int i = 0; i < b->n_ops; ++i) {
      mace_op_stat s;
      if (mace_engine_op_stat(b->engine, i, &s) != MACE_OK) return fail("%s", mace_last_error());
      op_rec *p = &b->ops[i];
      if (r == 0) {
        p->name = s.name ? s.name : "";
        p->type = s.type ? s.type : "";
        p->first_ms = s.ms;
        p->macs = s.macs;
      }
      p->avg_ms += s.ms / R;
      p->ndim = s.ndim;
      memcpy(p->out_dims, s.out_dims, sizeof(p->out_dims));
      b->op_round_ms[r] += s.ms;
    }
  }
  mace_engine_set_profiling(b->engine, 0);
  double start = 0;
  for (int i = 0; i < b->n_ops; ++i) {
    b->ops[i].start_ms = start;
    start += b->ops[i].avg_ms;
  }
  return 0;
}

/* ---- the report ------------------------------------------------------------------------------ */

static const char *const kOpHeads[] = {"Op Type", "Start", "First", "Avg(ms)", "%", "cdf%",
                                       "GMACPS", "Output Shape", "name"};

static void print_ops(const char *title, const op_rec *const *ops, int n, double total) {
  table t;
  table_init(&t, title, kOpHeads, 9, 1, 7);
  double cdf = 0;
  for (int i = 0; i < n; ++i) {
    const op_rec *p = ops[i];
    double pct = total > 0 ? 100.0 * p->avg_ms / total : 0;
    char sh[CELL];
    cdf += pct;
    table_cell(&t, "%s", p->type);
    table_cell(&t, "%.3f", p->start_ms);
    table_cell(&t, "%.3f", p->first_ms);
    table_cell(&t, "%.3f", p->avg_ms);
    table_cell(&t, "%.3f", pct);
    table_cell(&t, "%.3f", cdf);
    table_cell(&t, "%.3f", p->avg_ms > 0 ? (double)p->macs / (p->avg_ms * 1e6) : 0.0);
    table_cell(&t, "%s", dims_str(p->out_dims, p->ndim, sh, sizeof(sh)));
    table_cell(&t, "%s", p->name);
  }
  table_print(&t);
}

static int by_time_desc(const void *a, const void *b) {
  double x = (*(const op_rec *const *)a)->avg_ms, y = (*(const op_rec *const *)b)->avg_ms;
  return x > y ? -1 : x < y;
}

typedef struct type_rec {
  const char *type;
  int count;
  double ms;
  int64_t macs;
} type_rec;

static int type_by_time_desc(const void *a, const void *b) {
  const type_rec *x = a, *y = b;
  if (x->ms != y->ms) return x->ms > y->ms ? -1 : 1;
  return strcmp(x->type, y->type);
}

static int print_report(const bench *b, int rounds) {
  int n = b->n_ops;
  double total = 0;
  int64_t macs = 0;
  for (int i = 0; i < n; ++i) {
    total += b->ops[i].avg_ms;
    macs += b->ops[i].macs;
  }
  const op_rec **order = calloc((size_t)n + 1, sizeof(*order));
  type_rec *types = calloc((size_t)n + 1, sizeof(*types));
  double *gs = calloc((size_t)rounds, sizeof(double));
  if (!order || !types || !gs) {
    free(order);
    free(types);
    free(gs);
    return fail("out of memory");
  }
  for (int i = 0; i < n; ++i) order[i] = &b->ops[i];
  print_ops("Sort by Run Order", order, n, total);
  qsort(order, (size_t)n, sizeof(*order), by_time_desc);
  print_ops("Sort by Computation Time", order, n < TOP_N ? n : TOP_N, total);

  int nt = 0;
  for (int i = 0; i < n; ++i) {
    int k = 0;
    while (k < nt && strcmp(types[k].type, b->ops[i].type) != 0) ++k;
    if (k == nt) types[nt++].type = b->ops[i].type;
    types[k].count++;
    types[k].ms += b->ops[i].avg_ms;
    types[k].macs += b->ops[i].macs;
  }
  qsort(types, (size_t)nt, sizeof(*types), type_by_time_desc);
  static const char *const kTypeHeads[] = {"Op Type", "Count", "Avg(ms)", "%", "cdf%", "MACs",
                                           "GMACPS", "Called times"};
  table t;
  table_init(&t, "Stat by Op Type", kTypeHeads, 8, 1, 8);
  double cdf = 0;
  for (int k = 0; k < nt; ++k) {
    double pct = total > 0 ? 100.0 * types[k].ms / total : 0;
    char num[64];
    cdf += pct;
    table_cell(&t, "%s", types[k].type);
    table_cell(&t, "%d", types[k].count);
    table_cell(&t, "%.3f", types[k].ms);
    table_cell(&t, "%.3f", pct);
    table_cell(&t, "%.3f", cdf);
    table_cell(&t, "%s", with_commas(types[k].macs, num, sizeof(num)));
    table_cell(&t, "%.3f", types[k].ms > 0 ? (double)types[k].macs / (types[k].ms * 1e6) : 0.0);
    table_cell(&t, "%d", types[k].count * rounds);
  }
  table_print(&t);

  for (int r = 0; r < rounds; ++r)
    gs[r] = b->op_round_ms[r] > 0 ? (double)macs / (b->op_round_ms[r] * 1e6) : 0;
  double avg_ms = mean_of(b->op_round_ms, rounds);
  static const char *const kMacHeads[] = {"total", "round", "first(G/s)", "avg(G/s)", "std"};
  char num[64];
  table_init(&t, "Stat by MACs(Multiply-Accumulation)", kMacHeads, 5, 0, 5);
  table_cell(&t, "%s", with_commas(macs, num, sizeof(num)));
  table_cell(&t, "%d", rounds);
  table_cell(&t, "%.3f", gs[0]);
  table_cell(&t, "%.3f", avg_ms > 0 ? (double)macs / (avg_ms * 1e6) : 0.0);
  table_cell(&t, "%.3f", std_of(gs, rounds));
  table_print(&t);
  print_summary("Summary of Ops' Stat", b->op_round_ms, rounds);

  mace_memory_stat m;
  if (mace_engine_memory_stat(b->engine, &m) == MACE_OK) {
    static const char *const kMemHeads[] = {"planned(bytes)", "naive(bytes)", "saved%",
                                            "weights(bytes)"};
    table_init(&t, "Peak Intermediate Memory", kMemHeads, 4, 0, 4);
    table_cell(&t, "%s", with_commas(m.arena_bytes, num, sizeof(num)));
    table_cell(&t, "%s", with_commas(m.naive_bytes, num, sizeof(num)));
    table_cell(&t, "%.1f", m.naive_bytes > 0 ? 100.0 * (1.0 - (double)m.arena_bytes / (double)m.naive_bytes) : 0.0);
    table_cell(&t, "%s", with_commas(m.weights_bytes, num, sizeof(num)));
    table_print(&t);
  }
  printf("model: %d ops, %s MACs\n", n, with_commas(macs, num, sizeof(num)));
  free(order);
  free(types);
  free(gs);
  return 0;
}

int main(int argc, char **argv) {
  options o;
  int done;
  int rc = parse_args(argc, argv, &o, &done);
  if (rc != 0 || done) return rc;
  char guess[4096];
  const char *weights = o.weights;
  if (!weights) {
    const char *dot = strrchr(o.model, '.');
    size_t stem = dot && !strchr(dot, '/') ? (size_t)(dot - o.model) : strlen(o.model);
    if (stem + 6 < sizeof(guess)) {
      snprintf(guess, sizeof(guess), "%.*s.data", (int)stem, o.model);
      FILE *f = fopen(guess, "rb");
      if (f) {
        fclose(f);
        weights = guess;
      }
    }
  }
  bench b;
  memset(&b, 0, sizeof(b));
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = o.num_threads;
  const double load_t0 = now_ms();
  if (mace_engine_create_from_files(o.model, weights, &cfg, &b.engine) != MACE_OK) {
    rc = fail("cannot load %s: %s", o.model, mace_last_error());
    b.engine = NULL;
    goto done;
  }
  const double load_ms = now_ms() - load_t0;  /* read/map, parse, pack the filters, plan */
  printf("mace %s, model %s, num_threads=%d, rounds=%d, warmup=%d, load %.3f ms\n",
         mace_version(), o.model, o.num_threads, o.rounds, o.warmup, load_ms);
  if ((rc = prepare_io(&b, o.seed)) != 0) goto done;
  if ((rc = measure(&b, &o)) != 0) goto done;
  print_summary("Warm Up", b.warm_ms, o.warmup);
  print_summary("Run without statistics", b.plain_ms, o.rounds);
  print_summary("Run with statistics", b.prof_ms, o.rounds);
  rc = print_report(&b, o.rounds);
done:
  bench_free(&b);
  return rc;
}
