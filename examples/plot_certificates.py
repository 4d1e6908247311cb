"""
=======================
Prediction certificates
=======================

Which predictions of a private model could *not* change if some training
records were deleted? A prediction certificate answers this for one query and a
budget ``k``: the same training run (same noise) on any database with up to
``k`` records removed makes the same prediction there. After
``partial_unlearn``, the same bound with ``k = 0`` is the forgetting
certificate: the prediction is exactly the one of the run that never saw the
deleted records.

The certificates come from the contraction of noisy gradient descent: every
such counterfactual run ends within a ball of radius ``r(k)`` around the
fitted coefficients, so a prediction whose margin exceeds ``r(k) ||x||`` cannot
flip. The design is in :doc:`/certificates`.
"""

# %%
# Fit and certify
# ---------------
# The default (public) radius depends only on ``k``, the clipping threshold, the
# regularisation, the step size and the database sizes of the history, so
# certifying with it is post-processing of the released model.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from skforget import Database, EditRequest, NoisyGDClassifier
from skforget.datasets import load_dataset

data = load_dataset("breast_cancer")
X, X_test, y, y_test = train_test_split(
    data.data, data.target, test_size=0.2, random_state=0, stratify=data.target
)
model = NoisyGDClassifier(C=0.1, clip_norm=0.5, epsilon=1.0, max_edit_size=20,
                          classes=[0, 1],
                          random_state=0, certify_k_max=20)
db = Database(X, y)   # the rows with a version, which requests are checked by
model.fit(db)
print(f"test accuracy {model.score(X_test, y_test):.3f}, "
      f"{model.n_iter_[0]} passes over the data")
for k in (1, 5, 20):
    mask = model.certify(X_test, k)
    print(f"k={k:2d}: radius {model.certified_radius(k):.3f}, "
          f"{mask.mean():.1%} of test predictions certified")

# %%
# The largest certified budget of each prediction grows with its margin:
# confident predictions survive the deletion of many records.
ks = model.certified_k(X_test)
margins = model.decision_function(X_test)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.scatter(np.abs(margins), ks, s=12, c=model.predict(X_test), cmap="coolwarm")
ax.set_xlabel("|decision function| at the test point")
ax.set_ylabel("largest certified k")
ax.set_title("Deletion budget each prediction withstands")
fig.tight_layout()

# %%
# ``decision_function_bounds`` gives the interval that holds the decision
# function of every counterfactual run; a prediction is certified when the
# interval excludes 0.
lo, hi = model.decision_function_bounds(X_test[:5], k=5)
for a, m, b in zip(lo, margins[:5], hi, strict=True):
    print(f"{a:+.3f} <= {m:+.3f} <= {b:+.3f}")

# %%
# The data-dependent radius, tracked during ``fit`` because ``certify_k_max``
# is set, uses the clipped gradients of the training rows. It is never looser
# than the public one (here, with most top gradients at the clipping threshold,
# it is about the same) but it is a function of the private rows: do not
# publish it, nor a serve/no-serve decision based on it.
print(f"k=5: public {model.certified_radius(5):.4f}, "
      f"data-dependent {model.certified_radius(5, data_dependent=True):.4f}")

# %%
# The forgetting certificate
# --------------------------
# Twenty people ask to be forgotten. ``partial_unlearn`` runs ``K_R`` noisy
# steps on the edited database. With ``k = 0`` the certificate now says which
# current predictions are *exactly* those of the same pipeline run without the
# twenty records: the ball of radius ``r(20)`` has contracted by
# ``(1 - eta lambda) ** K_R``.
before = model.certify(X_test, 20).mean()
request = EditRequest(db, delete=np.arange(20))
model.partial_unlearn(request)
db = request.apply()
print(f"certified against deleting 20 records before the edit: {before:.1%}")
print(f"after {model.n_unlearn_iter_} unlearning passes, identical to the model that "
      f"never saw them: {model.certify(X_test, 0).mean():.1%} "
      f"(radius {model.certified_radius(0):.3f})")

# %%
# Certificates keep working after the edit: ``k`` further deletions on top of
# the twenty already forgotten.
for k in (1, 5):
    print(f"k={k}: {model.certify(X_test, k).mean():.1%} certified")
plt.show()
