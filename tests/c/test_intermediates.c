/* Test of the public API's intermediate tensors (mace_engine_keep_tensors and friends) and of
 * the two-step run (mace_engine_bind_inputs, mace_engine_run_bound) on a MobileNetV2-like chain
 * of six convolutions, 10 and 20 channels (a channel tail under every NCHWc block): with the
 * blocked-layout pass on, the chain's inner tensors exist only blocked ("<name>@nchwc") and
 * must come back under the model's names, as NCHW. Every kept tensor is compared with a plain C
 * reference of the same convolutions (|got - ref| <= 1e-4 * (1 + max |ref|): the same sums in
 * another order). Also: the outputs do not change when tensors are kept, the arena grows while
 * they are and returns to its size after, and bad names, reads before a run or after a release,
 * short buffers and a run_bound with nothing bound are errors with messages. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mace.pb-c.h"
#include "mace/mace.h"
#include "test_util.h"

#define C 10
#define E 20
#define H 6
#define W 5

/* ---- the model: a NetDef built with protobuf-c, weights in one 64-byte aligned blob ------- */

enum { MAX_OPS = 8, MAX_CONSTS = 16 };

typedef struct conv_spec {
  const char *name, *x, *y, *res, *act;
  int cin, cout, k, group;
} conv_spec;

/* x -> pw1 (1x1, RELU) e1 -> dw1 (3x3 depthwise, RELU) d1 -> pw2 (1x1, + x) p2 -> pw3 (1x1,
 * RELU) e3 -> dw3 (3x3 depthwise) d3 -> pw4 (1x1) y */
static const conv_spec kConvs[] = {
    {"pw1", "x", "e1", NULL, "RELU", C, E, 1, 1},  {"dw1", "e1", "d1", NULL, "RELU", E, E, 3, E},
    {"pw2", "d1", "p2", "x", NULL, E, C, 1, 1},    {"pw3", "p2", "e3", NULL, "RELU", C, E, 1, 1},
    {"dw3", "e3", "d3", NULL, NULL, E, E, 3, E},   {"pw4", "d3", "y", NULL, NULL, E, C, 1, 1}};
enum { N_CONVS = sizeof(kConvs) / sizeof(kConvs[0]) };

typedef struct model {
  Mace__NetDef def;
  Mace__OperatorDef ops[MAX_OPS], *op_ptrs[MAX_OPS];
  Mace__ConstTensor consts[MAX_CONSTS], *const_ptrs[MAX_CONSTS];
  int64_t const_dims[MAX_CONSTS][4];
  Mace__Argument args[MAX_OPS][4], *arg_ptrs[MAX_OPS][4];
  char *ins[MAX_OPS][4], *outs[MAX_OPS][1];
  char names[MAX_CONSTS][16];
  float *blob;
  size_t blob_floats;
  const float *w[N_CONVS], *b[N_CONVS];  /* into blob */
  uint8_t *graph;
  size_t graph_size;
} model;

static const float *add_const(model *m, const char *op, const char *what, int64_t d0, int64_t d1,
                              int64_t d2, int64_t d3, int ndim, float scale, unsigned *seed) {
  const size_t i = m->def.n_tensors;
  Mace__ConstTensor *t = &m->consts[i];
  mace__const_tensor__init(t);
  const int64_t all[4] = {d0, d1, d2, d3};
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= m->const_dims[i][d] = all[d];
  snprintf(m->names[i], sizeof(m->names[i]), "%s_%s", op, what);
  t->name = m->names[i];
  t->n_dims = (size_t)ndim;
  t->dims = m->const_dims[i];
  t->has_data_type = 1;
  t->data_type = MACE__DATA_TYPE__DT_FLOAT;
  t->has_offset = 1;
  t->offset = (int64_t)(m->blob_floats * sizeof(float));
  t->has_data_size = 1;
  t->data_size = n * (int64_t)sizeof(float);
  float *data = m->blob + m->blob_floats;
  for (int64_t k = 0; k < n; ++k) data[k] = scale * frand(seed);
  m->blob_floats += ((size_t)n + 15) / 16 * 16;
  m->const_ptrs[m->def.n_tensors++] = t;
  return data;
}

static Mace__Argument *add_arg(model *m, int op, const char *name) {
  Mace__OperatorDef *od = &m->ops[op];
  Mace__Argument *a = &m->args[op][od->n_arg];
  mace__argument__init(a);
  a->name = (char *)name;
  m->arg_ptrs[op][od->n_arg++] = a;
  od->arg = m->arg_ptrs[op];
  return a;
}

static void build_model(model *m) {
  static int64_t strides[2] = {1, 1}, pads1[4] = {1, 1, 1, 1}, pads0[4] = {0, 0, 0, 0};
  static int64_t xdims[4] = {1, C, H, W};
  static Mace__InputOutputInfo in, out, *in_p[1], *out_p[1];
  unsigned seed = 7u;
  memset(m, 0, sizeof(*m));
  mace__net_def__init(&m->def);
  m->blob = aligned_alloc(64, sizeof(float) * 8192);
  m->def.tensors = m->const_ptrs;
  m->def.op = m->op_ptrs;
  for (int i = 0; i < N_CONVS; ++i) {
    const conv_spec *cs = &kConvs[i];
    Mace__OperatorDef *od = &m->ops[i];
    mace__operator_def__init(od);
    od->type = "Conv2D";
    od->name = (char *)cs->name;
    const int cpg = cs->cin / cs->group;
    m->w[i] = add_const(m, cs->name, "w", cs->cout, cpg, cs->k, cs->k, 4,
                        1.0f / sqrtf((float)(cpg * cs->k * cs->k)), &seed);
    m->b[i] = add_const(m, cs->name, "b", cs->cout, 0, 0, 0, 1, 0.5f, &seed);
    m->ins[i][0] = (char *)cs->x;
    m->ins[i][1] = m->names[m->def.n_tensors - 2];
    m->ins[i][2] = m->names[m->def.n_tensors - 1];
    m->ins[i][3] = (char *)cs->res;
    od->input = m->ins[i];
    od->n_input = cs->res ? 4 : 3;
    m->outs[i][0] = (char *)cs->y;
    od->output = m->outs[i];
    od->n_output = 1;
    Mace__Argument *a = add_arg(m, i, "strides");
    a->n_ints = 2;
    a->ints = strides;
    a = add_arg(m, i, "padding_values");
    a->n_ints = 4;
    a->ints = cs->k == 3 ? pads1 : pads0;
    if (cs->group > 1) {
      a = add_arg(m, i, "group");
      a->has_i = 1;
      a->i = cs->group;
    }
    if (cs->act) {
      a = add_arg(m, i, "activation");
      a->has_s = 1;
      a->s.data = (uint8_t *)cs->act;
      a->s.len = strlen(cs->act);
    }
    m->op_ptrs[m->def.n_op++] = od;
  }
  mace__input_output_info__init(&in);
  in.name = "x";
  in.n_dims = 4;
  in.dims = xdims;
  in.has_data_type = 1;
  in.data_type = MACE__DATA_TYPE__DT_FLOAT;
  in_p[0] = &in;
  mace__input_output_info__init(&out);
  out.name = "y";
  out.has_data_type = 1;
  out.data_type = MACE__DATA_TYPE__DT_FLOAT;
  out_p[0] = &out;
  m->def.input_info = in_p;
  m->def.n_input_info = 1;
  m->def.output_info = out_p;
  m->def.n_output_info = 1;
  m->def.has_weights_size = 1;
  m->def.weights_size = (int64_t)(m->blob_floats * sizeof(float));
  m->graph_size = mace__net_def__get_packed_size(&m->def);
  m->graph = malloc(m->graph_size);
  mace__net_def__pack(&m->def, m->graph);
}

/* ---- the oracle: the same convolutions as plain loops ------------------------------------- */

typedef struct ref_tensor {
  const char *name;
  int c;
  float data[E * H * W];
} ref_tensor;

static ref_tensor g_ref[N_CONVS + 1];  /* x, then each convolution's output */

static const ref_tensor *ref_find(const char *name) {
  for (int i = 0; i <= N_CONVS; ++i)
    if (g_ref[i].name && strcmp(g_ref[i].name, name) == 0) return &g_ref[i];
  return NULL;
}

static void reference(const model *m, const float *x) {
  g_ref[0].name = "x";
  g_ref[0].c = C;
  memcpy(g_ref[0].data, x, sizeof(float) * C * H * W);
  for (int i = 0; i < N_CONVS; ++i) {
    const conv_spec *cs = &kConvs[i];
    const ref_tensor *in = ref_find(cs->x), *res = cs->res ? ref_find(cs->res) : NULL;
    ref_tensor *out = &g_ref[i + 1];
    out->name = cs->y;
    out->c = cs->cout;
    const int cpg = cs->cin / cs->group, opg = cs->cout / cs->group, pad = cs->k / 2;
    for (int o = 0; o < cs->cout; ++o)
      for (int y = 0; y < H; ++y)
        for (int xx = 0; xx < W; ++xx) {
          double acc = m->b[i][o];
          const int g = o / opg;
          for (int ci = 0; ci < cpg; ++ci)
            for (int ky = 0; ky < cs->k; ++ky)
              for (int kx = 0; kx < cs->k; ++kx) {
                const int iy = y + ky - pad, ix = xx + kx - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += (double)m->w[i][((o * cpg + ci) * cs->k + ky) * cs->k + kx] *
                       in->data[((g * cpg + ci) * H + iy) * W + ix];
              }
          if (res) acc += res->data[(o * H + y) * W + xx];
          if (cs->act && acc < 0) acc = 0;
          out->data[(o * H + y) * W + xx] = (float)acc;
        }
  }
}

/* Whether n floats match the reference tensor `name`. */
static int matches(const char *name, const float *got, int64_t n) {
  const ref_tensor *r = ref_find(name);
  if (!r || n != (int64_t)r->c * H * W) return 0;
  double mx = 0, err = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = fabs((double)r->data[i]), d = fabs((double)got[i] - r->data[i]);
    if (a > mx) mx = a;
    if (!(d <= err)) err = d;
  }
  if (!(err <= 1e-4 * (1.0 + mx))) fprintf(stderr, "%s: max error %.3g\n", name, err);
  return err <= 1e-4 * (1.0 + mx);
}

/* ---- the checks ---------------------------------------------------------------------------- */

static mace_status run(mace_engine *eng, const float *x, float *y) {
  mace_io in = {"x", (void *)x, 4, {1, C, H, W}, MACE_DT_F32, MACE_DF_NCHW, 0};
  mace_io out = {"y", y, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0};
  return mace_engine_run(eng, &in, 1, &out, 1);
}

static int64_t arena_bytes(const mace_engine *eng) {
  mace_memory_stat ms;
  return mace_engine_memory_stat(eng, &ms) == MACE_OK ? ms.arena_bytes : -1;
}

/* Reads every kept tensor and checks it against the reference; returns how many matched. */
static int check_kept(mace_engine *eng) {
  int ok = 0;
  for (int i = 0; i < mace_engine_num_kept_tensors(eng); ++i) {
    mace_tensor_info info;
    CHECK(mace_engine_kept_tensor_info(eng, i, &info) == MACE_OK, "%s", mace_last_error());
    const int64_t n = mace_tensor_info_numel(&info);
    CHECK(info.dtype == MACE_DT_F32 && info.ndim == 4 && info.dims[0] == 1 && info.dims[2] == H &&
              info.dims[3] == W && !strstr(info.name, "@"),
          "kept '%s': dtype %d rank %d", info.name, (int)info.dtype, info.ndim);
    float *buf = malloc(sizeof(float) * (size_t)n);
    CHECK(mace_engine_read_kept_tensor(eng, i, buf, sizeof(float) * (size_t)(n - 1)) ==
                  MACE_INVALID_ARGS && strstr(mace_last_error(), info.name),
          "a short buffer for '%s' was accepted", info.name);
    mace_status st = mace_engine_read_kept_tensor(eng, i, buf, sizeof(float) * (size_t)n);
    CHECK(st == MACE_OK, "read '%s': %s", info.name, mace_last_error());
    if (st == MACE_OK && matches(info.name, buf, n))
      ++ok;
    else
      CHECK(0, "kept '%s' differs from the reference", info.name);
    free(buf);
  }
  return ok;
}

int main(void) {
  model m;
  build_model(&m);
  float x[C * H * W], y0[C * H * W], y1[C * H * W];
  unsigned seed = 3u;
  for (int i = 0; i < C * H * W; ++i) x[i] = frand(&seed);
  reference(&m, x);

  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = 1;
  mace_engine *eng = NULL;
  mace_status st = mace_engine_create_from_buffers(m.graph, m.graph_size, m.blob,
                                                   m.blob_floats * sizeof(float), &cfg, &eng);
  CHECK(st == MACE_OK, "create: %s", mace_last_error());
  if (st != MACE_OK) return 1;

  CHECK(run(eng, x, y0) == MACE_OK, "run: %s", mace_last_error());
  CHECK(matches("y", y0, C * H * W), "output y");
  const int64_t arena0 = arena_bytes(eng);
  CHECK(mace_engine_num_kept_tensors(eng) == 0, "kept before any keep");

  /* Every tensor a run computes, under the model's names. */
  CHECK(mace_engine_keep_tensors(eng, NULL, MACE_KEEP_ALL) == MACE_OK, "%s", mace_last_error());
  CHECK(mace_engine_num_kept_tensors(eng) == N_CONVS, "%d kept, want %d",
        mace_engine_num_kept_tensors(eng), N_CONVS);
  float buf[E * H * W];
  CHECK(mace_engine_read_kept_tensor(eng, 0, buf, sizeof(buf)) == MACE_INVALID_ARGS &&
            strstr(mace_last_error(), "run"),
        "a read before the run: %s", mace_last_error());
  const int64_t arena_all = arena_bytes(eng);
  CHECK(arena_all > arena0, "keeping everything: arena %lld, normally %lld",
        (long long)arena_all, (long long)arena0);
  CHECK(run(eng, x, y1) == MACE_OK, "run: %s", mace_last_error());
  CHECK(memcmp(y0, y1, sizeof(y0)) == 0, "the output changed with every tensor kept");
  CHECK(check_kept(eng) == N_CONVS, "every kept tensor matches");
  for (int i = 0; i < N_CONVS; ++i) {
    mace_tensor_info info;
    CHECK(mace_engine_kept_tensor_info(eng, i, &info) == MACE_OK &&
              strcmp(info.name, kConvs[i].y) == 0,
          "kept %d is '%s', want '%s' (execution order)", i, info.name, kConvs[i].y);
  }
  /* Released: nothing to read until the next run. */
  CHECK(mace_engine_release_intermediate_buffers(eng) == MACE_OK, "%s", mace_last_error());
  CHECK(mace_engine_read_kept_tensor(eng, 0, buf, sizeof(buf)) == MACE_INVALID_ARGS,
        "a read after the release was accepted");

  /* A chosen list, the model input among them, read through the two-step run. */
  const char *names[] = {"d1", "x", "d1", "p2"};
  CHECK(mace_engine_keep_tensors(eng, names, 4) == MACE_OK, "%s", mace_last_error());
  CHECK(mace_engine_num_kept_tensors(eng) == 3, "%d kept, want 3 (d1 once)",
        mace_engine_num_kept_tensors(eng));
  mace_io in = {"x", x, 4, {1, C, H, W}, MACE_DT_F32, MACE_DF_NCHW, 0};
  mace_io out = {"y", y1, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0};
  CHECK(mace_engine_run_bound(eng, &out, 1) == MACE_INVALID_ARGS &&
            strstr(mace_last_error(), "mace_engine_bind_inputs"),
        "run_bound with nothing bound: %s", mace_last_error());
  CHECK(mace_engine_bind_inputs(eng, &in, 1) == MACE_OK, "%s", mace_last_error());
  mace_tensor_info oi;
  CHECK(mace_engine_output_info(eng, 0, &oi) == MACE_OK && mace_tensor_info_numel(&oi) == C * H * W,
        "output info after bind");
  memset(y1, 0, sizeof(y1));
  CHECK(mace_engine_run_bound(eng, &out, 1) == MACE_OK, "%s", mace_last_error());
  CHECK(memcmp(y0, y1, sizeof(y0)) == 0, "the output changed with three tensors kept");
  CHECK(mace_engine_run_bound(eng, &out, 1) == MACE_INVALID_ARGS, "a second run_bound ran");
  CHECK(check_kept(eng) == 3, "the three kept tensors match");

  /* Bad names leave the previous set as it was. */
  const char *bad[] = {"d1", "no_such_tensor"};
  CHECK(mace_engine_keep_tensors(eng, bad, 2) == MACE_INVALID_ARGS &&
            strstr(mace_last_error(), "no_such_tensor"),
        "unknown name: %s", mace_last_error());
  const char *weight[] = {"pw1_w"};
  CHECK(mace_engine_keep_tensors(eng, weight, 1) == MACE_INVALID_ARGS &&
            strstr(mace_last_error(), "pw1_w"),
        "a constant: %s", mace_last_error());
  CHECK(mace_engine_keep_tensors(eng, NULL, 1) == MACE_INVALID_ARGS, "NULL names accepted");
  CHECK(mace_engine_num_kept_tensors(eng) == 3, "the set changed on a failed call");
  CHECK(mace_engine_kept_tensor_info(eng, 3, &oi) == MACE_INVALID_ARGS, "index 3 accepted");

  /* Nothing kept: the normal plan and arena again. */
  CHECK(mace_engine_keep_tensors(eng, NULL, 0) == MACE_OK, "%s", mace_last_error());
  CHECK(mace_engine_num_kept_tensors(eng) == 0 && arena_bytes(eng) == arena0,
        "after keeping nothing: arena %lld, want %lld", (long long)arena_bytes(eng),
        (long long)arena0);
  CHECK(run(eng, x, y1) == MACE_OK && memcmp(y0, y1, sizeof(y0)) == 0, "run after");
  CHECK(mace_engine_keep_tensors(NULL, NULL, 0) == MACE_INVALID_ARGS, "NULL engine");
  CHECK(mace_engine_num_kept_tensors(NULL) == 0, "NULL engine");

  mace_engine_destroy(eng);
  free(m.graph);
  free(m.blob);
  return TEST_FINISH("%ld checks", test_checks);
}
