/* Descriptions of tensors for the extension's messages and results (shape tuples, dtypes,
 * "shape (1, 3) float32"), and the checks of the arrays run(out=...) writes into. */
#include "python/mace_python.h"

/* ---- tensor descriptions ------------------------------------------------------------ */

PyObject *mace_py_dims_tuple(int ndim, const int64_t *dims) {
  PyObject *t = PyTuple_New(ndim < 0 ? 0 : ndim);
  if (t == NULL) return NULL;
  for (int i = 0; i < ndim; ++i) {
    PyObject *d = PyLong_FromLongLong((long long)dims[i]);
    if (d == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, d);
  }
  return t;
}

/* numpy.dtype of a mace dtype, or None where NumPy has no such type. */
PyObject *mace_py_dtype_object(mace_dtype dtype) {
  int npy = mace_py_npy_type(dtype);
  if (npy < 0) Py_RETURN_NONE;
  return (PyObject *)PyArray_DescrFromType(npy);
}

/* "shape (1, 3, 8, 8) float32" for error messages. */
PyObject *mace_py_spec_string(int ndim, const int64_t *dims, PyObject *dtype) {
  PyObject *shape = mace_py_dims_tuple(ndim, dims);
  if (shape == NULL) return NULL;
  PyObject *s = PyUnicode_FromFormat("shape %S %S", shape, dtype ? dtype : Py_None);
  Py_DECREF(shape);
  return s;
}

/* The caller's array `given` for output `info` (run's out=): the output's dtype and shape,
 * C-contiguous, aligned and writeable, else InvalidOutputError naming what differs. */
int mace_py_check_out_array(const mace_tensor_info *info, PyObject *given) {
  if (!PyArray_Check(given)) {
    PyErr_Format(mace_py_InvalidOutputError, "out['%s'] must be a NumPy array, not %.200s",
                 info->name, Py_TYPE(given)->tp_name);
    return -1;
  }
  PyArrayObject *arr = (PyArrayObject *)given;
  int same = PyArray_TYPE(arr) == mace_py_npy_type(info->dtype) && PyArray_NDIM(arr) == info->ndim;
  for (int d = 0; same && d < info->ndim; ++d) same = PyArray_DIM(arr, d) == info->dims[d];
  if (!same) {
    int64_t dims[NPY_MAXDIMS];
    const int nd = PyArray_NDIM(arr) < NPY_MAXDIMS ? PyArray_NDIM(arr) : NPY_MAXDIMS;
    for (int d = 0; d < nd; ++d) dims[d] = (int64_t)PyArray_DIM(arr, d);
    PyObject *want_dtype = mace_py_dtype_object(info->dtype);
    PyObject *want = want_dtype ? mace_py_spec_string(info->ndim, info->dims, want_dtype) : NULL;
    PyObject *got = mace_py_spec_string(nd, dims, (PyObject *)PyArray_DESCR(arr));
    if (want != NULL && got != NULL)
      PyErr_Format(mace_py_InvalidOutputError, "out['%s'] is %U, the output is %U", info->name,
                   got, want);
    Py_XDECREF(want_dtype);
    Py_XDECREF(want);
    Py_XDECREF(got);
    return -1;
  }
  if (!PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr) || !PyArray_ISWRITEABLE(arr)) {
    PyErr_Format(mace_py_InvalidOutputError, "out['%s'] must be C-contiguous, aligned and "
                 "writeable", info->name);
    return -1;
  }
  return 0;
}
