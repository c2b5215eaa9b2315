"""mace.Session: load a model (ONNX or mace .pb/.data) and run NumPy arrays through it."""
from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from . import _mace
from .errors import InvalidArgumentError, InvalidInputError, InvalidOutputError, MaceError
from .tensor import Tensor

AFFINITY_NAMES = ("none", "big", "little")  # the policies by name (the CLI's choices)
DEFAULT_AFFINITY = "big"  # what affinity=None means
_AFFINITY = {"none": 0, "big": 1, "big_only": 1, "little": 2, "little_only": 2}
_AFFINITY[None] = _AFFINITY[DEFAULT_AFFINITY]


class TensorSpec(NamedTuple):
    """A model input or output: name, shape (tuple of ints) and NumPy dtype."""

    name: str
    shape: tuple
    dtype: np.dtype


def _is_mace_model(obj: Any) -> bool:
    return callable(getattr(obj, "graph_bytes", None)) and callable(getattr(obj, "weights_bytes", None))


def _is_onnx_model(obj: Any) -> bool:
    try:
        import onnx
    except ImportError:  # no onnx installed: it cannot be a ModelProto
        return False
    return isinstance(obj, onnx.ModelProto)


def _convert(source: Any, input_shapes: Mapping | None = None,
             probe_shapes: Mapping | None = None, device: str = "cpu"):
    from .converters.model import convert  # lazy: onnx is needed only to convert
    return convert(source, inputs=input_shapes, probe_shapes=probe_shapes,
                   device="gpu" if device in ("gpu", "GPU") else "cpu")


def _symbolic_specs(source: Any, input_shapes: Mapping | None):
    """(inputs, outputs) as (name, shape with -1 per symbolic dim, dtype) of an ONNX model
    whose inputs have symbolic dims that input_shapes does not fix; None when it has none."""
    from onnx import helper
    from .converters.onnx_converter import load_onnx
    graph = load_onnx(source).graph
    inits = {t.name for t in graph.initializer}

    def specs(values):
        out = []
        for vi in values:
            tt = vi.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
            out.append((vi.name, tuple(dims), np.dtype(helper.tensor_dtype_to_np_dtype(
                tt.elem_type or 1))))
        return out
    ins = specs(vi for vi in graph.input if vi.name not in inits)
    fixed = input_shapes or {}
    symbolic = any(
        any(d < 0 for d in shape) and
        (name not in fixed or any(d is None or int(d) < 0 for d in fixed[name]))
        for name, shape, _ in ins)
    return (ins, specs(graph.output)) if symbolic else None


class _PendingEngine:
    """Stands in for the engine of an ONNX model that could not be built at the probe sizes
    of its symbolic dims: the first run converts it at that run's input shapes (the dims stay
    symbolic) and puts the real engine in the session."""

    def __init__(self, session: "Session", source: Any, input_shapes, kw: dict, specs):
        self._session, self._source, self._kw = session, source, kw
        self._input_shapes = input_shapes
        self._inputs, self._outputs = specs
        self._profiling = False

    def _start(self, feeds: Mapping):
        shapes = {k: list(np.shape(v)) for k, v in feeds.items()}
        s = self._session
        model = _convert(self._source, self._input_shapes, shapes, self._kw.get("device", "cpu"))
        s._engine = s._from_converted(model, self._kw)
        if s._keep_model:
            s.model = model
        if self._profiling:
            s._engine.set_profiling(True)
        return s._engine

    def inputs(self):
        return list(self._inputs)

    def outputs(self):
        return list(self._outputs)

    def run(self, feeds, data_format=None, **kw):
        return self._start(feeds).run(feeds, data_format, **kw)

    def run_with_intermediates(self, feeds, names):
        return self._start(feeds).run_with_intermediates(feeds, names)

    def set_profiling(self, on):
        self._profiling = bool(on)

    def op_stats(self):
        return []

    def gpu_launch_stats(self):
        return dict(launches=0, chunked_launches=0, chunks=0)

    def memory_stats(self):
        raise InvalidInputError("the model is built at its first run's input shapes: run it "
                                "first")

    def release_intermediate_buffers(self):
        pass

    def close(self):
        pass


def _affinity(value: Any) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (0, 1, 2):
        return int(value)
    key = value.lower() if isinstance(value, str) else value
    if (key is None or isinstance(key, str)) and key in _AFFINITY:
        return _AFFINITY[key]
    raise InvalidArgumentError(f"affinity must be None, 'big', 'little', 'none' or 0/1/2, "
                               f"not {value!r}")


def _num_threads(value: Any) -> int:
    """An int (not a bool) that fits the engine's; <= 0 means one thread per core. The engine
    itself refuses counts over its maximum (InvalidArgumentError too)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
            not -2**31 <= int(value) < 2**31:
        raise InvalidArgumentError(f"num_threads must be an int (<= 0: one per core), "
                                   f"not {value!r}")
    return int(value)


def _max_arena_bytes(value: Any) -> int:
    """The engine's max_arena_bytes (mace_config's: < 0 no limit) of Session's (0: no limit)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
            not 0 <= int(value) < 2**63:
        raise InvalidArgumentError(f"max_arena_bytes must be an int >= 0 (0: no limit), not "
                                   f"{value!r}")
    return int(value) if value > 0 else -1


# Session(gpu_precision=...): "fp16" (default) is half where the device has cl_khr_fp16 and
# fp32 where it lacks it; "fp16_storage" stores half on every device (float arithmetic).
GPU_PRECISIONS = ("fp16", "fp32", "fp16_storage")
# Session(gpu_memory=...): where GPU activations live (seed 003's cl_mem_type).
GPU_MEMORIES = ("buffer", "image")


def _gpu_options(precision: Any, binary_file: Any, parameter_file: Any, platform: Any,
                 device: Any, queue_window: Any, limit_kernel_time: Any = False,
                 memory: Any = "buffer") -> dict:
    """The engine's GPU keywords, checked (InvalidArgumentError naming the option)."""
    if precision not in GPU_PRECISIONS:
        raise InvalidArgumentError(f"gpu_precision must be 'fp16', 'fp32' or 'fp16_storage', "
                                   f"not {precision!r}")
    if memory not in GPU_MEMORIES:
        raise InvalidArgumentError(f"gpu_memory must be 'buffer' or 'image', not {memory!r}")
    kw: dict = dict(gpu_precision=precision, gpu_memory=memory)
    for name, value in (("opencl_binary_file", binary_file),
                        ("opencl_parameter_file", parameter_file)):
        if value is not None:
            if not isinstance(value, (str, os.PathLike)):
                raise InvalidArgumentError(f"{name} must be a path, not {value!r}")
            kw[name] = os.fspath(value)
    for name, value, low in (("gpu_platform", platform, -1), ("gpu_device", device, -1),
                             ("opencl_queue_window_size", queue_window, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
                not low <= int(value) < 2**31:
            raise InvalidArgumentError(f"{name} must be an int >= {low}, not {value!r}")
        kw[name] = int(value)
    if limit_kernel_time not in (0, 1):  # False/True too
        raise InvalidArgumentError(f"limit_opencl_kernel_time must be a bool (or 0/1), not "
                                   f"{limit_kernel_time!r}")
    kw["limit_opencl_kernel_time"] = int(limit_kernel_time)
    return kw


class Session:
    """A model loaded into the mace engine, ready to run.

    `model` is one of:
      * a path to an ONNX model (``.onnx``; converted in memory),
      * a path to a mace graph (``.pb``) with its weights (``weights``, by default the
        same path with ``.data``; the weights file is read into memory, so replacing it
        later does not affect the session),
      * an ``onnx.ModelProto`` or the serialized bytes of an ONNX model,
      * mace graph bytes together with ``weights`` bytes,
      * a converted model (what ``mace.convert`` returns).

    ``num_threads`` <= 0 uses one thread per core; ``affinity`` is "big" (the default: with
    more than one thread, each on a core of its own among the fastest, the calling thread only
    while a run lasts), "little" or "none" (left to the OS).
    ``verify_checksum`` (default True): a mace graph that records checksums of itself and of
    its weights is verified at load, a mismatch raising InvalidModelError naming the file;
    False skips the check (a model without checksums loads either way).
    ``device="gpu"`` runs the model on an OpenCL device (``mace.devices()`` lists them): ops
    with a GPU kernel run there, the others on the CPU with copies between the two (MACE's
    cpu+gpu; ``profile`` shows each op's device and the copies, named ``<tensor>:to_gpu`` /
    ``:to_host``). ``gpu_precision``: "fp16" (the default, as MACE's fp16_fp32) stores tensors
    in half precision where the device has ``cl_khr_fp16`` and runs fp32 where it lacks it
    (NVIDIA's OpenCL, PoCL: half there is storage only, paid in conversions); "fp16_storage"
    stores half on every device, computed in float (half the memory; how PoCL tests the
    half path); "fp32". ``Session.gpu_precision`` says what the session uses (every kernel
    computes in float: "fp16" is half storage). ``gpu_memory`` (seed 003's ``cl_mem_type``):
    "buffer" (the default) keeps activations in OpenCL buffers; "image" keeps those of the ops
    with image kernels (Conv2D, Pooling, Activation, BatchNorm, BiasAdd, Eltwise, Concat) in
    image2d objects, the other ops reading buffers through transform steps that the profile
    lists as ``BufferToImage`` / ``ImageToBuffer``. ``opencl_binary_file`` caches compiled
    programs in that file, ``opencl_parameter_file`` reads tuned work-group sizes from it;
    ``gpu_platform`` / ``gpu_device`` pick a device by index (-1: the first GPU);
    ``opencl_queue_window_size`` > 0 waits for the GPU every that many kernels;
    ``limit_opencl_kernel_time=True`` (seed 003's key) runs each kernel launch of more than
    ``MACE_OPENCL_CHUNK_ITEMS`` work items (default 16384) as chunks along its outermost
    dimension, flushed one by one, so the GPU can serve the display between them (the same
    results bit for bit; ``gpu_launch_stats()`` counts the chunks). Without an
    OpenCL library or device, ``device="gpu"`` raises UnsupportedError saying which.
    ``max_arena_bytes``: the most bytes a run's intermediate arena (or a tensor an op computes
    from input values while shapes are inferred) may take; a run needing more raises
    MaceError naming both sizes, and the session stays usable for shapes that fit. None (the
    default): the environment variable MACE_MAX_ARENA_BYTES when set, else the machine's
    physical memory; 0: no limit.
    ``decrypt_key`` (32 bytes): the AES-256 key of a model `mace encrypt` encrypted, which the
    engine decrypts in memory; a wrong key raises InvalidModelError (docs/encryption.md).
    ``keep_model`` (default False): a session that converts its model (an ONNX source) keeps
    the converted ``MaceModel`` as ``Session.model`` (to save it, or read its graph); by
    default ``model`` is None and the session holds the engine and its weights blob alone.
    ``input_shapes`` ({name: shape}) fixes input dims of an ONNX model being converted: an
    int fixes a dim, None leaves it symbolic. Symbolic dims (an ONNX ``dim_param``, unless
    fixed here) take the shape of each run: the shape computations that read them (torch's
    ``x.view(x.size(0), -1)``, ...) stay in the model and the engine evaluates them on each
    new shape, keeping a memory plan per shape. Fixing dims lets the converter fold those
    computations to constants; the session then rejects other sizes of those dims where the
    graph depends on them. Before the first run ``inputs`` shows the sizes the model was
    converted at (1 for a symbolic batch, ``mace.converters.onnx_dims.PROBE_OTHER`` for other
    symbolic dims).

    Example::

        >>> import numpy as np, onnx, mace
        >>> from onnx import helper, TensorProto
        >>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
        ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
        >>> onnx_model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        >>> sess = mace.Session(onnx_model, num_threads=1)
        >>> sess.inputs[0].name, sess.inputs[0].shape
        ('x', (1, 4))
        >>> sess.run(np.array([[-1, 2, -3, 4]], np.float32))
        array([[0., 2., 0., 4.]], dtype=float32)
    """

    def __init__(self, model: Any, weights: Any = None, *, num_threads: int = -1,
                 device: str = "cpu", affinity: Any = None,
                 input_shapes: Mapping[str, Sequence[int]] | None = None,
                 verify_checksum: bool = True, gpu_precision: str = "fp16",
                 opencl_binary_file: str | os.PathLike | None = None,
                 opencl_parameter_file: str | os.PathLike | None = None,
                 gpu_platform: int = -1, gpu_device: int = -1,
                 opencl_queue_window_size: int = 0, limit_opencl_kernel_time: bool = False,
                 decrypt_key: bytes | None = None,
                 max_arena_bytes: int | None = None,
                 share_gpu_with: "Session | None" = None, keep_model: bool = False,
                 gpu_memory: str = "buffer") -> None:
        kw = dict(num_threads=_num_threads(num_threads), affinity=_affinity(affinity),
                  device=device, verify_checksum=bool(verify_checksum))
        if max_arena_bytes is not None:
            kw["max_arena_bytes"] = _max_arena_bytes(max_arena_bytes)
        if decrypt_key is not None:  # an encrypted .pb/.data (mace encrypt; mace/encrypt.py)
            kw["decrypt_key"] = bytes(decrypt_key)
        gpu_kw = _gpu_options(gpu_precision, opencl_binary_file, opencl_parameter_file,
                              gpu_platform, gpu_device, opencl_queue_window_size,
                              limit_opencl_kernel_time, gpu_memory)
        self._gpu = device in ("gpu", "GPU")
        if share_gpu_with is not None:
            engine = getattr(share_gpu_with, "_engine", None)
            if not self._gpu or not isinstance(engine, _mace.Engine):
                raise InvalidArgumentError("share_gpu_with takes a GPU mace.Session (already "
                                           "built), for a session with device='gpu'")
            gpu_kw["share_gpu_with"] = engine
        if device in ("gpu", "GPU"):
            kw.update(gpu_kw)
        else:
            given = [k for k, v in gpu_kw.items()
                     if v != {"gpu_precision": "fp16", "gpu_platform": -1, "gpu_device": -1,
                              "opencl_queue_window_size": 0, "gpu_memory": "buffer",
                              "limit_opencl_kernel_time": 0}.get(k)]
            if given:
                raise InvalidArgumentError(f"{given[0]} applies to device='gpu' only, not "
                                           f"device={device!r}")
        # The converted model when this session converted one and keep_model is set (or the
        # MaceModel it was given). Not kept by default: the engine holds the weights blob
        # alone, and the converted graph (ops, shapes, constants not stored as they are) would
        # stay resident for nothing.
        self.model = None
        self._keep_model = bool(keep_model)
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            if path.lower().endswith(".onnx"):
                self._open_onnx(path, input_shapes, kw)
            else:
                if weights is None:
                    guess = os.path.splitext(path)[0] + ".data"
                    weights = guess if os.path.exists(guess) else None
                if weights is not None and not isinstance(weights, (str, os.PathLike)):
                    with open(path, "rb") as f:
                        graph = f.read()
                    self._weights = weights
                    self._engine = _mace.Engine(graph, weights, **kw)
                else:
                    self._engine = _mace.Engine(
                        graph_path=path,
                        weights_path=None if weights is None else os.fspath(weights), **kw)
        elif isinstance(model, (bytes, bytearray, memoryview)):
            if weights is not None:  # mace graph + weights blob
                self._weights = weights
                self._engine = _mace.Engine(bytes(model), weights, **kw)
            else:  # an ONNX model
                self._open_onnx(bytes(model), input_shapes, kw)
        elif _is_mace_model(model):
            self.model = model
            self._engine = self._from_model(model, kw)
        elif _is_onnx_model(model):
            self._open_onnx(model, input_shapes, kw)
        else:
            raise TypeError("model must be a path (.onnx or .pb), bytes, an onnx.ModelProto or a "
                            f"converted mace model, not {type(model).__name__}")

    @property
    def gpu_precision(self) -> str | None:
        """What a GPU session stores float tensors in, "fp16" or "fp32" (the requested
        ``gpu_precision`` resolved on its device: "fp16" gives "fp32" on a device without
        cl_khr_fp16); None for a CPU session."""
        return self._engine.gpu_precision()

    @property
    def inputs(self) -> list[TensorSpec]:
        """The model's inputs (name, shape, dtype); shapes are those of the latest run."""
        return [TensorSpec(n, tuple(s), d) for n, s, d in self._engine.inputs()]

    @property
    def outputs(self) -> list[TensorSpec]:
        """The model's outputs (name, shape, dtype); shapes are those of the latest run."""
        return [TensorSpec(n, tuple(s), d) for n, s, d in self._engine.outputs()]

    @property
    def _output_names(self) -> list[str]:
        if not hasattr(self, "_out_names"):
            self._out_names = [o[0] for o in self._engine.outputs()]
        return self._out_names

    def _from_model(self, model: Any, kw: dict):
        # The engine reads an aligned blob in place (and copies any other): keep it alive.
        buffer = getattr(model, "weights_buffer", None)
        self._weights = buffer() if callable(buffer) else model.weights_bytes()
        return _mace.Engine(model.graph_bytes(), self._weights or None, **kw)

    def _from_converted(self, model: Any, kw: dict):
        # The conversion's garbage (parsed tensors, the graph's arrays before the blob took
        # their place) is freed by now, but stays resident in the C heap unless handed back.
        # Converted here and never written to a file: there is nothing to verify. Unless the
        # converted model is kept, its blob is the engine's alone: the engine may give back the
        # pages of the weights it holds packed (the blob reads zeros there afterwards).
        engine = self._from_model(model, dict(kw, verify_checksum=False,
                                              discard_packed_weights=not self._keep_model))
        _mace.release_free_heap()
        return engine

    def _open_onnx(self, source: Any, input_shapes: Mapping | None, kw: dict) -> None:
        model = _convert(source, input_shapes, device=kw.get("device", "cpu"))
        try:
            self._engine = self._from_converted(model, kw)
        except MaceError:
            # Built at the probe sizes of symbolic dims, which the graph may not take (unpadded
            # convolutions on a small height): build at the first run's shapes instead.
            specs = _symbolic_specs(source, input_shapes)
            if specs is None:
                raise
            self._engine = _PendingEngine(self, source, input_shapes, kw, specs)
            return
        if self._keep_model:
            self.model = model

    # ---- running -----------------------------------------------------------------------

    def _feeds(self, x: Any) -> dict:
        if isinstance(x, Mapping):
            feeds = dict(x)
        else:
            inputs = self.inputs
            if len(inputs) != 1:
                names = ", ".join(repr(i.name) for i in inputs)
                raise InvalidInputError(f"the model has {len(inputs)} inputs ({names}): "
                                        "pass a dict name -> array")
            feeds = {inputs[0].name: x}
        for name, value in feeds.items():  # host tensors as their arrays, GPU ones as buffers
            if isinstance(value, Tensor):
                feeds[name] = value._host if value._host is not None else value._gpu
        return feeds

    def _out(self, out: Any) -> dict | None:
        """run's out= as {output name: host array}."""
        if out is None:
            return None
        names = self._output_names
        if isinstance(out, Mapping):
            given = dict(out)
        elif isinstance(out, (list, tuple)):
            if len(out) != len(names):
                raise InvalidOutputError(f"out has {len(out)} arrays, the model has "
                                         f"{len(names)} outputs")
            given = dict(zip(names, out))
        elif len(names) == 1:
            given = {names[0]: out}
        else:
            raise InvalidOutputError(f"the model has {len(names)} outputs: give out as a dict "
                                     "name -> array or a tuple in the order of outputs")
        for name, value in given.items():
            if name not in names:
                raise InvalidOutputError(f"out names {name!r}, which is not an output of the "
                                         f"model ({', '.join(map(repr, names))})")
            if isinstance(value, Tensor):
                if value._host is None:
                    raise InvalidOutputError(f"out[{name!r}] is a GPU tensor: out= takes host "
                                             "memory (use keep_on_device=True for the GPU)")
                given[name] = value._host
        return given

    def run(self, x: Any, *, data_format: str | None = None, keep_on_device: bool = False,
            out: Any = None) -> Any:
        """Runs the model.

        ``x`` is one array (for a model with one input) or a dict name -> array. With one
        array in, one array comes back when the model has one output, else a tuple in the
        order of ``outputs``; a dict in gives a dict name -> array out.

        Inputs must have the model's rank; other sizes (batch, height, width) are accepted
        when the graph can take them (the engine re-infers its shapes). float64 arrays are converted to float32 for
        float32 inputs, and non-contiguous arrays (slices, transposes) are copied to
        contiguous ones; other dtype mismatches raise InvalidInputError, as do a wrong shape,
        a missing input or an unknown name (the message names the input and the expected
        and given shape and dtype).

        ``data_format="NHWC"`` passes and returns 4-D tensors of an NCHW model in NHWC (the
        engine transposes them); by default every tensor is in the model's own format.

        Inputs may be ``mace.Tensor``: a host tensor is read like its array (in place when
        contiguous and aligned); a GPU tensor (from ``keep_on_device``) of a session sharing
        this one's OpenCL context (``share_gpu_with``) is read by the GPU ops where it lies,
        with no copy through the host (the profile shows no ``:to_gpu`` transfer for it). A
        GPU tensor of another context, or given to a CPU session, raises InvalidInputError.

        ``keep_on_device=True`` (GPU sessions) returns GPU ``mace.Tensor`` outputs instead of
        arrays: each is copied on the device into a buffer of its own (an output computed
        on the CPU is uploaded), so it stays valid across later runs.
        ``out`` receives outputs in memory the caller owns: an array (or host Tensor) for a
        model with one output, a tuple in the order of ``outputs``, or a dict name -> array
        (outputs not named are returned as usual). Each must have the output's shape and
        dtype and be C-contiguous, aligned and writeable, else InvalidOutputError; the run
        writes into it and returns that array.

        Example::

            >>> y = sess.run(np.zeros(sess.inputs[0].shape, np.float32))    # doctest: +SKIP
            >>> ys = sess.run({"x": np.zeros((1, 4))})                        # doctest: +SKIP
            >>> buf = np.empty(sess.outputs[0].shape, np.float32)            # doctest: +SKIP
            >>> sess.run(x, out=buf) is buf                                   # doctest: +SKIP
            True
        """
        as_dict = isinstance(x, Mapping)
        if keep_on_device and not self._gpu:
            raise InvalidArgumentError("keep_on_device=True needs a session with device='gpu'")
        given = self._out(out)
        out = self._engine.run(self._feeds(x), data_format, out=given,
                               keep_on_device=bool(keep_on_device))
        for name, value in out.items():
            if isinstance(value, _mace.GpuBuffer):
                out[name] = Tensor._on_gpu(value)
        if as_dict:
            return out
        names = self._output_names
        if len(names) == 1:
            return out[names[0]]
        return tuple(out[n] for n in names)

    __call__ = run

    def run_with_intermediates(self, x: Any,
                               names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Runs the model once and returns its intermediate tensors, ``{name: array}``.

        ``names`` lists the tensors to return (the converted model's names: an ONNX node's
        output keeps its name, though ops the converter fuses or folds away leave none);
        ``None`` returns every tensor the run computes, the model's outputs included, in
        execution order. Arrays are copies in the model's layout: tensors that run in the
        blocked NCHWc layout come back as NCHW. ``x`` is given as to ``run``.

        While the run lasts the engine does not reuse the memory of these tensors, so its
        arena is larger (that plan is remembered next to the normal one; ``run`` is unchanged).
        A name the model lacks raises InvalidArgumentError naming it. This is what
        quantization calibration reads its activation statistics from.

        Example::

            >>> import numpy as np, onnx, mace
            >>> from onnx import helper, TensorProto
            >>> g = helper.make_graph(
            ...     [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])],
            ...     "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
            ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
            >>> sess = mace.Session(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
            >>> t = sess.run_with_intermediates(np.array([[-1, 2, -3, 4]], np.float32))
            >>> sorted(t), t["r"]
            (['r', 'y'], array([[0., 2., 0., 4.]], dtype=float32))
            >>> sess.run_with_intermediates(np.zeros((1, 4), np.float32), names=["r"])["r"].shape
            (1, 4)
        """
        if names is not None:
            given = names
            ok = isinstance(given, Iterable) and not isinstance(given, (str, bytes))
            names = list(given) if ok else []
            if not ok or not all(isinstance(n, str) for n in names):
                raise InvalidArgumentError(f"names must be a list of tensor names (str) or None, "
                                           f"not {given!r}")
        return self._engine.run_with_intermediates(self._feeds(x), names)

    def profile(self, x: Any, rounds: int = 10, warmup: int = 1) -> list[dict]:
        """Per-op statistics averaged over ``rounds`` runs of ``x`` (after ``warmup`` runs).

        Returns a list in execution order of dicts: name, type, ms (mean wall time; for ops
        on the GPU the kernels' device time from OpenCL profiling), min_ms, max_ms, macs,
        out_dims, device ("cpu" or "gpu"), reinferred (in the last round, its shapes were
        inferred again after an op sized by values, such as NonZero, gave other dims than
        the run before), and for ops on the GPU precision (what float tensors are stored in
        there: ``Session.gpu_precision``). On the GPU the copies between devices are listed
        too, where they run (type "Transfer", named ``<tensor>:to_gpu`` / ``:to_host``).

        Example::

            >>> for s in sess.profile(x, rounds=5):                          # doctest: +SKIP
            ...     print(f"{s['name']:20s} {s['type']:12s} {s['ms']:.3f} ms")
        """
        if rounds < 1:
            raise InvalidArgumentError(f"rounds must be >= 1, not {rounds}")
        feeds = self._feeds(x)
        for _ in range(warmup):
            self._engine.run(feeds)
        self._engine.set_profiling(True)
        try:
            stats: list[dict] = []
            for r in range(rounds):
                self._engine.run(feeds)
                for i, s in enumerate(self._engine.op_stats()):
                    if r == 0:
                        s = dict(s, min_ms=s["ms"], max_ms=s["ms"])
                        stats.append(s)
                    else:
                        acc = stats[i]
                        acc["ms"] += s["ms"]
                        acc["min_ms"] = min(acc["min_ms"], s["ms"])
                        acc["max_ms"] = max(acc["max_ms"], s["ms"])
            precision = self.gpu_precision
            for s in stats:
                s["ms"] /= rounds
                if s["device"] == "gpu":
                    s["precision"] = precision
            return stats
        finally:
            self._engine.set_profiling(False)

    def gpu_launch_stats(self) -> dict:
        """dict(launches, chunked_launches, chunks): the GPU kernel launches of this session
        since it was created, those that ``limit_opencl_kernel_time`` split into chunks and
        the chunks they made (all 0 on the CPU)."""
        return self._engine.gpu_launch_stats()

    # ---- memory and lifetime -------------------------------------------------------------

    def memory_stats(self) -> dict:
        """dict(arena_bytes, naive_bytes, weights_bytes): planned vs. unplanned intermediates
        (host memory); on the GPU also device_arena_bytes, the planned device buffer."""
        return self._engine.memory_stats()

    def release_intermediate_buffers(self) -> None:
        """Frees the intermediate arena now; the next run allocates it again."""
        self._engine.release_intermediate_buffers()

    def close(self) -> None:
        """Destroys the engine (unmaps the weights file); the session cannot run afterwards."""
        self._engine.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        def fmt(specs: Sequence[TensorSpec]) -> str:
            return ", ".join(f"{s.name}{list(s.shape)}:{s.dtype}" for s in specs)
        try:
            ins, outs = self.inputs, self.outputs
        except (AttributeError, ValueError):  # not created, or closed
            return "<mace.Session (closed)>"
        return f"<mace.Session inputs=({fmt(ins)}) outputs=({fmt(outs)})>"
