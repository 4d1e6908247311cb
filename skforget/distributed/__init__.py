# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Training and unlearning on rows held by a Dask cluster.

Records stay on the workers in a :class:`ShardedDatabase`, one actor per
worker; the estimators train on it through a row source and edit it with a
:class:`ShardedEditRequest`. Dask is an optional dependency
(``pip install "skforget[dask]"``), imported when a database is created.
"""

from skforget.distributed._database import ShardedDatabase, ShardedEditRequest

# For the estimators (it sends dask arrays to a sharded fit); not public API.
from skforget.distributed._database import is_dask_collection as is_dask_collection

__all__ = ["ShardedDatabase", "ShardedEditRequest"]
