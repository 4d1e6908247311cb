# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A small record store for the service tests (CLI, HTTP, kills)."""

import numpy as np

from skforget import Database, NoisyGDClassifier
from skforget.store import RecordStore


def small_store(location, n=40, string_ids=True):
    """A store of ``n`` array records (IDs ``p0``, ``p1``, ... or 0, 1, ...)
    and a classifier fitted on them with a fixed seed."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 3)) / 2
    ids = [f"p{i}" for i in range(n)] if string_ids else None
    db = Database(X, (X[:, 0] > 0).astype(int), ids=ids)
    return RecordStore.create(location, db, NoisyGDClassifier(
        classes=[0, 1], random_state=0).fit(db))
