/* mace._mace.TensorBase: the buffer protocol of mace.Tensor (python/mace/tensor.py), which a
 * Python class cannot export itself before Python 3.12. */
#include "python/mace_python.h"

/* No state of its own: the subclass keeps its host memory in the attribute `_host` (a NumPy
 * array, or None for a tensor on a device). */
typedef struct {
  PyObject_HEAD
} TensorBaseObject;

/* Exports the host array's buffer itself: view->obj is that array, so the memory stays alive
 * as long as any view does, whatever becomes of the tensor. */
static int TensorBase_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  PyObject *host = PyObject_GetAttrString(self, "_host");
  if (host == NULL) return -1;
  int rc = -1;
  if (host == Py_None) {
    PyErr_SetString(PyExc_BufferError, "this mace.Tensor lives on the GPU and has no host "
                    "memory: copy it with t.numpy() or t.to('cpu')");
  } else {
    rc = PyObject_GetBuffer(host, view, flags);
  }
  Py_DECREF(host);
  return rc;
}

static PyBufferProcs TensorBase_as_buffer = {TensorBase_getbuffer, NULL};

static PyTypeObject TensorBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mace._mace.TensorBase",
    .tp_basicsize = sizeof(TensorBaseObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Base of mace.Tensor: the buffer protocol over its host array.",
    .tp_as_buffer = &TensorBase_as_buffer,
    .tp_new = PyType_GenericNew,
};

int mace_py_tensor_module_init(PyObject *module) {
  if (PyType_Ready(&TensorBaseType) < 0) return -1;
  Py_INCREF(&TensorBaseType);
  if (PyModule_AddObject(module, "TensorBase", (PyObject *)&TensorBaseType) < 0) {
    Py_DECREF(&TensorBaseType);
    return -1;
  }
  return 0;
}
