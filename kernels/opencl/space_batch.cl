/* BatchToSpaceND and SpaceToBatchND on NCHW buffers (ops/opencl/space_batch.c), TF's block
 * order as kernels/cpu/ref/space_batch.c: batch b = (oy * bw + ox) * N + n of the batched
 * tensor holds the pixels (h, w) of image n with h % bh == oy, w % bw == ox (h / bh, w / bw in
 * it). One output element per work item; offsets are in elements. */

/* x [N * bh * bw, C, IH, IW] -> y [N, C, OH, OW]; work item (ow, oh, n * C + c). */
__kernel void batch_to_space(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                             int n_img, int c_n, int ih, int iw, int oh_n, int ow_n, int bh,
                             int bw, int crop_t, int crop_l) {
  const int ow = get_global_id(0), oh = get_global_id(1), nc = get_global_id(2);
  if (ow >= ow_n || oh >= oh_n || nc >= n_img * c_n) return;
  const int n = nc / c_n, c = nc % c_n, h = oh + crop_t, w = ow + crop_l;
  const int b = ((h % bh) * bw + w % bw) * n_img + n;
  const float v = LOAD(x, x_off + ((b * c_n + c) * ih + h / bh) * iw + w / bw);
  STORE(y, y_off + (nc * oh_n + oh) * ow_n + ow, v);
}

/* x [N, C, IH, IW] -> y [N * bh * bw, C, OH, OW], zeros in the padding; work item
 * (w, h, b * C + c). */
__kernel void space_to_batch(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                             int n_img, int c_n, int ih, int iw, int oh_n, int ow_n, int bh,
                             int bw, int pad_t, int pad_l) {
  const int w = get_global_id(0), h = get_global_id(1), bc = get_global_id(2);
  if (w >= ow_n || h >= oh_n || bc >= n_img * bh * bw * c_n) return;
  const int b = bc / c_n, c = bc % c_n, n = b % n_img, blk = b / n_img;
  const int sy = h * bh + blk / bw - pad_t, sx = w * bw + blk % bw - pad_l;
  const float v = sy >= 0 && sy < ih && sx >= 0 && sx < iw
                      ? LOAD(x, x_off + ((n * c_n + c) * ih + sy) * iw + sx) : 0.0f;
  STORE(y, y_off + (bc * oh_n + h) * ow_n + w, v);
}
