/* QLinearConv2D: int8 grouped 2-D convolution with requantized output (ONNX QLinearConv), NCHW. */
/*
 * Inputs (docs/int8.md): 0 x (u8 | i8) [N, C_in, H, W], 1 x_scale, 2 x_zero_point (x's dtype),
 *          3 w (i8, constant) [C_out, C_in / group, kH, kW], 4 w_scale (1 or C_out values),
 *          5 w_zero_point (i8, all 0), 6 y_scale, 7 y_zero_point (u8 | i8: y's dtype),
 *          8 bias (i32 [C_out], optional; scale x_scale * w_scale[c]; required with 9-13),
 *          9 r (y's dtype, y's shape), 10 r_scale, 11 r_zero_point, 12 z_scale, 13 z_zero_point
 *          (optional, all five or none: a residual QLinearAdd fused in, below). Scales and
 *          zero points are constants.
 * Output:  0 y (u8 | i8) [N, C_out, H_out, W_out]; with a residual, z = QLinearAdd(y, r)
 *          (scale z_scale, zero point z_zero_point) in its place.
 * Arguments: Conv2D's strides, dilations, padding_values, padding, group; activation NOOP |
 *   RELU | RELUX (max_limit), applied as the clamp of the requantization; with a residual,
 *   residual_activation NOOP | RELU, the Add's.
 * y = requant(bias[c] + sum w * (x - x_zp)), docs/int8.md, with M = x_scale * w_scale[c] /
 * y_scale. Each image and group is one int8 GEMM (runtime/cpu/qgemm_dispatch.h): M = C_out / group,
 * N = H_out * W_out, B = the input for 1x1 / stride 1 / no padding, else its im2col padded
 * with x's zero point, read by the GEMM's packer straight from the input (mace_qgemm_conv; a
 * padded convolution's input first copied into planes bordered with the zero point, split
 * into stride phases when strided, so that every panel row is a pointer into them: "flat");
 * stored in the scratch only where flat would compute too many extra columns. Depthwise convolutions (one input and output channel per group) are direct
 * (kernels/cpu/qdwconv.h, the active ISA's variant), a plane per work item.
 * The residual (the quantizer's rewrite of QLinearConv2D -> QLinearAdd, ResNet's and MobileNetV2's
 * shortcut): the convolution's bytes are computed as without it (y_scale, y_zero_point, the
 * activation's clamp), then QLinearAdd's formula (ops/qlinear_add.c) with a = those bytes and
 * b = r runs over each thread's chunk of them (mace_qgemm_residual; a depthwise plane at a
 * time), through the active ISA's q8_add kernel: the same bytes as the two ops.
 */
#include <string.h>

#include "core/op.h"
#include "ops/conv_pad.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/qgemm_dispatch.h"
#include "ops/qlinear.h"
#include "runtime/cpu/simd_dispatch.h"

/* A thread's share of the bordered copy should be at least this many bytes. */
#define QCONV_COPY_GRAIN 32768

typedef struct qconv_state {
  int64_t strides[2], dilations[2], pads[4], group;
  mace_pad_mode mode;
  mace_activation act;
  /* set by infer */
  int64_t n, c_in, h, w, c_out, oh, ow, kh, kw, pad_t, pad_l;
  int64_t gm, gn, gk; /* per group: C_out / g, H_out * W_out, C_in / g * kH * kW */
  int64_t gcols;      /* the GEMM's columns (gn, or more for a flat convolution) */
  int depthwise, direct_b;
  int im2col;         /* stride 1: B stored by im2col_range (contiguous rows), else read by
                         the packer (mace_qgemm_conv) */
  size_t col_bytes;   /* the stored im2col's scratch */
  int64_t hp, wp;     /* the zero-point-padded input planes (0: no padding copy) */
  int phased;         /* strided: the padded planes split into stride phases (mace_qgemm_conv) */
  int64_t ph, pw;     /* a phase plane's size */
  size_t pad_bytes;   /* their scratch, one group's planes, 64-byte multiple */
  int x_signed;
  int32_t x_zp;
  const mace_qgemm_family *f;
  int8_t *packed_w;   /* owned: per group packed A (gemm), or the filter as it is (depthwise) */
  size_t packed_group_bytes;
  int32_t *params;    /* owned: [C_out] each of row sums, bias, mult, shift */
  mace_qgemm_out out;
  int residual;           /* inputs 9-13 present */
  mace_qbinary_params add; /* the residual Add's (a = y, b = r) */
} qconv_state;

static void qconv_release(mace_op *op) {
  qconv_state *st = op->state;
  mace_aligned_free(st->packed_w);
  mace_aligned_free(st->params);
  st->packed_w = NULL;
  st->params = NULL;
}

static mace_status qconv_init(mace_op *op) {
  qconv_state *st = op->state;
  const char *pad = mace_op_arg_str(op, "padding", "EXPLICIT");
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  if (!mace_pad_mode_parse(pad, &st->mode))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): unknown padding \"%s\"",
                      op->name, pad);
  st->group = mace_op_arg_int(op, "group", 1);
  if (st->group < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): group %lld must be >= 1",
                      op->name, (long long)st->group);
  return mace_fused_activation_parse(op, &st->act);
}

static int32_t *row_sums(qconv_state *st) { return st->params; }
static int32_t *bias(qconv_state *st) { return st->params + st->c_out; }
static int32_t *mult(qconv_state *st) { return st->params + 2 * st->c_out; }
static int32_t *shift(qconv_state *st) { return st->params + 3 * st->c_out; }

/* The residual Add's parameters (a: the convolution's y_scale, y_zp; b: r; the output z),
 * and the checks that r is y's dtype and shape and z_zero_point y's dtype. */
static mace_status residual_prepare(const mace_op *op, qconv_state *st, double y_scale,
                                    int32_t y_zp) {
  const mace_tensor *r = op->inputs[9];
  const mace_dtype dt = op->inputs[7]->dtype;
  double r_scale = 0, z_scale = 0;
  int relu = 0;
  const char *a = mace_op_arg_str(op, "residual_activation", "NOOP");
  relu = strcmp(a, "RELU") == 0;
  if (!relu && strcmp(a, "NOOP") != 0)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (QLinearConv2D): residual_activation \"%s\" is "
                      "not supported (NOOP or RELU)", op->name, a);
  if (r->dtype != dt || r->ndim != 4 || r->dims[0] != st->n || r->dims[1] != st->c_out ||
      r->dims[2] != st->oh || r->dims[3] != st->ow)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): residual is %s of %d dims, "
                      "must be the output's %s [%lld, %lld, %lld, %lld]", op->name,
                      mace_dtype_name(r->dtype), r->ndim, mace_dtype_name(dt), (long long)st->n,
                      (long long)st->c_out, (long long)st->oh, (long long)st->ow);
  if (op->inputs[13]->dtype != dt)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): z_zero_point is %s, must be "
                      "y's %s", op->name, mace_dtype_name(op->inputs[13]->dtype),
                      mace_dtype_name(dt));
  MACE_RETURN_IF_ERROR(mace_qlinear_scale(op, 10, "r_scale", &r_scale));
  MACE_RETURN_IF_ERROR(mace_qlinear_zp(op, 11, "r_zero_point", dt, &st->add.b_zp));
  MACE_RETURN_IF_ERROR(mace_qlinear_scale(op, 12, "z_scale", &z_scale));
  MACE_RETURN_IF_ERROR(mace_qlinear_zp(op, 13, "z_zero_point", dt, &st->add.y_zp));
  mace_qbinary_params_init(&st->add, 1, y_scale, r_scale, z_scale);
  st->add.a_zp = y_zp;
  mace_q8_range(dt, relu, st->add.y_zp, &st->add.lo, &st->add.hi);
  return MACE_OK;
}

/* Packs the constant filter and computes the per-channel parameters (once: constants). */
static mace_status qconv_prepare(mace_op *op, qconv_state *st) {
  const mace_tensor *w = op->inputs[3];
  double x_scale = 0, y_scale = 0;
  int32_t y_zp = 0;
  double *w_scales;
  mace_status s = MACE_OK;
  MACE_RETURN_IF_ERROR(mace_qlinear_scale(op, 1, "x_scale", &x_scale));
  MACE_RETURN_IF_ERROR(mace_qlinear_zp(op, 2, "x_zero_point", op->inputs[0]->dtype, &st->x_zp));
  MACE_RETURN_IF_ERROR(mace_qlinear_scale(op, 6, "y_scale", &y_scale));
  MACE_RETURN_IF_ERROR(mace_qlinear_zp(op, 7, "y_zero_point", op->inputs[7]->dtype, &y_zp));
  MACE_RETURN_IF_ERROR(mace_qlinear_out(op, &st->act, op->inputs[7]->dtype, y_scale, y_zp,
                                        &st->out));
  if (st->residual) MACE_RETURN_IF_ERROR(residual_prepare(op, st, y_scale, y_zp));
  if (st->params) return MACE_OK;
  st->params = mace_aligned_alloc(sizeof(int32_t) * 4 * (size_t)st->c_out);
  w_scales = malloc(sizeof(double) * (size_t)st->c_out);
  if (!st->params || !w_scales) {
    s = mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (QLinearConv2D): no memory for parameters",
                   op->name);
    goto done;
  }
  s = mace_qlinear_weight_scales(op, 4, 5, st->c_out, w_scales);
  if (s == MACE_OK) s = mace_qlinear_bias(op, 8, st->c_out, bias(st));
  if (s != MACE_OK) goto done;
  for (int64_t c = 0; c < st->c_out; ++c)
    mace_requant_params(x_scale * w_scales[c] / y_scale, &mult(st)[c], &shift(st)[c]);
  if (st->depthwise) {
    const int8_t *wd = (const int8_t *)w->data;
    st->packed_w = NULL;
    for (int64_t c = 0; c < st->c_out; ++c) {
      int32_t sum = 0;
      for (int64_t i = 0; i < st->kh * st->kw; ++i) sum += wd[c * st->kh * st->kw + i];
      row_sums(st)[c] = sum;
    }
  } else {
    st->packed_group_bytes = (mace_qgemm_packed_a_bytes(st->f, st->gm, st->gk) + 63) / 64 * 64;
    st->packed_w = mace_aligned_alloc(st->packed_group_bytes * (size_t)st->group);
    if (!st->packed_w) {
      s = mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (QLinearConv2D): no memory for the packed "
                     "filter", op->name);
      goto done;
    }
    for (int64_t g = 0; g < st->group; ++g)
      mace_qgemm_pack_a(st->f, st->gm, st->gk, (const int8_t *)w->data + g * st->gm * st->gk,
                        st->gk, 1, st->packed_w + (size_t)g * st->packed_group_bytes,
                        row_sums(st) + g * st->gm);
  }
done:
  free(w_scales);
  if (s != MACE_OK) qconv_release(op);
  return s;
}

/* The convolution the GEMM's packer reads (mace_qgemm_conv, x unset): the planes as they are,
 * or the zero-point-bordered copy (hp x wp, no padding left) where there is one, or its stride
 * phases (ph x pw each). */
static void qconv_gemm_conv(const qconv_state *st, mace_qgemm_conv *cv) {
  memset(cv, 0, sizeof(*cv));
  cv->h = st->phased ? st->ph : st->hp ? st->hp : st->h;
  cv->w = st->phased ? st->pw : st->hp ? st->wp : st->w;
  cv->phased = st->phased;
  cv->oh = st->oh;
  cv->ow = st->ow;
  cv->kh = st->kh;
  cv->kw = st->kw;
  cv->sh = st->strides[0];
  cv->sw = st->strides[1];
  cv->dh = st->dilations[0];
  cv->dw = st->dilations[1];
  cv->pt = st->hp ? 0 : st->pad_t;
  cv->pl = st->hp ? 0 : st->pad_l;
}

static mace_status qconv_infer(mace_op *op) {
  qconv_state *st = op->state;
  const mace_tensor *x, *w;
  int64_t dims[4];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 8, 14, 1));
  if (op->n_inputs != 8 && op->n_inputs != 9 && op->n_inputs != 14)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): %d inputs; 8, 9 (a bias) or "
                      "14 (a bias and a residual)", op->name, op->n_inputs);
  st->residual = op->n_inputs == 14;
  x = op->inputs[0];
  w = op->inputs[3];
  if (x->dtype != MACE_DT_U8 && x->dtype != MACE_DT_I8)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): x is %s, must be u8 or i8",
                      op->name, mace_dtype_name(x->dtype));
  if (x->ndim != 4 || w->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): x and w must be 4-D, are "
                      "%d-D and %d-D", op->name, x->ndim, w->ndim);
  if (w->dtype != MACE_DT_I8 || w->role != MACE_TENSOR_CONST)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (QLinearConv2D): w must be an i8 constant",
                      op->name);
  if (op->inputs[7]->dtype != MACE_DT_U8 && op->inputs[7]->dtype != MACE_DT_I8)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): y_zero_point is %s, must be "
                      "u8 or i8", op->name, mace_dtype_name(op->inputs[7]->dtype));
  st->n = x->dims[0];
  st->c_in = x->dims[1];
  st->h = x->dims[2];
  st->w = x->dims[3];
  st->c_out = w->dims[0];
  st->kh = w->dims[2];
  st->kw = w->dims[3];
  if (st->c_in % st->group || st->c_out % st->group || w->dims[1] * st->group != st->c_in)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): x has %lld channels, w is "
                      "[%lld, %lld, %lld, %lld], group %lld", op->name, (long long)st->c_in,
                      (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2],
                      (long long)w->dims[3], (long long)st->group);
  st->pad_t = st->pads[0];
  st->pad_l = st->pads[1];
  {
    int64_t pb = st->pads[2], pr = st->pads[3];
    st->oh = mace_window_out_size(st->h, st->kh, st->strides[0], st->dilations[0], st->mode, 0,
                                  &st->pad_t, &pb);
    st->ow = mace_window_out_size(st->w, st->kw, st->strides[1], st->dilations[1], st->mode, 0,
                                  &st->pad_l, &pr);
  }
  if (st->oh < 1 || st->ow < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearConv2D): output would be %lldx%lld",
                      op->name, (long long)st->oh, (long long)st->ow);
  st->gm = st->c_out / st->group;
  st->gn = st->oh * st->ow;
  st->gk = st->c_in / st->group * st->kh * st->kw;
  st->depthwise = st->group == st->c_in && st->group == st->c_out && st->group > 1;
  st->direct_b = st->kh == 1 && st->kw == 1 && st->strides[0] == 1 && st->strides[1] == 1 &&
                 st->pad_t == 0 && st->pad_l == 0 && st->oh == st->h && st->ow == st->w;
  st->x_signed = x->dtype == MACE_DT_I8;
  if (!st->f) st->f = mace_qgemm_family_active();
  MACE_RETURN_IF_ERROR(qconv_prepare(op, st));
  dims[0] = st->n;
  dims[1] = st->c_out;
  dims[2] = st->oh;
  dims[3] = st->ow;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, op->inputs[7]->dtype, dims, 4));
  op->outputs[0]->scale = (float)(*(const float *)op->inputs[st->residual ? 12 : 6]->data);
  op->outputs[0]->zero_point = st->residual ? st->add.y_zp : st->out.zp;
  op->macs = st->n * st->c_out * st->gn * st->gk;
  op->scratch_bytes = 0;
  st->hp = st->wp = 0;
  st->pad_bytes = st->col_bytes = 0;
  st->gcols = st->gn;
  st->phased = 0;
  st->ph = st->pw = 0;
  if (!st->depthwise && !st->direct_b) {
    /* The packer reads B from the input (padded: from a copy bordered with the zero point),
     * flat (mace_qgemm_conv_columns: each panel row a pointer into the planes) at stride 1,
     * and strided from a copy split into stride phases where that is no more than twice the
     * columns; else a strided convolution's windows are gathered, and a stride-1 one too wide
     * for flat (large dilations) stores im2col. */
    mace_qgemm_conv cv;
    const int strided = st->strides[0] > 1 || st->strides[1] > 1;
    /* every window's rows and columns, from -pad_t and -pad_l */
    const int64_t hp = (st->oh - 1) * st->strides[0] + (st->kh - 1) * st->dilations[0] + 1;
    const int64_t wp = (st->ow - 1) * st->strides[1] + (st->kw - 1) * st->dilations[1] + 1;
    if (strided) {
      st->ph = (hp + st->strides[0] - 1) / st->strides[0];
      st->pw = (wp + st->strides[1] - 1) / st->strides[1];
      st->phased = (st->oh - 1) * st->pw + st->ow <= 2 * st->gn;
    }
    if (st->phased || st->pad_t > 0 || st->pad_l > 0) {
      st->hp = hp;
      st->wp = wp;
    }
    qconv_gemm_conv(st, &cv);
    st->gcols = mace_qgemm_conv_columns(&cv);
    st->im2col = st->strides[0] == 1 && st->strides[1] == 1 && st->gcols == st->gn &&
                 (st->hp ? st->wp : st->w) != st->ow;
    if (st->im2col) {
      st->hp = st->wp = 0;
      st->col_bytes = (size_t)((st->gk * st->gn + 63) / 64 * 64);
    } else if (st->phased) {
      st->pad_bytes = (size_t)((st->c_in / st->group * st->strides[0] * st->strides[1] * st->ph *
                                st->pw + 63) / 64 * 64);
    } else if (st->hp) {
      st->pad_bytes = (size_t)((st->c_in / st->group * st->hp * st->wp + 63) / 64 * 64);
    }
  }
  if (!st->depthwise)
    op->scratch_bytes = st->col_bytes + st->pad_bytes +
                        mace_qgemm_scratch_bytes(st->f, st->gm, st->gcols, st->gk);
  return MACE_OK;
}

/* im2col of one image and group: rows [begin, end) of the K x N matrix B, the padding filled
 * with x's zero point; each row a run of output rows, the columns inside the input copied. */
typedef struct im2col_job {
  const qconv_state *st;
  const uint8_t *x; /* the group's first input plane */
  uint8_t *col;
} im2col_job;

static void im2col_range(void *ctx, int64_t begin, int64_t end) {
  const im2col_job *j = ctx;
  const qconv_state *st = j->st;
  const uint8_t pad = (uint8_t)st->x_zp;
  const int64_t sw = st->strides[1];
  for (int64_t r = begin; r < end; ++r) {
    const int64_t c = r / (st->kh * st->kw), ky = r / st->kw % st->kh, kx = r % st->kw;
    const uint8_t *plane = j->x + c * st->h * st->w;
    const int64_t off = kx * st->dilations[1] - st->pad_l; /* ix = ox * sw + off */
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int64_t hi = st->w - 1 - off >= 0 ? (st->w - 1 - off) / sw + 1 : 0;
    uint8_t *d = j->col + r * st->gn;
    if (lo > st->ow) lo = st->ow;
    if (hi > st->ow) hi = st->ow;
    if (hi < lo) hi = lo;
    for (int64_t oy = 0; oy < st->oh; ++oy, d += st->ow) {
      const int64_t iy = oy * st->strides[0] - st->pad_t + ky * st->dilations[0];
      const uint8_t *src;
      if (iy < 0 || iy >= st->h) {
        memset(d, pad, (size_t)st->ow);
        continue;
      }
      if (lo > 0) memset(d, pad, (size_t)lo); /* most rows have no padding: no call */
      src = plane + iy * st->w + off;
      if (sw == 1) {
        memcpy(d + lo, src + lo, (size_t)(hi - lo));
      } else {
        for (int64_t ox = lo; ox < hi; ++ox) d[ox] = src[ox * sw];
      }
      if (hi < st->ow) memset(d + hi, pad, (size_t)(st->ow - hi));
    }
  }
}

/* A group's input planes copied into hp x wp planes bordered with the zero point (row r, column
 * q is x[r - pad_t, q - pad_l]), so that the GEMM's packer reads every window of the padded
 * convolution without bounds (mace_qgemm_conv with no padding; the same values). */
static void pad_planes(const qconv_state *st, const uint8_t *x, uint8_t *dst, int64_t c_begin,
                       int64_t c_end) {
  const uint8_t zp = (uint8_t)st->x_zp;
  const int64_t lo = st->pad_l < st->wp ? st->pad_l : st->wp;
  int64_t hi = st->pad_l + st->w;
  if (hi > st->wp) hi = st->wp;
  for (int64_t c = c_begin; c < c_end; ++c)
    for (int64_t r = 0; r < st->hp; ++r) {
      const int64_t iy = r - st->pad_t;
      uint8_t *d = dst + (c * st->hp + r) * st->wp;
      if (iy < 0 || iy >= st->h || hi <= lo) {
        memset(d, zp, (size_t)st->wp);
        continue;
      }
      memset(d, zp, (size_t)lo);
      memcpy(d + lo, x + (c * st->h + iy) * st->w, (size_t)(hi - lo));
      memset(d + hi, zp, (size_t)(st->wp - hi));
    }
}

/* Whether a filter of k taps at dilation d reads phase p of stride s (some tap t, t * d % s == p). */
static int phase_used(int64_t k, int64_t d, int64_t s, int64_t p) {
  for (int64_t t = 0; t < k; ++t)
    if (t * d % s == p) return 1;
  return 0;
}

/* A group's input planes, bordered with the zero point as pad_planes borders them, split into
 * stride phases (mace_qgemm_conv.phased): phase (py, px)'s row r, column q is the bordered
 * plane's row r * sh + py, column q * sw + px (the zero point past the input); the phases no
 * filter tap reads (a 1x1 convolution's but the first) are left unwritten. */
static void phase_planes(const qconv_state *st, const uint8_t *x, uint8_t *dst, int64_t c_begin,
                         int64_t c_end) {
  const uint8_t zp = (uint8_t)st->x_zp;
  const int64_t sh = st->strides[0], sw = st->strides[1], ph = st->ph, pw = st->pw;
  for (int64_t py = 0; py < sh; ++py) {
    if (!phase_used(st->kh, st->dilations[0], sh, py)) continue;
    for (int64_t px = 0; px < sw; ++px) {
      /* columns q whose input column q * sw + off is inside [0, w) */
      const int64_t off = px - st->pad_l;
      int64_t qlo = off >= 0 ? 0 : (-off + sw - 1) / sw;
      int64_t qhi = st->w - 1 - off >= 0 ? (st->w - 1 - off) / sw + 1 : 0;
      if (!phase_used(st->kw, st->dilations[1], sw, px)) continue;
      if (qhi > pw) qhi = pw;
      if (qlo > qhi) qlo = qhi;
      for (int64_t c = c_begin; c < c_end; ++c) {
        uint8_t *d = dst + ((c * sh + py) * sw + px) * ph * pw;
        for (int64_t r = 0; r < ph; ++r, d += pw) {
          const int64_t iy = r * sh + py - st->pad_t;
          const uint8_t *row;
          if (iy < 0 || iy >= st->h || qlo == qhi) {
            memset(d, zp, (size_t)pw);
            continue;
          }
          row = x + (c * st->h + iy) * st->w;
          memset(d, zp, (size_t)qlo);
          if (sw == 2) { /* a constant stride the vectorizer deinterleaves */
            for (int64_t q = qlo; q < qhi; ++q) d[q] = row[2 * q + off];
          } else {
            for (int64_t q = qlo; q < qhi; ++q) d[q] = row[q * sw + off];
          }
          memset(d + qhi, zp, (size_t)(pw - qhi));
        }
      }
    }
  }
}

/* The bordered (or phase-split) copy of a group's input channels [begin, end), on the pool. */
typedef struct copy_job {
  const qconv_state *st;
  const uint8_t *x;
  uint8_t *dst;
} copy_job;

static void copy_range(void *ctx, int64_t begin, int64_t end) {
  const copy_job *j = ctx;
  if (j->st->phased)
    phase_planes(j->st, j->x, j->dst, begin, end);
  else
    pad_planes(j->st, j->x, j->dst, begin, end);
}

/* Depthwise: planes [begin, end) of (image, channel), on the active ISA's kernel. */
typedef struct dw_job {
  qconv_state *st;
  mace_q8_dwconv_fn kernel;
  mace_q8_add_fn add; /* with a residual */
  const uint8_t *x;
  const int8_t *w;
  uint8_t *y;
  const uint8_t *r;
} dw_job;

static void dw_range(void *ctx, int64_t begin, int64_t end) {
  const dw_job *j = ctx;
  qconv_state *st = j->st;
  mace_q8_dwconv_args a = {
      .in_h = st->h, .in_w = st->w, .out_h = st->oh, .out_w = st->ow, .k_h = st->kh,
      .k_w = st->kw, .stride_h = st->strides[0], .stride_w = st->strides[1],
      .dilation_h = st->dilations[0], .dilation_w = st->dilations[1], .pad_top = st->pad_t,
      .pad_left = st->pad_l, .x_signed = st->x_signed, .x_zp = st->x_zp, .out = st->out,
      .requant = st->f->requant};
  for (int64_t item = begin; item < end; ++item) {
    const int64_t c = item % st->c_out;
    a.bias = bias(st)[c];
    a.mult = mult(st)[c];
    a.shift = shift(st)[c];
    j->kernel(&a, j->x + item * st->h * st->w, j->w + c * st->kh * st->kw,
              j->y + item * st->oh * st->ow);
    if (st->residual)
      j->add(&st->add, st->out.out_signed, j->y + item * st->oh * st->ow, 1,
             j->r + item * st->oh * st->ow, 1, j->y + item * st->oh * st->ow, st->oh * st->ow);
  }
}

static mace_status qconv_run(mace_op *op) {
  qconv_state *st = op->state;
  const uint8_t *x = (const uint8_t *)op->inputs[0]->data;
  uint8_t *y = (uint8_t *)op->outputs[0]->data;
  const mace_simd_kernels *k = mace_simd_active();
  const uint8_t *r = st->residual ? (const uint8_t *)op->inputs[9]->data : NULL;
  if (st->depthwise) {
    dw_job j = {st, mace_q8_dwconv_active(),
                k->q8_add ? k->q8_add : mace_q8_add__ref, x,
                (const int8_t *)op->inputs[3]->data, y, r};
    mace_threadpool_parallel_for(op->pool, st->n * st->c_out, 1, dw_range, &j);
    return MACE_OK;
  }
  {
    mace_qgemm_args g;
    mace_qgemm_residual res = {k->q8_add ? k->q8_add : mace_q8_add__ref, &st->add, NULL,
                               st->out.out_signed};
    mace_qgemm_conv cv;
    qconv_gemm_conv(st, &cv);
    memset(&g, 0, sizeof(g));
    g.f = st->f;
    g.m = st->gm;
    g.n = st->gn;
    g.k = st->gk;
    g.b_signed = st->x_signed;
    g.b_zp = st->x_zp;
    g.b_rs = st->gn;
    g.b_cs = 1;
    g.c_rs = st->gn;
    g.c_cs = 1;
    g.out = st->out;
    for (int64_t img = 0; img < st->n; ++img)
      for (int64_t grp = 0; grp < st->group; ++grp) {
        const uint8_t *xg = x + (img * st->c_in + grp * (st->c_in / st->group)) * st->h * st->w;
        if (st->direct_b) {
          g.b = xg;
        } else if (st->im2col) {
          im2col_job j = {st, xg, (uint8_t *)op->scratch};
          mace_threadpool_parallel_for(op->pool, st->gk, 1, im2col_range, &j);
          g.b = op->scratch;
          g.conv = NULL;
        } else if (st->pad_bytes) { /* phased, or bordered */
          copy_job j = {st, xg, (uint8_t *)op->scratch};
          mace_threadpool_parallel_for(op->pool, st->c_in / st->group,
                                       1 + QCONV_COPY_GRAIN / (st->hp * st->wp), copy_range, &j);
          cv.x = op->scratch;
          g.conv = &cv;
        } else {
          cv.x = xg;
          g.conv = &cv;
        }
        g.a_packed = st->packed_w + (size_t)grp * st->packed_group_bytes;
        g.a_row_sums = row_sums(st) + grp * st->gm;
        g.bias = bias(st) + grp * st->gm;
        g.mult = mult(st) + grp * st->gm;
        g.shift = shift(st) + grp * st->gm;
        g.c = y + (img * st->c_out + grp * st->gm) * st->gn;
        if (st->residual) {
          res.r = r + (img * st->c_out + grp * st->gm) * st->gn;
          g.residual = &res;
        }
        mace_qgemm_run(op->pool, &g, (uint8_t *)op->scratch + st->col_bytes + st->pad_bytes);
      }
  }
  return MACE_OK;
}

const mace_op_kind mace_op_qlinear_conv2d = {.type = "QLinearConv2D", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(qconv_state),
                                             .init = qconv_init, .infer = qconv_infer,
                                             .run = qconv_run, .release = qconv_release};
