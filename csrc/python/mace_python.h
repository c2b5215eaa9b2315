/* Shared declarations of the CPython extension mace._mace (one .c file per Python type). */
#ifndef MACE_PYTHON_MACE_PYTHON_H_
#define MACE_PYTHON_MACE_PYTHON_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Every file of the extension sees the same NumPy C-API table; module.c imports it. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL mace_python_ARRAY_API
#ifndef MACE_PYTHON_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "mace/mace.h"

/* Exception classes from python/mace/errors.py (strong references held by module.c). */
extern PyObject *mace_py_MaceError;
extern PyObject *mace_py_InvalidModelError;
extern PyObject *mace_py_InvalidInputError;
extern PyObject *mace_py_UnsupportedError;
extern PyObject *mace_py_InvalidArgumentError;
extern PyObject *mace_py_OutOfResourcesError;
extern PyObject *mace_py_InvalidOutputError;

/* Raises the exception class that fits `status` with mace_last_error() as the message;
 * returns NULL so callers can `return mace_py_raise(st);`. Call it with the GIL held, in the
 * thread that got the failing status (the message is per thread). */
PyObject *mace_py_raise(mace_status status);

/* A str from a C string of the engine (tensor/op names, messages). Corrupt models can hold
 * bytes that are not UTF-8: those decode with surrogateescape instead of failing. NULL -> "". */
PyObject *mace_py_str(const char *s);

/* NumPy type number of a mace dtype (-1 if NumPy has none); mace dtype of a NumPy type. */
int mace_py_npy_type(mace_dtype dtype);
mace_dtype mace_py_mace_dtype(int npy_type);

/* Module init of each type's file: adds the type to `module`; 0 on success, -1 with an error. */
/* engine_config.c: sets cfg's device, affinity and gpu_precision from the Engine's keyword values;
 * on a bad value raises InvalidArgumentError naming it and returns -1. */
int mace_py_config_names(mace_config *cfg, const char *device, int affinity,
                         const char *gpu_precision);
/* gpu_memory "buffer" | "image" into cfg->gpu_memory; -1 with InvalidArgumentError otherwise. */
int mace_py_config_gpu_memory(mace_config *cfg, const char *gpu_memory);
int mace_py_engine_module_init(PyObject *module);

/* engine.c: the mace_engine of Engine `obj` with the Engine's lock held (NULL with an
 * exception when obj is no Engine or is closed); mace_py_engine_release unlocks. For the
 * Engine methods of other files. */
mace_engine *mace_py_engine_acquire(PyObject *obj);
void mace_py_engine_release(PyObject *obj);
/* engine_query.c: Engine methods (see their docstrings in engine.c's method table). */
PyObject *mace_py_engine_set_profiling(PyObject *obj, PyObject *args);
PyObject *mace_py_engine_op_stats(PyObject *obj, PyObject *unused);
PyObject *mace_py_engine_memory_stats(PyObject *obj, PyObject *unused);
PyObject *mace_py_engine_gpu_precision(PyObject *obj, PyObject *unused);
PyObject *mace_py_engine_release_intermediate_buffers(PyObject *obj, PyObject *unused);
PyObject *mace_py_engine_gpu_launch_stats(PyObject *obj, PyObject *unused);
PyObject *mace_py_engine_shares_gpu_buffer(PyObject *obj, PyObject *arg);
PyObject *mace_py_engine_upload(PyObject *obj, PyObject *arg);
int mace_py_gpu_buffer_module_init(PyObject *module);
int mace_py_tensor_module_init(PyObject *module);

/* tensor_spec.c: a tuple of dims; the numpy.dtype of a mace dtype (None where NumPy has none);
 * "shape (1, 3) float32"; 0 when array `given` can receive output `info` in place (its dtype
 * and shape, C-contiguous, aligned, writeable), else -1 with InvalidOutputError naming it. */
PyObject *mace_py_dims_tuple(int ndim, const int64_t *dims);
PyObject *mace_py_dtype_object(mace_dtype dtype);
PyObject *mace_py_spec_string(int ndim, const int64_t *dims, PyObject *dtype);
int mace_py_check_out_array(const mace_tensor_info *info, PyObject *given);

/* GpuBuffer (gpu_buffer.c): a new one holding a tensor of `info` on `engine`'s GPU (NULL with
 * the exception set); the buffer of `obj` with its tensor's dims and dtype (NULL, no exception,
 * when obj is no GpuBuffer); new dims of the same element count after a run. */
PyObject *mace_py_gpu_buffer_new(mace_engine *engine, const mace_tensor_info *info);
mace_gpu_buffer *mace_py_gpu_buffer_get(PyObject *obj, int *ndim, int64_t *dims,
                                        mace_dtype *dtype);
void mace_py_gpu_buffer_set_dims(PyObject *obj, int ndim, const int64_t *dims);

#endif /* MACE_PYTHON_MACE_PYTHON_H_ */
