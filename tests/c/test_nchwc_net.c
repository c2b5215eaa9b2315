/* End-to-end test of the blocked-layout pass (runtime/cpu/layout.h) on the net: a MobileNetV2-like
 * chain (pointwise expand + RELUX, depthwise 3x3 stride 1 and 2 with asymmetric padding,
 * pointwise project with the residual fused as Conv2D's input 3, a LEAKYRELU Activation op),
 * one mid-chain tensor also a model output, over 2 images, twice: with 16 and 48 channels (a
 * multiple of every block) and with 10 and 30 (a channel tail under every block, padded with
 * zeros: kernels/cpu/nchwc.h). The net is built with the pass on
 * (whatever block the active ISA uses: 16 AVX-512, 8 AVX2, 4 NEON, none for ref) and again
 * with MACE_NCHWC=0, and both runs at 1 and 2 threads must agree:
 * |on - off| <= 2e-5 * (1 + max |off|) (the same sums in another order: f32 roundings of
 * at most ~300 terms of magnitude <= 1). With a block, the op list must hold the Reorders
 * (one in, two out), the blocked tensors are named "<name>@nchwc" and their storage is the
 * padded [N, ceil(C / b), H, W, b]. The input is read in place from the caller's array
 * (mace_net_borrow), bound again by mace_net_prepare. Under ASan the pass's
 * protobuf-c allocations and the kernels' reads are checked too. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/layout.h"
#include "core/net.h"
#include "mace.pb-c.h"
#include "test_util.h"

static int64_t C, E;  /* channels, expanded: each configuration of main */
#define H 9
#define W 7
#define N 2


typedef struct builder {
  Mace__NetDef def;
  Mace__OperatorDef ops[10], *op_ptrs[10];
  Mace__ConstTensor consts[16], *const_ptrs[16];
  int64_t const_dims[16][4];
  Mace__Argument args[10][6], *arg_ptrs[10][6];
  char *ins[10][4], *outs[10][1];
  float *blob;
  size_t blob_floats;
  unsigned seed;
} builder;

static char *add_const(builder *b, const char *name, int64_t d0, int64_t d1, int64_t d2,
                       int64_t d3, int ndim, float scale) {
  Mace__ConstTensor *t = &b->consts[b->def.n_tensors];
  mace__const_tensor__init(t);
  int64_t *dims = b->const_dims[b->def.n_tensors];
  const int64_t all[4] = {d0, d1, d2, d3};
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= dims[i] = all[i];
  t->name = (char *)name;
  t->n_dims = (size_t)ndim;
  t->dims = dims;
  t->has_data_type = 1;
  t->data_type = MACE__DATA_TYPE__DT_FLOAT;
  t->has_offset = 1;
  t->offset = (int64_t)(b->blob_floats * sizeof(float));
  t->has_data_size = 1;
  t->data_size = n * (int64_t)sizeof(float);
  for (int64_t i = 0; i < n; ++i) b->blob[b->blob_floats + i] = scale * frand(&b->seed);
  b->blob_floats += ((size_t)n + 15) / 16 * 16;  /* the next one 64-byte aligned */
  b->const_ptrs[b->def.n_tensors++] = t;
  return (char *)name;
}

static Mace__Argument *add_arg(builder *b, int op, const char *name) {
  Mace__OperatorDef *od = &b->ops[op];
  Mace__Argument *a = &b->args[op][od->n_arg];
  mace__argument__init(a);
  a->name = (char *)name;
  b->arg_ptrs[op][od->n_arg++] = a;
  od->arg = b->arg_ptrs[op];
  return a;
}

static void arg_ints(builder *b, int op, const char *name, int64_t *v, size_t n) {
  Mace__Argument *a = add_arg(b, op, name);
  a->n_ints = n;
  a->ints = v;
}

static void arg_str(builder *b, int op, const char *name, const char *s) {
  Mace__Argument *a = add_arg(b, op, name);
  a->has_s = 1;
  a->s.data = (uint8_t *)s;
  a->s.len = strlen(s);
}

static int add_op(builder *b, const char *type, const char *name, char *const *in, int n_in,
                  const char *out) {
  const int i = (int)b->def.n_op;
  Mace__OperatorDef *od = &b->ops[i];
  mace__operator_def__init(od);
  od->type = (char *)type;
  od->name = (char *)name;
  for (int k = 0; k < n_in; ++k) b->ins[i][k] = in[k];
  od->input = b->ins[i];
  od->n_input = (size_t)n_in;
  b->outs[i][0] = (char *)out;
  od->output = b->outs[i];
  od->n_output = 1;
  b->op_ptrs[b->def.n_op++] = od;
  return i;
}

static int64_t g_pads_sym[4] = {1, 1, 1, 1}, g_pads_asym[4] = {0, 1, 2, 1};
static int64_t g_s1[2] = {1, 1}, g_s2[2] = {2, 2}, g_zero[4] = {0, 0, 0, 0};

static int add_conv(builder *b, const char *name, char *x, const char *y, int64_t cin,
                    int64_t cout, int k, int group, int64_t *strides, int64_t *pads, char *res,
                    const char *act) {
  static char wname[10][16], bname[10][16];
  const int i = (int)b->def.n_op;
  snprintf(wname[i], sizeof(wname[i]), "%s_w", name);
  snprintf(bname[i], sizeof(bname[i]), "%s_b", name);
  char *in[4] = {x, add_const(b, wname[i], cout, cin / group, k, k, 4,
                              1.0f / sqrtf((float)(cin / group * k * k))),
                 add_const(b, bname[i], cout, 0, 0, 0, 1, 0.5f), res};
  add_op(b, "Conv2D", name, in, res ? 4 : 3, y);
  arg_ints(b, i, "strides", strides, 2);
  arg_ints(b, i, "padding_values", pads, 4);
  if (group > 1) {
    Mace__Argument *a = add_arg(b, i, "group");
    a->has_i = 1;
    a->i = group;
  }
  if (act) arg_str(b, i, "activation", act);
  return i;
}

static void build(builder *b, uint8_t **graph, size_t *size) {
  memset(b, 0, sizeof(*b));
  mace__net_def__init(&b->def);
  b->seed = 7u;
  b->blob = malloc(sizeof(float) * 16384);
  b->def.tensors = b->const_ptrs;
  b->def.op = b->op_ptrs;
  /* pw1: x[16] -> e1[48] RELUX; dw1: 3x3 s1 -> d1 RELUX; pw2: d1 -> p2[16] + x (residual);
   * act: LEAKYRELU -> a2 (also an output); pw3: a2 -> e3[48]; dw3: 3x3 s2 asym pads -> d3;
   * pw4: d3 -> e4[48] RELU; dw4: 3x3 s1 -> y (seven convolutions: a chain keeps more than two
   * per Reorder, runtime/cpu/layout.c) */
  add_conv(b, "pw1", "x", "e1", C, E, 1, 1, g_s1, g_zero, NULL, "RELUX");
  add_conv(b, "dw1", "e1", "d1", E, E, 3, E, g_s1, g_pads_sym, NULL, "RELUX");
  add_conv(b, "pw2", "d1", "p2", E, C, 1, 1, g_s1, g_zero, "x", NULL);
  char *in_act[1] = {"p2"};
  const int act = add_op(b, "Activation", "act", in_act, 1, "a2");
  arg_str(b, act, "activation", "LEAKYRELU");
  Mace__Argument *alpha = add_arg(b, act, "leakyrelu_coefficient");
  alpha->has_f = 1;
  alpha->f = 0.125f;
  add_conv(b, "pw3", "a2", "e3", C, E, 1, 1, g_s1, g_zero, NULL, "RELU");
  add_conv(b, "dw3", "e3", "d3", E, E, 3, E, g_s2, g_pads_asym, NULL, NULL);
  add_conv(b, "pw4", "d3", "e4", E, E, 1, 1, g_s1, g_zero, NULL, "RELU");
  add_conv(b, "dw4", "e4", "y", E, E, 3, E, g_s1, g_pads_sym, NULL, NULL);
  static int64_t xdims[4];
  xdims[0] = N;
  xdims[1] = C;
  xdims[2] = H;
  xdims[3] = W;
  static Mace__InputOutputInfo in, out[2], *in_p[1], *out_p[2];
  mace__input_output_info__init(&in);
  in.name = "x";
  in.n_dims = 4;
  in.dims = xdims;
  in.has_data_type = 1;
  in.data_type = MACE__DATA_TYPE__DT_FLOAT;
  in_p[0] = &in;
  for (int i = 0; i < 2; ++i) {
    mace__input_output_info__init(&out[i]);
    out[i].name = i ? "a2" : "y";
    out[i].has_data_type = 1;
    out[i].data_type = MACE__DATA_TYPE__DT_FLOAT;
    out_p[i] = &out[i];
  }
  b->def.input_info = in_p;
  b->def.n_input_info = 1;
  b->def.output_info = out_p;
  b->def.n_output_info = 2;
  b->def.has_weights_size = 1;
  b->def.weights_size = (int64_t)(b->blob_floats * sizeof(float));
  *size = mace__net_def__get_packed_size(&b->def);
  *graph = malloc(*size);
  mace__net_def__pack(&b->def, *graph);
}

/* Runs the net on x; copies the outputs (y first, then a2) into out[0..1]. Returns the
 * number of Reorder ops, or -1 on error. */
static int run(const uint8_t *graph, size_t size, const uint8_t *weights, size_t wsize,
               int threads, const float *x, float *out[2], int64_t out_n[2]) {
  mace_threadpool *pool = NULL;
  mace_net *net = NULL;
  void *y_buf = NULL;
  int reorders = -1;
  if (mace_threadpool_create(threads, MACE_AFFINITY_NONE, &pool) != MACE_OK ||
      mace_net_create(graph, size, weights, wsize, pool, &net) != MACE_OK ||
      mace_net_prepare(net) != MACE_OK) {
    FAIL("net build: %s", mace_last_error());
    goto out;
  }
  /* The input is read in place from x (mace_net_borrow, as mace_engine_run does): the
   * tensor points at x for the run and back into the arena after it. */
  const int in = mace_net_input(net, 0)->tensor;
  mace_tensor *tx = mace_net_tensor(net, in);
  void *arena_x = tx->data;
  if (!mace_net_borrow(net, in, (void *)x) || tx->data != (const void *)x ||
      mace_net_prepare(net) != MACE_OK || tx->data != (const void *)x) {
    FAIL("the input is not read in place");
    goto out;
  }
  /* Output y (a Reorder's, or with the pass off a convolution's) is written in place into a
   * buffer of the caller's, as mace_engine_run does; the comparison below reads it there. */
  const int yi = mace_net_output(net, 0)->tensor;
  mace_tensor *ty = mace_net_tensor(net, yi);
  void *arena_y = ty->data;
  y_buf = malloc(mace_tensor_nbytes(ty));
  if (!y_buf || !mace_net_borrow(net, yi, y_buf) || mace_net_prepare(net) != MACE_OK ||
      ty->data != y_buf) {
    FAIL("output y is not written in place");
    goto out;
  }
  const mace_status st = mace_net_run(net);
  (void)mace_net_borrow(net, in, NULL);
  if (tx->data != arena_x) {
    FAIL("the input does not point back into the arena after the run");
  }
  if (st != MACE_OK) {
    FAIL("run: %s", mace_last_error());
    goto out;
  }
  for (int i = 0; i < 2; ++i) {
    const mace_tensor *t = mace_net_tensor_const(net, mace_net_output(net, i)->tensor);
    if (t->layout != MACE_LAYOUT_NCHW) {
      FAIL("output %d is not NCHW", i);
      goto out;
    }
    out_n[i] = mace_tensor_numel(t);
    out[i] = malloc(sizeof(float) * (size_t)out_n[i]);
    memcpy(out[i], t->data, sizeof(float) * (size_t)out_n[i]);
  }
  (void)mace_net_borrow(net, yi, NULL);
  if (ty->data != arena_y) {
    FAIL("output y does not point back into the arena after the run");
  }
  reorders = 0;
  for (int i = 0; i < mace_net_num_ops(net); ++i) {
    const mace_op *op = mace_net_op(net, i);
    if (strcmp(op->type, "Reorder") == 0) ++reorders;
    if (strcmp(op->type, "Conv2D") == 0 && reorders && !strstr(op->outputs[0]->name, "@nchwc")) {
      FAIL("blocked Conv2D '%s' writes '%s'", op->name, op->outputs[0]->name);
    }
    const mace_tensor *t = op->outputs[0];
    if (t->layout == MACE_LAYOUT_NCHWC) {
      const int64_t cp = (t->dims[1] + t->block - 1) / t->block * t->block;
      const int64_t want = t->dims[0] * cp * t->dims[2] * t->dims[3];
      if (mace_tensor_nbytes(t) != sizeof(float) * (size_t)want) {
        FAIL("blocked '%s' of %lld channels stores %zu bytes", t->name,
             (long long)t->dims[1], mace_tensor_nbytes(t));
      }
    }
  }
out:
  mace_net_destroy(net);
  mace_threadpool_destroy(pool);
  free(y_buf);
  return reorders;
}

/* max |ref| and max |got - ref| (a plain loop: gcc 12's aarch64 vectorizer crashes on the
 * fmax reductions inlined into main). */
static void max_abs(const float *ref, const float *got, int64_t n, double *mx, double *err) {
  for (int64_t i = 0; i < n; ++i) {
    const double r = fabs((double)ref[i]), d = fabs((double)got[i] - ref[i]);
    if (r > *mx) *mx = r;
    if (d > *err || d != d) *err = d;
  }
}

/* One configuration: C channels in and out, E expanded. */
static void check(int64_t c, int64_t e) {
  C = c;
  E = e;
  builder b;
  uint8_t *graph;
  size_t size;
  build(&b, &graph, &size);
  const size_t wsize = b.blob_floats * sizeof(float);
  float *x = malloc(sizeof(float) * (size_t)(N * C * H * W));
  unsigned seed = 3u;
  for (int64_t i = 0; i < N * C * H * W; ++i) x[i] = frand(&seed);
  const int block = mace_nchwc_block();
  float *off[2] = {NULL, NULL};
  int64_t off_n[2], on_n[2];
  setenv("MACE_NCHWC", "0", 1);
  const int r_off = run(graph, size, (const uint8_t *)b.blob, wsize, 1, x, off, off_n);
  CHECK(r_off == 0, "%lld/%lld channels, MACE_NCHWC=0: %d Reorder ops, want 0", (long long)C,
        (long long)E, r_off);
  unsetenv("MACE_NCHWC");
  for (int threads = 1; threads <= 2 && off[0]; ++threads) {
    float *on[2] = {NULL, NULL};
    const int r = run(graph, size, (const uint8_t *)b.blob, wsize, threads, x, on, on_n);
    if (r != (block ? 3 : 0)) {
      FAIL("%lld/%lld channels, block %d, %d threads: %d Reorder ops, want %d",
           (long long)C, (long long)E, block, threads, r, block ? 3 : 0);
    }
    for (int o = 0; o < 2 && on[o]; ++o) {
      double mx = 0.0, err = 0.0;
      max_abs(off[o], on[o], off_n[o], &mx, &err);
      if (on_n[o] != off_n[o] || !(err <= 2e-5 * (1.0 + mx))) {
        FAIL("%lld/%lld channels, output %d, block %d, %d threads: max error %.3g "
             "(max |y| %.3g)", (long long)C, (long long)E, o, block, threads, err, mx);
      }
    }
    free(on[0]);
    free(on[1]);
  }
  free(off[0]);
  free(off[1]);
  free(x);
  free(graph);
  free(b.blob);
}

int main(void) {
  check(16, 48);
  check(10, 30);  /* 10 % 4 = 2, 30 % 8 = 6, 30 % 16 = 14: every block has a tail */
  return TEST_FINISH("block %d", mace_nchwc_block());
}
