# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A deletion service's records, model, certificates and requests in one database.

:class:`RecordStore` keeps, in a SQLite file or a PostgreSQL database, what a
deletion service needs between requests: the records keyed by ID, the fitted
model (or :class:`~skforget.pipeline.ForgetPipeline`), the log of edit
certificates, the queue of deletion requests with their due dates and audit
records, and tombstones (keyed hashes) of the deleted IDs. Every change is one
transaction: if anything fails or the process dies half-way, the database
restores the previous consistent state.

The store keeps nothing that the model must not keep, beyond the records
themselves (which the data owner holds anyway), the public certificates and
what a request must prove: the IDs its requester named, its times and its
audit record. Deleted records are overwritten in a SQLite file (``PRAGMA
secure_delete``), not left in free pages.

The model is stored with :mod:`pickle`: open only stores you trust.
"""

from skforget.store._backends import StoreBusyError
from skforget.store._http import http_app
from skforget.store._ledger import SharedLedger
from skforget.store._requests import (
    RequestConflictError,
    RequestStatus,
    UnknownIDError,
    UnknownRequestError,
)
from skforget.store._store import RecordStore, forget

__all__ = [
    "RecordStore",
    "RequestConflictError",
    "RequestStatus",
    "SharedLedger",
    "StoreBusyError",
    "UnknownIDError",
    "UnknownRequestError",
    "forget",
    "http_app",
]
