/* Reference NCHWc kernels (kernels/cpu/nchwc.h, nchwc_convkxk.h): reorders, filter packing,
 * pointwise, depthwise and direct KxK convolution, for any block. The oracle of the SIMD variants. */
#include "kernels/cpu/nchwc.h"
#include "kernels/cpu/nchwc_convkxk.h"

void mace_f32_nchw_to_nchwc__ref(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                 int64_t cb1) {
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const float *xs = x + cb * block * hw;
    float *yd = y + cb * block * hw;
    for (int64_t p = 0; p < hw; ++p)
      for (int j = 0; j < block; ++j) yd[p * block + j] = xs[j * hw + p];
  }
}

void mace_f32_nchwc_to_nchw__ref(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                 int64_t cb1) {
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const float *xs = x + cb * block * hw;
    float *yd = y + cb * block * hw;
    for (int j = 0; j < block; ++j)
      for (int64_t p = 0; p < hw; ++p) yd[j * hw + p] = xs[p * block + j];
  }
}

void mace_f32_nchw_to_nchwc_tail__ref(int block, int rem, int64_t hw, const float *x, float *y) {
  for (int64_t p = 0; p < hw; ++p) {
    int j = 0;
    for (; j < rem; ++j) y[p * block + j] = x[j * hw + p];
    for (; j < block; ++j) y[p * block + j] = 0.0f;
  }
}

void mace_f32_nchwc_to_nchw_tail__ref(int block, int rem, int64_t hw, const float *x, float *y) {
  for (int j = 0; j < rem; ++j)
    for (int64_t p = 0; p < hw; ++p) y[j * hw + p] = x[p * block + j];
}

int64_t mace_f32_nchwc_conv1x1_packed_floats(int block, int64_t out_c, int64_t in_c) {
  return MACE_NCHWC_PADDED(out_c, block) * MACE_NCHWC_PADDED(in_c, block);
}

void mace_f32_nchwc_conv1x1_pack(int block, int64_t out_c, int64_t in_c, const float *w,
                                 float *packed) {
  mace_f32_nchwc_conv1x1_pack_blocks(block, out_c, in_c, w, packed, 0,
                                     MACE_NCHWC_PADDED(out_c, block) / block);
}

void mace_f32_nchwc_conv1x1_pack_blocks(int block, int64_t out_c, int64_t in_c, const float *w,
                                        float *packed, int64_t ob0, int64_t ob1) {
  const int64_t in_cp = MACE_NCHWC_PADDED(in_c, block);
  for (int64_t ob = ob0; ob < ob1; ++ob)
    for (int64_t ic = 0; ic < in_cp; ++ic)
      for (int j = 0; j < block; ++j) {
        const int64_t oc = ob * block + j;
        packed[(ob * in_cp + ic) * block + j] = oc < out_c && ic < in_c ? w[oc * in_c + ic] : 0.0f;
      }
}

void mace_f32_nchwc_conv1x1__ref(const mace_nchwc_conv1x1 *a, int64_t ob0, int64_t ob1,
                                 int64_t p0, int64_t p1) {
  const int b = a->block;
  const int64_t hw = a->hw;
  for (int64_t ob = ob0; ob < ob1; ++ob) {
    const float *w = a->w + ob * a->in_c * b;
    float *y = a->y + ob * hw * b;
    for (int64_t p = p0; p < p1; ++p) {
      for (int j = 0; j < b; ++j) {
        float s = a->bias ? a->bias[ob * b + j] : 0.0f;
        for (int64_t ic = 0; ic < a->in_c; ++ic)
          s += w[ic * b + j] * a->x[((ic / b) * hw + p) * b + ic % b];
        if (a->res) s += a->res[(ob * hw + p) * b + j];
        y[p * b + j] = s;
      }
      if (a->act) mace_f32_activation__ref(a->act, y + p * b, y + p * b, b);
    }
  }
}

int64_t mace_f32_nchwc_dwconv_packed_floats(int block, int64_t c, int k) {
  return MACE_NCHWC_PADDED(c, block) * k * k;
}

void mace_f32_nchwc_dwconv_pack(int block, int64_t c, int k, const float *w, float *packed) {
  for (int64_t cb = 0; cb < MACE_NCHWC_PADDED(c, block) / block; ++cb)
    for (int t = 0; t < k * k; ++t)
      for (int j = 0; j < block; ++j) {
        const int64_t ch = cb * block + j;
        packed[(cb * k * k + t) * block + j] = ch < c ? w[ch * k * k + t] : 0.0f;
      }
}

void mace_f32_nchwc_dwconv__ref(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1) {
  const int b = a->block, k = a->k;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t cb = r / a->out_h, oy = r % a->out_h;
    const float *x = a->x + cb * a->in_h * a->in_w * b;
    const float *w = a->w + cb * k * k * b;
    float *y = a->y + (cb * a->out_h + oy) * a->out_w * b;
    for (int64_t ox = 0; ox < a->out_w; ++ox) {
      for (int j = 0; j < b; ++j) {
        float s = a->bias ? a->bias[cb * b + j] : 0.0f;
        for (int ky = 0; ky < k; ++ky) {
          const int64_t iy = oy * a->stride - a->pad_top + (int64_t)ky * a->dil;
          if (iy < 0 || iy >= a->in_h) continue;
          for (int kx = 0; kx < k; ++kx) {
            const int64_t ix = ox * a->stride - a->pad_left + (int64_t)kx * a->dil;
            if (ix < 0 || ix >= a->in_w) continue;
            s += w[(ky * k + kx) * b + j] * x[(iy * a->in_w + ix) * b + j];
          }
        }
        y[ox * b + j] = s;
      }
      if (a->act) mace_f32_activation__ref(a->act, y + ox * b, y + ox * b, b);
    }
  }
}

int64_t mace_nchwc_group_merge(int block, int64_t in_c, int64_t out_c, int64_t group) {
  if (group == 1) return 1;
  if (group < 1 || in_c % group || out_c % group) return 0;
  for (int64_t m = 1; m <= group; ++m)
    if (group % m == 0 && (m * in_c / group) % block == 0 && (m * out_c / group) % block == 0)
      return m;
  return 0;
}

void mace_nchwc_group_span(int block, int64_t in_c, int64_t out_c, int64_t group,
                           int64_t *in_cg, int64_t *out_cg) {
  const int64_t m = mace_nchwc_group_merge(block, in_c, out_c, group);
  *in_cg = group == 1 ? MACE_NCHWC_PADDED(in_c, block) : m * in_c / group;
  *out_cg = group == 1 ? MACE_NCHWC_PADDED(out_c, block) : m * out_c / group;
}

int64_t mace_f32_nchwc_convkxk_packed_floats(int block, int64_t out_c, int64_t in_c,
                                             int64_t group, int k_h, int k_w) {
  int64_t in_cg, out_cg;
  mace_nchwc_group_span(block, in_c, out_c, group, &in_cg, &out_cg);
  return MACE_NCHWC_PADDED(out_c, block) * in_cg * k_h * k_w;
}

void mace_f32_nchwc_convkxk_pack(int block, int64_t out_c, int64_t in_c, int64_t group,
                                 int k_h, int k_w, const float *w, float *packed) {
  mace_f32_nchwc_convkxk_pack_blocks(block, out_c, in_c, group, k_h, k_w, w, packed, 0,
                                     MACE_NCHWC_PADDED(out_c, block) / block);
}

void mace_f32_nchwc_convkxk_pack_blocks(int block, int64_t out_c, int64_t in_c, int64_t group,
                                        int k_h, int k_w, const float *w, float *packed,
                                        int64_t ob0, int64_t ob1) {
  int64_t in_cg, out_cg;
  mace_nchwc_group_span(block, in_c, out_c, group, &in_cg, &out_cg);
  const int64_t kk = (int64_t)k_h * k_w, cin_g = in_c / group, cout_g = out_c / group;
  /* Written in order, each output lane's group worked out once per block: the divisions
   * per element had made packing ResNet-50's KxK filters a large part of its load time. */
  int64_t first[64], lo[64], hi[64], row[64]; /* per output lane (block <= 64) */
  float *o = packed + ob0 * (in_cg / block) * kk * block * block;
  for (int64_t ob = ob0; ob < ob1; ++ob) {
    for (int j = 0; j < block; ++j) {
      const int64_t oc = ob * block + j, g = oc / cout_g;
      first[j] = oc / out_cg * in_cg;     /* the (merged) group's first input channel */
      lo[j] = oc < out_c ? g * cin_g : 0; /* this output's own group's input channels */
      hi[j] = oc < out_c ? lo[j] + cin_g : 0;
      row[j] = oc * cin_g - lo[j];        /* w's row of oc, less its group's first channel */
    }
    for (int64_t icb = 0; icb < in_cg / block; ++icb)
      for (int64_t t = 0; t < kk; ++t)
        for (int l = 0; l < block; ++l)
          for (int j = 0; j < block; ++j) {
            const int64_t ic = first[j] + icb * block + l;
            *o++ = ic >= lo[j] && ic < hi[j] && ic < in_c ? w[(row[j] + ic) * kk + t] : 0.0f;
          }
  }
}

void mace_f32_nchwc_convkxk__ref(const mace_nchwc_convkxk *a, int64_t ob0, int64_t ob1,
                                 int64_t oy0, int64_t oy1) {
  const int b = a->block;
  const int64_t kk = (int64_t)a->k_h * a->k_w, plane = a->out_h * a->out_w;
  for (int64_t ob = ob0; ob < ob1; ++ob) {
    const int64_t ic0 = ob * b / a->out_cg * a->in_cg;  /* the group's first input channel */
    for (int64_t oy = oy0; oy < oy1; ++oy)
      for (int64_t ox = 0; ox < a->out_w; ++ox) {
        const int64_t o = (ob * plane + oy * a->out_w + ox) * b;
        for (int j = 0; j < b; ++j) {
          float s = a->bias ? a->bias[ob * b + j] : 0.0f;
          for (int64_t icl = 0; icl < (a->x_plain_c ? a->x_plain_c : a->in_cg); ++icl)
            for (int ky = 0; ky < a->k_h; ++ky) {
              const int64_t iy = oy * a->stride - a->pad_top + (int64_t)ky * a->dil_h;
              if (iy < 0 || iy >= a->in_h) continue;
              for (int kx = 0; kx < a->k_w; ++kx) {
                const int64_t ix = ox * a->stride - a->pad_left + (int64_t)kx * a->dil_w;
                if (ix < 0 || ix >= a->in_w) continue;
                const int64_t ic = ic0 + icl;
                const float *w = a->w + (((ob * a->in_cg / b + icl / b) * kk + ky * a->k_w +
                                          kx) * b + icl % b) * b;
                s += w[j] * (a->x_plain_c
                                 ? a->x[(ic * a->in_h + iy) * a->in_w + ix]
                                 : a->x[(((ic / b) * a->in_h + iy) * a->in_w + ix) * b + ic % b]);
              }
            }
          if (a->res) s += a->res[o + j];
          a->y[o + j] = s;
        }
        if (a->act) mace_f32_activation__ref(a->act, a->y + o, a->y + o, b);
      }
  }
}
