"""
========================================================================
Serving GDPR deletion requests for a pandas DataFrame through a Pipeline
========================================================================

A data owner keeps the UCI Adult census table (one row per person, mixed
text and numeric columns) in a pandas DataFrame indexed by person ID, trains
an income classifier through a scikit-learn pipeline, and must later delete
people by ID. This example builds the whole path:

* a :class:`~skforget.pipeline.ForgetPipeline` whose preprocessing is
  *public* (nothing in it is learned from the rows), and the error you get
  with a data-fitted scaler;
* a deletion request by person ID on the raw table, served through the
  pipeline, with the DataFrame index kept and a stale request refused;
* a deletion service on a :class:`~skforget.store.RecordStore` (one SQLite
  file holding the records, the model and the certificates), driven the way
  a web handler or ``python -m skforget forget --store FILE --id ID`` would.

The Adult file ships in the ``mglearn`` wheel (``pip install mglearn``; the
``doc`` and ``bench`` extras install it). **To run in a few seconds on the
documentation build, the example trains on a random 4,000 of the 32,561
rows** (the code is the same for the whole table; fits take longer).
"""

# %%
# The table, indexed by person ID
# -------------------------------
# ``fnlwgt`` (a sampling weight) and ``education`` (the same as
# ``education_num``) are dropped, as is ``native_country`` for brevity.
import importlib.util
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    Normalizer,
    OneHotEncoder,
    StandardScaler,
)

from skforget import (
    Database,
    DataDependentStepError,
    EditRequest,
    NoisyGDClassifier,
    UnlearningError,
)
from skforget.pipeline import ForgetPipeline
from skforget.preprocessing import PublicScaler
from skforget.store import RecordStore, forget

spec = importlib.util.find_spec("mglearn")     # the file, without importing mglearn
adult_file = Path(next(iter(spec.submodule_search_locations))) / "data" / "adult.data"
names = ["age", "workclass", "fnlwgt", "education", "education_num",
         "marital_status", "occupation", "relationship", "race", "sex",
         "capital_gain", "capital_loss", "hours_per_week", "native_country",
         "income"]
adult = pd.read_csv(adult_file, header=None, names=names, skipinitialspace=True)
adult.index = pd.Index([f"p{i:05d}" for i in range(len(adult))], name="person")
y_all = (adult.pop("income") == ">50K").astype(int)
adult = adult.drop(columns=["fnlwgt", "education", "native_country"])

X, X_test, y, y_test = train_test_split(adult, y_all, train_size=4000,
                                        test_size=4000, random_state=0,
                                        stratify=y_all)
print(X.head(3))

# %%
# Public preprocessing
# --------------------
# Everything the pipeline keeps must be fixed before the rows are seen. The
# category lists are those of the UCI description of the data set (public
# documentation; ``"?"``, a missing value, encodes as all zeros through
# ``handle_unknown="ignore"``). The numeric columns are centred and scaled with
# documented ranges, not with statistics of the rows: ages 17 to 90, education
# levels 1 to 16, at most 99 hours a week, capital gains top-coded at 99,999
# (after ``log1p``, a fixed map). Each row is then normalised to unit length, a
# per-row map the privacy guarantee needs (``||x|| <= 1``).
CATEGORIES = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov",
                  "Local-gov", "State-gov", "Without-pay", "Never-worked"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married",
                       "Separated", "Widowed", "Married-spouse-absent",
                       "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales",
                   "Exec-managerial", "Prof-specialty", "Handlers-cleaners",
                   "Machine-op-inspct", "Adm-clerical", "Farming-fishing",
                   "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family",
                     "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other",
             "Black"],
    "sex": ["Female", "Male"],
}
log_max = np.log1p(99_999)
numeric = [  # column, center, scale, from documented ranges
    ("age", 53.5, 36.5),                    # 17 to 90
    ("education_num", 8.5, 7.5),            # 1 to 16
    ("hours_per_week", 50.0, 49.0),         # 1 to 99
]


def make_preprocessing(scaler=None):
    steps = [("categories", OneHotEncoder(categories=list(CATEGORIES.values()),
                                          handle_unknown="ignore"),
              list(CATEGORIES))]
    steps += [(col, scaler or PublicScaler(center=c, scale=s), [col])
              for col, c, s in numeric]
    steps.append(("capital", make_pipeline(FunctionTransformer(np.log1p),
                                           PublicScaler(scale=log_max)),
                  ["capital_gain", "capital_loss"]))
    return ColumnTransformer(steps, sparse_threshold=0)


def make_forget(scaler=None):
    return ForgetPipeline([
        ("columns", make_preprocessing(scaler)),
        ("unit_rows", Normalizer()),
        # The label set {0, 1} (income above 50K or not) is public.
        ("model", NoisyGDClassifier(C=0.05, classes=[0, 1], epsilon=1.0,
                                    deletion_epsilon=0.1, max_edit_size=5,
                                    random_state=0)),
    ])


# %%
# A scaler fitted on the rows is refused before anything is fitted: its mean
# would still count a person after the model forgot them.
try:
    make_forget(StandardScaler()).fit(X, y)
except DataDependentStepError as exc:
    print(exc)

# %%
# Fit on a versioned database
# ---------------------------
# :class:`~skforget.Database` bundles the table, the labels and a version; the
# pipeline keeps the version (a counter and a random token, nothing of the
# rows) to refuse requests built on any other version of the data. Its
# guarantee lists each preprocessing step and why it is public.
db = Database(X, y)
pipe = make_forget().fit(db)
baseline = LogisticRegression(max_iter=1000).fit(
    make_forget()[:-1].fit(X).transform(X), y)
print(f"test accuracy: private {pipe.score(X_test, y_test):.3f}, non-private "
      f"{baseline.score(make_forget()[:-1].fit(X).transform(X_test), y_test):.3f}")
print(pipe.privacy_guarantee_)

# %%
# Delete a person by ID
# ---------------------
# The request names people by their index label. Say the people in the sample
# who never worked ask to be forgotten: after the edit, no record of that
# category is left, and the encoder still lists it because its category list
# is the public constant, not something learned from them.
never_worked = X.index[X["workclass"] == "Never-worked"].tolist()
print("never worked:", never_worked)
db0 = db
request = EditRequest(db0, delete=never_worked, by="id")
pipe.partial_unlearn(request)
db = request.apply()                       # the next version; the index is kept
print(db, "| first IDs:", db.ids[:3].tolist(), "| never worked left:",
      int((db.X["workclass"] == "Never-worked").sum()))
print(pipe.privacy_guarantee_.deletion)

# %%
# A request built on the old version is refused, whatever its size, and the
# pipeline stays as it was.
try:
    stale = EditRequest(db0, delete=[X.index[5]], by="id")
    pipe.partial_unlearn(stale)
except UnlearningError as exc:
    print(exc)

# %%
# A deletion service on one file
# ------------------------------
# :class:`~skforget.store.RecordStore` keeps the records by ID, the pipeline
# and the log of certificates in SQLite. Each request updates the three in one
# transaction: an error or a crash half-way leaves the previous state. A web
# handler would call :func:`skforget.store.forget`; from a shell the same is
# ``python -m skforget forget --store service.sqlite --id p01234``.
workdir = Path(tempfile.mkdtemp())
store = RecordStore.create(workdir / "service.sqlite", db, pipe)

rng = np.random.default_rng(1)
accuracy, steps = [pipe.score(X_test, y_test)], []
for _ in range(12):                          # twelve requests, one to three people
    people = rng.choice(store.database().ids, size=rng.integers(1, 4),
                        replace=False).tolist()
    certificate = forget(store.path, people)
    steps.append(certificate.steps)
    accuracy.append(store.model().score(X_test, y_test))
print(f"{store.database().n_samples} records left, {len(store.log())} certificates")
print(store.log()[-1])

# %%
# Each request cost a few noisy steps on the remaining rows, against the
# ``fit_steps`` of a retraining; accuracy stays where it was.
fit_steps = pipe.privacy_guarantee_.fit_steps
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
ax1.plot(range(len(accuracy)), accuracy, "o-", label="through the store")
ax1.axhline(baseline.score(make_forget()[:-1].fit(X).transform(X_test), y_test),
            color="k", ls="--", label="non-private LogisticRegression")
ax1.set_ylim(0, 1)
ax1.set_xlabel("deletion requests served")
ax1.set_ylabel("test accuracy")
ax1.legend(loc="lower right")
ax2.bar(np.arange(1, len(steps) + 1), steps, color="C0",
        label="partial_unlearn (per request)")
ax2.axhline(fit_steps, color="C3", label="retraining from scratch")
ax2.set_ylim(0, 1.15 * max(fit_steps, max(steps)))
ax2.set_xlabel("deletion request")
ax2.set_ylabel("noisy gradient steps")
ax2.legend(loc="center right")
fig.tight_layout()
plt.show()

# %%
# What the service keeps: the records of the people still present, the model
# (coefficients and public metadata) and the certificates. No request, no
# deleted ID, no timestamp; deleted records are overwritten in the file
# (``PRAGMA secure_delete``). Backups and copies made elsewhere are the data
# owner's to erase.
