# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Empirical audits of the privacy and deletion guarantees.

A certified bound says that no test can tell two worlds apart better than
``(epsilon, delta)`` allows. An audit runs such a test: it releases many models
in each world (many noise seeds), scores a canary record under every released
model, and turns the test's false-positive and false-negative rates into a
lower confidence bound on epsilon (the hypothesis-testing view of differential
privacy: Kairouz, Oh and Viswanath 2015; the auditing recipe of Jagielski,
Ullman and Oprea 2020 and Nasr et al. 2021). The lower bound must stay below the
certified figure; a lower bound above it means the implementation leaks more
than it certifies, and the audit says so loudly.

The two worlds of :func:`audit_deletion` follow the certified statement
(privacy-accounting.md, Section 6.2, Theorem 6.2):

* **in**: ``fit`` on ``D`` plus the canary, then ``partial_unlearn`` the canary;
* **out**: the same pipeline (same public hyper-parameters, same normaliser
  ``N = n + 1``, same step counts, independent noise) with the canary's slot held
  from the start by a stand-in record that is not the canary, deleted by the same
  edit. ``reference="null"`` uses a record with zero gradient, i.e. the database
  without the canary at the same ``N`` (Section 10.1): the deletion
  certificate's own reference, against which it is compared. The default,
  ``"replace"``, uses another record (the canary's features with another label,
  the pair whose gradients differ most): the two runs' drifts then differ by
  ``2G`` where the certificate's differ by ``G``, and the audit compares them
  with four times its Rényi figure
  (:func:`~skforget.accounting.deletion_rho_between_records`).

:func:`audit_dp` compares the two worlds right after ``fit`` (canary present vs
stand-in present), against the DP figure of Section 6.1.

Audits are statistical tests, not proofs: a lower bound far below the certified
figure does not prove the certificate tight, it says this test could not tell
more. They are meant for tests, benchmarks and for anyone who wants to check a
build of skforget on their own data.
"""

import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from scipy.stats import beta as beta_dist
from sklearn.base import clone, is_classifier

from skforget._database import Database
from skforget._edits import EditRequest
from skforget._utils import fill_doc
from skforget._validation import warn
from skforget.accounting import deletion_rho_between_records, rho_to_epsilon
from skforget.exceptions import PrivacyLeakWarning

__all__ = [
    "AuditResult",
    "Canary",
    "EmpiricalEpsilon",
    "audit_deletion",
    "audit_dp",
    "clopper_pearson",
    "empirical_epsilon",
    "make_canary",
]


# --- statistics ------------------------------------------------------------------


def clopper_pearson(k, n, *, confidence=0.95):
    """Exact (Clopper-Pearson) two-sided confidence interval of a binomial rate.

    Parameters
    ----------
    k : int or array-like of int
        Number of successes, ``0 <= k <= n``.
    n : int or array-like of int
        Number of trials, ``n >= 1``.
    confidence : float, default=0.95
        Coverage of the interval; each tail has ``(1 - confidence) / 2``.

    Returns
    -------
    low, high : float or ndarray
        Bounds of the interval; ``low = 0`` when ``k = 0`` and ``high = 1`` when
        ``k = n``.

    Examples
    --------
    >>> from skforget.audit import clopper_pearson
    >>> low, high = clopper_pearson(0, 100)
    >>> float(low), round(float(high), 4)
    (0.0, 0.0362)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("clopper_pearson needs 0 <= k <= n and n >= 1.")
    tail = (1.0 - confidence) / 2.0
    # Beta quantiles are the exact inversion of the binomial tails; the edge
    # cases are set explicitly because the Beta law is degenerate there.
    with np.errstate(invalid="ignore"):
        low = np.where(k > 0, beta_dist.ppf(tail, k, n - k + 1), 0.0)
        high = np.where(k < n, beta_dist.ppf(1.0 - tail, k + 1, n - k), 1.0)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def _epsilon_from_rates(fpr, fnr, delta):
    """Largest epsilon that rates ``(fpr, fnr)`` of one test rule out.

    ``(epsilon, delta)``-DP forces ``fpr + e^eps fnr >= 1 - delta`` and
    ``fnr + e^eps fpr >= 1 - delta`` for every test (Kairouz et al. 2015,
    Thm 2.1), so these rates prove ``eps >= log((1 - delta - fnr) / fpr)`` and the
    symmetric expression. Vectorised; 0 when the rates prove nothing.
    """
    fpr = np.asarray(fpr, dtype=float)
    fnr = np.asarray(fnr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log((1.0 - delta - fnr) / fpr)
        b = np.log((1.0 - delta - fpr) / fnr)
    # nan (0/0) proves nothing; +inf (a zero rate) is a legitimate plug-in value.
    a = np.where(np.isnan(a), -np.inf, a)
    b = np.where(np.isnan(b), -np.inf, b)
    return np.maximum(np.fmax(a, b), 0.0)


@dataclass(frozen=True)
class EmpiricalEpsilon:
    """What one threshold test on two samples of scores proves about epsilon.

    Produced by :func:`empirical_epsilon`. Rates are measured on the evaluation
    half of the samples, at a threshold chosen on the other half.

    Attributes
    ----------
    lower : float
        Lower confidence bound on the true epsilon: with probability at least
        ``confidence`` over the audit's randomness, the mechanism is not
        ``(epsilon, delta)``-DP for any ``epsilon < lower``. This is the figure
        to compare with a certified bound.
    estimate : float
        Plug-in value at the measured rates (no confidence margin; infinite if a
        rate is zero).
    upper : float
        Upper end of the ``confidence`` interval of the epsilon this test
        witnesses. It is *not* an upper bound on the true epsilon: a better test
        may witness more.
    threshold : float
        Score threshold, chosen on the selection half.
    direction : {1, -1}
        1: "canary seen" is guessed when ``score > threshold``; -1: when below.
    fpr, fnr : float
        False-positive rate (out-world models guessed in) and false-negative
        rate (in-world models guessed out) on the evaluation half.
    fpr_interval, fnr_interval : tuple of float
        Their Clopper-Pearson intervals, jointly at ``confidence`` (union bound).
    n_in, n_out : int
        Evaluation samples from each world.
    delta : float
    confidence : float
    """

    lower: float
    estimate: float
    upper: float
    threshold: float
    direction: int
    fpr: float
    fnr: float
    fpr_interval: tuple
    fnr_interval: tuple
    n_in: int
    n_out: int
    delta: float
    confidence: float


def _rates(scores_in, scores_out, thresholds, direction):
    """FPR and FNR of the rule ``direction * (score - t) > 0`` at each t."""
    s_in = np.sort(direction * np.asarray(scores_in, dtype=float))
    s_out = np.sort(direction * np.asarray(scores_out, dtype=float))
    t = direction * np.asarray(thresholds, dtype=float)
    # Guess "in" when direction * score > direction * t.
    fn = np.searchsorted(s_in, t, side="right")  # in-world scores not above t
    fp = len(s_out) - np.searchsorted(s_out, t, side="right")
    return fp, fn


def empirical_epsilon(scores_in, scores_out, *, delta, confidence=0.95,
                      selection_fraction=0.5, shuffle=None):
    """Empirical lower bound on epsilon from scores of two worlds.

    The samples of each world are split in two. On the selection part every
    threshold between observed scores, in both directions, is tried and the one
    with the largest conservative lower bound is kept; on the evaluation part its
    false-positive and false-negative counts get Clopper-Pearson intervals at
    joint level ``confidence`` (each interval at ``1 - (1 - confidence) / 2``,
    union bound). With ``FPR_hi`` and ``FNR_hi`` the upper ends of those
    intervals, the lower bound is::

        lower = max(log((1 - delta - FNR_hi) / FPR_hi),
                    log((1 - delta - FPR_hi) / FNR_hi), 0)

    Choosing the threshold on data the rates are not measured on keeps the
    intervals honest; measuring them on the same samples would overfit the
    threshold to the noise of the sample.

    Parameters
    ----------
    scores_in : array-like of shape (n_in,)
        Test statistic of the models from the world that saw the canary.
    scores_out : array-like of shape (n_out,)
        Test statistic of the models from the reference world.
    delta : float
        The ``delta`` of the guarantee being audited.
    confidence : float, default=0.95
        Probability that ``lower`` does not exceed the true epsilon.
    selection_fraction : float, default=0.5
        Share of each sample used to choose the threshold.
    shuffle : None or int, default=None
        Seed of a random split; None takes the first part of each sample (the
        samples are i.i.d., so any split fixed in advance is valid).

    Returns
    -------
    result : EmpiricalEpsilon

    Examples
    --------
    Two Gaussians one standard deviation apart (the Gaussian mechanism with
    sensitivity equal to its noise scale, exactly 4.38-DP at ``delta = 1e-5``):

    >>> import numpy as np
    >>> from skforget.audit import empirical_epsilon
    >>> rng = np.random.default_rng(0)
    >>> res = empirical_epsilon(rng.normal(1.0, 1.0, 4000),
    ...                         rng.normal(0.0, 1.0, 4000), delta=1e-5)
    >>> 0.0 < res.lower < res.estimate < 4.38
    True
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
    if not 0.0 < selection_fraction < 1.0:
        raise ValueError("selection_fraction must be in (0, 1), got "
                         f"{selection_fraction!r}.")
    s_in = np.asarray(scores_in, dtype=float).ravel()
    s_out = np.asarray(scores_out, dtype=float).ravel()
    if not (np.all(np.isfinite(s_in)) and np.all(np.isfinite(s_out))):
        raise ValueError("scores must be finite.")
    if shuffle is not None:
        rng = np.random.default_rng(shuffle)
        s_in = rng.permutation(s_in)
        s_out = rng.permutation(s_out)
    k_in = int(round(selection_fraction * len(s_in)))
    k_out = int(round(selection_fraction * len(s_out)))
    sel_in, ev_in = s_in[:k_in], s_in[k_in:]
    sel_out, ev_out = s_out[:k_out], s_out[k_out:]
    if min(len(sel_in), len(sel_out), len(ev_in), len(ev_out)) < 1:
        raise ValueError("each world needs at least 2 scores (one to choose the "
                         "threshold, one to measure it).")
    # Intervals for the two rates hold jointly at `confidence`: each at
    # 1 - alpha/2 (Bonferroni), whatever the dependence between them.
    each = 1.0 - (1.0 - confidence) / 2.0

    # Candidate thresholds: midpoints between consecutive distinct selection
    # scores, plus one below and one above all of them.
    pooled = np.unique(np.concatenate([sel_in, sel_out]))
    mids = (pooled[1:] + pooled[:-1]) / 2.0 if len(pooled) > 1 else pooled
    thresholds = np.concatenate([[pooled[0] - 1.0], mids, [pooled[-1] + 1.0]])
    # Rank by the conservative bound; where it proves nothing (small samples,
    # weak leakage) fall back on the advantage 1 - FPR - FNR, so the threshold
    # still sits where the two samples differ most rather than at an end.
    best = (-1.0, -np.inf, thresholds[0], 1)
    for direction in (1, -1):
        fp, fn = _rates(sel_in, sel_out, thresholds, direction)
        _, fpr_hi = clopper_pearson(fp, len(sel_out), confidence=each)
        _, fnr_hi = clopper_pearson(fn, len(sel_in), confidence=each)
        bound = _epsilon_from_rates(fpr_hi, fnr_hi, delta)
        advantage = 1.0 - fp / len(sel_out) - fn / len(sel_in)
        i = int(np.lexsort((advantage, bound))[-1])
        if (bound[i], advantage[i]) > best[:2]:
            best = (float(bound[i]), float(advantage[i]), float(thresholds[i]),
                    direction)
    threshold, direction = best[2], best[3]

    fp, fn = _rates(ev_in, ev_out, [threshold], direction)
    fp, fn = int(fp[0]), int(fn[0])
    fpr_lo, fpr_hi = clopper_pearson(fp, len(ev_out), confidence=each)
    fnr_lo, fnr_hi = clopper_pearson(fn, len(ev_in), confidence=each)
    fpr, fnr = fp / len(ev_out), fn / len(ev_in)
    # The witnessed epsilon decreases in both rates, so the corners of the
    # rates' joint box bound it.
    return EmpiricalEpsilon(
        lower=float(_epsilon_from_rates(fpr_hi, fnr_hi, delta)),
        estimate=float(_epsilon_from_rates(fpr, fnr, delta)),
        upper=float(_epsilon_from_rates(fpr_lo, fnr_lo, delta)),
        threshold=threshold, direction=direction, fpr=fpr, fnr=fnr,
        fpr_interval=(fpr_lo, fpr_hi), fnr_interval=(fnr_lo, fnr_hi),
        n_in=len(ev_in), n_out=len(ev_out), delta=float(delta),
        confidence=float(confidence),
    )


# --- canaries ----------------------------------------------------------------------


@dataclass(frozen=True)
class Canary:
    """A record to audit with, and the stand-in that takes its slot otherwise.

    Attributes
    ----------
    x : ndarray of shape (n_features,)
        Features of the canary.
    y : object
        Its label or target.
    x_reference : ndarray of shape (n_features,)
        Features of the stand-in record of the reference world.
    y_reference : object
        Label or target of the stand-in.
    """

    x: np.ndarray
    y: object
    x_reference: np.ndarray
    y_reference: object


def make_canary(X, y, *, data_norm=1.0, classifier=True, reference="replace"):
    """A worst-case-ish canary for ``(X, y)``: far from the data, label flipped.

    The canary's features point along the direction in which the rows vary
    least (the last right singular vector of ``X``), scaled to ``data_norm``:
    there the data add no curvature, the model forgets only through the
    regulariser and the noise, and the canary's pull on the coefficients is not
    masked by other rows. Its label is the class least frequent in ``y``, the
    opposite of what a model predicts where it has seen no data, so its
    gradient stays large. The stand-in record has the same features and the
    most frequent class: the two gradients then differ by up to twice the
    clipping bound, the worst case of the replace-one relation. For a
    regression target the canary gets ``+max|y|`` and the stand-in ``-max|y|``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    data_norm : float, default=1.0
        Norm of the canary's features (the estimator's ``data_norm``).
    classifier : bool, default=True
        Whether ``y`` holds class labels.
    reference : {"replace", "null"}, default="replace"
        Stand-in record: the flipped-label twin, or a zero row (a record with
        zero gradient when the model has no intercept).

    Returns
    -------
    canary : Canary

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.audit import make_canary
    >>> X = np.array([[1.0, 0.0], [0.8, 0.0], [0.9, 0.0]])
    >>> c = make_canary(X, np.array([0, 0, 1]))
    >>> np.abs(c.x).tolist(), c.y, c.y_reference
    ([0.0, 1.0], 1, 0)
    """
    if reference not in ("replace", "null"):
        raise ValueError(f"reference must be 'replace' or 'null', got {reference!r}.")
    gram = (X.T @ X).toarray() if sp.issparse(X) else np.asarray(X).T @ np.asarray(X)
    gram = np.asarray(gram, dtype=float)
    _, vecs = np.linalg.eigh(gram)  # eigenvalues in ascending order
    x = data_norm * vecs[:, 0]
    y = np.asarray(y)
    if classifier:
        classes, counts = np.unique(y, return_counts=True)
        label = classes[np.argmin(counts)].item()
        other = classes[np.argmax(counts)].item()
        if label == other:
            raise ValueError("a classification canary needs at least two classes.")
    else:
        label = float(np.max(np.abs(y))) if y.size else 1.0
        other = -label
    if reference == "null":
        return Canary(x=x, y=label, x_reference=np.zeros_like(x), y_reference=label)
    return Canary(x=x, y=label, x_reference=x.copy(), y_reference=other)


# --- the audit --------------------------------------------------------------------


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_deletion` or :func:`audit_dp`.

    Attributes
    ----------
    mode : {"deletion", "dp", "insert"}
        What was audited ("insert": DP of a record inserted by an edit).
    epsilon_lower : float
        Empirical lower confidence bound on epsilon (see
        :class:`EmpiricalEpsilon`).
    epsilon_estimate : float
        Plug-in value at the measured rates.
    epsilon_interval : tuple of float
        ``confidence`` interval of the epsilon the test witnesses.
    epsilon_certified : float
        The certified figure for the audit's two worlds at the same ``delta``:
        the guarantee's ``epsilon`` (:func:`audit_dp`); for
        :func:`audit_deletion`, the certificate's ``epsilon_deletion`` against
        the null record (``reference="null"``), or, against another record,
        the figure of two records deleted
        (:func:`~skforget.accounting.deletion_rho_between_records`).
    delta : float
    confidence : float
    n_trials : int
        Models released per world.
    test : EmpiricalEpsilon
        Threshold, rates and their intervals.
    scores_in, scores_out : ndarray
        The statistic under every released model of each world.
    reference : str
        The stand-in record ("replace" or "null").
    """

    mode: str
    epsilon_lower: float
    epsilon_estimate: float
    epsilon_interval: tuple
    epsilon_certified: float
    delta: float
    confidence: float
    n_trials: int
    test: EmpiricalEpsilon = field(repr=False)
    scores_in: np.ndarray = field(repr=False)
    scores_out: np.ndarray = field(repr=False)
    reference: str = "replace"

    @property
    def violated(self):
        """True when the empirical lower bound exceeds the certified bound."""
        return self.epsilon_lower > self.epsilon_certified

    def to_dict(self):
        """JSON-serialisable summary (without the raw scores)."""
        t = self.test
        return {
            "mode": self.mode, "reference": self.reference,
            "n_trials": self.n_trials, "delta": self.delta,
            "confidence": self.confidence,
            "epsilon_lower": self.epsilon_lower,
            "epsilon_estimate": self.epsilon_estimate,
            "epsilon_interval": list(self.epsilon_interval),
            "epsilon_certified": self.epsilon_certified,
            "violated": self.violated, "threshold": t.threshold,
            "direction": t.direction, "fpr": t.fpr, "fnr": t.fnr,
            "fpr_interval": list(t.fpr_interval),
            "fnr_interval": list(t.fnr_interval),
        }

    def __str__(self):
        what = {"deletion": "deletion of the canary",
                "dp": "DP of a present canary",
                "insert": "DP of a canary inserted by an edit"}[self.mode]
        lo, hi = self.epsilon_interval
        verdict = ("VIOLATION: the empirical bound exceeds the certificate"
                   if self.violated else "consistent with the certificate")
        return (f"Audit of {what}, {self.n_trials} models per world, delta="
                f"{self.delta:.3g}: empirical epsilon >= {self.epsilon_lower:.3g} "
                f"({self.confidence:.0%} confidence; estimate "
                f"{self.epsilon_estimate:.3g}, interval [{lo:.3g}, {hi:.3g}]); "
                f"certified epsilon {self.epsilon_certified:.3g}: {verdict}.")


def _statistic(model, x, label, other, kind):
    """Scalar test statistic of one released model at the canary."""
    row = x.reshape(1, -1)
    if is_classifier(model):
        classes = list(model.classes_)
        if kind == "loss":
            proba = model.predict_proba(row)[0]
            return float(np.log(max(proba[classes.index(label)], 1e-300)))
        d = np.ravel(model.decision_function(row))
        if d.size == 1:  # binary: the margin in favour of classes_[1]
            return float(d[0])
        i = classes.index(label)
        j = classes.index(other) if other in classes and other != label else \
            int(np.argmax(np.where(np.arange(d.size) == i, -np.inf, d)))
        return float(d[i] - d[j])
    pred = float(model.predict(row)[0])
    if kind == "loss":
        return -(pred - float(label)) ** 2
    return pred


def _with_row(X, y, x, label):
    """``(X, y)`` with one record appended, keeping sparse inputs sparse."""
    row = np.asarray(x, dtype=X.dtype if hasattr(X, "dtype") else float)
    if sp.issparse(X):
        X1 = sp.vstack([X, sp.csr_matrix(row.reshape(1, -1))], format="csr")
    else:
        X1 = np.vstack([np.asarray(X), row.reshape(1, -1)])
    y = np.asarray(y)
    return X1, np.concatenate([y, np.asarray([label], dtype=y.dtype)])


def _release(estimator, X, y, mode, seed, reference="replace"):
    """One model of one world; returns it and the certified epsilon that
    covers the audit's pair of worlds."""
    model = clone(estimator).set_params(random_state=int(seed))
    if getattr(model, "ledger", None) is not None:
        # The audit measures the mechanism on data chosen for it: its hundreds
        # of models are not releases of the ledger's dataset.
        model.set_params(ledger=None)
    if mode == "insert":
        # The audited record (last row) arrives through an edit: fit without it,
        # then insert it; the model's DP figure after the edit covers it.
        # Databases carry versions, so the requests are checked, not just sized.
        db0 = Database(X[:-1], np.asarray(y)[:-1])
        model.fit(db0)
        model.partial_unlearn(EditRequest(db0, X_insert=X[-1:],
                                          y_insert=np.asarray(y)[-1:]))
        return model, model.privacy_guarantee_.epsilon
    db = Database(X, y)
    model.fit(db)
    if mode == "deletion":
        before = model.privacy_guarantee_
        # The audited record (canary or stand-in) is always the last row.
        model.partial_unlearn(EditRequest(db, delete=[X.shape[0] - 1]))
        g = model.privacy_guarantee_
        if reference == "null":   # the certificate's own reference
            return model, g.deletion.epsilon_deletion
        # Two different records deleted: the drift differs by 2G, not G
        # (a trial's false alarm compared them with the null record's figure);
        # replace-one neighbours up to the edit, under that relation.
        return model, rho_to_epsilon(
            rho=deletion_rho_between_records(
                g.deletion.rho_deletion, rho_before=before.rho
                if before.relation == "replace" else None),
            delta=g.delta, method=g.conversion)
    return model, model.privacy_guarantee_.epsilon


def _run_trials(estimator, worlds, seeds, mode, canary, statistic, reference):
    """Scores of both worlds for a block of trials (one joblib task)."""
    out = np.empty((len(seeds), 2))
    certified, deltas = set(), set()
    for t, (seed_in, seed_out) in enumerate(seeds):
        for w, seed in ((0, seed_in), (1, seed_out)):
            Xw, yw = worlds[w]
            model, eps = _release(estimator, Xw, yw, mode, seed, reference)
            certified.add(round(eps, 12))
            deltas.add(model.privacy_guarantee_.delta)
            if callable(statistic):
                out[t, w] = float(statistic(model, canary))
            else:
                out[t, w] = _statistic(model, canary.x, canary.y,
                                       canary.y_reference, statistic)
    return out, certified, deltas


def _audit(estimator, X, y, *, mode, canary, reference, n_trials, statistic,
           confidence, random_state, n_jobs):
    if not isinstance(n_trials, numbers.Integral) or n_trials < 4:
        raise ValueError(f"n_trials must be an integer >= 4, got {n_trials!r}.")
    if not (callable(statistic) or statistic in ("margin", "loss")):
        raise ValueError("statistic must be 'margin', 'loss' or a callable "
                         f"(model, canary) -> float, got {statistic!r}.")
    params = estimator.get_params()
    relation = params.get("relation", "replace")
    if canary is None:
        canary = make_canary(X, y, data_norm=params.get("data_norm", 1.0),
                             classifier=is_classifier(estimator),
                             reference=reference)
    if reference == "null":
        if params.get("fit_intercept", True) or np.any(canary.x_reference != 0):
            raise ValueError(
                "reference='null' needs a record with zero gradient: a zero row "
                "and fit_intercept=False (with an intercept every record pulls "
                "on it).")
    elif reference == "replace":
        # A deletion's pair of records is covered under either relation
        # (Section 6.2, "Two records deleted"); a present pair only under
        # replace-one.
        if relation != "replace" and mode != "deletion":
            raise ValueError(
                f"reference='replace' compares two different records, which the "
                f"relation={relation!r} guarantee does not cover (it covers a "
                "record against the null record): use reference='null' with "
                "fit_intercept=False, or relation='replace'.")
    else:
        raise ValueError(f"reference must be 'replace' or 'null', got {reference!r}.")

    worlds = (_with_row(X, y, canary.x, canary.y),
              _with_row(X, y, canary.x_reference, canary.y_reference))
    # Independent noise for every released model: two fresh seeds per trial.
    seeds = np.random.SeedSequence(random_state).generate_state(
        2 * n_trials, dtype=np.uint32).reshape(n_trials, 2)
    n_jobs = 1 if n_jobs is None else int(n_jobs)
    if n_jobs == 1:
        parts = [_run_trials(estimator, worlds, seeds, mode, canary, statistic,
                             reference)]
    else:
        # One block of trials per worker: a task per model would spend more on
        # shipping the data than on fitting it.
        n_blocks = min(n_trials, effective_n_jobs(n_jobs))
        blocks = np.array_split(np.arange(n_trials), n_blocks)
        parts = Parallel(n_jobs=n_jobs)(
            delayed(_run_trials)(estimator, worlds, seeds[b], mode, canary,
                                 statistic, reference) for b in blocks)
    scores = np.concatenate([p[0] for p in parts])
    certified = set().union(*(p[1] for p in parts))
    deltas = set().union(*(p[2] for p in parts))
    if len(certified) != 1 or len(deltas) != 1:
        # The certificate is a function of public numbers only, identical in
        # both worlds and for every seed; anything else is a bug.
        raise RuntimeError(f"certified figures differ between released models: "
                           f"epsilon {sorted(certified)}, delta {sorted(deltas)}.")
    eps_cert = certified.pop()
    delta = deltas.pop()
    test = empirical_epsilon(scores[:, 0], scores[:, 1], delta=delta,
                             confidence=confidence)
    result = AuditResult(
        mode=mode, epsilon_lower=test.lower, epsilon_estimate=test.estimate,
        epsilon_interval=(test.lower, test.upper), epsilon_certified=eps_cert,
        delta=delta, confidence=confidence, n_trials=int(n_trials), test=test,
        scores_in=scores[:, 0], scores_out=scores[:, 1], reference=reference)
    if result.violated:
        warn(
            f"The audit's empirical lower bound epsilon >= {result.epsilon_lower:.4g} "
            f"exceeds the certified epsilon {eps_cert:.4g} ({mode}): the "
            "implementation leaks more than it certifies. Please report this.",
            PrivacyLeakWarning, stacklevel=3)
    return result


_SHARED_PARAMS = """
    Parameters
    ----------
    estimator : NoisyGDClassifier or NoisyGDRegressor
        Unfitted estimator with the public hyper-parameters to audit; it is
        cloned for every released model and its ``random_state`` replaced by a
        fresh seed each time.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The database ``D`` without the canary.
    y : array-like of shape (n_samples,)
    canary : Canary, default=None
        Record to audit and its stand-in; None for :func:`make_canary` on
        ``(X, y)``.
    reference : {"replace", "null"}, default="replace"
        Stand-in of the reference world (see :func:`make_canary`).
        ``"replace"`` needs ``relation="replace"``; ``"null"`` needs
        ``fit_intercept=False``.
    n_trials : int, default=200
        Models released per world (half choose the threshold, half measure it).
    statistic : {"margin", "loss"} or callable, default="margin"
        Score of a released model at the canary: the decision value (for
        multiclass, canary class against the stand-in's class), the
        log-likelihood (classifiers) or negative squared error (regressors), or
        ``statistic(model, canary) -> float``.
    confidence : float, default=0.95
        Confidence of the lower bound.
    random_state : int or None, default=None
        Seed of the per-model seeds.
    n_jobs : int, default=None
        Parallel workers (joblib); None for one.{extra}

    Returns
    -------
    result : AuditResult
        ``result.violated`` is True, and a
        :class:`~skforget.exceptions.PrivacyLeakWarning` is issued, when the
        empirical lower bound exceeds the certified one.
"""


def audit_deletion(estimator, X, y, *, canary=None, reference="replace",
                   n_trials=200, statistic="margin", confidence=0.95,
                   random_state=None, n_jobs=None):
    """Audit ``partial_unlearn``: was the deleted canary really forgotten?

    World *in*: ``fit`` on ``X`` plus the canary (last row), then
    ``partial_unlearn`` of the canary. World *out*: the same pipeline with the
    stand-in record in the canary's slot, deleted by the same edit, so both
    worlds share the normaliser ``N = n + 1``, the step counts and every public
    number (privacy-accounting.md, Section 6.2). The empirical lower bound is
    compared with the certificate's per-record ``epsilon_deletion`` under
    ``reference="null"`` (its own reference), and under ``"replace"`` with
    the figure of two different records deleted, four times its Rényi
    figure, or under ``relation="replace"`` the DP figure before the edit if
    smaller (:func:`~skforget.accounting.deletion_rho_between_records`);
    ``str(result)``'s "certified epsilon" is that figure.

    {params}

    See Also
    --------
    audit_dp : The same test right after ``fit``, against the DP figure.
    empirical_epsilon : The statistics, for scores from any mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.audit import audit_deletion
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = NoisyGDClassifier(C=0.5, epsilon=2.0, clip_norm=0.5, max_edit_size=1)
    >>> res = audit_deletion(clf, X, y, n_trials=20, random_state=0)
    >>> res.epsilon_lower <= res.epsilon_certified
    True
    """
    return _audit(estimator, X, y, mode="deletion", canary=canary,
                  reference=reference, n_trials=n_trials, statistic=statistic,
                  confidence=confidence, random_state=random_state, n_jobs=n_jobs)


def audit_dp(estimator, X, y, *, canary=None, reference="replace", n_trials=200,
             statistic="margin", confidence=0.95, random_state=None, n_jobs=None,
             via="fit"):
    """Audit the DP of a present record: canary in the data vs its stand-in.

    Both worlds are ``fit`` on ``X`` plus one record (the canary, or the
    stand-in), with no edit; the empirical lower bound is compared with the
    guarantee's ``epsilon`` (privacy-accounting.md, Section 6.1). Next to
    :func:`audit_deletion` it shows how much of the record's trace the
    unlearning steps remove. With ``via="insert"`` the record arrives through
    ``partial_unlearn`` instead (``fit`` on ``X``, then an edit inserting it),
    and the figure compared is the guarantee after that edit.

    {params}

    See Also
    --------
    audit_deletion : The same test after the canary is deleted.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.audit import audit_dp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = NoisyGDClassifier(C=0.5, epsilon=2.0, clip_norm=0.5)
    >>> res = audit_dp(clf, X, y, n_trials=20, random_state=0)
    >>> res.mode, res.epsilon_lower <= res.epsilon_certified
    ('dp', True)
    """
    if via not in ("fit", "insert"):
        raise ValueError(f"via must be 'fit' or 'insert', got {via!r}.")
    return _audit(estimator, X, y, mode="dp" if via == "fit" else "insert",
                  canary=canary, reference=reference, n_trials=n_trials,
                  statistic=statistic, confidence=confidence,
                  random_state=random_state, n_jobs=n_jobs)


_VIA = """
    via : {"fit", "insert"}, default="fit"
        How the audited record enters the model: in the data given to ``fit``,
        or inserted by a ``partial_unlearn`` after ``fit`` on ``X``."""


# Both audits take the same parameters; audit_dp has one more.
fill_doc(audit_deletion, params=_SHARED_PARAMS.replace("{extra}", ""))
fill_doc(audit_dp, params=_SHARED_PARAMS.replace("{extra}", _VIA))
