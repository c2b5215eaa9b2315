"""Builds mace: the C core as the CPython extension `mace._mace`, plus the Python front.

At build time proto/mace.proto is compiled twice:
  * protoc-c  -> build/gen/mace.pb-c.{c,h}      (the C core parses models with protobuf-c)
  * protoc    -> python/mace/_generated/mace.desc (python/mace/proto.py loads the descriptor set)
Nothing is fetched from the network. Both `pip install -e . --no-build-isolation` and
`python setup.py build_ext --inplace` work; the in-place .so lands in python/mace/.
"""
from __future__ import annotations

import glob
import os
import platform
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
os.chdir(ROOT)  # sources and generated files are named relative to the repository root
GEN_DIR = os.path.join("build", "gen")                      # relative: setuptools wants that
DESC = os.path.join("python", "mace", "_generated", "mace.desc")
PROTO = os.path.join("proto", "mace.proto")
APT_HINT = "apt-get install protobuf-c-compiler libprotobuf-c-dev protobuf-compiler"


try:  # setuptools prints these as "error: <message>" without a traceback
    from setuptools.errors import BaseError as _SetupError
except ImportError:  # older setuptools
    from distutils.errors import DistutilsError as _SetupError


class BuildError(_SetupError):
    pass


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise BuildError(f"mace build: `{tool}` not found on PATH. Install it with: {APT_HINT}")
    return path


def _stale(target: str, source: str) -> bool:
    t = os.path.join(ROOT, target)
    return not os.path.exists(t) or os.path.getmtime(t) < os.path.getmtime(os.path.join(ROOT, source))


def _run(cmd: list[str]) -> None:
    print("mace build:", " ".join(cmd))
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"mace build: {' '.join(cmd)} failed:\n{res.stdout}{res.stderr}")


def generate_descriptor() -> None:
    """proto/mace.proto -> python/mace/_generated/mace.desc (FileDescriptorSet)."""
    if not _stale(DESC, PROTO):
        return
    protoc = _need("protoc")
    os.makedirs(os.path.join(ROOT, os.path.dirname(DESC)), exist_ok=True)
    _run([protoc, "--include_imports", f"--descriptor_set_out={DESC}", "-Iproto", PROTO])


def generate_protobuf_c() -> None:
    """proto/mace.proto -> build/gen/mace.pb-c.{c,h}."""
    if not _has_protobuf_c_header():
        raise BuildError(f"mace build: protobuf-c headers (protobuf-c/protobuf-c.h) not found. "
                         f"Install them with: {APT_HINT}")
    if not (_stale(os.path.join(GEN_DIR, "mace.pb-c.c"), PROTO)
            or _stale(os.path.join(GEN_DIR, "mace.pb-c.h"), PROTO)):
        return
    protoc_c = _need("protoc-c")
    os.makedirs(os.path.join(ROOT, GEN_DIR), exist_ok=True)
    _run([protoc_c, f"--c_out={GEN_DIR}", "-Iproto", PROTO])


def _has_protobuf_c_header() -> bool:
    dirs = ["/usr/include", "/usr/local/include", os.path.join(sys.prefix, "include")]
    dirs += [d for d in os.environ.get("CPATH", "").split(os.pathsep) if d]
    dirs += [d for d in os.environ.get("C_INCLUDE_PATH", "").split(os.pathsep) if d]
    return any(os.path.exists(os.path.join(d, "protobuf-c", "protobuf-c.h")) for d in dirs)


class MaceBuildPy(build_py):
    """Makes sure the descriptor set exists before package data is collected."""

    def run(self):
        generate_descriptor()
        super().run()


class MaceBuildExt(build_ext):
    """Generates the protobuf-c sources and the descriptor set, then compiles the extension."""

    def run(self):
        generate_descriptor()
        generate_protobuf_c()
        import numpy
        for ext in self.extensions:
            if numpy.get_include() not in ext.include_dirs:
                ext.include_dirs.append(numpy.get_include())
        super().run()

    def build_extensions(self):
        # Per-ISA kernel files get their own instruction-set flags (the rest stays baseline);
        # each object also writes the headers it read (-MMD) for _up_to_date.
        compile_one = self.compiler._compile

        def _compile(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if _up_to_date(obj, src):
                return
            return compile_one(obj, src, ext, cc_args,
                               list(extra_postargs) + _isa_flags(src) + ["-MMD", "-MF", obj + ".d"],
                               pp_opts)

        self.compiler._compile = _compile
        self.compiler.compile = _parallel_compile.__get__(self.compiler)
        super().build_extensions()


def _up_to_date(obj: str, src: str) -> bool:
    """True when obj is newer than src and every header and .inc it read (its .d file)."""
    dep = obj + ".d"
    if not (os.path.exists(obj) and os.path.exists(dep)):
        return False
    with open(dep) as f:
        text = f.read().replace("\\\n", " ")
    files = text.split(":", 1)[1].split() if ":" in text else []
    t = os.path.getmtime(obj)
    return all(os.path.exists(d) and os.path.getmtime(d) <= t for d in files + [src])


def _parallel_compile(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                      extra_preargs=None, extra_postargs=None, depends=None):
    """CCompiler.compile on one thread per core (distutils compiles one file at a time)."""
    from concurrent.futures import ThreadPoolExecutor
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

    def one(obj):
        src, ext = build[obj]
        self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(one, objects))  # re-raises the first compile error
    return objects


X86 = platform.machine().lower() in ("x86_64", "amd64")
ARM64 = platform.machine().lower() in ("aarch64", "arm64")


def _isa_flags(src: str) -> list[str]:
    name = os.path.basename(src)
    if X86 and "kernels/cpu/x86/" in src.replace(os.sep, "/"):
        if "avx512" in name:
            return ["-mavx512f", "-mavx512bw", "-mfma"]
        if "avx2" in name:
            return ["-mavx2", "-mfma"]
    return []


def _sources() -> list[str]:
    patterns = ["csrc/core/*.c", "csrc/ops/*.c", "csrc/api/*.c", "kernels/cpu/ref/*.c",
                "csrc/python/*.c"]
    if X86:
        patterns.append("kernels/cpu/x86/*.c")  # SIMD kernels, dispatched at run time
    if ARM64:
        patterns.append("kernels/cpu/arm/*.c")
    srcs = [s for p in patterns for s in sorted(glob.glob(p))]
    return srcs + [os.path.join(GEN_DIR, "mace.pb-c.c")]


def _packages() -> tuple[list[str], dict[str, str]]:
    package_dir = {"mace": "python/mace", "mace.converters": "converters"}
    packages = ["mace"] + [f"mace.{p}" for p in find_packages("python/mace")]
    packages.append("mace.converters")
    for sub in find_packages("converters"):
        name = f"mace.converters.{sub}"
        packages.append(name)
        package_dir[name] = os.path.join("converters", *sub.split("."))
    return packages, package_dir


PACKAGES, PACKAGE_DIR = _packages()

ext = Extension(
    "mace._mace",
    sources=_sources(),
    include_dirs=["csrc/include", "csrc", ".", GEN_DIR],
    libraries=["protobuf-c", "pthread", "m"],
    extra_compile_args=["-std=c11", "-O3"],
    # A changed header or kernel template relinks the extension; _up_to_date then recompiles
    # only the objects that read it.
    depends=sorted(f for d in ("csrc", "kernels") for ext in ("h", "inc")
                   for f in glob.glob(f"{d}/**/*.{ext}", recursive=True)),
)

setup(
    packages=PACKAGES,
    package_dir=PACKAGE_DIR,
    package_data={"mace": ["_generated/mace.desc"]},
    include_package_data=False,
    ext_modules=[ext],
    cmdclass={"build_ext": MaceBuildExt, "build_py": MaceBuildPy},
    zip_safe=False,
)
