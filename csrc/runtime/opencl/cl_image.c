/* image2d memory of the OpenCL runtime: allocation, the device's limits and the buffer <-> image
 * layout transforms (runtime/opencl/cl_runtime.h, "image2d memory"). */
#include "runtime/opencl/cl_runtime.h"

#ifdef MACE_HAVE_OPENCL_HEADERS

#include "runtime/opencl/cl_loader.h"

mace_status mace_cl_image_limits(mace_cl_runtime *rt, int64_t *max_width, int64_t *max_height) {
  const mace_cl_api *api;
  cl_context ctx;
  cl_command_queue q;
  mace_cl_runtime_handles(rt, &api, &ctx, &q);
  const cl_device_id dev = mace_cl_runtime_device_id(rt);
  cl_bool images = CL_FALSE;
  size_t w = 0, h = 0;
  if (api->clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof(images), &images, NULL) !=
          CL_SUCCESS || !images)
    return mace_error(MACE_UNSUPPORTED, "OpenCL: %s has no image support (cl_mem_type image)",
                      mace_cl_runtime_device(rt)->name);
  if (api->clGetDeviceInfo(dev, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof(w), &w, NULL) != CL_SUCCESS ||
      api->clGetDeviceInfo(dev, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof(h), &h, NULL) != CL_SUCCESS)
    return mace_error(MACE_UNSUPPORTED, "OpenCL: %s does not say its image2d limits",
                      mace_cl_runtime_device(rt)->name);
  *max_width = (int64_t)w;
  *max_height = (int64_t)h;
  return MACE_OK;
}

mace_status mace_cl_image_alloc(mace_cl_runtime *rt, size_t width, size_t height, void **mem) {
  const mace_cl_api *api;
  cl_context ctx;
  cl_command_queue q;
  mace_cl_runtime_handles(rt, &api, &ctx, &q);
  *mem = NULL;
  const cl_image_format fmt = {
      CL_RGBA, mace_cl_runtime_precision(rt) == MACE_CL_FP16 ? CL_HALF_FLOAT : CL_FLOAT};
  cl_image_desc desc = {0};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = width ? width : 1;
  desc.image_height = height ? height : 1;
  cl_int err = CL_SUCCESS;
  cl_mem m = api->clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
  if (!m)
    return mace_error(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
                              err == CL_OUT_OF_HOST_MEMORY
                          ? MACE_OUT_OF_RESOURCES
                          : MACE_RUNTIME_ERROR,
                      "OpenCL: clCreateImage of %zu x %zu RGBA %s pixels failed: %s", width,
                      height, fmt.image_channel_data_type == CL_HALF_FLOAT ? "half" : "float",
                      mace_cl_error_name(err));
  *mem = m;
  return MACE_OK;
}

/* One transform launch: work item (w, channel block, n * H + h). */
static mace_status transform(mace_cl_runtime *rt, const char *name, const void *buf,
                             size_t offset, const void *image, const int64_t *dims,
                             const char *tag) {
  const size_t es = mace_cl_runtime_elem_size(rt);
  if (offset % es)
    return mace_error(MACE_RUNTIME_ERROR, "OpenCL: %s at byte %zu, not a whole element", name,
                      offset);
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "image_transform", name, "", &k));
  const int32_t off = (int32_t)(offset / es);
  const int32_t d[4] = {(int32_t)dims[0], (int32_t)dims[1], (int32_t)dims[2], (int32_t)dims[3]};
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 0, buf));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 1, &off, sizeof(off)));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 2, image));
  for (int i = 0; i < 4; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg(k, 3 + i, &d[i], sizeof(d[i])));
  const size_t gws[3] = {(size_t)dims[3], (size_t)((dims[1] + 3) / 4),
                         (size_t)(dims[0] * dims[2])};
  return mace_cl_launch(rt, k, 3, gws, NULL, tag);
}

mace_status mace_cl_image_from_buffer(mace_cl_runtime *rt, const void *buf, size_t offset,
                                      void *image, const int64_t *dims, const char *tag) {
  return transform(rt, "buffer_to_image", buf, offset, image, dims, tag);
}

mace_status mace_cl_image_to_buffer(mace_cl_runtime *rt, const void *image, void *buf,
                                    size_t offset, const int64_t *dims, const char *tag) {
  return transform(rt, "image_to_buffer", buf, offset, image, dims, tag);
}

#else /* the stub runtime (cl_stub.c): no runtime is ever created, so these are never reached */

mace_status mace_cl_image_limits(mace_cl_runtime *rt, int64_t *max_width, int64_t *max_height) {
  (void)rt;
  *max_width = *max_height = 0;
  return mace_error(MACE_UNSUPPORTED, "mace was built without OpenCL headers: no images");
}
mace_status mace_cl_image_alloc(mace_cl_runtime *rt, size_t width, size_t height, void **mem) {
  (void)rt, (void)width, (void)height;
  *mem = NULL;
  return mace_error(MACE_UNSUPPORTED, "mace was built without OpenCL headers: no images");
}
mace_status mace_cl_image_from_buffer(mace_cl_runtime *rt, const void *buf, size_t offset,
                                      void *image, const int64_t *dims, const char *tag) {
  (void)rt, (void)buf, (void)offset, (void)image, (void)dims, (void)tag;
  return mace_error(MACE_UNSUPPORTED, "mace was built without OpenCL headers: no images");
}
mace_status mace_cl_image_to_buffer(mace_cl_runtime *rt, const void *image, void *buf,
                                    size_t offset, const int64_t *dims, const char *tag) {
  (void)rt, (void)buf, (void)offset, (void)image, (void)dims, (void)tag;
  return mace_error(MACE_UNSUPPORTED, "mace was built without OpenCL headers: no images");
}
int mace_cl_runtime_image_memory(const mace_cl_runtime *rt) {
  (void)rt;
  return 0;
}

#endif /* MACE_HAVE_OPENCL_HEADERS */
