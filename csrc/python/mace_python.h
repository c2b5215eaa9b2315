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
int mace_py_engine_module_init(PyObject *module);

#endif /* MACE_PYTHON_MACE_PYTHON_H_ */
