"""
=====================================
Serving a stream of deletion requests
=====================================

A data owner has published a private model and receives 40 erasure requests
(GDPR Article 17), each naming one to three people. Each request is served
with ``partial_unlearn``; for comparison, a fresh model is retrained on the
edited data every time. We follow the test accuracy, the cost in passes over
the data, and the guarantee history.

The model keeps no training row: the loop keeps the database and builds each
request on it, as a data owner would.
"""

# %%
# Setup
# -----
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from skforget import (
    Database,
    EditRequest,
    NoisyGDClassifier,
    PrivacyBudgetWarning,
)
from skforget.datasets import load_dataset

data = load_dataset("breast_cancer")
X0, X_test, y0, y_test = train_test_split(
    data.data, data.target, test_size=0.25, random_state=0, stratify=data.target
)
params = dict(C=0.1, clip_norm=0.5, epsilon=1.0, max_edit_size=3, classes=[0, 1])
n_requests, n_runs = 40, 5

# %%
# The stream
# ----------
# Each run draws its own requests and noise (``random_state`` is fixed only to
# make this page reproducible). After every request we record the unlearned
# model, a model retrained from scratch on the same edited data, and the
# deletion certificate. After about 18 edits the figure against adaptive
# requesters passes the model's epsilon, and every edit then says so
# (``PrivacyBudgetWarning``: fit a new model if requests may depend on what
# was published); this page silences that warning and draws the figure below.
warnings.filterwarnings("ignore", message=r"After \d+ edit",
                        category=PrivacyBudgetWarning)
acc_unlearn = np.zeros((n_runs, n_requests + 1))
acc_retrain = np.zeros((n_runs, n_requests + 1))
passes_unlearn = np.zeros((n_runs, n_requests), dtype=int)
passes_retrain = np.zeros((n_runs, n_requests), dtype=int)

for run in range(n_runs):
    rng = np.random.default_rng(run)
    # The rows with a version: a request built on stale rows is refused.
    db = Database(X0, y0)
    model = NoisyGDClassifier(**params, random_state=100 * run).fit(db)
    acc_unlearn[run, 0] = acc_retrain[run, 0] = model.score(X_test, y_test)
    for i in range(n_requests):
        leaving = rng.choice(len(db.X), size=rng.integers(1, 4), replace=False)
        request = EditRequest(db, delete=leaving, by="position")
        model.partial_unlearn(request)
        db = request.apply()
        retrained = NoisyGDClassifier(**params, random_state=100 * run + i + 1)
        retrained.fit(db.X, db.y)
        acc_unlearn[run, i + 1] = model.score(X_test, y_test)
        acc_retrain[run, i + 1] = retrained.score(X_test, y_test)
        passes_unlearn[run, i] = model.privacy_guarantee_.deletion.passes
        passes_retrain[run, i] = retrained.n_iter_[0]

history = model.privacy_guarantee_  # the last run's guarantee, with 40 edits
print(f"{len(X0) - len(db.X)} people forgotten, {len(db.X)} rows left")
print(history)

# %%
# Accuracy and cost over time
# ---------------------------
# Accuracy stays at the level of retraining. Both costs are counted in passes
# over the data (``n_iter_`` for a fit, ``n_unlearn_iter_`` for an edit): a
# few passes per request against tens for a refit. At the default target
# (``deletion_epsilon = epsilon``) a deletion the model already certifies runs
# no pass at all, until a few records (1 % of the rows here) await one; the
# next pass takes them all in. Such a deletion leaves the coefficients identical to those before the
# request: the record's protection is then the fit's differential privacy,
# measured against a model trained with an empty record in its place, and its
# influence stays in the model until the next pass (set
# ``max_lazy_records=0`` where every erasure must change the model at once).
# Where a fit costs no more passes than the unlearning steps (large
# databases, where few passes suffice), ``partial_unlearn`` retrains from a
# fresh start instead: the certificate then says so (``retrained=True``) and
# the removed rows have no influence at all.
requests = np.arange(n_requests + 1)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
for acc, label in ((acc_unlearn, "partial_unlearn"), (acc_retrain, "retrain")):
    mean, std = acc.mean(axis=0), acc.std(axis=0)
    ax1.plot(requests, mean, label=label)
    ax1.fill_between(requests, mean - std, mean + std, alpha=0.2)
ax1.set_xlabel("requests served")
ax1.set_ylabel(f"test accuracy (mean of {n_runs} runs)")
ax1.set_ylim(0.8, 1.0)
ax1.legend(loc="lower left")

ax2.plot(requests[1:], passes_unlearn.cumsum(axis=1).mean(axis=0),
         label="partial_unlearn")
ax2.plot(requests[1:], passes_retrain.cumsum(axis=1).mean(axis=0),
         label="retrain every time")
ax2.set_xlabel("requests served")
ax2.set_ylabel("passes over the data, cumulative")
ax2.legend()
fig.tight_layout()
print(f"passes per request: unlearning {passes_unlearn.mean():.0f}, "
      f"retraining {passes_retrain.mean():.0f}")

# %%
# The guarantee history
# ---------------------
# Every edit adds one :class:`~skforget.accounting.EditCertificate` to the
# guarantee. Three figures per edit:
#
# * the DP of the records still present, which never exceeds its target
#   however many edits follow;
# * the deletion certificate of the records the edit removed, at the
#   ``deletion_epsilon`` target (``epsilon`` by default: no more exposed than
#   a record still present) every time;
# * the certificate against an *adaptive* requester who saw every model
#   released so far. It grows by one release per edit that passed over the
#   data (an edit served without a pass releases the same model again and
#   adds nothing): a requester who
#   watches many versions of the model learns more about the records present,
#   and can copy it back into the database before a deletion (see
#   :ref:`sphx_glr_auto_examples_plot_unsound_adaptive.py`). Quote this figure
#   when requests may depend on what you published.
edits = history.edits
index = [c.index for c in edits]
curves = [
    ([c.epsilon_adaptive for c in edits], "C0", "deleted records, adaptive requester"),
    ([history.epsilon] * len(edits), "C1", "records present (DP)"),
    ([c.epsilon_deletion for c in edits], "C2",
     "deleted records, requests fixed in advance"),
]
fig, ax = plt.subplots(figsize=(8, 4.2))
for values, color, label in curves:
    ax.plot(index, values, "-", color=color, lw=2, label=label)
    # The figure after the last edit, written at the end of its curve.
    ax.annotate(f"{values[-1]:.2g}", (index[-1], values[-1]), xytext=(6, 0),
                textcoords="offset points", va="center", color=color)
# A log scale, labelled in plain numbers, so that small and large values both read.
ax.set_yscale("log")
ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
ax.set_yticks([0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10])
ax.set_xlim(0, index[-1] + 4)
ax.set_xlabel("edits served (one deletion request each)")
ax.set_ylabel(f"epsilon (delta = {history.delta:g}), log scale")
ax.set_title("The guarantee after each edit")
ax.grid(True, which="major", alpha=0.3)
ax.legend(loc="upper left", bbox_to_anchor=(0, -0.18), ncol=2, frameon=False)
fig.tight_layout()

last = history.deletion
print(f"edit {last.index}: deleted records at epsilon {last.epsilon_deletion:.3f} "
      f"(non-adaptive), {last.epsilon_adaptive:.2f} against a requester who saw "
      f"{last.releases_seen} releases")

# %%
# An audit log
# ------------
# Each certificate is a plain dict, ready for a JSON log that records what was
# promised for every request.
print(edits[0].to_dict())

# %%
# Corrections and new records go through the same call: ``replace`` swaps a
# row for a corrected version (the old version is certified forgotten) and
# ``X_insert`` adds records, protected by the DP guarantee from their arrival.
request = EditRequest(db, replace=[0], X_replace=db.X[:1], y_replace=1 - db.y[:1],
                      X_insert=X_test[:2], y_insert=y_test[:2], by="position")
model.partial_unlearn(request)
db = request.apply()
print(model.privacy_guarantee_.deletion)
plt.show()
