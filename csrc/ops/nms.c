/* NonMaxSuppression (ONNX): per batch and class, greedy selection of boxes by score, dropping
 * those that overlap a selected one by more than an IoU threshold; an output sized by values. */
/*
 * Inputs:  0 boxes (f32) [B, N, 4]: corners [y1, x1, y2, x2] (any diagonal pair), or
 *            [x_center, y_center, width, height] with center_point_box = 1
 *          1 scores (f32) [B, C, N]
 *          2 max_output_boxes_per_class (i64/i32, one element; 0 selects nothing)
 *          3 iou_threshold (f32, one element): a box is dropped when its IoU with a selected
 *            box is greater than this
 *          4 score_threshold (f32, one element): only boxes scoring more than this are
 *            candidates (when has_score_threshold)
 * Output:  0 selected (i64) [count, 3]: (batch, class, box) in batch, then class, then
 *          selection order.
 * Arguments: center_point_box int (default 0), has_score_threshold int (default 0).
 * Candidates are taken by score, highest first, ties by the lower box index (onnxruntime's
 * order). The count sizes the output: infer gives the upper bound [B * C * min(max, N), 3]
 * (max_output_boxes_per_class is a value input, read at infer) and run, which selects, reports
 * the real dims (sized_at_run; docs/design.md, "Outputs sized at run").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"

typedef struct nms_state {
  int64_t *sel;        /* owned: [count, 3] */
  size_t cap;          /* rows allocated */
  int64_t *order;      /* owned: candidate box indices of one class, n_cap of them */
  int64_t *picked;     /* owned: selected box indices of one class */
  size_t n_cap;
} nms_state;

static void nms_release(mace_op *op) {
  nms_state *s = (nms_state *)op->state;
  free(s->sel);
  free(s->order);
  free(s->picked);
}

/* qsort has no context: the scores of the class being sorted. */
static _Thread_local const float *nms_sort_scores;

static int nms_cmp(const void *a, const void *b) {
  const int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
  const float si = nms_sort_scores[i], sj = nms_sort_scores[j];
  if (si != sj) return si > sj ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* The box as (ymin, xmin, ymax, xmax). */
static void nms_corners(const float *b, int center, float *c) {
  if (center) {
    c[0] = b[1] - b[3] / 2.0f;
    c[1] = b[0] - b[2] / 2.0f;
    c[2] = b[1] + b[3] / 2.0f;
    c[3] = b[0] + b[2] / 2.0f;
  } else {
    c[0] = fminf(b[0], b[2]);
    c[1] = fminf(b[1], b[3]);
    c[2] = fmaxf(b[0], b[2]);
    c[3] = fmaxf(b[1], b[3]);
  }
}

/* Whether boxes a and b overlap by an IoU greater than thr. */
static int nms_suppress(const float *a, const float *b, int center, float thr) {
  float p[4], q[4];
  nms_corners(a, center, p);
  nms_corners(b, center, q);
  const float ih = fminf(p[2], q[2]) - fmaxf(p[0], q[0]);
  const float iw = fminf(p[3], q[3]) - fmaxf(p[1], q[1]);
  if (ih <= 0.0f || iw <= 0.0f) return 0;
  const float inter = ih * iw;
  const float area_p = (p[2] - p[0]) * (p[3] - p[1]), area_q = (q[2] - q[0]) * (q[3] - q[1]);
  const float uni = area_p + area_q - inter;
  if (area_p <= 0.0f || area_q <= 0.0f || uni <= 0.0f) return 0;
  return inter / uni > thr;
}

/* Input k's one value; at infer only a constant or value input has one. */
static mace_status nms_scalar(const mace_op *op, int k, int at_run, double *v) {
  const mace_tensor *t = op->inputs[k];
  if (!at_run && t->role != MACE_TENSOR_CONST && !t->value_ready)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (NonMaxSuppression): the value of '%s' is "
                      "not known", op->name, t->name);
  if (mace_tensor_numel(t) != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (NonMaxSuppression): '%s' has %lld "
                      "elements, expects 1", op->name, t->name, (long long)mace_tensor_numel(t));
  if (t->dtype == MACE_DT_F32) *v = *(const float *)t->data;
  else if (t->dtype == MACE_DT_I64) *v = (double)*(const int64_t *)t->data;
  else if (t->dtype == MACE_DT_I32) *v = *(const int32_t *)t->data;
  else
    return mace_error(MACE_INVALID_MODEL, "op '%s' (NonMaxSuppression): '%s' is %s", op->name,
                      t->name, mace_dtype_name(t->dtype));
  return MACE_OK;
}

static mace_status nms_push(const mace_op *op, nms_state *s, size_t *count, int64_t b,
                            int64_t c, int64_t i) {
  if (*count == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    int64_t *p = realloc(s->sel, cap * 3 * sizeof(int64_t));
    if (!p) return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (NonMaxSuppression): out of "
                              "memory", op->name);
    s->sel = p;
    s->cap = cap;
  }
  int64_t *row = s->sel + 3 * *count;
  row[0] = b;
  row[1] = c;
  row[2] = i;
  ++*count;
  return MACE_OK;
}

static mace_status nms_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 5, 5, 1));
  const mace_tensor *boxes = op->inputs[0], *scores = op->inputs[1];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, boxes, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, scores, MACE_DT_F32));
  if (boxes->ndim != 3 || boxes->dims[2] != 4 || scores->ndim != 3 ||
      scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (NonMaxSuppression): boxes must be [B, N, 4] "
                      "and scores [B, C, N]", op->name);
  double max_out;
  MACE_RETURN_IF_ERROR(nms_scalar(op, 2, 0, &max_out));
  for (int k = 3; k < 5; ++k)
    if (mace_tensor_numel(op->inputs[k]) != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (NonMaxSuppression): '%s' has %lld "
                        "elements, expects 1", op->name, op->inputs[k]->name,
                        (long long)mace_tensor_numel(op->inputs[k]));
  const int64_t nb = boxes->dims[0], n = boxes->dims[1], nc = scores->dims[1];
  const int64_t per_class = max_out <= 0 ? 0 : max_out < (double)n ? (int64_t)max_out : n;
  const int64_t dims[2] = {nb * nc * per_class, 3};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I64, dims, 2));
  op->macs = nb * nc * n;
  return MACE_OK;
}

static mace_status nms_run(mace_op *op) {
  nms_state *s = (nms_state *)op->state;
  const mace_tensor *boxes = op->inputs[0], *scores = op->inputs[1];
  double max_out, iou, score_thr;
  MACE_RETURN_IF_ERROR(nms_scalar(op, 2, 1, &max_out));
  MACE_RETURN_IF_ERROR(nms_scalar(op, 3, 1, &iou));
  MACE_RETURN_IF_ERROR(nms_scalar(op, 4, 1, &score_thr));
  const int center = (int)mace_op_arg_int(op, "center_point_box", 0) != 0;
  const int use_thr = (int)mace_op_arg_int(op, "has_score_threshold", 0) != 0;
  const int64_t nb = boxes->dims[0], n = boxes->dims[1], nc = scores->dims[1];
  if ((size_t)n > s->n_cap) {
    free(s->order);
    free(s->picked);
    s->order = malloc((size_t)n * sizeof(int64_t));
    s->picked = malloc((size_t)n * sizeof(int64_t));
    s->n_cap = s->order && s->picked ? (size_t)n : 0;
    if (!s->n_cap) return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (NonMaxSuppression): out "
                                     "of memory", op->name);
  }
  size_t count = 0;
  const float *bx = (const float *)boxes->data, *sc = (const float *)scores->data;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t c = 0; c < nc && max_out > 0; ++c) {
      const float *cs = sc + (b * nc + c) * n;
      int64_t m = 0;
      for (int64_t i = 0; i < n; ++i)
        if (!use_thr || cs[i] > score_thr) s->order[m++] = i;
      nms_sort_scores = cs;
      qsort(s->order, (size_t)m, sizeof(int64_t), nms_cmp);
      int64_t kept = 0;
      for (int64_t k = 0; k < m && (double)kept < max_out; ++k) {
        const int64_t i = s->order[k];
        int drop = 0;
        for (int64_t q = 0; q < kept && !drop; ++q)
          drop = nms_suppress(bx + (b * n + s->picked[q]) * 4, bx + (b * n + i) * 4, center,
                              (float)iou);
        if (drop) continue;
        s->picked[kept++] = i;
        MACE_RETURN_IF_ERROR(nms_push(op, s, &count, b, c, i));
      }
    }
  const int64_t dims[2] = {(int64_t)count, 3};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I64, dims, 2));
  if (count) memcpy(op->outputs[0]->data, s->sel, count * 3 * sizeof(int64_t));
  return MACE_OK;
}

const mace_op_kind mace_op_nms = {.type = "NonMaxSuppression", .device = MACE_DEVICE_CPU,
                                  .dtype = MACE_DT_F32, .state_size = sizeof(nms_state),
                                  .value_inputs = 1u << 2, .sized_at_run = 1,
                                  .infer = nms_infer, .run = nms_run,
                                  .release = nms_release};
