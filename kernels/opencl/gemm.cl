/* Tiled SGEMM family on NCHW (row-major) buffers (ops/opencl/cl_gemm.c): Y[z] = A[z] B[z] with the
 * fused bias / residual / activation epilogue, for MatMul, FullyConnected and Conv2D (1x1 as a
 * plain product, any other window as an implicit GEMM gathering the im2col columns while loading
 * the B tile). Accumulates in float. Offsets are in elements.
 *
 * Build-time defines (ops/opencl/cl_gemm.c): TM x TN output tile per work group, TK the K step,
 * RM x RN outputs a work item. The work group is (TN / RN, TM / RM); work item (tx, ty) owns rows
 * ty + WG_M * i and columns tx + WG_N * j of the tile, so its reads of the local tiles are
 * conflict-free (consecutive tx, consecutive words) and its stores coalesced along N.
 * Each work group stages a TM x TK slice of A and a TK x TN slice of B in local memory per K
 * step, the next step's global loads held in registers while the current one is multiplied.
 *
 * Split K: a launch over z = split * batch + b with kchunk < K writes raw partial sums (float)
 * to `part` [split][batch][M][N]; gemm_reduce sums them and applies the epilogue. */

#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 64
#endif
#ifndef TK
#define TK 16
#endif
#ifndef RM
#define RM 4
#endif
#ifndef RN
#define RN 4
#endif

#define WG_M (TM / RM)
#define WG_N (TN / RN)
#define WG (WG_M * WG_N)
#define LA (TM * TK / WG)   /* A elements a work item loads per K step */
#define LB (TK * TN / WG)   /* B elements */
#define PAD 2               /* row padding of the local tiles: transposing stores conflict-free */
#define LDA_L (TM + PAD)
#define LDB_L (TN + PAD)

#if (TM * TK) % WG != 0 || (TK * TN) % WG != 0 || WG % TN != 0 || WG % TK != 0
#error "gemm.cl: tile sizes must divide into the work group (WG % TN == 0, WG % TK == 0)"
#endif

/* Offset of batch item z over up to 4 broadcast batch dims (innermost last). */
inline int gemm_zoff(int z, int4 dims, int4 strides) {
  int off = (z % dims.s3) * strides.s3;
  z /= dims.s3;
  off += (z % dims.s2) * strides.s2;
  z /= dims.s2;
  off += (z % dims.s1) * strides.s1;
  z /= dims.s1;
  return off + z * strides.s0;
}

/* The epilogue of one output: bias (mode 1: per row m, 2: per column n), residual (same layout
 * as y), activation. */
inline void gemm_store(__global DATA_T *y, int yi, float v, __global const DATA_T *bias,
                       int bias_i, int bias_mode, __global const DATA_T *r, int ri, int has_res,
                       int act, float alpha, float beta) {
  if (bias_mode) v += LOAD(bias, bias_i);
  if (has_res) v += LOAD(r, ri);
  STORE(y, yi, mace_act(v, act, alpha, beta));
}

/* The shared body: `conv` selects the implicit-GEMM B loader (a compile-time constant in each
 * kernel below, so the other loader is dead code). */
inline void gemm_body(__local float *as, __local float *bs, int conv,
                      __global const DATA_T *a, int a_off, __global const DATA_T *b, int b_off,
                      __global const DATA_T *bias, int bias_off, int bias_mode,
                      __global const DATA_T *r, int r_off, int has_res, __global DATA_T *y,
                      int y_off, __global float *part, int m_rows, int n_cols, int k_in,
                      int a_rs, int a_cs, int a_kcont, int b_rs, int b_cs, int b_ncont, int ldy,
                      int batch, int kchunk, int4 zdims, int4 a_zs, int4 b_zs, int4 y_zs,
                      int4 bias_zs, __global const int2 *ktab, int in_h, int in_w, int out_w,
                      int stride_h, int stride_w, int pad_t, int pad_l, int act, float alpha,
                      float beta) {
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int t = ty * WG_N + tx;
  const int n0 = MACE_GROUP_ID(0) * TN, m0 = MACE_GROUP_ID(1) * TM;
  const int zg = MACE_GROUP_ID(2), split = zg / batch, z = zg % batch;
  const int kbeg = split * kchunk;
  const int kend = min(k_in, kbeg + kchunk);
  const int abase = a_off + gemm_zoff(z, zdims, a_zs);
  const int bbase = b_off + gemm_zoff(z, zdims, b_zs);

  /* Implicit GEMM: this work item's B column is fixed (WG % TN == 0): its output pixel. */
  const int cn = n0 + t % TN;
  int iy0 = 0, ix0 = 0;
  if (conv) {
    const int oy = cn / out_w, ox = cn % out_w;
    iy0 = oy * stride_h - pad_t;
    ix0 = ox * stride_w - pad_l;
  }

  float acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = 0.0f;
  float ra[LA], rb[LB];

#define GEMM_LOAD_TILES(K0)                                                                   \
  for (int q = 0; q < LA; ++q) {                                                              \
    const int e = t + WG * q;                                                                 \
    const int mm = a_kcont ? e / TK : e % TM, kk = a_kcont ? e % TK : e / TM;                 \
    const int m = m0 + mm, k = (K0) + kk;                                                     \
    ra[q] = m < m_rows && k < kend ? LOAD(a, abase + m * a_rs + k * a_cs) : 0.0f;             \
  }                                                                                           \
  for (int q = 0; q < LB; ++q) {                                                              \
    const int e = t + WG * q;                                                                 \
    if (conv) {                                                                               \
      const int k = (K0) + e / TN;                                                            \
      float v = 0.0f;                                                                         \
      if (cn < n_cols && k < kend) {                                                          \
        const int2 kt = ktab[k];                                                              \
        const int iy = iy0 + (kt.y >> 16), ix = ix0 + (kt.y & 0xffff);                        \
        if (iy >= 0 && iy < in_h && ix >= 0 && ix < in_w)                                     \
          v = LOAD(b, bbase + iy0 * in_w + ix0 + kt.x);                                       \
      }                                                                                       \
      rb[q] = v;                                                                              \
    } else {                                                                                  \
      const int nn = b_ncont ? e % TN : e / TK, kk = b_ncont ? e / TN : e % TK;               \
      const int n = n0 + nn, k = (K0) + kk;                                                   \
      rb[q] = n < n_cols && k < kend ? LOAD(b, bbase + k * b_rs + n * b_cs) : 0.0f;           \
    }                                                                                         \
  }

  GEMM_LOAD_TILES(kbeg)
  for (int k0 = kbeg; k0 < kend; k0 += TK) {
    for (int q = 0; q < LA; ++q) {
      const int e = t + WG * q;
      const int mm = a_kcont ? e / TK : e % TM, kk = a_kcont ? e % TK : e / TM;
      as[kk * LDA_L + mm] = ra[q];
    }
    for (int q = 0; q < LB; ++q) {
      const int e = t + WG * q;
      const int nn = conv || b_ncont ? e % TN : e / TK, kk = conv || b_ncont ? e / TN : e % TK;
      bs[kk * LDB_L + nn] = rb[q];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (k0 + TK < kend) {  /* the next step's global loads overlap this step's products */
      GEMM_LOAD_TILES(k0 + TK)
    }
    /* a * b + c: contracted to an FMA where the device has one (fma() is emulated where not) */
#pragma unroll
    for (int kk = 0; kk < TK; ++kk) {
      float av[RM], bv[RN];
      for (int i = 0; i < RM; ++i) av[i] = as[kk * LDA_L + ty + WG_M * i];
      for (int j = 0; j < RN; ++j) bv[j] = bs[kk * LDB_L + tx + WG_N * j];
      for (int i = 0; i < RM; ++i)
        for (int j = 0; j < RN; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#undef GEMM_LOAD_TILES

  const int split_k = kchunk < k_in;
  const int ybase = gemm_zoff(z, zdims, y_zs);
  const int bias_base = bias_off + gemm_zoff(z, zdims, bias_zs);
  for (int i = 0; i < RM; ++i) {
    const int m = m0 + ty + WG_M * i;
    if (m >= m_rows) break;
    for (int j = 0; j < RN; ++j) {
      const int n = n0 + tx + WG_N * j;
      if (n >= n_cols) break;
      if (split_k) {
        part[((split * batch + z) * m_rows + m) * n_cols + n] = acc[i][j];
      } else {
        const int yr = ybase + m * ldy + n;
        gemm_store(y, y_off + yr, acc[i][j], bias, bias_base + (bias_mode == 1 ? m : n),
                   bias_mode, r, r_off + yr, has_res, act, alpha, beta);
      }
    }
  }
}

/* Y[z][m, n] (at y_off + y_zs(z) + m * ldy + n) = sum_k A[z][m, k] B[z][k, n], A at
 * a_zs(z) + m * a_rs + k * a_cs (a_kcont: contiguous along k, else along m), B at
 * b_zs(z) + k * b_rs + n * b_cs (b_ncont: contiguous along n, else along k). Work group
 * (n tile, m tile, split * batch + z). */
__kernel __attribute__((reqd_work_group_size(WG_N, WG_M, 1)))
void gemm(__global const DATA_T *a, int a_off, __global const DATA_T *b, int b_off,
          __global const DATA_T *bias, int bias_off, int bias_mode, __global const DATA_T *r,
          int r_off, int has_res, __global DATA_T *y, int y_off, __global float *part,
          int m_rows, int n_cols, int k_in, int a_rs, int a_cs, int a_kcont, int b_rs, int b_cs,
          int b_ncont, int ldy, int batch, int kchunk, int4 zdims, int4 a_zs, int4 b_zs,
          int4 y_zs, int4 bias_zs, int act, float alpha, float beta) {
  __local float as[TK * LDA_L], bs[TK * LDB_L];
  gemm_body(as, bs, 0, a, a_off, b, b_off, bias, bias_off, bias_mode, r, r_off, has_res, y, y_off,
            part, m_rows, n_cols, k_in, a_rs, a_cs, a_kcont, b_rs, b_cs, b_ncont, ldy, batch,
            kchunk, zdims, a_zs, b_zs, y_zs, bias_zs, (__global const int2 *)0, 1, 1, 1, 1, 1, 0,
            0, act, alpha, beta);
}

/* Convolution as an implicit GEMM per (image, group) z: A = the filter [M = C_out / group,
 * K = C_in / group * k_h * k_w] (row-major, a_rs = K), B[k, p] = x[ic, iy, ix] of the image's
 * group at k = (ic * k_h + ky) * k_w + kx, p = oy * out_w + ox (zero outside the input), Y the
 * output [M, N = out_h * out_w] of the group. ktab[k] (built by the op at infer, so no work
 * item divides by the window's sizes): .x = the element offset (ic * in_h + ky * dil_h) * in_w
 * + kx * dil_w, .y = (ky * dil_h) << 16 | kx * dil_w for the bounds. */
__kernel __attribute__((reqd_work_group_size(WG_N, WG_M, 1)))
void gemm_conv(__global const DATA_T *w, int w_off, __global const DATA_T *x, int x_off,
               __global const DATA_T *bias, int bias_off, int bias_mode,
               __global const DATA_T *r, int r_off, int has_res, __global DATA_T *y, int y_off,
               __global float *part, int m_rows, int n_cols, int k_in, int batch, int kchunk,
               int4 zdims, int4 a_zs, int4 b_zs, int4 y_zs, int4 bias_zs,
               __global const int2 *ktab, int in_h, int in_w, int out_w, int stride_h,
               int stride_w, int pad_t, int pad_l, int act, float alpha, float beta) {
  __local float as[TK * LDA_L], bs[TK * LDB_L];
  gemm_body(as, bs, 1, w, w_off, x, x_off, bias, bias_off, bias_mode, r, r_off, has_res, y, y_off,
            part, m_rows, n_cols, k_in, k_in, 1, 1, 0, 1, 1, n_cols, batch, kchunk, zdims, a_zs,
            b_zs, y_zs, bias_zs, ktab, in_h, in_w, out_w, stride_h, stride_w, pad_t, pad_l, act,
            alpha, beta);
}

/* Split K, second pass: work item i of batch * M * N sums the splits' partials and applies the
 * epilogue. */
__kernel void gemm_reduce(__global const float *part, int splits, __global const DATA_T *bias,
                          int bias_off, int bias_mode, __global const DATA_T *r, int r_off,
                          int has_res, __global DATA_T *y, int y_off, int m_rows, int n_cols,
                          int ldy, int batch, int4 zdims, int4 y_zs, int4 bias_zs, int act,
                          float alpha, float beta) {
  const int i = get_global_id(0);
  const int mn = m_rows * n_cols;
  if (i >= batch * mn) return;
  const int z = i / mn, m = (i % mn) / n_cols, n = i % n_cols;
  float v = 0.0f;
  for (int s = 0; s < splits; ++s) v += part[s * batch * mn + i];
  const int yr = gemm_zoff(z, zdims, y_zs) + m * ldy + n;
  gemm_store(y, y_off + yr, v, bias,
             bias_off + gemm_zoff(z, zdims, bias_zs) + (bias_mode == 1 ? m : n), bias_mode, r,
             r_off + yr, has_res, act, alpha, beta);
}

/* Skinny products whose B is contiguous along K (a batch-1 FullyConnected: W [n, k]): work group
 * (n block, m, z) of GV_WG items computes outputs n0 .. n0 + GV_N - 1 of row m; the items stride
 * over K (consecutive items, consecutive elements of A's row and of each B column) and their
 * partial sums are added up in local memory. Every element of B is read once and no product is
 * wasted on padding rows. */
#define GV_WG 64
#define GV_N 4
__kernel __attribute__((reqd_work_group_size(GV_WG, 1, 1)))
void gemv(__global const DATA_T *a, int a_off, __global const DATA_T *b, int b_off,
          __global const DATA_T *bias, int bias_off, int bias_mode, __global const DATA_T *r,
          int r_off, int has_res, __global DATA_T *y, int y_off, int m_rows, int n_cols,
          int k_in, int a_rs, int a_cs, int b_rs, int b_cs, int ldy, int4 zdims, int4 a_zs,
          int4 b_zs, int4 y_zs, int4 bias_zs, int act, float alpha, float beta) {
  __local float red[GV_N * GV_WG];
  const int t = get_local_id(0);
  const int n0 = MACE_GROUP_ID(0) * GV_N, m = MACE_GROUP_ID(1), z = MACE_GROUP_ID(2);
  const int arow = a_off + gemm_zoff(z, zdims, a_zs) + m * a_rs;
  const int bbase = b_off + gemm_zoff(z, zdims, b_zs);
  float acc[GV_N];
  for (int j = 0; j < GV_N; ++j) acc[j] = 0.0f;
  for (int k = t; k < k_in; k += GV_WG) {
    const float av = LOAD(a, arow + k * a_cs);
    for (int j = 0; j < GV_N; ++j)
      if (n0 + j < n_cols) acc[j] += av * LOAD(b, bbase + k * b_rs + (n0 + j) * b_cs);
  }
  for (int j = 0; j < GV_N; ++j) red[j * GV_WG + t] = acc[j];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = GV_WG / 2; s > 0; s >>= 1) {
    if (t < s)
      for (int j = 0; j < GV_N; ++j) red[j * GV_WG + t] += red[j * GV_WG + t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t < GV_N && n0 + t < n_cols) {
    const int n = n0 + t;
    const int yr = gemm_zoff(z, zdims, y_zs) + m * ldy + n;
    gemm_store(y, y_off + yr, red[t * GV_WG], bias,
               bias_off + gemm_zoff(z, zdims, bias_zs) + (bias_mode == 1 ? m : n), bias_mode, r,
               r_off + yr, has_res, act, alpha, beta);
  }
}
