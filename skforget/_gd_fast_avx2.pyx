# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clipped full-batch GLM gradient, x86-64-v3 (AVX2 + FMA) build (see _gd_fast.pxi)."""

include "_gd_fast.pxi"
