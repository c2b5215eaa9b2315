"""Builds mace: the Python front plus the C core as the CPython extension `mace._mace`, through CMake.

CMakeLists.txt is the one description of sources, flags and ISA variants. build_ext configures
build/py-<SOABI> with MACE_BUILD_PYTHON=ON, builds its target `mace_python` (the extension and the
descriptor set python/mace/_generated/mace.desc that python/mace/proto.py loads) and copies both
where setuptools wants them. The build directory is kept, so a rebuild compiles only what changed.

    pip install -e .                        # or: python setup.py build_ext --inplace
    MACE_CMAKE_ARGS="-DMACE_ENABLE_AVX512=OFF" pip install -e .    # extra CMake arguments

Needs cmake, protoc, protoc-c and libprotobuf-c (see docs/building.md); nothing is fetched.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
os.chdir(ROOT)  # setuptools wants package paths relative to the repository root
DESC = os.path.join("_generated", "mace.desc")  # relative to the package directory
# Build tools and the Debian/Ubuntu package that has each.
TOOLS = {"cmake": "cmake", "protoc": "protobuf-compiler", "protoc-c": "protobuf-c-compiler"}

try:  # setuptools prints these as "error: <message>" without a traceback
    from setuptools.errors import BaseError as _SetupError
except ImportError:  # older setuptools
    from distutils.errors import DistutilsError as _SetupError


class BuildError(_SetupError):
    pass


def _check_tools(cmake_args: list[str]) -> str:
    """The cmake executable; a BuildError naming every missing tool and its apt package."""
    given = {"protoc": "-DMACE_PROTOC=", "protoc-c": "-DMACE_PROTOC_C="}  # paths passed to CMake
    missing = [t for t in TOOLS if shutil.which(t) is None
               and not (t in given and any(a.startswith(given[t]) for a in cmake_args))]
    if missing:
        pkgs = " ".join(TOOLS[t] for t in missing)
        raise BuildError(f"mace build: {', '.join(missing)} not found on PATH. "
                         f"Install with: apt-get install {pkgs}")
    return shutil.which("cmake")


def _run(cmd: list[str]) -> None:
    print("mace build:", " ".join(shlex.quote(c) for c in cmd), flush=True)
    res = subprocess.run(cmd, cwd=ROOT)
    if res.returncode != 0:
        raise BuildError(f"mace build: `{' '.join(cmd)}` failed with exit status {res.returncode} "
                         "(its output is above)")


def _copy_if_changed(src: str, dst: str) -> None:
    """Copies src to dst unless dst already has the same size and mtime (keeps a no-op build a no-op)."""
    if os.path.exists(dst):
        s, d = os.stat(src), os.stat(dst)
        if s.st_size == d.st_size and s.st_mtime == d.st_mtime:
            return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(src, dst)


class CMakeBuildExt(build_ext):
    """Builds each extension as the CMake target in its `cmake_target` attribute."""

    def build_extension(self, ext: Extension) -> None:
        user_args = shlex.split(os.environ.get("MACE_CMAKE_ARGS", ""))
        cmake = _check_tools(user_args)
        import numpy

        ext_suffix = sysconfig.get_config_var("EXT_SUFFIX")
        tag = sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag
        build_dir = os.path.join(ROOT, "build", f"py-{tag}")
        configure = [
            cmake, "-S", ROOT, "-B", build_dir,
            # NDEBUG as before: the extension has always been built with Python's CFLAGS, which
            # define it; RelWithDebInfo is mace's -O3 -g -DNDEBUG.
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
            "-DMACE_BUILD_PYTHON=ON",
            "-DMACE_BUILD_TESTS=OFF",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DMACE_NUMPY_INCLUDE_DIR={numpy.get_include()}",
            f"-DMACE_PYTHON_EXT_SUFFIX={ext_suffix}",
        ] + user_args
        _run(configure)
        jobs = self.parallel if isinstance(self.parallel, int) and self.parallel > 0 else os.cpu_count() or 1
        build = [cmake, "--build", build_dir, "--target", ext.cmake_target, f"-j{jobs}"]
        if self.force:
            build.append("--clean-first")
        _run(build)

        # CMake's outputs (cmake/python.cmake) -> where setuptools expects the module (build_lib, or
        # python/mace/ for --inplace and editable installs, which setuptools copies there itself).
        built_dir = os.path.join(build_dir, "python", "mace")
        _copy_if_changed(os.path.join(built_dir, "_mace" + ext_suffix), self.get_ext_fullpath(ext.name))
        # The descriptor set goes next to the module and into the source package (editable installs
        # and build_py read it there).
        desc = os.path.join(built_dir, DESC)
        _copy_if_changed(desc, os.path.join(os.path.dirname(self.get_ext_fullpath(ext.name)), DESC))
        _copy_if_changed(desc, os.path.join(ROOT, "python", "mace", DESC))


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

ext = Extension("mace._mace", sources=[])  # sources, flags and libraries: CMakeLists.txt
ext.cmake_target = "mace_python"

setup(
    packages=PACKAGES,
    package_dir=PACKAGE_DIR,
    package_data={"mace": [DESC]},
    include_package_data=False,
    ext_modules=[ext],
    cmdclass={"build_ext": CMakeBuildExt},
    zip_safe=False,
)
