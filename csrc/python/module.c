/* The mace._mace module: version(), exception mapping from mace_status, dtype tables. */
#define MACE_PYTHON_IMPORT_ARRAY
#include "python/mace_python.h"

#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

PyObject *mace_py_MaceError = NULL;
PyObject *mace_py_InvalidModelError = NULL;
PyObject *mace_py_InvalidInputError = NULL;
PyObject *mace_py_UnsupportedError = NULL;
PyObject *mace_py_InvalidArgumentError = NULL;
PyObject *mace_py_OutOfResourcesError = NULL;
PyObject *mace_py_InvalidOutputError = NULL;

PyObject *mace_py_str(const char *s) {
  if (s == NULL) s = "";
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
}

PyObject *mace_py_raise(mace_status status) {
  PyObject *cls;
  switch (status) {
    case MACE_INVALID_MODEL: cls = mace_py_InvalidModelError; break;
    case MACE_INVALID_INPUT: cls = mace_py_InvalidInputError; break;
    case MACE_UNSUPPORTED: cls = mace_py_UnsupportedError; break;
    case MACE_INVALID_ARGS: cls = mace_py_InvalidArgumentError; break;
    case MACE_OUT_OF_RESOURCES: cls = mace_py_OutOfResourcesError; break;
    default: cls = mace_py_MaceError; break;
  }
  const char *msg = mace_last_error();
  if (msg == NULL || msg[0] == '\0') {
    PyErr_Format(cls, "mace: %s", mace_status_name(status));
  } else {
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "backslashreplace");
    if (text != NULL) {
      PyErr_SetObject(cls, text);
      Py_DECREF(text);
    }
  }
  return NULL;
}

/* The ml_dtypes types (bfloat16, float8, float4, int4, int2) that NumPy knows only once ml_dtypes has
 * registered them: their type numbers are looked up on first use (GIL held); -1 when ml_dtypes
 * is not installed, so such a tensor has no NumPy type. */
static struct {
  mace_dtype dtype;
  const char *name;
  int num; /* -2: not looked up yet */
} ml_types[] = {{MACE_DT_BF16, "bfloat16", -2},         {MACE_DT_F8E4M3FN, "float8_e4m3fn", -2}, {MACE_DT_F8E4M3FNUZ, "float8_e4m3fnuz", -2},
                {MACE_DT_F8E5M2, "float8_e5m2", -2},     {MACE_DT_F8E5M2FNUZ, "float8_e5m2fnuz", -2},
                {MACE_DT_F8E8M0, "float8_e8m0fnu", -2},  {MACE_DT_F4E2M1, "float4_e2m1fn", -2},
                {MACE_DT_I4, "int4", -2},                {MACE_DT_U4, "uint4", -2},
                {MACE_DT_I2, "int2", -2},                {MACE_DT_U2, "uint2", -2}};
#define ML_TYPES_N ((int)(sizeof(ml_types) / sizeof(ml_types[0])))

static void ml_types_lookup(void) {
  static int done = 0;
  if (done) return;
  done = 1;
  PyObject *mod = PyImport_ImportModule("ml_dtypes");
  for (int i = 0; i < ML_TYPES_N; ++i) {
    PyArray_Descr *d = NULL;
    PyObject *t = mod ? PyObject_GetAttrString(mod, ml_types[i].name) : NULL;
    ml_types[i].num = t != NULL && PyArray_DescrConverter(t, &d) ? d->type_num : -1;
    Py_XDECREF(d);
    Py_XDECREF(t);
    PyErr_Clear();
  }
  Py_XDECREF(mod);
  PyErr_Clear();
}

int mace_py_npy_type(mace_dtype dtype) {
  switch (dtype) {
    case MACE_DT_F32: return NPY_FLOAT32;
    case MACE_DT_U8: return NPY_UINT8;
    case MACE_DT_F16: return NPY_FLOAT16;
    case MACE_DT_I32: return NPY_INT32;
    case MACE_DT_I8: return NPY_INT8;
    case MACE_DT_I64: return NPY_INT64;
    case MACE_DT_BOOL: return NPY_BOOL;
    case MACE_DT_I16: return NPY_INT16;
    case MACE_DT_U16: return NPY_UINT16;
    case MACE_DT_U32: return NPY_UINT32;
    case MACE_DT_U64: return NPY_UINT64;
    case MACE_DT_F64: return NPY_FLOAT64;
    default: break;
  }
  ml_types_lookup();
  for (int i = 0; i < ML_TYPES_N; ++i)
    if (ml_types[i].dtype == dtype) {
      /* without ml_dtypes, bfloat16 comes as its raw bits */
      if (ml_types[i].num < 0 && dtype == MACE_DT_BF16) return NPY_UINT16;
      return ml_types[i].num;
    }
  return -1;
}

mace_dtype mace_py_mace_dtype(int npy_type) {
  switch (npy_type) {
    case NPY_FLOAT32: return MACE_DT_F32;
    case NPY_UINT8: return MACE_DT_U8;
    case NPY_FLOAT16: return MACE_DT_F16;
    case NPY_INT32: return MACE_DT_I32;
    case NPY_INT8: return MACE_DT_I8;
    case NPY_INT64: return MACE_DT_I64;
    case NPY_BOOL: return MACE_DT_BOOL;
    case NPY_INT16: return MACE_DT_I16;
    case NPY_UINT16: return MACE_DT_U16;
    case NPY_UINT32: return MACE_DT_U32;
    case NPY_UINT64: return MACE_DT_U64;
    case NPY_FLOAT64: return MACE_DT_F64;
    default: break;
  }
  ml_types_lookup();
  for (int i = 0; i < ML_TYPES_N; ++i)
    if (ml_types[i].num == npy_type && npy_type >= 0) return ml_types[i].dtype;
  return MACE_DT_INVALID;
}

static PyObject *module_version(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(mace_version());
}

static PyObject *module_cpu_isa(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(mace_cpu_get_isa());
}

/* Free memory of the C heap back to the system: a Session that converted its model calls it
 * once its engine is built. The conversion's arrays, freed by then, stayed in glibc's heap
 * (below its mmap threshold, which rises as large blocks are freed) and counted in the
 * process's resident memory: ResNet-50's session 90-100 MB more. */
static PyObject *module_release_free_heap(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  Py_RETURN_NONE;
}

/* devices(): every OpenCL device as a dict; [] when there is no OpenCL library or platform. */
static PyObject *module_devices(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  enum { MAX_DEVICES = 64 };
  mace_gpu_info *info = calloc(MAX_DEVICES, sizeof(*info));
  PyObject *list = NULL, *res = NULL;
  int n = 0;
  if (info == NULL) return PyErr_NoMemory();
  mace_status st;
  Py_BEGIN_ALLOW_THREADS
  st = mace_gpu_list_devices(info, MAX_DEVICES, &n);
  Py_END_ALLOW_THREADS
  list = PyList_New(0);
  if (list == NULL) goto finally;
  for (int i = 0; st == MACE_OK && i < n && i < MAX_DEVICES; ++i) {
    const mace_gpu_info *d = &info[i];
    PyObject *text = mace_py_str(d->extensions);
    PyObject *ext = text ? PyUnicode_Split(text, NULL, -1) : NULL;
    Py_XDECREF(text);
    if (ext == NULL) goto finally;
    PyObject *dict = Py_BuildValue(
        "{s:i,s:i,s:N,s:N,s:N,s:N,s:N,s:s,s:O,s:i,s:L,s:L,s:L,s:N}", "platform_index",
        d->platform_index, "device_index", d->device_index, "platform", mace_py_str(d->platform),
        "name", mace_py_str(d->name), "vendor", mace_py_str(d->vendor), "version",
        mace_py_str(d->version), "driver", mace_py_str(d->driver), "type",
        d->is_gpu ? "gpu" : "cpu", "fp16", d->has_fp16 ? Py_True : Py_False, "compute_units",
        d->compute_units, "global_mem_bytes", (long long)d->global_mem_bytes, "max_alloc_bytes",
        (long long)d->max_alloc_bytes, "max_work_group_size", (long long)d->max_work_group_size,
        "extensions", ext);
    if (dict == NULL || PyList_Append(list, dict) < 0) {
      Py_XDECREF(dict);
      goto finally;
    }
    Py_DECREF(dict);
  }
  res = list;
  list = NULL;
finally:
  free(info);
  Py_XDECREF(list);
  return res;
}

static PyObject *module_release_gpu_idle(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong(mace_gpu_release_idle());
}

static PyMethodDef module_methods[] = {
    {"devices", module_devices, METH_NOARGS,
     "devices() -> list[dict]: every OpenCL device (platform, name, vendor, version, driver, "
     "type, fp16, extensions, ...); [] without OpenCL."},
    {"release_gpu_idle", module_release_gpu_idle, METH_NOARGS,
     "release_gpu_idle() -> int: releases the OpenCL contexts (and their built programs) that "
     "no live session holds; returns how many."},
    {"version", module_version, METH_NOARGS, "version() -> str: the mace C library's version."},
    {"cpu_isa", module_cpu_isa, METH_NOARGS,
     "cpu_isa() -> str: the kernel level in use: 'ref', 'avx2', 'avx512' or 'neon' (the best "
     "the CPU has, lowered by MACE_CPU_ISA)."},
    {"release_free_heap", module_release_free_heap, METH_NOARGS,
     "release_free_heap() -> None: the C heap's free pages back to the system (glibc's "
     "malloc_trim; elsewhere nothing)."},
    {NULL, NULL, 0, NULL},
};

/* Keeps the exception classes alive for the module's lifetime (they are also module attrs). */
static int errors_module_init(PyObject *module) {
  int rc = -1;
  PyObject *errors = PyImport_ImportModule("mace.errors");
  if (errors == NULL) goto finally;
  struct { const char *name; PyObject **slot; } classes[] = {
      {"MaceError", &mace_py_MaceError},
      {"InvalidModelError", &mace_py_InvalidModelError},
      {"InvalidInputError", &mace_py_InvalidInputError},
      {"UnsupportedError", &mace_py_UnsupportedError},
      {"InvalidArgumentError", &mace_py_InvalidArgumentError},
      {"OutOfResourcesError", &mace_py_OutOfResourcesError},
      {"InvalidOutputError", &mace_py_InvalidOutputError},
  };
  for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); ++i) {
    PyObject *cls = PyObject_GetAttrString(errors, classes[i].name);
    if (cls == NULL) goto finally;
    Py_XSETREF(*classes[i].slot, cls);
    Py_INCREF(cls);
    if (PyModule_AddObject(module, classes[i].name, cls) < 0) {
      Py_DECREF(cls);
      goto finally;
    }
  }
  rc = 0;
finally:
  Py_XDECREF(errors);
  return rc;
}

static struct PyModuleDef mace_module_def = {
    PyModuleDef_HEAD_INIT,
    "mace._mace",
    "The mace C engine (csrc/include/mace/mace.h) for Python: the Engine type and version().",
    -1,
    module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mace(void) {
  import_array();
  PyObject *module = PyModule_Create(&mace_module_def);
  if (module == NULL) return NULL;
  if (errors_module_init(module) < 0 || mace_py_engine_module_init(module) < 0 ||
      mace_py_gpu_buffer_module_init(module) < 0 || mace_py_tensor_module_init(module) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
