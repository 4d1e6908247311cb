# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Declares the Cython extensions only; metadata lives in pyproject.toml.

The gradient kernel is compiled twice from skforget/_gd_fast.pxi: a portable
build, and on x86-64 with GCC or Clang an AVX2 + FMA build that
skforget._kernels selects at import time when the CPU supports it. Both use
OpenMP (for ``n_jobs``) when the compiler accepts it; without it the kernel
runs its row ranges one after the other, with the same results. The
accountant's hull (skforget/accounting/_hull.pyx) is compiled without
floating-point contraction or reassociation.
"""

import os
import platform
import sys
import tempfile

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Reassociation lets the compiler vectorise the margin sums; nothing here relies
# on errno or on signed zeros, and NaN/inf semantics are kept.
FP_FLAGS = ["-fno-math-errno", "-fno-trapping-math", "-fassociative-math",
            "-fno-signed-zeros"]
gnu_like = sys.platform != "win32"
base_flags = ["-O3", *FP_FLAGS] if gnu_like else ["/O2"]


def kernel(name, extra=()):
    return Extension(
        f"skforget.{name}",
        [f"skforget/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        extra_compile_args=[*base_flags, *extra],
    )


def openmp_flags(compiler):
    """(compile, link) flags for OpenMP, or empty lists when a test program
    does not build with them (e.g. Apple Clang without libomp)."""
    if os.environ.get("SKFORGET_NO_OPENMP"):
        return [], []
    flag = "/openmp" if compiler.compiler_type == "msvc" else "-fopenmp"
    link = [] if compiler.compiler_type == "msvc" else [flag]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp_check.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\n"
                    "int main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=[flag])
            compiler.link_executable(objs, os.path.join(tmp, "omp_check"),
                                     extra_postargs=link)
        except Exception:  # any compiler or linker failure means no OpenMP
            print("skforget: OpenMP not available; n_jobs will run serially")
            return [], []
    return [flag], link


class BuildExt(build_ext):
    def build_extensions(self):
        compile_flags, link_flags = openmp_flags(self.compiler)
        for ext in self.extensions:
            if ext.name == "skforget.accounting._hull":
                continue  # no threads there
            ext.extra_compile_args += compile_flags
            ext.extra_link_args += link_flags
        super().build_extensions()


# The accountant's hull (Theorem 12.1) must compute each expression as written:
# no reassociation, no contraction into fused multiply-adds.
# (-fno-fast-math first: it undoes a -ffast-math a user's CFLAGS may carry.)
hull_flags = ["-O2", "-fno-fast-math", "-ffp-contract=off"] if gnu_like else \
    ["/O2", "/fp:strict"]
extensions = [kernel("_gd_fast"),
              Extension("skforget.accounting._hull", ["skforget/accounting/_hull.pyx"],
                        include_dirs=[np.get_include()],
                        extra_compile_args=hull_flags)]
if gnu_like and platform.machine().lower() in ("x86_64", "amd64"):
    extensions.append(kernel("_gd_fast_avx2", ["-mavx2", "-mfma"]))

setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "initializedcheck": False,
            "nonecheck": False,
            "cdivision": True,
        },
    )
)
