# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Declares the Cython extensions only; metadata lives in pyproject.toml.

The gradient kernel is compiled twice from skforget/_gd_fast.pxi: a portable
build, and on x86-64 with GCC or Clang an AVX2 + FMA build that
skforget._kernels selects at import time when the CPU supports it.
"""

import platform
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

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


extensions = [kernel("_gd_fast")]
if gnu_like and platform.machine().lower() in ("x86_64", "amd64"):
    extensions.append(kernel("_gd_fast_avx2", ["-mavx2", "-mfma"]))

setup(
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
