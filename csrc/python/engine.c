/* mace._mace.Engine: a loaded model (mace_engine) that runs NumPy arrays. */
#include "python/mace_python.h"

#include <pythread.h>
#include <string.h>

/* Ownership: `engine` is owned (mace_engine_destroy in close/dealloc). `weights` is a buffer
 * export of the caller's weights object, held for the engine's life because the engine
 * borrows it (borrow_weights = 1). `lock` serialises every engine call: a run releases
 * the GIL, so two Python threads may otherwise enter the engine at once. */
typedef struct {
  PyObject_HEAD
  mace_engine *engine;
  Py_buffer weights;
  int has_weights;
  PyThread_type_lock lock;
} EngineObject;

static PyTypeObject EngineType;

/* Waits for the engine lock without holding the GIL (a run in another thread holds it). */
static void engine_lock(EngineObject *self) {
  if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
  }
}

static void engine_unlock(EngineObject *self) { PyThread_release_lock(self->lock); }

static mace_engine *engine_get(EngineObject *self) {
  if (self->engine == NULL) {
    PyErr_SetString(mace_py_InvalidArgumentError, "mace Engine is closed (or was never created)");
  }
  return self->engine;
}

mace_engine *mace_py_engine_acquire(PyObject *obj) {
  if (!PyObject_TypeCheck(obj, &EngineType)) {
    PyErr_SetString(PyExc_TypeError, "expected a mace._mace.Engine");
    return NULL;
  }
  EngineObject *self = (EngineObject *)obj;
  if (engine_get(self) == NULL) return NULL;
  engine_lock(self);
  if (engine_get(self) == NULL) {  /* closed while this thread waited */
    engine_unlock(self);
    return NULL;
  }
  return self->engine;
}

void mace_py_engine_release(PyObject *obj) { engine_unlock((EngineObject *)obj); }

/* "O&" converter for an optional path: None stays NULL, else a bytes object via os.fspath. */
static int path_converter(PyObject *obj, void *out) {
  if (obj == Py_None) return 1;
  return PyUnicode_FSConverter(obj, out);
}

/* ---- construction ------------------------------------------------------------------ */

static int Engine_init(EngineObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"graph", "weights", "graph_path", "weights_path",
                           "num_threads", "affinity", "device", "verify_checksum",
                           "gpu_precision", "opencl_binary_file", "opencl_parameter_file",
                           "gpu_platform", "gpu_device", "opencl_queue_window_size",
                           "decrypt_key", "max_arena_bytes", "share_gpu_with",
                           "discard_packed_weights", "gpu_memory", "limit_opencl_kernel_time",
                           NULL};
  PyObject *graph = Py_None, *weights = Py_None;
  PyObject *graph_path = NULL, *weights_path = NULL; /* bytes from path_converter */
  PyObject *binary_file = NULL, *parameter_file = NULL;
  const char *gpu_precision = "fp16";
  const char *gpu_memory = "buffer";
  int gpu_platform = -1, gpu_device = -1, queue_window = 0, limit_kernel_time = 0;
  int num_threads = -1, affinity = MACE_AFFINITY_BIG_ONLY;
  const char *device = "cpu";
  int verify_checksum = 1;
  long long max_arena_bytes = 0; /* mace_config's: 0 default, < 0 no limit */
  const char *decrypt_key = NULL; /* encrypted models (mace encrypt); borrowed for the call */
  Py_ssize_t decrypt_key_size = 0;
  PyObject *share = Py_None; /* an Engine on the GPU whose OpenCL context this one shares */
  EngineObject *shared = NULL; /* share, its lock held during the creation */
  int discard_packed = 0; /* the weights buffer is the engine's to spend (mace.h) */
  Py_buffer graph_buf;
  int has_graph_buf = 0;
  mace_engine *engine = NULL;
  mace_status st;
  int rc = -1;

  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOO&O&iispsO&O&iiiy#LOpsi:Engine", kwlist, &graph,
                                   &weights, path_converter, &graph_path, path_converter,
                                   &weights_path, &num_threads, &affinity, &device,
                                   &verify_checksum, &gpu_precision, path_converter,
                                   &binary_file, path_converter, &parameter_file,
                                   &gpu_platform, &gpu_device, &queue_window, &decrypt_key,
                                   &decrypt_key_size, &max_arena_bytes, &share,
                                   &discard_packed, &gpu_memory, &limit_kernel_time)) {
    goto finally;
  }
  if (self->engine != NULL || self->lock != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "mace Engine is already initialised");
    goto finally;
  }
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = num_threads;
  cfg.skip_checksum = !verify_checksum;
  cfg.max_arena_bytes = (int64_t)max_arena_bytes;
  cfg.decrypt_key = (const unsigned char *)decrypt_key;
  cfg.decrypt_key_size = (size_t)decrypt_key_size;
  cfg.discard_packed_weights = discard_packed;
  if (mace_py_config_names(&cfg, device, affinity, gpu_precision) < 0) goto finally;
  if (mace_py_config_gpu_memory(&cfg, gpu_memory) < 0) goto finally;
  cfg.opencl_binary_file = binary_file ? PyBytes_AS_STRING(binary_file) : NULL;
  cfg.opencl_parameter_file = parameter_file ? PyBytes_AS_STRING(parameter_file) : NULL;
  cfg.gpu_platform = gpu_platform;
  cfg.gpu_device = gpu_device;
  cfg.opencl_queue_window_size = queue_window;
  cfg.limit_opencl_kernel_time = limit_kernel_time;
  if (share != Py_None) {
    if (!PyObject_TypeCheck(share, &EngineType) || ((EngineObject *)share)->lock == NULL) {
      PyErr_SetString(mace_py_InvalidArgumentError, "share_gpu_with must be an open GPU session");
      goto finally;
    }
    /* held until the engine is made: the other cannot be closed under it meanwhile */
    shared = (EngineObject *)share;
    engine_lock(shared);
    if (shared->engine == NULL) {
      PyErr_SetString(mace_py_InvalidArgumentError, "share_gpu_with is a closed session");
      goto finally;
    }
    cfg.share_gpu_with = shared->engine;
  }

  self->lock = PyThread_allocate_lock();
  if (self->lock == NULL) {
    PyErr_NoMemory();
    goto finally;
  }

  if (graph_path != NULL) {
    if (graph != Py_None || weights != Py_None) {
      PyErr_SetString(PyExc_ValueError,
                      "give the model either as buffers (graph, weights) or as files "
                      "(graph_path, weights_path), not both");
      goto finally;
    }
    const char *gp = PyBytes_AS_STRING(graph_path);
    const char *wp = weights_path ? PyBytes_AS_STRING(weights_path) : NULL;
    Py_BEGIN_ALLOW_THREADS
    st = mace_engine_create_from_files(gp, wp, &cfg, &engine);
    Py_END_ALLOW_THREADS
  } else {
    if (graph == Py_None) {
      PyErr_SetString(PyExc_TypeError, "Engine needs `graph` (bytes) or `graph_path`");
      goto finally;
    }
    if (weights_path != NULL) {
      PyErr_SetString(PyExc_ValueError, "weights_path needs graph_path; with graph bytes pass "
                                        "`weights` as bytes");
      goto finally;
    }
    if (PyObject_GetBuffer(graph, &graph_buf, PyBUF_SIMPLE) < 0) goto finally;
    has_graph_buf = 1;
    if (weights != Py_None) {
      if (PyObject_GetBuffer(weights, &self->weights, PyBUF_SIMPLE) < 0) goto finally;
      self->has_weights = 1;
    }
    cfg.borrow_weights = 1;
    const void *wdata = self->has_weights ? self->weights.buf : NULL;
    size_t wsize = self->has_weights ? (size_t)self->weights.len : 0;
    Py_BEGIN_ALLOW_THREADS
    st = mace_engine_create_from_buffers(graph_buf.buf, (size_t)graph_buf.len, wdata, wsize,
                                         &cfg, &engine);
    Py_END_ALLOW_THREADS
  }
  if (st != MACE_OK) {
    mace_py_raise(st);
    goto finally;
  }
  if (engine == NULL) {
    PyErr_SetString(mace_py_MaceError, "mace_engine_create returned no engine");
    goto finally;
  }
  self->engine = engine;
  rc = 0;

finally:
  if (shared != NULL) engine_unlock(shared);
  if (rc < 0 && self->has_weights) {
    PyBuffer_Release(&self->weights);
    self->has_weights = 0;
  }
  if (has_graph_buf) PyBuffer_Release(&graph_buf);
  Py_XDECREF(graph_path);
  Py_XDECREF(weights_path);
  Py_XDECREF(binary_file);
  Py_XDECREF(parameter_file);
  return rc;
}

/* Destroys the engine once no run is in flight; safe to call twice. */
static void engine_close(EngineObject *self) {
  mace_engine *engine = NULL;
  if (self->lock != NULL) {
    engine_lock(self);
    engine = self->engine;
    self->engine = NULL;
    engine_unlock(self);
  } else {
    engine = self->engine;
    self->engine = NULL;
  }
  if (engine != NULL) {
    Py_BEGIN_ALLOW_THREADS
    mace_engine_destroy(engine);
    Py_END_ALLOW_THREADS
  }
  if (self->has_weights) {
    PyBuffer_Release(&self->weights);
    self->has_weights = 0;
  }
}

static void Engine_dealloc(EngineObject *self) {
  engine_close(self);
  if (self->lock != NULL) {
    PyThread_free_lock(self->lock);
    self->lock = NULL;
  }
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Engine_close(EngineObject *self, PyObject *unused) {
  (void)unused;
  engine_close(self);
  Py_RETURN_NONE;
}

static PyObject *Engine_enter(EngineObject *self, PyObject *unused) {
  (void)unused;
  if (engine_get(self) == NULL) return NULL;
  Py_INCREF(self);
  return (PyObject *)self;
}

static PyObject *Engine_exit(EngineObject *self, PyObject *args) {
  (void)args;
  engine_close(self);
  Py_RETURN_FALSE;
}

/* ---- tensor descriptions ------------------------------------------------------------ */

/* (name, shape tuple, numpy dtype) */
static PyObject *info_tuple(const mace_tensor_info *info) {
  PyObject *shape = mace_py_dims_tuple(info->ndim, info->dims);
  PyObject *dtype = mace_py_dtype_object(info->dtype);
  PyObject *res = NULL;
  if (shape != NULL && dtype != NULL) {
    res = Py_BuildValue("(NOO)", mace_py_str(info->name), shape, dtype);
  }
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  return res;
}

typedef mace_status (*info_fn)(const mace_engine *, int, mace_tensor_info *);

static PyObject *info_list(EngineObject *self, int n, info_fn fn) {
  PyObject *list = PyList_New(n);
  if (list == NULL) return NULL;
  for (int i = 0; i < n; ++i) {
    mace_tensor_info info;
    mace_status st = fn(self->engine, i, &info);
    if (st != MACE_OK) {
      Py_DECREF(list);
      return mace_py_raise(st);
    }
    PyObject *t = info_tuple(&info);
    if (t == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, t);
  }
  return list;
}

static PyObject *Engine_inputs(EngineObject *self, PyObject *unused) {
  (void)unused;
  if (engine_get(self) == NULL) return NULL;
  return info_list(self, mace_engine_num_inputs(self->engine), mace_engine_input_info);
}

static PyObject *Engine_outputs(EngineObject *self, PyObject *unused) {
  (void)unused;
  if (engine_get(self) == NULL) return NULL;
  return info_list(self, mace_engine_num_outputs(self->engine), mace_engine_output_info);
}


/* Lists the model's inputs ("'x' shape (1, 3) float32, ...") for unknown-name errors. */
static PyObject *inputs_string(EngineObject *self) {
  PyObject *parts = PyList_New(0), *sep = NULL, *res = NULL;
  if (parts == NULL) goto finally;
  int n = mace_engine_num_inputs(self->engine);
  for (int i = 0; i < n; ++i) {
    mace_tensor_info info;
    if (mace_engine_input_info(self->engine, i, &info) != MACE_OK) continue;
    PyObject *dtype = mace_py_dtype_object(info.dtype);
    if (dtype == NULL) goto finally;
    PyObject *spec = mace_py_spec_string(info.ndim, info.dims, dtype);
    Py_DECREF(dtype);
    if (spec == NULL) goto finally;
    PyObject *part = PyUnicode_FromFormat("'%s' %U", info.name, spec);
    Py_DECREF(spec);
    if (part == NULL || PyList_Append(parts, part) < 0) {
      Py_XDECREF(part);
      goto finally;
    }
    Py_DECREF(part);
  }
  sep = PyUnicode_FromString(", ");
  if (sep == NULL) goto finally;
  res = PyUnicode_Join(sep, parts);
finally:
  Py_XDECREF(parts);
  Py_XDECREF(sep);
  return res;
}

/* ---- run ------------------------------------------------------------------------------ */

static int dims_match(const mace_tensor_info *info, PyArrayObject *arr) {
  if (PyArray_NDIM(arr) != info->ndim) return 0;
  /* Same rank is enough here: the engine re-infers for new sizes (dynamic shapes) and
   * raises InvalidInputError itself, naming expected and given shapes, if it cannot. */
  return 1;
}

static void raise_input_mismatch(const mace_tensor_info *info, int given_ndim,
                                 const npy_intp *given_dims, PyObject *given_dtype) {
  int64_t dims[NPY_MAXDIMS];
  for (int d = 0; d < given_ndim && d < NPY_MAXDIMS; ++d) dims[d] = (int64_t)given_dims[d];
  PyObject *want_dtype = mace_py_dtype_object(info->dtype);
  PyObject *want = want_dtype ? mace_py_spec_string(info->ndim, info->dims, want_dtype) : NULL;
  PyObject *got = mace_py_spec_string(given_ndim < NPY_MAXDIMS ? given_ndim : NPY_MAXDIMS, dims,
                              given_dtype);
  if (want != NULL && got != NULL) {
    PyErr_Format(mace_py_InvalidInputError, "input '%s': got %U, the model expects %U",
                 info->name, got, want);
  }
  Py_XDECREF(want_dtype);
  Py_XDECREF(want);
  Py_XDECREF(got);
}

/* A C-contiguous, aligned array of the model dtype for input `info`, or NULL with
 * InvalidInputError. float64 arrays feed float32 inputs (converted); any other dtype must
 * match. Non-array values (lists, scalars) are converted with same-kind casting. */
static PyArrayObject *input_array(const mace_tensor_info *info, PyObject *value) {
  PyArrayObject *given = NULL, *res = NULL;
  int want = mace_py_npy_type(info->dtype);
  if (want < 0) {
    PyErr_Format(mace_py_UnsupportedError, "input '%s': mace dtype %d has no NumPy type",
                 info->name, (int)info->dtype);
    goto finally;
  }
  int from_array = PyArray_Check(value);
  given = (PyArrayObject *)PyArray_FROM_O(value);
  if (given == NULL) {
    PyErr_Clear();
    PyErr_Format(mace_py_InvalidInputError, "input '%s': %.200s is not an array",
                 info->name, Py_TYPE(value)->tp_name);
    goto finally;
  }
  int have = PyArray_TYPE(given);
  int ok_dtype = have == want || (have == NPY_FLOAT64 && want == NPY_FLOAT32);
  if (!ok_dtype && !from_array) {
    PyArray_Descr *to = PyArray_DescrFromType(want);
    ok_dtype = PyArray_CanCastTypeTo(PyArray_DESCR(given), to, NPY_SAME_KIND_CASTING);
    Py_DECREF(to);
  }
  if (!ok_dtype || !dims_match(info, given)) {
    raise_input_mismatch(info, PyArray_NDIM(given), PyArray_DIMS(given),
                         (PyObject *)PyArray_DESCR(given));
    goto finally;
  }
  /* steals the descr reference */
  res = (PyArrayObject *)PyArray_FromAny((PyObject *)given, PyArray_DescrFromType(want), 0, 0,
                                         NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST, NULL);
  if (res == NULL && PyErr_ExceptionMatches(PyExc_MemoryError)) {
    /* a copy (a broadcast or strided view, a cast) that does not fit: a MaceError too */
    PyErr_Clear();
    PyErr_Format(mace_py_OutOfResourcesError,
                 "input '%s': out of memory for its contiguous copy of %lld elements", info->name,
                 (long long)PyArray_SIZE(given));
  }
finally:
  Py_XDECREF(given);
  return res;
}

/* The arrays and descriptions of one run. Owned: the arrays (references) and the three
 * PyMem arrays; run_free releases them. */
typedef struct {
  int n_in, n_out;
  mace_io *ins, *outs;
  PyArrayObject **arrs;       /* n_in input arrays, then n_out output arrays */
} run_buffers;

static int run_alloc(run_buffers *rb, int n_in, int n_out) {
  rb->n_in = n_in;
  rb->n_out = n_out;
  rb->ins = PyMem_Calloc((size_t)(n_in > 0 ? n_in : 1), sizeof(mace_io));
  rb->outs = PyMem_Calloc((size_t)(n_out > 0 ? n_out : 1), sizeof(mace_io));
  rb->arrs = PyMem_Calloc((size_t)(n_in + n_out > 0 ? n_in + n_out : 1), sizeof(PyArrayObject *));
  if (!rb->ins || !rb->outs || !rb->arrs) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

static void run_free(run_buffers *rb) {
  for (int i = 0; rb->arrs && i < rb->n_in + rb->n_out; ++i) Py_XDECREF(rb->arrs[i]);
  PyMem_Free(rb->ins);
  PyMem_Free(rb->outs);
  PyMem_Free(rb->arrs);
}

/* data_format argument: -1 (None: every tensor in the model's own format), NHWC or NCHW. */
static int parse_data_format(const char *data_format, int *df) {
  *df = -1;
  if (data_format == NULL) return 0;
  if (strcmp(data_format, "NHWC") == 0) {
    *df = MACE_DF_NHWC;
  } else if (strcmp(data_format, "NCHW") == 0) {
    *df = MACE_DF_NCHW;
  } else {
    PyErr_Format(mace_py_InvalidArgumentError,
                 "data_format must be 'NHWC', 'NCHW' or None, not '%s'", data_format);
    return -1;
  }
  return 0;
}

/* Raises InvalidInputError naming a key of `feeds` that is no model input. */
static void raise_unknown_feed(EngineObject *self, PyObject *feeds) {
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  int n_in = mace_engine_num_inputs(self->engine);
  while (PyDict_Next(feeds, &pos, &key, &value)) {
    int known = 0;
    for (int i = 0; !known && i < n_in && PyUnicode_Check(key); ++i) {
      mace_tensor_info info;
      if (mace_engine_input_info(self->engine, i, &info) != MACE_OK) continue;
      PyObject *name = mace_py_str(info.name);
      if (name == NULL) return;
      known = PyUnicode_Compare(key, name) == 0;
      Py_DECREF(name);
      if (PyErr_Occurred()) return;
    }
    if (!known) {
      PyObject *expected = inputs_string(self);
      if (expected != NULL) {
        PyErr_Format(mace_py_InvalidInputError, "unknown input %R; the model's inputs are: %U",
                     key, expected);
        Py_DECREF(expected);
      }
      return;
    }
  }
  PyErr_SetString(mace_py_InvalidInputError, "the inputs given do not match the model's inputs");
}

/* Model input i's description; -1 with the exception set on failure. */
static int input_info(EngineObject *self, int i, mace_tensor_info *info) {
  mace_status st = mace_engine_input_info(self->engine, i, info);
  if (st != MACE_OK) {
    mace_py_raise(st);
    return -1;
  }
  return 0;
}

/* Bind step, on the Python side: rb->ins[i] describes model input i, an array of the model's
 * dtype (rb->arrs[i]) made from feeds[name]; each present, of the model's rank, C-contiguous;
 * no key that names no input. The engine matches them to the model once, in
 * mace_engine_bind_inputs. */
static int bind_feeds(EngineObject *self, PyObject *feeds, int df, run_buffers *rb) {
  /* Borrowed values per model input, parked in rb->ins[i].data until converted. */
  Py_ssize_t found = 0;
  for (int i = 0; i < rb->n_in; ++i) {
    mace_tensor_info info;
    if (input_info(self, i, &info) < 0) return -1;
    PyObject *key_obj = mace_py_str(info.name);
    if (key_obj == NULL) return -1;
    PyObject *val = PyDict_GetItemWithError(feeds, key_obj); /* borrowed */
    Py_DECREF(key_obj);
    if (val == NULL && PyErr_Occurred()) return -1;
    rb->ins[i].data = val;
    found += val != NULL;
  }
  if (found != PyDict_Size(feeds)) {
    raise_unknown_feed(self, feeds);
    return -1;
  }
  for (int i = 0; i < rb->n_in; ++i) {
    mace_tensor_info info;
    if (input_info(self, i, &info) < 0) return -1;
    PyObject *val = rb->ins[i].data;
    mace_io *x = &rb->ins[i];
    int gpu_ndim = 0;
    mace_dtype gpu_dtype = MACE_DT_INVALID;
    if (val != NULL &&
        (x->gpu_buffer = mace_py_gpu_buffer_get(val, &gpu_ndim, x->dims, &gpu_dtype)) != NULL) {
      /* a device tensor: the engine checks its context, precision and size */
      if (gpu_dtype != info.dtype || gpu_ndim != info.ndim) {
        PyObject *dtype = mace_py_dtype_object(gpu_dtype);
        npy_intp dims[MACE_MAX_DIMS];
        for (int d = 0; d < gpu_ndim; ++d) dims[d] = (npy_intp)x->dims[d];
        if (dtype != NULL) raise_input_mismatch(&info, gpu_ndim, dims, dtype);
        Py_XDECREF(dtype);
        return -1;
      }
      x->name = info.name;
      x->data = NULL;
      x->ndim = gpu_ndim;
      x->dtype = info.dtype;
      x->format = info.format;
      continue;
    }
    if (val == NULL) {
      PyObject *dtype = mace_py_dtype_object(info.dtype);
      PyObject *spec = dtype ? mace_py_spec_string(info.ndim, info.dims, dtype) : NULL;
      if (spec != NULL) {
        PyErr_Format(mace_py_InvalidInputError, "missing input '%s' (the model expects %U)",
                     info.name, spec);
      }
      Py_XDECREF(dtype);
      Py_XDECREF(spec);
      return -1;
    }
    PyArrayObject *arr = input_array(&info, val);
    if (arr == NULL) return -1;
    rb->arrs[i] = arr;
    if (PyArray_NDIM(arr) > MACE_MAX_DIMS) {
      PyErr_Format(mace_py_InvalidInputError, "input '%s': %d dims, mace supports at most %d",
                   info.name, PyArray_NDIM(arr), MACE_MAX_DIMS);
      return -1;
    }
    x->name = info.name;
    x->data = PyArray_DATA(arr);
    x->ndim = PyArray_NDIM(arr);
    for (int d = 0; d < x->ndim; ++d) x->dims[d] = (int64_t)PyArray_DIM(arr, d);
    x->dtype = info.dtype;
    /* the model's own layout unless the caller gives 4-D tensors in another (transposed) */
    x->format = (df >= 0 && x->ndim == 4) ? (mace_data_format)df : info.format;
  }
  return 0;
}

/* Takes the engine lock and binds rb's inputs (which re-infers the net for new shapes);
 * returns 0 with the lock held, -1 with an exception and the lock released. */
static int lock_and_bind(EngineObject *self, run_buffers *rb) {
  engine_lock(self);
  if (self->engine == NULL) {
    engine_unlock(self);
    PyErr_SetString(mace_py_InvalidArgumentError, "mace Engine is closed");
    return -1;
  }
  mace_status st = mace_engine_bind_inputs(self->engine, rb->ins, rb->n_in);
  if (st != MACE_OK) {
    engine_unlock(self);
    mace_py_raise(st);
    return -1;
  }
  return 0;
}


/* Allocate step: per model output, the caller's array from `out` (a dict, or NULL), else a
 * GpuBuffer when keep_on_device, else a new NumPy array, of the shape the bound inputs give. */
static int alloc_outputs(EngineObject *self, int df, PyObject *out, int keep_on_device,
                         run_buffers *rb) {
  for (int i = 0; i < rb->n_out; ++i) {
    mace_tensor_info info;
    mace_status st = mace_engine_output_info(self->engine, i, &info);
    if (st != MACE_OK) {
      mace_py_raise(st);
      return -1;
    }
    int npy = mace_py_npy_type(info.dtype);
    if (npy < 0) {
      PyErr_Format(mace_py_UnsupportedError, "output '%s': mace dtype %d has no NumPy type",
                   info.name, (int)info.dtype);
      return -1;
    }
    if (info.ndim < 0 || info.ndim > MACE_MAX_DIMS) {
      PyErr_Format(mace_py_MaceError, "output '%s': rank %d", info.name, info.ndim);
      return -1;
    }
    npy_intp dims[MACE_MAX_DIMS];
    for (int d = 0; d < info.ndim; ++d) {
      if (info.dims[d] < 0) {
        PyErr_Format(mace_py_UnsupportedError, "output '%s': shape unknown before the run",
                     info.name);
        return -1;
      }
      dims[d] = (npy_intp)info.dims[d];
    }
    PyObject *key = out != NULL ? mace_py_str(info.name) : NULL;
    PyObject *given = key != NULL ? PyDict_GetItemWithError(out, key) : NULL; /* borrowed */
    Py_XDECREF(key);
    if (PyErr_Occurred()) return -1;
    mace_io *y = &rb->outs[i];
    PyArrayObject *arr = NULL;
    if (given != NULL) {
      if (mace_py_check_out_array(&info, given) < 0) return -1;
      arr = (PyArrayObject *)given;
      Py_INCREF(arr);
    } else if (keep_on_device) {
      PyObject *buffer = mace_py_gpu_buffer_new(self->engine, &info);
      if (buffer == NULL) return -1;
      rb->arrs[rb->n_in + i] = (PyArrayObject *)buffer; /* released by run_free as any object */
      y->gpu_buffer = mace_py_gpu_buffer_get(buffer, &y->ndim, y->dims, &y->dtype);
    } else {
      arr = (PyArrayObject *)PyArray_SimpleNew(info.ndim, dims, npy);
      if (arr == NULL) return -1;
    }
    y->name = info.name;
    if (arr == NULL) { /* on the device */
      y->format = info.format;
      continue;
    }
    rb->arrs[rb->n_in + i] = arr;
    y->data = PyArray_DATA(arr);
    y->data_bytes = (size_t)PyArray_NBYTES(arr);
    y->ndim = info.ndim;
    memcpy(y->dims, info.dims, sizeof(info.dims));
    y->dtype = info.dtype;
    y->format = (df >= 0 && info.ndim == 4) ? (mace_data_format)df : info.format;
  }
  return 0;
}

/* Runs the bound inputs with the GIL released and gives the engine lock back. */
static int run_and_unlock(EngineObject *self, run_buffers *rb) {
  mace_status st;
  Py_BEGIN_ALLOW_THREADS
  st = mace_engine_run_bound(self->engine, rb->outs, rb->n_out);
  Py_END_ALLOW_THREADS
  engine_unlock(self);
  if (st != MACE_OK) {
    mace_py_raise(st);
    return -1;
  }
  return 0;
}

/* Wrap step: {output name: array}, each array in the shape the engine reports it produced: the
 * allocated array reshaped (the same element count, maybe other dims), or a copy of its first
 * elements (an output sized at run: allocated at its upper bound). */
static PyObject *wrap_outputs(const run_buffers *rb) {
  PyObject *result = PyDict_New();
  if (result == NULL) return NULL;
  for (int i = 0; i < rb->n_out; ++i) {
    const mace_io *y = &rb->outs[i];
    PyArrayObject *allocated = rb->arrs[rb->n_in + i];
    PyObject *arr = (PyObject *)allocated;
    Py_INCREF(arr);
    if (y->gpu_buffer) {
      mace_py_gpu_buffer_set_dims(arr, y->ndim, y->dims);
      allocated = NULL;
    }
    int same = allocated == NULL || y->ndim == PyArray_NDIM(allocated);
    for (int d = 0; allocated && same && d < y->ndim; ++d)
      same = y->dims[d] == (int64_t)PyArray_DIM(allocated, d);
    if (!same && y->ndim >= 0 && y->ndim <= MACE_MAX_DIMS) {
      npy_intp dims[MACE_MAX_DIMS], numel = 1;
      PyArray_Dims shape = {dims, y->ndim};
      for (int d = 0; d < y->ndim; ++d) numel *= dims[d] = (npy_intp)y->dims[d];
      PyObject *reshaped;
      if (numel == PyArray_SIZE(allocated)) {
        reshaped = PyArray_Newshape(allocated, &shape, NPY_CORDER);
      } else {
        reshaped = PyArray_SimpleNew(y->ndim, dims, PyArray_TYPE(allocated));
        if (reshaped != NULL && numel > 0)
          memcpy(PyArray_DATA((PyArrayObject *)reshaped), PyArray_DATA(allocated),
                 (size_t)numel * (size_t)PyArray_ITEMSIZE(allocated));
      }
      Py_DECREF(arr);
      if (reshaped == NULL) {
        Py_DECREF(result);
        return NULL;
      }
      arr = reshaped;
    }
    PyObject *key_obj = mace_py_str(y->name);
    int rc = key_obj ? PyDict_SetItem(result, key_obj, arr) : -1;
    Py_XDECREF(key_obj);
    Py_DECREF(arr);
    if (rc < 0) {
      Py_DECREF(result);
      return NULL;
    }
  }
  return result;
}

static PyObject *Engine_run(EngineObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"inputs", "data_format", "out", "keep_on_device", NULL};
  PyObject *feeds = NULL, *result = NULL, *out = Py_None;
  const char *data_format = NULL;
  int df, keep_on_device = 0;
  run_buffers rb = {0};

  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|zOp:run", kwlist, &PyDict_Type, &feeds,
                                   &data_format, &out, &keep_on_device)) {
    return NULL;
  }
  if (out != Py_None && !PyDict_Check(out)) {
    PyErr_SetString(mace_py_InvalidOutputError, "out must be a dict output name -> array");
    return NULL;
  }
  if (parse_data_format(data_format, &df) < 0 || engine_get(self) == NULL) return NULL;
  if (run_alloc(&rb, mace_engine_num_inputs(self->engine),
                mace_engine_num_outputs(self->engine)) < 0 ||
      bind_feeds(self, feeds, df, &rb) < 0)
    goto finally;
  /* One locked section from bind to run: another thread must not resize the engine between
   * our reading the output shapes and the run filling buffers of those sizes. */
  if (lock_and_bind(self, &rb) < 0) goto finally;
  if (alloc_outputs(self, df, out == Py_None ? NULL : out, keep_on_device, &rb) < 0) {
    engine_unlock(self);
    goto finally;
  }
  if (run_and_unlock(self, &rb) < 0) goto finally;
  result = wrap_outputs(&rb);
finally:
  run_free(&rb);
  return result;
}

/* Keeps `names` (a sequence of str, checked by mace.Session; None: every tensor a run
 * computes) in the engine. */
static int keep_names(EngineObject *self, PyObject *names) {
  PyObject *seq = names == Py_None ? NULL : PySequence_Fast(names, "names must be a sequence");
  Py_ssize_t n = seq ? PySequence_Fast_GET_SIZE(seq) : 0;
  const char **c_names = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  int rc = -1;
  if ((names != Py_None && seq == NULL) || c_names == NULL || n > INT32_MAX) {
    if (!PyErr_Occurred()) PyErr_NoMemory();
    goto finally;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    c_names[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)); /* the str's own bytes */
    if (c_names[i] == NULL) goto finally;
  }
  mace_status st = mace_engine_keep_tensors(self->engine, c_names, seq ? (int)n : MACE_KEEP_ALL);
  if (st != MACE_OK) {
    mace_py_raise(st);
    goto finally;
  }
  rc = 0;
finally:
  PyMem_Free(c_names);
  Py_XDECREF(seq);
  return rc;
}

/* {name: array} of the engine's kept tensors after a run. */
static PyObject *read_kept(EngineObject *self) {
  PyObject *result = PyDict_New();
  if (result == NULL) return NULL;
  int n = mace_engine_num_kept_tensors(self->engine);
  for (int i = 0; i < n; ++i) {
    mace_tensor_info info;
    mace_status st = mace_engine_kept_tensor_info(self->engine, i, &info);
    if (st != MACE_OK) {
      mace_py_raise(st);
      goto fail;
    }
    int npy = mace_py_npy_type(info.dtype);
    if (npy < 0) {
      PyErr_Format(mace_py_UnsupportedError, "tensor '%s': mace dtype %d has no NumPy type",
                   info.name, (int)info.dtype);
      goto fail;
    }
    npy_intp dims[MACE_MAX_DIMS];
    for (int d = 0; d < info.ndim; ++d) dims[d] = (npy_intp)info.dims[d];
    PyObject *arr = PyArray_SimpleNew(info.ndim, dims, npy);
    if (arr == NULL) goto fail;
    st = mace_engine_read_kept_tensor(self->engine, i, PyArray_DATA((PyArrayObject *)arr),
                                      (size_t)PyArray_NBYTES((PyArrayObject *)arr));
    PyObject *key = st == MACE_OK ? mace_py_str(info.name) : NULL;
    int rc = key ? PyDict_SetItem(result, key, arr) : -1;
    Py_XDECREF(key);
    Py_DECREF(arr);
    if (st != MACE_OK) mace_py_raise(st);
    if (rc < 0) goto fail;
  }
  return result;
fail:
  Py_DECREF(result);
  return NULL;
}

static PyObject *Engine_run_with_intermediates(EngineObject *self, PyObject *args,
                                               PyObject *kwargs) {
  static char *kwlist[] = {"inputs", "names", NULL};
  PyObject *feeds = NULL, *names = Py_None, *result = NULL;
  run_buffers rb = {0};
  mace_status st = MACE_OK;

  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O:run_with_intermediates", kwlist,
                                   &PyDict_Type, &feeds, &names)) {
    return NULL;
  }
  if (engine_get(self) == NULL) return NULL;
  if (run_alloc(&rb, mace_engine_num_inputs(self->engine), 0) < 0 ||
      bind_feeds(self, feeds, -1, &rb) < 0)
    goto finally;
  /* One locked section: keep, bind, run, read, and back to the plan that keeps nothing (both
   * plans are remembered, so switching between them does not plan again). */
  engine_lock(self);
  if (self->engine == NULL) {
    engine_unlock(self);
    PyErr_SetString(mace_py_InvalidArgumentError, "mace Engine is closed");
    goto finally;
  }
  if (keep_names(self, names) < 0) {
    engine_unlock(self);
    goto finally;
  }
  st = mace_engine_bind_inputs(self->engine, rb.ins, rb.n_in);
  if (st == MACE_OK) {
    Py_BEGIN_ALLOW_THREADS
    st = mace_engine_run_bound(self->engine, NULL, 0);
    Py_END_ALLOW_THREADS
  }
  if (st != MACE_OK)
    mace_py_raise(st);
  else
    result = read_kept(self);
  (void)mace_engine_keep_tensors(self->engine, NULL, 0);
  engine_unlock(self);
finally:
  run_free(&rb);
  return result;
}

/* ---- profiling and memory ------------------------------------------------------------- */

/* ---- type --------------------------------------------------------------------------- */

static PyMethodDef Engine_methods[] = {
    {"inputs", (PyCFunction)Engine_inputs, METH_NOARGS,
     "inputs() -> list of (name, shape tuple, numpy dtype)"},
    {"outputs", (PyCFunction)Engine_outputs, METH_NOARGS,
     "outputs() -> list of (name, shape tuple, numpy dtype)"},
    {"run", (PyCFunction)(void (*)(void))Engine_run, METH_VARARGS | METH_KEYWORDS,
     "run(inputs: dict[str, ndarray], data_format=None) -> dict[str, ndarray]\n\n"
     "Every model input must be given with the model's shape. float64 arrays feeding float32\n"
     "inputs are converted; non-contiguous arrays are copied. Raises InvalidInputError\n"
     "naming the input and the expected and given shape/dtype. data_format='NHWC' gives and\n"
     "returns 4-D tensors of an NCHW model in NHWC (the engine transposes them)."},
    {"run_with_intermediates", (PyCFunction)(void (*)(void))Engine_run_with_intermediates,
     METH_VARARGS | METH_KEYWORDS,
     "run_with_intermediates(inputs: dict[str, ndarray], names=None) -> dict[str, ndarray]\n\n"
     "Runs once keeping the named tensors (None: every tensor the run computes) and returns\n"
     "copies of them in the model's layout (blocked NCHWc tensors as NCHW). An unknown name\n"
     "raises InvalidArgumentError naming it."},
    {"set_profiling", (PyCFunction)mace_py_engine_set_profiling, METH_VARARGS,
     "set_profiling(on: bool): time every op in the following runs"},
    {"op_stats", (PyCFunction)mace_py_engine_op_stats, METH_NOARGS,
     "op_stats() -> list of dicts (name, type, ms, macs, out_dims, device, reinferred) of the "
     "last profiled run"},
    {"memory_stats", (PyCFunction)mace_py_engine_memory_stats, METH_NOARGS,
     "memory_stats() -> dict(arena_bytes, naive_bytes, weights_bytes)"},
    {"gpu_precision", (PyCFunction)mace_py_engine_gpu_precision, METH_NOARGS,
     "gpu_precision() -> 'fp16' | 'fp32' (what a GPU engine stores floats in) or None (CPU)"},
    {"gpu_launch_stats", (PyCFunction)mace_py_engine_gpu_launch_stats, METH_NOARGS,
     "gpu_launch_stats() -> dict(launches, chunked_launches, chunks) of the GPU kernels"},
    {"shares_gpu_buffer", (PyCFunction)mace_py_engine_shares_gpu_buffer, METH_O,
     "shares_gpu_buffer(buffer) -> bool: the GpuBuffer is usable by this engine's runs"},
    {"upload", (PyCFunction)mace_py_engine_upload, METH_O,
     "upload(array) -> GpuBuffer: a copy of the array in this GPU engine's context"},
    {"release_intermediate_buffers", (PyCFunction)mace_py_engine_release_intermediate_buffers,
     METH_NOARGS, "release_intermediate_buffers(): free the arena; the next run re-allocates"},
    {"close", (PyCFunction)Engine_close, METH_NOARGS,
     "close(): destroy the engine now (also done when the object is collected)"},
    {"__enter__", (PyCFunction)Engine_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Engine_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Engine_doc,
             "Engine(graph=None, weights=None, graph_path=None, weights_path=None, "
             "num_threads=-1, affinity=1, device='cpu', verify_checksum=True, "
             "gpu_precision='fp16', opencl_binary_file=None, opencl_parameter_file=None, "
             "gpu_platform=-1, gpu_device=-1, opencl_queue_window_size=0, decrypt_key=None, "
             "max_arena_bytes=0, share_gpu_with=None, discard_packed_weights=False, "
             "gpu_memory='buffer', limit_opencl_kernel_time=0)\n\n"
             "A loaded mace model. Give the graph (.pb contents) and weights (.data contents) as\n"
             "bytes-like objects (the weights are used in place, not copied) or as file paths\n"
             "(the weights file is read into memory). num_threads <= 0 uses one thread per core;\n"
             "affinity is 0 (none), 1 (big cores) or 2 (little cores). verify_checksum=False\n"
             "skips the check of the checksums the graph records. device='gpu' runs on OpenCL\n"
             "(mace_config's gpu_* and opencl_* fields). max_arena_bytes: mace_config's (0: \n"
             "MACE_MAX_ARENA_BYTES, else physical memory; < 0: no limit).\n"
             "discard_packed_weights=True lets the engine give back the pages of the weights\n"
             "buffer that its ops read only through packed copies (they then read as zeros): for\n"
             "a buffer nothing else reads.");

static PyTypeObject EngineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mace._mace.Engine",
    .tp_basicsize = sizeof(EngineObject),
    .tp_dealloc = (destructor)Engine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Engine_doc,
    .tp_methods = Engine_methods,
    .tp_init = (initproc)Engine_init,
    .tp_new = PyType_GenericNew,
};

int mace_py_engine_module_init(PyObject *module) {
  if (PyType_Ready(&EngineType) < 0) return -1;
  Py_INCREF(&EngineType);
  if (PyModule_AddObject(module, "Engine", (PyObject *)&EngineType) < 0) {
    Py_DECREF(&EngineType);
    return -1;
  }
  return 0;
}
