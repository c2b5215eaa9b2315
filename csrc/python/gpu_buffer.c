/* mace._mace.GpuBuffer: a tensor's bytes in an OpenCL buffer of a GPU engine (mace_gpu_buffer),
 * what a device-resident mace.Tensor holds. */
#include "python/mace_python.h"

#include <string.h>

#include "mace/mace_dlpack.h"

/* Ownership: `buffer` is owned (mace_gpu_buffer_destroy at dealloc); it keeps its OpenCL
 * context alive, so it outlives the engine that made it. dims/dtype: the tensor it holds. */
typedef struct {
  PyObject_HEAD
  mace_gpu_buffer *buffer;
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
  mace_dtype dtype;
} GpuBufferObject;

static PyTypeObject GpuBufferType;

PyObject *mace_py_gpu_buffer_new(mace_engine *engine, const mace_tensor_info *info) {
  GpuBufferObject *self = PyObject_New(GpuBufferObject, &GpuBufferType);
  if (self == NULL) return NULL;
  self->buffer = NULL;
  self->ndim = info->ndim;
  memcpy(self->dims, info->dims, sizeof(self->dims));
  self->dtype = info->dtype;
  size_t bytes = mace_engine_gpu_tensor_bytes(engine, info);
  mace_status st = mace_gpu_buffer_create(engine, bytes, &self->buffer);
  if (st != MACE_OK) {
    Py_DECREF(self);
    return mace_py_raise(st);
  }
  return (PyObject *)self;
}

mace_gpu_buffer *mace_py_gpu_buffer_get(PyObject *obj, int *ndim, int64_t *dims,
                                        mace_dtype *dtype) {
  if (!PyObject_TypeCheck(obj, &GpuBufferType)) return NULL;
  GpuBufferObject *self = (GpuBufferObject *)obj;
  *ndim = self->ndim;
  memcpy(dims, self->dims, sizeof(self->dims));
  *dtype = self->dtype;
  return self->buffer;
}

void mace_py_gpu_buffer_set_dims(PyObject *obj, int ndim, const int64_t *dims) {
  GpuBufferObject *self = (GpuBufferObject *)obj;
  self->ndim = ndim;
  memcpy(self->dims, dims, sizeof(self->dims));
}

static void GpuBuffer_dealloc(GpuBufferObject *self) {
  mace_gpu_buffer_destroy(self->buffer);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int64_t numel(const GpuBufferObject *self) {
  int64_t n = 1;
  for (int d = 0; d < self->ndim; ++d) n *= self->dims[d];
  return n;
}

/* The tensor copied to a new host array of its dtype (float tensors stored in fp16 are
 * widened to float32, exactly). */
static PyObject *GpuBuffer_read(GpuBufferObject *self, PyObject *unused) {
  (void)unused;
  const int fp16 = self->dtype == MACE_DT_F32 &&
                   mace_gpu_buffer_precision(self->buffer) == MACE_GPU_FP16;
  int npy = fp16 ? NPY_FLOAT16 : mace_py_npy_type(self->dtype);
  if (npy < 0) {
    PyErr_Format(mace_py_UnsupportedError, "mace dtype %d has no NumPy type", (int)self->dtype);
    return NULL;
  }
  npy_intp dims[MACE_MAX_DIMS];
  for (int d = 0; d < self->ndim; ++d) dims[d] = (npy_intp)self->dims[d];
  PyArrayObject *raw = (PyArrayObject *)PyArray_SimpleNew(self->ndim, dims, npy);
  if (raw == NULL) return NULL;
  const size_t bytes = (size_t)numel(self) * (size_t)PyArray_ITEMSIZE(raw);
  mace_status st;
  Py_BEGIN_ALLOW_THREADS
  st = mace_gpu_buffer_read(self->buffer, 0, PyArray_DATA(raw), bytes);
  Py_END_ALLOW_THREADS
  if (st != MACE_OK) {
    Py_DECREF(raw);
    return mace_py_raise(st);
  }
  if (!fp16) return (PyObject *)raw;
  PyObject *wide = PyArray_Cast(raw, NPY_FLOAT32);
  Py_DECREF(raw);
  return wide;
}

static PyObject *GpuBuffer_get_shape(GpuBufferObject *self, void *closure) {
  (void)closure;
  return mace_py_dims_tuple(self->ndim, self->dims);
}

static PyObject *GpuBuffer_get_dtype(GpuBufferObject *self, void *closure) {
  (void)closure;
  int npy = mace_py_npy_type(self->dtype);
  if (npy < 0) {
    PyErr_Format(mace_py_UnsupportedError, "mace dtype %d has no NumPy type", (int)self->dtype);
    return NULL;
  }
  return (PyObject *)PyArray_DescrFromType(npy);
}

static PyObject *GpuBuffer_get_precision(GpuBufferObject *self, void *closure) {
  (void)closure;
  return PyUnicode_FromString(mace_gpu_buffer_precision(self->buffer) == MACE_GPU_FP16 ? "fp16"
                                                                                      : "fp32");
}

static PyObject *GpuBuffer_get_nbytes(GpuBufferObject *self, void *closure) {
  (void)closure;
  return PyLong_FromSize_t(mace_gpu_buffer_size(self->buffer));
}

/* DLPack: the managed tensor holds a reference to the GpuBuffer (its release drops it, taking
 * the GIL: a consumer may call the deleter from any thread). */
static void dlpack_release(void *ctx) {
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)ctx);
  PyGILState_Release(g);
}

/* A capsule nobody consumed (still named "dltensor[_versioned]") frees its tensor; a consumed
 * one ("used_...") belongs to the consumer, who calls the deleter. */
static void dlpack_capsule_destructor(PyObject *capsule) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    mace_dl_managed_tensor *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (m && m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    mace_dl_managed_tensor_versioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  }
  PyErr_Restore(type, value, tb);
}

/* export_dlpack(versioned) -> a DLPack capsule of the tensor in place (data: the cl_mem). */
static PyObject *GpuBuffer_export_dlpack(GpuBufferObject *self, PyObject *args) {
  int versioned = 0;
  if (!PyArg_ParseTuple(args, "p:export_dlpack", &versioned)) return NULL;
  void *managed = NULL;
  Py_INCREF(self);  /* the tensor's reference, dropped by its deleter */
  mace_status st = mace_gpu_buffer_export_dlpack(self->buffer, self->ndim, self->dims,
                                                 self->dtype, versioned, dlpack_release, self,
                                                 &managed);
  if (st != MACE_OK) {
    Py_DECREF(self);
    return mace_py_raise(st);
  }
  PyObject *capsule = PyCapsule_New(managed, versioned ? "dltensor_versioned" : "dltensor",
                                    dlpack_capsule_destructor);
  if (capsule == NULL) {
    if (versioned)
      ((mace_dl_managed_tensor_versioned *)managed)->deleter(managed);
    else
      ((mace_dl_managed_tensor *)managed)->deleter(managed);
  }
  return capsule;
}

static PyMethodDef GpuBuffer_methods[] = {
    {"read", (PyCFunction)GpuBuffer_read, METH_NOARGS,
     "read() -> numpy.ndarray: a host copy of the tensor (float32 for float tensors)."},
    {"export_dlpack", (PyCFunction)GpuBuffer_export_dlpack, METH_VARARGS,
     "export_dlpack(versioned: bool) -> PyCapsule: the tensor in place as DLPack's kDLOpenCL "
     "(data is the cl_mem; fp16 storage as float16), 'dltensor_versioned' (DLPack 1.0) or "
     "'dltensor'."},
    {NULL, NULL, 0, NULL},
};

static PyObject *GpuBuffer_get_device_index(GpuBufferObject *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(mace_gpu_buffer_device(self->buffer));
}

static PyGetSetDef GpuBuffer_getset[] = {
    {"device_index", (getter)GpuBuffer_get_device_index, NULL,
     "Index of the buffer's OpenCL device in mace.devices() (-1: not listed).", NULL},
    {"shape", (getter)GpuBuffer_get_shape, NULL, "The tensor's shape.", NULL},
    {"dtype", (getter)GpuBuffer_get_dtype, NULL, "The tensor's NumPy dtype.", NULL},
    {"precision", (getter)GpuBuffer_get_precision, NULL,
     "How float tensors are stored: 'fp16' or 'fp32' (the making engine's gpu_precision).",
     NULL},
    {"nbytes", (getter)GpuBuffer_get_nbytes, NULL, "Bytes of the device buffer.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject GpuBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mace._mace.GpuBuffer",
    .tp_basicsize = sizeof(GpuBufferObject),
    .tp_dealloc = (destructor)GpuBuffer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor in an OpenCL buffer of a GPU engine (made by Engine.run with "
              "keep_on_device); mace.Tensor wraps it.",
    .tp_methods = GpuBuffer_methods,
    .tp_getset = GpuBuffer_getset,
};

int mace_py_gpu_buffer_module_init(PyObject *module) {
  if (PyType_Ready(&GpuBufferType) < 0) return -1;
  Py_INCREF(&GpuBufferType);
  if (PyModule_AddObject(module, "GpuBuffer", (PyObject *)&GpuBufferType) < 0) {
    Py_DECREF(&GpuBufferType);
    return -1;
  }
  return 0;
}
