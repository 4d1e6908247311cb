# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clipped full-batch GLM gradient, portable build (see _gd_fast.pxi)."""

include "_gd_fast.pxi"
