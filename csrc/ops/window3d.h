/* The geometry arguments of the 3-D window ops (Pool3D, Conv3D): parsed and checked once. */
#ifndef MACE_OPS_WINDOW3D_H_
#define MACE_OPS_WINDOW3D_H_
#include "core/op.h"
#include "kernels/cpu/ref/window3d.h"

/* Reads kernels (3 ints; when `k` is given they come from the filter instead), strides,
 * dilations (3 ints, default 1) and pads (6 ints [d, h, w begin, d, h, w end], default 0),
 * checks them against x [N, C, D, H, W] and fills g, output sizes included: rounded down, or
 * up with ceil_mode, where a last window that would start in the end padding is dropped. */
static inline mace_status mace_window3d_infer(const mace_op *op, const char *what,
                                              const mace_tensor *x, const int64_t *k,
                                              int ceil_mode, mace_window3d *g) {
  const int64_t *ks = NULL, *st = NULL, *dl = NULL, *pd = NULL;
  const int nk = mace_op_arg_ints(op, "kernels", &ks), ns = mace_op_arg_ints(op, "strides", &st);
  const int nd = mace_op_arg_ints(op, "dilations", &dl);
  const int np = mace_op_arg_ints(op, "padding_values", &pd);
  if (x->ndim != 5)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input '%s' must be [N, C, D, H, W], "
                      "has rank %d", op->name, what, x->name, x->ndim);
  if ((!k && nk != 3) || (ns >= 0 && ns != 3) || (nd >= 0 && nd != 3) || (np >= 0 && np != 6))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): kernels, strides and dilations need 3 "
                      "values and padding_values 6", op->name, what);
  for (int a = 0; a < 3; ++a) {
    g->in[a] = x->dims[a + 2];
    g->k[a] = k ? k[a] : ks[a];
    g->s[a] = ns > 0 ? st[a] : 1;
    g->d[a] = nd > 0 ? dl[a] : 1;
    g->pad_begin[a] = np > 0 ? pd[a] : 0;
    g->pad_end[a] = np > 0 ? pd[a + 3] : 0;
    if (g->k[a] < 1 || g->s[a] < 1 || g->d[a] < 1 || g->pad_begin[a] < 0 || g->pad_end[a] < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): kernel %lld, stride %lld, dilation "
                        "%lld and pads %lld/%lld of axis %d out of range", op->name, what,
                        (long long)g->k[a], (long long)g->s[a], (long long)g->d[a],
                        (long long)g->pad_begin[a], (long long)g->pad_end[a], a);
    const int64_t span = g->in[a] + g->pad_begin[a] + g->pad_end[a] - (g->k[a] - 1) * g->d[a] - 1;
    if (span < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): the window (%lld taps, dilation %lld) "
                        "is larger than the padded input (%lld) along axis %d", op->name, what,
                        (long long)g->k[a], (long long)g->d[a],
                        (long long)(g->in[a] + g->pad_begin[a] + g->pad_end[a]), a);
    int64_t out = (ceil_mode ? (span + g->s[a] - 1) / g->s[a] : span / g->s[a]) + 1;
    if (ceil_mode && (out - 1) * g->s[a] >= g->in[a] + g->pad_begin[a]) --out;
    g->out[a] = out;
  }
  return MACE_OK;
}
#endif /* MACE_OPS_WINDOW3D_H_ */
