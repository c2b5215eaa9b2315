/* Conv2D on the blocked NCHWc layout (ops/conv2d_nchwc.h). */
#include "ops/conv2d_nchwc.h"

#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "runtime/cpu/nchwc_split.h"
#include "runtime/cpu/simd_dispatch.h"

int mace_conv_nchwc_kind(const mace_conv2d_shape *s, int block) {
  if (block <= 0 || s->dilation_h < 1 || s->dilation_w < 1) return MACE_CONV_NCHWC_NONE;
  const int undilated = s->dilation_h == 1 && s->dilation_w == 1;
  if (undilated && s->group == 1 && s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 &&
      s->stride_w == 1 && s->pad_top == 0 && s->pad_left == 0)
    return MACE_CONV_NCHWC_POINTWISE;
  if (s->group == s->in_c && s->out_c == s->in_c && s->k_h == s->k_w && s->k_h >= 1 &&
      s->k_h <= 7 && s->stride_h == s->stride_w && (s->stride_h == 1 || s->stride_h == 2) &&
      s->dilation_h == s->dilation_w)
    return MACE_CONV_NCHWC_DEPTHWISE;
  const int64_t merge = mace_nchwc_group_merge(block, s->in_c, s->out_c, s->group);
  if (merge >= 1 && merge <= MACE_CONV_NCHWC_MAX_MERGE && s->k_h <= 7 && s->k_w <= 7 &&
      s->stride_h == s->stride_w && (s->stride_h == 1 || s->stride_h == 2))
    return MACE_CONV_NCHWC_DIRECT;
  return MACE_CONV_NCHWC_NONE;
}

void mace_conv_nchwc_free(mace_conv_nchwc *c) {
  mace_winograd_nchwc_free(&c->wino);
  c->wino_m = 0;
  c->subsample = 0;
  mace_aligned_free(c->packed);
  c->packed = NULL;
  free(c->bias);
  c->bias = NULL;
  c->kind = MACE_CONV_NCHWC_NONE;
}

/* Pointwise work items, of equal size where the shapes allow, a whole number per thread
 * where a nearby split has one (the pool gives each thread a contiguous share of them).
 *
 * Where the filter is larger than the input (out_c > pixels: late layers) the items are
 * (image, output-block group, pixel range), in that order, so that the shares split the
 * filter between threads (each reads only its groups' weights, which scales better than
 * shares that split pixels). Groups are even divisors of the output blocks (the kernel's
 * tile is 2 blocks), or of one block more where their count is odd (the last group a block
 * short: SqueezeNet's 512->1000 classifier on 13x13, 63 blocks, otherwise had no group split
 * at all, so its pixel ranges each swept the whole 2 MB filter); they shrink until there are
 * 4 items a thread, and then, on planes not cut into pixel ranges, down to a quarter of that
 * for a whole number a thread (MNASNet's 192->1152 on 7x7 made 9 groups of 8 blocks at 2
 * threads, 4 for one thread and 5 for the other; now 12 of 6).
 *
 * Elsewhere (early layers, large planes) they are (image, pixel range) with all output
 * blocks: a thread's share is a part of the plane, whose input it reads once and the layers
 * around it wrote on the same thread, where a pair of output blocks a thread would sweep all
 * of the input.
 *
 * Pixel ranges are equal multiples of the kernel's tile whose input rows stay within about
 * 256 KB (in L2), more of them where needed for 4 items a thread, and up to twice as many
 * for a whole number a thread. A filter over 1 MB is not cut so: each pixel range sweeps all
 * of its weights, and those no longer stay in L2 for the next range but come from memory
 * again (ResNet-50's 2048->512 on 7x7, SqueezeNet's 512->1000 classifier).
 * Measurements: benchmarks/HISTORY.md. */
static void pointwise_split(mace_conv_nchwc *c, int threads) {
  const mace_conv2d_shape *s = &c->s;
  const int64_t hw = s->out_h * s->out_w, n_ob = c->out_cp / c->block;
  const int64_t mr = MACE_NCHWC_C1_MR(c->block), want = threads > 1 ? 4 * (int64_t)threads : 1;
  int64_t cap = (65536 / c->in_cp) / mr * mr;
  if (cap < mr) cap = mr;
  if (c->in_cp * c->out_cp * (int64_t)sizeof(float) > (1 << 20)) cap = hw;
  const int64_t n_pc0 = (hw + cap - 1) / cap;
  int64_t chunk = ((hw + n_pc0 - 1) / n_pc0 + mr - 1) / mr * mr;
  int64_t first_og = 0, first_chunk = 0, first_items = 0;  /* the first split with enough */
  c->pixel_major = mace_nchwc_row_split(c->out_cp, hw);
  c->og_size = n_ob;
  for (;;) {
    c->p_chunk = chunk < hw ? chunk : hw;
    c->n_pc = (hw + c->p_chunk - 1) / c->p_chunk;
    c->n_og = (n_ob + c->og_size - 1) / c->og_size;
    const int64_t items = s->batch * c->n_pc * c->n_og;
    if (items >= want) {
      if (!first_og) {
        first_og = c->og_size;
        first_chunk = c->p_chunk;
        first_items = items;
      }
      if (items % threads == 0) return;
    }
    int64_t g = c->og_size - 1;
    const int64_t n_even = n_ob + n_ob % 2;
    while (g >= 2 && (g % 2 != 0 || n_even % g != 0)) --g;
    if (!c->pixel_major && g >= 2 &&
        (!first_og || (c->n_pc == 1 && 4 * g >= first_og))) {
      c->og_size = g;
      continue;
    }
    if (c->p_chunk <= mr || (first_og && items >= 2 * first_items)) break;
    const int64_t n = c->n_pc + 1;
    chunk = ((hw + n - 1) / n + mr - 1) / mr * mr;
    if (chunk >= c->p_chunk) chunk = c->p_chunk - mr;
  }
  if (first_og) {  /* no whole number a thread nearby: the first split with enough */
    c->og_size = first_og;
    c->p_chunk = first_chunk;
    c->n_pc = (hw + c->p_chunk - 1) / c->p_chunk;
    c->n_og = (n_ob + c->og_size - 1) / c->og_size;
  }
}

typedef struct pack_job {
  const mace_conv2d_shape *s;
  const float *filter;
  float *packed;
  int block, pointwise;
} pack_job;

static void pack_range(void *p, int64_t begin, int64_t end) {
  const pack_job *j = p;
  const mace_conv2d_shape *s = j->s;
  if (j->pointwise)
    mace_f32_nchwc_conv1x1_pack_blocks(j->block, s->out_c, s->in_c, j->filter, j->packed, begin,
                                       end);
  else
    mace_f32_nchwc_convkxk_pack_blocks(j->block, s->out_c, s->in_c, s->group, (int)s->k_h,
                                       (int)s->k_w, j->filter, j->packed, begin, end);
}

int mace_conv_nchwc_plan(mace_conv_nchwc *c, const mace_conv2d_shape *s, int block,
                         const float *filter, const float *bias, mace_threadpool *pool,
                         int x_plain, int64_t wino_m) {
  const int threads = mace_threadpool_size(pool);
  const int kind = mace_conv_nchwc_kind(s, block);
  /* A 1x1 stride-2 unpadded convolution (ResNet's downsampling shortcuts): its input's
   * every other pixel of every other row copied into the scratch, then the pointwise kernel
   * (the direct kernel ran such a layer no faster than Reorders around the plain GEMM; the
   * copy and the pointwise kernel beat both). */
  const int sub = kind == MACE_CONV_NCHWC_DIRECT && !x_plain && s->k_h == 1 && s->k_w == 1 &&
                  s->stride_h == 2 && s->pad_top == 0 && s->pad_left == 0 && !wino_m;
  if ((c->packed || c->wino.u || c->bias) &&
      (c->kind != kind || c->block != block || c->s.in_c != s->in_c || c->s.out_c != s->out_c ||
       c->s.k_h != s->k_h || c->s.k_w != s->k_w || c->s.group != s->group ||
       !c->bias != !bias || c->wino_m != wino_m ||
       c->subsample != sub))
    mace_conv_nchwc_free(c);
  c->scratch_bytes = 0;
  c->kind = kind;
  c->block = block;
  c->s = *s;
  c->x_plain = x_plain;
  c->in_cp = MACE_NCHWC_PADDED(s->in_c, block);
  c->out_cp = MACE_NCHWC_PADDED(s->out_c, block);
  mace_nchwc_group_span(block, s->in_c, s->out_c, s->group, &c->in_cg, &c->out_cg);
  if (bias && !c->bias) {  /* padded with zeros to out_cp, whatever the kernel */
    c->bias = calloc((size_t)c->out_cp, sizeof(float));
    if (!c->bias) return -1;
    memcpy(c->bias, bias, (size_t)s->out_c * sizeof(float));
  }
  if (wino_m) {
    if (kind != MACE_CONV_NCHWC_DIRECT || x_plain ||
        mace_winograd_nchwc_plan(&c->wino, wino_m, block, s, filter, pool) != 0)
      return -1;
    c->wino_m = wino_m;
    c->scratch_bytes = c->wino.scratch_bytes;
    return 0;
  }
  const mace_simd_kernels *k = mace_simd_active();
  c->subsample = sub;
  const int pk = c->subsample ? MACE_CONV_NCHWC_POINTWISE : kind;  /* the kernel */
  if (c->subsample)
    c->scratch_bytes = (size_t)(s->batch * c->in_cp * s->out_h * s->out_w) * sizeof(float);
  /* A direct convolution of a narrow plane with padding, or of rows with two or more border
   * columns, runs on a copy of x with the padding written in: the kernel computes a border
   * column (window clipped) as a 1-pixel tile, 2 accumulators in one FMA chain, nearly as
   * slow as a whole row's interior tile (ResNet-50's 3x3/2 512 on 14x14: a 1-pixel and a
   * 6-pixel tile a row), and rows of at most half a tile go two a tile where their windows'
   * rows agree: with the padded rows in, all of them do (7x7 stage 4). Dilated and 5x5
   * windows have 4 or more border columns. Wider planes with one border column a row keep x
   * as it is. The kernel is told where in the copy x's data is, and skips the taps that read
   * only padding for a whole tile (DeepLabV3's ASPP 3x3s, 2048 -> 256 on 14x14, dilations 6,
   * 12, 18). Measurements: benchmarks/HISTORY.md. */
  const int64_t ext_h = (s->k_h - 1) * s->dilation_h + 1;
  const int64_t ext_w = (s->k_w - 1) * s->dilation_w + 1;
  const int64_t right = (s->out_w - 1) * s->stride_w + ext_w - s->in_w - s->pad_left;
  const int64_t bottom = (s->out_h - 1) * s->stride_h + ext_h - s->in_h - s->pad_top;
  const int64_t border = (s->pad_left + s->stride_w - 1) / s->stride_w +
                         (right > 0 ? (right + s->stride_w - 1) / s->stride_w : 0);
  c->padded_h = c->padded_w = 0;
  if (kind == MACE_CONV_NCHWC_DIRECT && !x_plain && !c->subsample &&
      (s->out_w < 2 * MACE_NCHWC_C1_MR(block) || border >= 2) &&
      (s->pad_left > 0 || right > 0 || s->pad_top > 0 || bottom > 0)) {
    c->padded_h = (s->out_h - 1) * s->stride_h + ext_h;
    c->padded_w = (s->out_w - 1) * s->stride_w + ext_w;
    c->scratch_bytes =
        (size_t)(s->batch * c->in_cp * c->padded_h * c->padded_w) * sizeof(float);
  }
  if (!c->packed) {
    const int64_t nf =
        pk == MACE_CONV_NCHWC_POINTWISE
            ? mace_f32_nchwc_conv1x1_packed_floats(block, s->out_c, s->in_c)
        : kind == MACE_CONV_NCHWC_DIRECT
            ? mace_f32_nchwc_convkxk_packed_floats(block, s->out_c, s->in_c, s->group,
                                                   (int)s->k_h, (int)s->k_w)
            : mace_f32_nchwc_dwconv_packed_floats(block, s->in_c, (int)s->k_h);
    c->packed = mace_filter_alloc((size_t)nf * sizeof(float));
    if (!c->packed) {
      mace_conv_nchwc_free(c);
      return -1;
    }
    /* Output blocks shared out among the pool's threads, each packing (and first touching:
     * the kernel zeroing fresh pages was a large part of the build) its own part, as the
     * Winograd filters' transform is (ops/winograd_nchwc.c). */
    if (pk == MACE_CONV_NCHWC_POINTWISE || kind == MACE_CONV_NCHWC_DIRECT) {
      pack_job j = {s, filter, c->packed, block, pk == MACE_CONV_NCHWC_POINTWISE};
      const int64_t n_ob = c->out_cp / block;  /* chunks of about 16K floats or more */
      mace_threadpool_parallel_for(pool, n_ob, 1 + 16384 * n_ob / (nf + 1), pack_range, &j);
    } else {
      mace_f32_nchwc_dwconv_pack(block, s->in_c, (int)s->k_h, filter, c->packed);
    }
  }
  /* The SIMD kernel of the active ISA works on its own vector width; ref on any block. */
  c->pw = k->nchwc_block == block && k->nchwc_conv1x1 ? k->nchwc_conv1x1
                                                      : mace_f32_nchwc_conv1x1__ref;
  c->dw = k->nchwc_block == block && k->nchwc_dwconv ? k->nchwc_dwconv
                                                     : mace_f32_nchwc_dwconv__ref;
  c->kxk = k->nchwc_block == block && k->nchwc_convkxk ? k->nchwc_convkxk
                                                       : mace_f32_nchwc_convkxk__ref;
  if (pk == MACE_CONV_NCHWC_POINTWISE) pointwise_split(c, threads);
  /* Row bands where the layer before split its plane into them (its plane: the input's). */
  c->dw_bands = 0;
  if (kind == MACE_CONV_NCHWC_DEPTHWISE && threads > 1 &&
      mace_nchwc_row_split(c->in_cp, s->in_h * s->in_w))
    c->dw_bands = mace_nchwc_bands(s->out_h, threads);
  /* A direct convolution whose input plane is larger than its filter, and split by rows by
   * the layer before, gives each thread a band of rows across all output blocks: a thread
   * reads its part of the plane, written on its core, and all of the filter, where with
   * pairs it read all of the plane and half the filter (ResNet-50's 3x3/2 128 on 56x56). Its
   * 256 on 28x28 (2.4 MB of filter, 0.8 MB of input) keeps pairs. */
  c->direct_bands = 0;
  if (kind == MACE_CONV_NCHWC_DIRECT && !c->subsample && threads > 1 &&
      mace_nchwc_row_split(c->in_cp, s->in_h * s->in_w) &&
      c->out_cp * c->in_cg * s->k_h * s->k_w <= c->in_cp * s->in_h * s->in_w)
    c->direct_bands = s->out_h < threads ? s->out_h : threads;
  return 0;
}

/* The kernels run on the padded channel counts (in_cp, out_cp). */
typedef struct nchwc_job {
  const mace_conv_nchwc *c;
  const float *x, *res;
  const mace_activation *act;
  float *y;
  float *sub;  /* subsample: the copy of x */
} nchwc_job;

/* Pointwise item `it`: its output-block group (*og) and pixel range (returned); the image is
 * it / (n_og * n_pc). */
static int64_t pointwise_item(const mace_conv_nchwc *c, int64_t it, int64_t *og) {
  const int64_t rest = it % (c->n_og * c->n_pc);
  *og = c->pixel_major ? rest % c->n_og : rest / c->n_pc;
  return c->pixel_major ? rest / c->n_og : rest % c->n_pc;
}

static void pointwise_range(void *p, int64_t begin, int64_t end) {
  const nchwc_job *j = p;
  const mace_conv_nchwc *c = j->c;
  const mace_conv2d_shape *s = &c->s;
  const int64_t hw = s->out_h * s->out_w, n_ob = c->out_cp / c->block;
  int64_t og, pc = pointwise_item(c, begin, &og);
  for (int64_t it = begin; it < end; ++it) {
    const int64_t img = it / (c->n_og * c->n_pc);
    int64_t next_og = -1;
    const int64_t next_pc = it + 1 < end ? pointwise_item(c, it + 1, &next_og) : 0;
    const int64_t p0 = pc * c->p_chunk, p1 = p0 + c->p_chunk < hw ? p0 + c->p_chunk : hw;
    const int64_t ob0 = og * c->og_size, ob1 = ob0 + c->og_size < n_ob ? ob0 + c->og_size : n_ob;
    /* The next item's weights, unless they are this one's (another pixel range). */
    const float *next = next_og >= 0 && next_og != og
                            ? c->packed + next_og * c->og_size * c->in_cp * c->block
                            : NULL;
    const mace_nchwc_conv1x1 a = {.block = c->block, .in_c = c->in_cp, .out_c = c->out_cp,
                                  .in_real = s->in_c,
                                  .hw = hw, .x = j->x + img * c->in_cp * hw, .w = c->packed,
                                  .bias = c->bias,
                                  .res = j->res ? j->res + img * c->out_cp * hw : NULL,
                                  .act = j->act, .y = j->y + img * c->out_cp * hw,
                                  .w_next = next};
    c->pw(&a, ob0, ob1, p0, p1);
    og = next_og;
    pc = next_pc;
  }
}

/* Depthwise work items: (image, input block, output row), or with row bands (image, band,
 * block), so that a thread's share is a part of the plane across all blocks: the part the
 * pointwise layer before wrote on that thread when it split its plane (pointwise_split). */
static void depthwise_range(void *p, int64_t begin, int64_t end) {
  const nchwc_job *j = p;
  const mace_conv_nchwc *c = j->c;
  const mace_conv2d_shape *s = &c->s;
  const int64_t n_b = c->in_cp / c->block, rows = n_b * s->out_h;
  const int64_t in_img = c->in_cp * s->in_h * s->in_w, out_img = c->in_cp * s->out_h * s->out_w;
  mace_nchwc_dwconv a = {.block = c->block, .c = c->in_cp, .in_h = s->in_h, .in_w = s->in_w,
                         .out_h = s->out_h, .out_w = s->out_w, .k = (int)s->k_h,
                         .stride = (int)s->stride_h, .dil = (int)s->dilation_h,
                         .pad_top = s->pad_top,
                         .pad_left = s->pad_left, .w = c->packed, .bias = c->bias,
                         .act = j->act};
  if (c->dw_bands) {
    for (int64_t it = begin; it < end; ++it) {
      const mace_nchwc_band_item b = mace_nchwc_band_item_at(it, c->dw_bands, n_b, s->out_h);
      a.x = j->x + b.img * in_img;
      a.y = j->y + b.img * out_img;
      if (b.y0 < b.y1) c->dw(&a, b.block * s->out_h + b.y0, b.block * s->out_h + b.y1);
    }
    return;
  }
  for (int64_t r = begin; r < end;) {
    const int64_t img = r / rows, r0 = r % rows;
    const int64_t r1 = end - img * rows < rows ? end - img * rows : rows;
    a.x = j->x + img * in_img;
    a.y = j->y + img * out_img;
    c->dw(&a, r0, r1);
    r += r1 - r0;
  }
}

/* Direct KxK work items: (image, row band, pair of output blocks, output row), in that order,
 * so a thread's contiguous share reuses one pair's weights (the kernel's tile is 2 blocks)
 * over consecutive rows; rows make enough items to balance 2 threads on a 13x13 plane. With
 * one band (direct_bands 0) a thread's share is a part of the filter; with a band a thread,
 * a part of the plane (mace_conv_nchwc_plan says when). */
static void direct_range(void *p, int64_t begin, int64_t end) {
  const nchwc_job *j = p;
  const mace_conv_nchwc *c = j->c;
  const mace_conv2d_shape *s = &c->s;
  const int64_t n_ob = c->out_cp / c->block, n_op = (n_ob + 1) / 2, rows = s->out_h;
  const int64_t bands = c->direct_bands ? c->direct_bands : 1;
  const int64_t in_h = c->padded_h ? c->padded_h : s->in_h;
  const int64_t in_w = c->padded_w ? c->padded_w : s->in_w;
  const int64_t in_img = (c->x_plain ? s->in_c : c->in_cp) * in_h * in_w;
  const int64_t out_img = c->out_cp * s->out_h * s->out_w;
  /* On a padded copy, the columns pad_range copied x's into: the data (at least one column:
   * 0 reads as all of x; where the padding covers every window, one past them). */
  const int64_t data_x0 = s->pad_left < in_w ? s->pad_left : in_w;
  int64_t data_w = c->padded_w ? in_w - data_x0 : s->in_w;
  if (data_w > s->in_w) data_w = s->in_w;
  if (data_w < 1) data_w = 1;
  for (int64_t it = begin; it < end;) {
    const int64_t img = it / (n_op * rows), r = it % (n_op * rows);
    int64_t band = 0;  /* the band's items start at n_op * its first row */
    while (band + 1 < bands && n_op * ((band + 1) * rows / bands) <= r) ++band;
    const int64_t y0 = band * rows / bands, len = (band + 1) * rows / bands - y0;
    const int64_t op = (r - n_op * y0) / len, oy0 = y0 + (r - n_op * y0) % len;
    const int64_t oy1 = end - it < y0 + len - oy0 ? oy0 + (end - it) : y0 + len;
    const mace_nchwc_convkxk a = {.block = c->block, .in_c = c->in_cp, .out_c = c->out_cp,
                                  .in_h = in_h, .in_w = in_w, .out_h = s->out_h,
                                  .out_w = s->out_w, .k_h = (int)s->k_h, .k_w = (int)s->k_w,
                                  .stride = (int)s->stride_h, .dil_h = (int)s->dilation_h,
                                  .dil_w = (int)s->dilation_w, .in_cg = c->in_cg,
                                  .out_cg = c->out_cg,
                                  .pad_top = c->padded_h ? 0 : s->pad_top,
                                  .pad_left = c->padded_w ? 0 : s->pad_left,
                                  .data_y0 = c->padded_h ? s->pad_top : 0, .data_h = s->in_h,
                                  .data_x0 = c->padded_w ? data_x0 : 0, .data_w = data_w,
                                  .x_plain_c = c->x_plain ? s->in_c : 0, .x = j->x + img * in_img,
                                  .w = c->packed, .bias = c->bias,
                                  .res = j->res ? j->res + img * out_img : NULL, .act = j->act,
                                  .y = j->y + img * out_img};
    c->kxk(&a, 2 * op, 2 * op + 2 < n_ob ? 2 * op + 2 : n_ob, oy0, oy1);
    it += oy1 - oy0;
  }
}

/* Items: (image, input block, output row) of the subsampled copy of x into j->sub. */
static void subsample_range(void *p, int64_t begin, int64_t end) {
  const nchwc_job *j = p;
  const mace_conv_nchwc *c = j->c;
  const mace_conv2d_shape *s = &c->s;
  const int b = c->block;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t plane = r / s->out_h, oy = r % s->out_h;  /* plane: image * blocks + block */
    const float *src = j->x + (plane * s->in_h + 2 * oy) * s->in_w * b;
    float *dst = j->sub + (plane * s->out_h + oy) * s->out_w * b;
    for (int64_t ox = 0; ox < s->out_w; ++ox)
      memcpy(dst + ox * b, src + 2 * ox * b, (size_t)b * sizeof(float));
  }
}

/* Items: (image, input block, row) of the copy of x with its padding written in, into j->sub:
 * padded_h rows (pad_top of zeros first, then x's rows, then zeros) of padded_w columns. */
static void pad_range(void *p, int64_t begin, int64_t end) {
  const nchwc_job *j = p;
  const mace_conv_nchwc *c = j->c;
  const mace_conv2d_shape *s = &c->s;
  const int b = c->block;
  const int64_t pw = c->padded_w, left = s->pad_left < pw ? s->pad_left : pw;
  int64_t n = s->in_w < pw - left ? s->in_w : pw - left;  /* columns copied */
  if (n < 0) n = 0;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t plane = r / c->padded_h, iy = r % c->padded_h - s->pad_top;
    float *dst = j->sub + r * pw * b;
    if (iy < 0 || iy >= s->in_h) {
      memset(dst, 0, (size_t)(pw * b) * sizeof(float));
      continue;
    }
    const float *src = j->x + (plane * s->in_h + iy) * s->in_w * b;
    memset(dst, 0, (size_t)(left * b) * sizeof(float));
    memcpy(dst + left * b, src, (size_t)(n * b) * sizeof(float));
    memset(dst + (left + n) * b, 0, (size_t)((pw - left - n) * b) * sizeof(float));
  }
}

void mace_conv_nchwc_run(const mace_conv_nchwc *c, mace_threadpool *pool, const float *x,
                         const float *res, const mace_activation *act, float *y,
                         void *scratch) {
  nchwc_job j = {c, x, res, act, y, scratch};
  if (c->wino_m) {
    mace_winograd_nchwc_run(&c->wino, pool, x, c->bias, res, act, y, scratch);
  } else if (c->kind == MACE_CONV_NCHWC_POINTWISE || c->subsample) {
    if (c->subsample) {
      mace_threadpool_parallel_for(pool, c->s.batch * c->in_cp / c->block * c->s.out_h, 8,
                                   subsample_range, &j);
      j.x = scratch;
    }
    mace_threadpool_parallel_for(pool, c->s.batch * c->n_pc * c->n_og, 1, pointwise_range, &j);
  } else if (c->kind == MACE_CONV_NCHWC_DIRECT) {
    if (c->padded_w) {
      mace_threadpool_parallel_for(pool, c->s.batch * c->in_cp / c->block * c->padded_h, 8,
                                   pad_range, &j);
      j.x = scratch;
    }
    const int64_t n_op = (c->out_cp / c->block + 1) / 2;
    mace_threadpool_parallel_for(pool, c->s.batch * n_op * c->s.out_h, 1, direct_range, &j);
  } else {
    const int64_t blocks = c->in_cp / c->block;
    if (c->dw_bands)
      mace_threadpool_parallel_for(pool, c->s.batch * c->dw_bands * blocks, 1, depthwise_range,
                                   &j);
    else
      mace_threadpool_parallel_for(pool, c->s.batch * blocks * c->s.out_h, 2, depthwise_range,
                                   &j);
  }
}
