/* The Engine methods beside running (engine.c): profiling and memory queries, and the GPU
 * ones (launch counters, a host array uploaded into a GpuBuffer of the engine's context). */
#include "python/mace_python.h"

#include <string.h>

PyObject *mace_py_engine_set_profiling(PyObject *obj, PyObject *args) {
  int on = 0;
  if (!PyArg_ParseTuple(args, "p:set_profiling", &on)) return NULL;
  mace_engine *engine = mace_py_engine_acquire(obj);
  if (engine == NULL) return NULL;
  mace_status st = mace_engine_set_profiling(engine, on);
  mace_py_engine_release(obj);
  if (st != MACE_OK) return mace_py_raise(st);
  Py_RETURN_NONE;
}

PyObject *mace_py_engine_op_stats(PyObject *obj, PyObject *unused) {
  (void)unused;
  PyObject *list = NULL, *res = NULL;
  mace_status st = MACE_OK;
  mace_engine *engine = mace_py_engine_acquire(obj);
  if (engine == NULL) return NULL;
  int n = mace_engine_num_ops(engine);
  list = PyList_New(0);
  if (list == NULL) goto finally;
  for (int i = 0; i < n; ++i) {
    mace_op_stat stat;
    if ((st = mace_engine_op_stat(engine, i, &stat)) != MACE_OK) {
      mace_py_raise(st);
      goto finally;
    }
    PyObject *dims = mace_py_dims_tuple(stat.ndim, stat.out_dims);
    if (dims == NULL) goto finally;
    PyObject *d = Py_BuildValue("{s:N,s:N,s:d,s:L,s:N,s:s,s:O}", "name", mace_py_str(stat.name),
                                "type", mace_py_str(stat.type), "ms", stat.ms, "macs",
                                (long long)stat.macs, "out_dims", dims, "device",
                                stat.device == MACE_DEVICE_GPU ? "gpu" : "cpu", "reinferred",
                                stat.reinferred ? Py_True : Py_False);
    if (d == NULL || PyList_Append(list, d) < 0) {
      Py_XDECREF(d);
      goto finally;
    }
    Py_DECREF(d);
  }
  res = list;
  list = NULL;
finally:
  mace_py_engine_release(obj);
  Py_XDECREF(list);
  return res;
}

PyObject *mace_py_engine_memory_stats(PyObject *obj, PyObject *unused) {
  (void)unused;
  mace_memory_stat stat;
  mace_engine *engine = mace_py_engine_acquire(obj);
  if (engine == NULL) return NULL;
  mace_status st = mace_engine_memory_stat(engine, &stat);
  mace_py_engine_release(obj);
  if (st != MACE_OK) return mace_py_raise(st);
  if (stat.device_arena_bytes)  /* GPU engines only: CPU sessions keep their three keys */
    return Py_BuildValue("{s:L,s:L,s:L,s:L}", "arena_bytes", (long long)stat.arena_bytes,
                         "naive_bytes", (long long)stat.naive_bytes, "weights_bytes",
                         (long long)stat.weights_bytes, "device_arena_bytes",
                         (long long)stat.device_arena_bytes);
  return Py_BuildValue("{s:L,s:L,s:L}", "arena_bytes", (long long)stat.arena_bytes,
                       "naive_bytes", (long long)stat.naive_bytes, "weights_bytes",
                       (long long)stat.weights_bytes);
}

/* The precision a GPU engine stores floats in ("fp16" / "fp32"), None on the CPU. */
PyObject *mace_py_engine_gpu_precision(PyObject *obj, PyObject *unused) {
  (void)unused;
  mace_engine *engine = mace_py_engine_acquire(obj);
  if (engine == NULL) return NULL;
  const int p = mace_engine_gpu_precision(engine);
  mace_py_engine_release(obj);
  if (p < 0) Py_RETURN_NONE;
  return PyUnicode_FromString(p == MACE_GPU_FP16 ? "fp16" : "fp32");
}

PyObject *mace_py_engine_release_intermediate_buffers(PyObject *obj, PyObject *unused) {
  (void)unused;
  mace_engine *engine = mace_py_engine_acquire(obj);
  if (engine == NULL) return NULL;
  mace_status st = mace_engine_release_intermediate_buffers(engine);
  mace_py_engine_release(obj);
  if (st != MACE_OK) return mace_py_raise(st);
  Py_RETURN_NONE;
}

/* {launches, chunked_launches, chunks} of a GPU engine's kernels (zeros on the CPU). */
PyObject *mace_py_engine_gpu_launch_stats(PyObject *obj, PyObject *unused) {
  (void)unused;
  mace_gpu_launch_stat stat;
  mace_engine *engine = mace_py_engine_acquire(obj);
  if (engine == NULL) return NULL;
  mace_status st = mace_engine_gpu_launch_stat(engine, &stat);
  mace_py_engine_release(obj);
  if (st != MACE_OK) return mace_py_raise(st);
  return Py_BuildValue("{s:L,s:L,s:L}", "launches", (long long)stat.launches, "chunked_launches",
                       (long long)stat.chunked_launches, "chunks", (long long)stat.chunks);
}

/* Whether a GpuBuffer is in this engine's OpenCL context and queue (usable by its runs). */
PyObject *mace_py_engine_shares_gpu_buffer(PyObject *obj, PyObject *arg) {
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
  mace_dtype dtype;
  mace_gpu_buffer *buffer = mace_py_gpu_buffer_get(arg, &ndim, dims, &dtype);
  if (buffer == NULL) {
    PyErr_SetString(PyExc_TypeError, "shares_gpu_buffer takes a mace._mace.GpuBuffer");
    return NULL;
  }
  mace_engine *engine = mace_py_engine_acquire(obj);
  if (engine == NULL) return NULL;
  const int shares = mace_engine_shares_gpu_buffer(engine, buffer);
  mace_py_engine_release(obj);
  return PyBool_FromLong(shares);
}

/* A new GpuBuffer of this GPU engine holding a copy of `array` (C-contiguous; float32 stored in
 * the engine's precision, fp16 rounded to nearest even as NumPy's float16 cast). */
PyObject *mace_py_engine_upload(PyObject *obj, PyObject *arg) {
  PyArrayObject *arr = NULL, *stored = NULL;
  PyObject *buffer = NULL, *res = NULL;
  mace_engine *engine = NULL;
  if (!PyArray_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "upload takes a numpy.ndarray");
    goto finally;
  }
  arr = (PyArrayObject *)PyArray_FromAny(arg, NULL, 0, 0, NPY_ARRAY_CARRAY_RO, NULL);
  if (arr == NULL) goto finally;
  mace_tensor_info info;
  memset(&info, 0, sizeof(info));
  info.dtype = mace_py_mace_dtype(PyArray_TYPE(arr));
  info.ndim = PyArray_NDIM(arr);
  if (info.dtype == MACE_DT_INVALID) {
    PyErr_Format(mace_py_InvalidArgumentError, "a %s array cannot go on the GPU: mace has no "
                 "such dtype", PyArray_DESCR(arr)->typeobj->tp_name);
    goto finally;
  }
  if (info.ndim > MACE_MAX_DIMS) {
    PyErr_Format(mace_py_InvalidArgumentError, "a %d-D array cannot go on the GPU (at most %d "
                 "dims)", info.ndim, MACE_MAX_DIMS);
    goto finally;
  }
  for (int d = 0; d < info.ndim; ++d) info.dims[d] = (int64_t)PyArray_DIM(arr, d);
  if (PyArray_SIZE(arr) == 0) {
    PyErr_SetString(mace_py_InvalidArgumentError, "an empty array has nothing to put on the "
                    "GPU");
    goto finally;
  }
  if ((engine = mace_py_engine_acquire(obj)) == NULL) goto finally;
  const int fp16 = mace_engine_gpu_precision(engine) == MACE_GPU_FP16;
  if (mace_engine_gpu_precision(engine) < 0) {
    PyErr_SetString(mace_py_InvalidArgumentError, "this session runs on the CPU: a GPU tensor "
                    "needs a session with device='gpu'");
    goto finally;
  }
  if (info.dtype == MACE_DT_F32 && fp16) {
    stored = (PyArrayObject *)PyArray_Cast(arr, NPY_FLOAT16);
    if (stored == NULL) goto finally;
  } else {
    Py_INCREF(arr);
    stored = arr;
  }
  if ((buffer = mace_py_gpu_buffer_new(engine, &info)) == NULL) goto finally;
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
  mace_dtype dtype;
  mace_gpu_buffer *gb = mace_py_gpu_buffer_get(buffer, &ndim, dims, &dtype);
  const void *src = PyArray_DATA(stored);
  const size_t bytes = (size_t)PyArray_NBYTES(stored);
  mace_status st;
  Py_BEGIN_ALLOW_THREADS
  st = mace_gpu_buffer_write(gb, 0, src, bytes);
  Py_END_ALLOW_THREADS
  if (st != MACE_OK) {
    mace_py_raise(st);
    goto finally;
  }
  res = buffer;
  buffer = NULL;
finally:
  if (engine != NULL) mace_py_engine_release(obj);
  Py_XDECREF(buffer);
  Py_XDECREF(stored);
  Py_XDECREF(arr);
  return res;
}
