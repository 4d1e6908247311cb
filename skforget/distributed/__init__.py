# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Training and unlearning on rows held by a Dask cluster.

A fit is a loop of one map (the clipped gradient sum over the rows) and a tiny
update. :class:`ShardedDatabase` keeps the rows resident on the workers, one
actor per worker holding that worker's contiguous share of the rows, and the
estimators train on it through a *row source* (see ``skforget._solver``): at
every step the driver sends the current coefficients to each actor (one message
per worker) and gets back that shard's clipped gradient sum; the generator, the
noise, the step sizes, the batch layout, the accounting and the update stay on
the driver, and the estimator keeps no rows.

What travels
------------
* Driver to worker, once per segment: the public row-map parameters
  (``data_norm``, intercept scaling, gradient bound, the public label set) and,
  with mini-batches, that shard's part of the segment's public row order.
* Driver to worker, every step: the coefficients, ``K (d + 1)`` doubles.
* Worker to driver, every step: the shard's gradient sum, ``K (d + 1)`` doubles.
* Edits: each record to delete or replace is routed to the worker holding it
  by the public shard sizes only; new records go to the last shard (so the
  rows keep the order an :class:`~skforget.EditRequest` gives them).

How the calls travel
--------------------
The driver calls the actors straight on their workers, over the client's
connection pool (through the scheduler if it cannot reach them: see
``_direct_route``), and runs a whole run of steps as one coroutine on the
client's event loop. A step is one round of small messages, so the hops around it are
its cost: an actor proxy goes through the scheduler (unless the client was made
with ``direct_to_workers=True``) and crosses the client's event-loop thread
twice per call, and a plain actor method runs in a worker thread. On a 2-worker
``LocalCluster`` a step with those hops took 5.1-5.8 ms; without them it takes
1.5-2 ms (``benchmarks/bench_scale.py``). The gradient runs on the
worker's event loop when it is small (well under the time Dask tolerates a busy
loop) and in a thread otherwise.

Every worker applies an edit to a staged copy and keeps the previous rows in a
journal until the estimator has finished its unlearning steps: a failed or
interrupted ``partial_unlearn`` rolls every shard back, leaving database and
model as they were. The driver decides each edit on its side (commit or roll
back); a shard that missed the decision is settled before the database is read
or edited again. A request is served only on the version it was built on;
fits may read the database together (each with its own map of the rows), but
not while an edit is served.

Dask is an optional dependency (``pip install "skforget[dask]"``); it is
imported when a :class:`ShardedDatabase` is created, not with this module.
"""

from skforget.distributed._database import ShardedDatabase, ShardedEditRequest

# For the estimators (it sends dask arrays to a sharded fit); not public API.
from skforget.distributed._database import is_dask_collection as is_dask_collection

__all__ = ["ShardedDatabase", "ShardedEditRequest"]
