"""
===========
Quick start
===========

Train a differentially private logistic regression on real data, read its
guarantee, delete records, and read the deletion certificate.

The rows of :func:`~skforget.datasets.load_dataset` are scaled with public
constants and have unit L2 norm, which is what the guarantee needs
(``data_norm=1``).
"""

# %%
# Train
# -----
# ``C`` and ``clip_norm`` were chosen for ``epsilon = 1`` on this dataset; with
# privacy, regularisation is stronger than scikit-learn's default (``C=1``).
import pickle

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skforget import Database, EditRequest, NoisyGDClassifier
from skforget.datasets import load_dataset

data = load_dataset("breast_cancer")
X, X_test, y, y_test = train_test_split(
    data.data, data.target, test_size=0.25, random_state=0, stratify=data.target
)
print(f"{len(X)} training rows, {X.shape[1]} features")

# A Database holds the training rows with a version, so that the model can
# tell a request built on them from one built on stale rows.
db = Database(X, y)
model = NoisyGDClassifier(C=0.1, clip_norm=0.5, epsilon=1.0, classes=[0, 1],
                          random_state=0)
model.fit(db)
baseline = LogisticRegression().fit(X, y)
print(f"private test accuracy:     {model.score(X_test, y_test):.3f}")
print(f"non-private test accuracy: {baseline.score(X_test, y_test):.3f}")

# %%
# The guarantee, in words
# -----------------------
# ``privacy_guarantee_`` says what the released coefficients satisfy. The
# seed warning is there because this page fixes ``random_state`` to be
# reproducible; in production leave it at ``None``.
print(model.privacy_guarantee_)

# %%
# The same, as numbers: ``epsilon`` for (epsilon, delta)-DP, ``rho`` for the
# Rényi curve ``R_q <= q * rho``, and a bound on the advantage of any
# membership test.
g = model.privacy_guarantee_
print(f"epsilon={g.epsilon:.3f}  delta={g.delta:g}  rho={g.rho:.4f}  "
      f"advantage<={g.advantage:.3f}  steps={g.fit_steps}")

# %%
# Serve a deletion request
# ------------------------
# Three people ask to be forgotten. :class:`~skforget.EditRequest` names rows
# of the model's current database; ``partial_unlearn`` serves it, here
# without any pass over the data: at the default target the model already
# certifies each of the three removed records, so its coefficients stay and
# the certificate says what protects them (a larger request, or a stronger
# ``deletion_epsilon``, runs noisy steps on the edited data). Together, the
# three are a group awaiting the next pass, whose figure grows as the square
# of its size: here above the model's epsilon, which the printed guarantee
# says (``max_lazy_records=0`` passes over the data at every deletion, where
# a group must be forgotten together). ``apply()`` gives the data owner the
# edited database, the next version. The model keeps no row.
request = EditRequest(db, delete=[10, 20, 30])
model.partial_unlearn(request)
db = request.apply()
print(f"{len(db.X)} rows left; test accuracy {model.score(X_test, y_test):.3f}")
print(model.privacy_guarantee_)

# %%
# The deletion certificate of that edit: per deleted record, for the whole
# batch, and against requests that depended on the published model.
cert = model.privacy_guarantee_.deletion
print(f"{cert.steps} unlearning steps (training took {g.fit_steps})")
print(f"per record:          epsilon = {cert.epsilon_deletion:.3f}")
print(f"whole batch of {cert.n_deleted}:   epsilon = {cert.epsilon_deletion_batch:.3f}")
print(f"adaptive requests:   epsilon = {cert.epsilon_adaptive:.3f} "
      f"({cert.releases_seen} release seen)")

# %%
# What the model keeps
# --------------------
# Besides its hyper-parameters, the estimator holds coefficients and public
# metadata (``_plan`` holds the public constants of the run: noise scale, step
# size, step counts). No training row is stored, so nothing can carry a deleted
# record into later releases. A pickled model contains none of the rows:
print(sorted(set(vars(model)) - set(model.get_params())))
blob = pickle.dumps(model)
print("a training row in the pickle:",
      any(np.ascontiguousarray(row).tobytes() in blob for row in X))

# %%
# Coefficients next to the non-private model
# ------------------------------------------
# The noise perturbs the coefficients: most keep their sign, not their size.
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(baseline.coef_[0], "o-", label="LogisticRegression (not private)")
ax.plot(model.coef_[0], "s-", label="NoisyGDClassifier, epsilon=1")
ax.axhline(0, color="grey", lw=0.5)
ax.set_xlabel("feature")
ax.set_ylabel("coefficient")
ax.legend()
fig.tight_layout()
plt.show()
