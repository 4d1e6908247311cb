"""
======================================
Tuning with GridSearchCV, and its cost
======================================

skforget estimators work with :class:`~sklearn.model_selection.GridSearchCV`
like any scikit-learn estimator. But every fit in the search runs on private
rows, and the ``privacy_guarantee_`` of the model it returns describes *that
one model* only. This example measures what the whole search costs, with
:mod:`skforget.accounting`:

* each fit that used a record is a private mechanism on it; Rényi figures of
  independent mechanisms add up (composition), so the search costs the sum of
  the fits' figures;
* cross-validation also scores every candidate on held-out private rows,
  exactly, without noise; no privacy figure covers that part.
"""

# %%
# A grid search as usual
# ----------------------
# A scorer that also writes each fitted model's Rényi figure ``rho`` in a
# ledger (scikit-learn calls it once per candidate and fold, in that order
# when ``n_jobs=1``).
#
# The estimator keeps ``random_state=None``. ``GridSearchCV`` clones it for
# every fit, and an integer seed (or a ``RandomState`` instance, which clones
# copy) would give *every* fit the same noise: two models trained on
# overlapping rows with the same noise can be compared to cancel much of it,
# and the composition below would not hold. The accuracies printed here, and
# which candidate wins, therefore change from one build of this page to the
# next, and with the winner the refit's figure (its ``C`` sets its plan).
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GridSearchCV, KFold, train_test_split

from skforget import NoisyGDClassifier
from skforget.accounting import epsilon_to_rho, rho_compose
from skforget.accounting import rho_to_epsilon as _rho_to_epsilon
from skforget.datasets import load_dataset
from skforget.model_selection import PrivateSearchCV

data = load_dataset("breast_cancer")
X, X_test, y, y_test = train_test_split(
    data.data, data.target, test_size=0.25, random_state=0, stratify=data.target
)
grid = {"C": [0.03, 0.1, 0.3], "clip_norm": [0.25, 0.5]}
cv = KFold(n_splits=5, shuffle=True, random_state=0)
delta = 1e-5


def rho_to_epsilon(*, rho, delta):
    """The exact Gaussian reading of a sum of the fits' GDP figures."""
    return _rho_to_epsilon(rho=rho, delta=delta, method="gaussian")


def search(epsilon):
    """Grid search at a per-fit ``epsilon``; returns the search and its ledger."""
    ledger = []

    def accuracy(estimator, X_val, y_val):
        ledger.append(estimator.privacy_guarantee_.rho)
        return estimator.score(X_val, y_val)

    model = NoisyGDClassifier(epsilon=epsilon, delta=delta, classes=[0, 1])
    gs = GridSearchCV(model, grid, cv=cv, scoring=accuracy, n_jobs=1).fit(X, y)
    return gs, np.reshape(ledger, (-1, cv.get_n_splits()))


gs, ledger = search(epsilon=1.0)
print(f"best parameters {gs.best_params_}, test accuracy "
      f"{gs.score(X_test, y_test):.3f}")
print(gs.best_estimator_.privacy_guarantee_)

# %%
# What the search cost
# --------------------
# ``ledger[c, f]`` is the Rényi figure of candidate ``c`` trained without fold
# ``f``. A record in fold ``f`` was used by every other fold's fit, for every
# candidate, and by the final refit. Composition of Rényi DP (Mironov 2017,
# Proposition 1) adds their figures: :func:`~skforget.accounting.rho_compose`.
# Each fit is moreover Gaussian DP (privacy-accounting.md, Section 21), which
# composes as ``rho`` adds too, so the sum converts with the exact Gaussian
# curve (``method="gaussian"``), as the estimators' own figures do.


def search_cost(gs, ledger):
    """Worst-case (over folds) composed rho of a finished search, per record."""
    refit = gs.best_estimator_.privacy_guarantee_.rho
    per_fold = []
    for f in range(ledger.shape[1]):
        used = np.delete(ledger, f, axis=1).ravel().tolist() + [refit]
        per_fold.append(rho_compose(rhos=used))
    return max(per_fold), ledger.shape[0] * (ledger.shape[1] - 1) + 1


rho_search, n_fits = search_cost(gs, ledger)
eps_search = rho_to_epsilon(rho=rho_search, delta=delta)
eps_model = gs.best_estimator_.privacy_guarantee_.epsilon
print(f"one released model: epsilon = {eps_model:.2f}")
print(f"the whole search ({n_fits} fits used each record): "
      f"epsilon = {eps_search:.2f}, plus the exact validation scores")

# %%
# Staying within a total budget
# -----------------------------
# To keep the *whole search* at (1, 1e-5), split the total Rényi budget over
# the fits that use a record, and run each at the matching ``epsilon``. The
# composed figure lands below the target because each fit stops before its
# privacy loss reaches its stationary level. The price is accuracy: every fit
# is now much noisier.
rho_total = epsilon_to_rho(epsilon=1.0, delta=delta, method="gaussian")
eps_each = rho_to_epsilon(rho=rho_total / n_fits, delta=delta)
gs_split, ledger_split = search(epsilon=eps_each)
rho_check, _ = search_cost(gs_split, ledger_split)
print(f"each fit at epsilon = {eps_each:.3f}; composed: "
      f"epsilon = {rho_to_epsilon(rho=rho_check, delta=delta):.3f}")
print(f"best parameters {gs_split.best_params_}, test accuracy "
      f"{gs_split.score(X_test, y_test):.3f}")

# %%
# The alternative: no search at all. Hyper-parameters fixed in advance
# (here, from experience with similar public data) cost nothing beyond the
# one model.
fixed = NoisyGDClassifier(C=0.1, clip_norm=0.5, epsilon=1.0, delta=delta,
                          classes=[0, 1])
fixed.fit(X, y)
print(f"fixed parameters, one fit at epsilon = 1: test accuracy "
      f"{fixed.score(X_test, y_test):.3f}")

# %%
# How the cost grows with the grid
# --------------------------------
# With 5-fold cross-validation each candidate adds four fits on every record.
# Composition is linear in the Rényi figure, so the ``epsilon`` of the search
# grows roughly like the square root of the number of fits.
rho_one = gs.best_estimator_.privacy_guarantee_.rho
sizes = np.arange(1, 21)
eps_grid = [
    rho_to_epsilon(rho=rho_compose(rhos=[rho_one] * (4 * m + 1)), delta=delta)
    for m in sizes
]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
ax1.plot(sizes, eps_grid, "o-")
ax1.axhline(1.0, ls="--", color="k", label="one model, epsilon = 1")
ax1.set_xticks(sizes[::2] + 1)
ax1.set_xlabel("candidates in the grid (5-fold CV + refit)")
ax1.set_ylabel("epsilon of the search")
ax1.legend()

labels = ["fixed\nparameters", "grid search,\neach fit at 1", "grid search,\ntotal 1"]
accuracies = [fixed.score(X_test, y_test), gs.score(X_test, y_test),
              gs_split.score(X_test, y_test)]
spent = [fixed.privacy_guarantee_.epsilon, eps_search,
         rho_to_epsilon(rho=rho_check, delta=delta)]
bars = ax2.bar(labels, accuracies, color=["C0", "C3", "C2"])
notes = ["", "\n+ exact CV scores", "\n+ exact CV scores"]
for bar, eps, note in zip(bars, spent, notes, strict=True):
    ax2.annotate(f"epsilon {eps:.2g}{note}",
                 (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                 ha="center", va="bottom")
ax2.set_ylim(0, 1.2)
ax2.set_ylabel("test accuracy")
fig.tight_layout()
plt.show()

# %%
# A search whose guarantee covers the search
# ------------------------------------------
# :class:`~skforget.model_selection.PrivateSearchCV` scores its candidates with
# noise and runs a *random*, hidden number of them (mean ``n_candidates``),
# releasing only the best (Papernot and Steinke 2022): one figure covers the
# selection, the scores and the returned model, here a total of
# ``epsilon = 1`` with a mean of 6 candidates from the same grid. Over a
# :func:`~skforget.pipeline.make_private_pipeline` it tunes a raw table the same
# way, its private statistics released once (user guide, "Tuning privately").
private = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), grid, epsilon=1.0,
                          delta=delta, n_candidates=6).fit(X, y)
print(f"PrivateSearchCV: best parameters {private.best_params_}, test accuracy "
      f"{private.score(X_test, y_test):.3f}; the whole search: epsilon = "
      f"{private.privacy_guarantee_.epsilon:.2f}, each candidate "
      f"{private.privacy_guarantee_.run_epsilon:.2f}")

# %%
# Take-aways: tune on public or synthetic data when you can, and fix the grid
# before seeing the private rows. On the private rows, ``PrivateSearchCV``
# prices the whole search; a ``GridSearchCV`` composes every fit and leaves its
# exact validation scores uncovered. Either way each candidate runs at a
# fraction of the budget, and the defaults (``C="auto"``, ``clip_norm="auto"``)
# are already planned for the data's size and ``epsilon``: measured on real
# tables, a private search rarely beats them.
