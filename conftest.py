# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Repository-level pytest configuration (not part of the package)."""

import importlib.util

# skforget.distributed's docstring example starts a Dask cluster. Dask is an
# optional extra (installed by the test extra); without it the example cannot
# run, exactly like tests/test_distributed.py, which importorskips it.
collect_ignore = ([] if importlib.util.find_spec("distributed")
                  else ["skforget/distributed"])
