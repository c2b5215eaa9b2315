/* Conv3D: grouped 3-D convolution over NCDHW (ONNX Conv on 5-D input), f32, direct. */
/*
 * Inputs:  0 x     [N, C_in, D, H, W] (f32)
 *          1 w     [C_out, C_in / group, kD, kH, kW] (f32)
 *          2 bias  [C_out] (f32), optional
 * Output:  0 y     [N, C_out, D_out, H_out, W_out]
 * Arguments:
 *   group              int, default 1: C_in and C_out are multiples of it
 *   strides, dilations ints [D, H, W], default 1
 *   padding_values     ints [d, h, w begin, d, h, w end], default 0 (the converter resolves
 *                      ONNX's auto_pad into these)
 * With a SIMD GEMM family (runtime/cpu/gemm_dispatch.h) each output depth slice of each group is one
 * GEMM: the filter [C_out / group, K] times the slice's im2col [K, H_out * W_out] (K = C_in /
 * group * kD * kH * kW) in the scratch; under MACE_CPU_ISA=ref the direct reference loop
 * (kernels/cpu/ref/window3d.h), threaded over output rows.
 */
#include "core/op.h"
#include "kernels/cpu/ref/window3d.h"
#include "runtime/cpu/gemm_dispatch.h"
#include "ops/window3d.h"

#define CONV3D_GRAIN 16384

typedef struct conv3d_state {
  int64_t group;
  mace_window3d g;
  const mace_gemm_family *gemm; /* NULL: the direct loop */
  int64_t gk, gn;               /* GEMM K and N (one output depth slice) */
  size_t col_bytes;             /* the im2col slice at the start of the scratch */
} conv3d_state;

static mace_status conv3d_infer(mace_op *op) {
  conv3d_state *s = (conv3d_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  s->group = mace_op_arg_int(op, "group", 1);
  if (w->ndim != 5 || x->ndim != 5 || s->group < 1 || x->dims[1] % s->group != 0 ||
      w->dims[0] % s->group != 0 || w->dims[1] * s->group != x->dims[1])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv3D): input '%s' (rank %d, %lld channels), "
                      "filter '%s' (rank %d) and group %lld do not fit: the filter must be "
                      "[C_out, C_in / group, kD, kH, kW]", op->name, x->name, x->ndim,
                      (long long)(x->ndim > 1 ? x->dims[1] : 0), w->name, w->ndim,
                      (long long)s->group);
  if (b != NULL) {
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
    if (mace_tensor_numel(b) != w->dims[0])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv3D): bias '%s' has %lld values for %lld "
                        "output channels", op->name, b->name, (long long)mace_tensor_numel(b),
                        (long long)w->dims[0]);
  }
  MACE_RETURN_IF_ERROR(mace_window3d_infer(op, "Conv3D", x, w->dims + 2, 0, &s->g));
  const int64_t dims[5] = {x->dims[0], w->dims[0], s->g.out[0], s->g.out[1], s->g.out[2]};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 5));
  op->macs = mace_tensor_numel(op->outputs[0]) * mace_tensor_numel(w) / w->dims[0];
  op->scratch_bytes = 0;
  s->gemm = mace_gemm_family_active();
  if (s->gemm != NULL) {
    s->gk = w->dims[1] * w->dims[2] * w->dims[3] * w->dims[4];
    s->gn = s->g.out[1] * s->g.out[2];
    s->col_bytes = ((size_t)(s->gk * s->gn) * sizeof(float) + 63) / 64 * 64;
    op->scratch_bytes = s->col_bytes +
                        mace_gemm_scratch_bytes(s->gemm, w->dims[0] / s->group, s->gn, s->gk, 0,
                                                0, mace_threadpool_size(op->pool));
  }
  return MACE_OK;
}

/* im2col of one output depth slice z of image n, group gi: rows [begin, end) of K. */
typedef struct {
  const conv3d_state *s;
  const float *x; /* image n, the group's first input channel */
  float *col;
  int64_t z;
} conv3d_col_job;

static void conv3d_col_range(void *ctx, int64_t begin, int64_t end) {
  const conv3d_col_job *j = (const conv3d_col_job *)ctx;
  const mace_window3d *g = &j->s->g;
  const int64_t kd = g->k[0], kh = g->k[1], kw = g->k[2];
  const int64_t oh = g->out[1], ow = g->out[2];
  for (int64_t r = begin; r < end; ++r) {
    const int64_t c = r % kw, b = (r / kw) % kh, a = (r / (kw * kh)) % kd, ic = r / (kw * kh * kd);
    const int64_t zi = j->z * g->s[0] - g->pad_begin[0] + a * g->d[0];
    float *row = j->col + r * oh * ow;
    if (zi < 0 || zi >= g->in[0]) {
      for (int64_t p = 0; p < oh * ow; ++p) row[p] = 0.0f;
      continue;
    }
    const float *plane = j->x + (ic * g->in[0] + zi) * g->in[1] * g->in[2];
    for (int64_t v = 0; v < oh; ++v) {
      const int64_t vi = v * g->s[1] - g->pad_begin[1] + b * g->d[1];
      for (int64_t u = 0; u < ow; ++u) {
        const int64_t ui = u * g->s[2] - g->pad_begin[2] + c * g->d[2];
        row[v * ow + u] = vi >= 0 && vi < g->in[1] && ui >= 0 && ui < g->in[2]
                              ? plane[vi * g->in[2] + ui]
                              : 0.0f;
      }
    }
  }
}

static void conv3d_run_gemm(mace_op *op, const conv3d_state *s) {
  const float *x = (const float *)op->inputs[0]->data, *w = (const float *)op->inputs[1]->data;
  const float *bias = op->n_inputs > 2 ? (const float *)op->inputs[2]->data : NULL;
  float *y = (float *)op->outputs[0]->data, *col = (float *)op->scratch;
  void *gemm_scratch = (char *)op->scratch + s->col_bytes;
  const mace_tensor *xt = op->inputs[0], *yt = op->outputs[0];
  const int64_t c_in = xt->dims[1], c_out = yt->dims[1], od = yt->dims[2];
  const int64_t cig = c_in / s->group, cog = c_out / s->group;
  const int64_t in_vol = xt->dims[2] * xt->dims[3] * xt->dims[4];
  for (int64_t n = 0; n < xt->dims[0]; ++n) {
    for (int64_t gi = 0; gi < s->group; ++gi) {
      for (int64_t z = 0; z < od; ++z) {
        conv3d_col_job cj = {s, x + (n * c_in + gi * cig) * in_vol, col, z};
        mace_threadpool_parallel_for(op->pool, s->gk, 1 + CONV3D_GRAIN / (s->gn + 1),
                                     conv3d_col_range, &cj);
        mace_gemm_args g = {.f = s->gemm, .m = cog, .n = s->gn, .k = s->gk,
                            .a = w + gi * cog * s->gk, .a_rs = s->gk, .a_cs = 1,
                            .b = col, .b_rs = s->gn, .b_cs = 1,
                            .c = y + ((n * c_out + gi * cog) * od + z) * s->gn,
                            .ldc = od * s->gn,
                            .bias = bias ? bias + gi * cog : NULL, .bias_per_row = 1};
        mace_gemm_run(op->pool, &g, gemm_scratch);
      }
    }
  }
}

typedef struct {
  const conv3d_state *s;
  const mace_op *op;
} conv3d_job;

static void conv3d_range(void *ctx, int64_t begin, int64_t end) {
  const conv3d_job *j = (const conv3d_job *)ctx;
  const mace_op *op = j->op;
  mace_f32_conv3d__ref((const float *)op->inputs[0]->data, (const float *)op->inputs[1]->data,
                       op->n_inputs > 2 ? (const float *)op->inputs[2]->data : NULL,
                       (float *)op->outputs[0]->data, &j->s->g, op->inputs[0]->dims[1],
                       op->inputs[1]->dims[0], j->s->group, begin, end);
}

static mace_status conv3d_run(mace_op *op) {
  const conv3d_state *s = (const conv3d_state *)op->state;
  const mace_tensor *y = op->outputs[0];
  if (s->gemm != NULL) {
    if (mace_tensor_numel(y) > 0) conv3d_run_gemm(op, s);
    return MACE_OK;
  }
  const int64_t rows = y->dims[0] * y->dims[1] * y->dims[2];
  const int64_t per_row = rows > 0 ? op->macs / rows : 0;
  conv3d_job job = {s, op};
  if (rows > 0)
    mace_threadpool_parallel_for(op->pool, rows, 1 + CONV3D_GRAIN / (per_row + 1), conv3d_range,
                                 &job);
  return MACE_OK;
}

const mace_op_kind mace_op_conv3d_f32 = {.type = "Conv3D", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F32, .state_size = sizeof(conv3d_state),
                                         .infer = conv3d_infer, .run = conv3d_run};
