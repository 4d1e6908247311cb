# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateSearchCV: repeat-and-select tuning of a private estimator.

Design
------
One candidate run (privacy-accounting.md, Lemma 17.1) fits a clone with
hyper-parameters drawn from public distributions on a training part fixed
before the data are read, and scores it on the validation part with Gaussian
noise calibrated so that the score costs no more than the fit: a record is in
one part only, so the run is a rho-coefficient ``run_rho`` mechanism. The
number of runs is random (truncated negative binomial, Theorem 17.2) and only
the best run is released; the refit on all rows composes with it (17.3).

Everything that decides the runs (the split, the number of runs, the candidate
hyper-parameters) comes from the search's public generator; the score noise
and the estimators' noise are secret (fresh entropy unless ``random_state`` is
an integer, which the guarantee then flags, as for the estimators).
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    _fit_context,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import _safe_split, available_if
from sklearn.utils.validation import check_is_fitted, indexable

from skforget import accounting

#: Parameters of the tuned estimator that the search sets itself.
_RESERVED = ("epsilon", "delta", "random_state")


def _best_has(name):
    def check(self):
        check_is_fitted(self, "best_estimator_")
        return hasattr(self.best_estimator_, name)
    return check


def _draw(value, rng):
    """One draw of a candidate value: uniform over a list, or ``rvs`` of a
    scipy distribution (with replacement: Theorem 17.2 needs every run)."""
    if hasattr(value, "rvs"):
        return value.rvs(random_state=rng)
    return value[rng.randint(len(value))]


class PrivateSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Tune a private estimator with a guarantee that covers the search.

    Random search by repeat-and-select (Papernot and Steinke, ICLR 2022): the
    search runs a random number ``K`` of candidates (mean ``n_candidates``,
    truncated negative binomial law), each a private fit on a training part
    scored privately on a validation part, releases only the best one, and
    refits it on all rows. The whole search is (``epsilon``, ``delta``)-DP for
    every record; with a mean of 10 candidates a total epsilon of 1 leaves
    each run about 0.55 (0.29 by naive composition of 10 fits)
    (privacy-accounting.md, Section 17).

    Parameters
    ----------
    estimator : estimator
        A skforget estimator (``NoisyGDClassifier``, ``NoisyGDRegressor``, the
        output-perturbation estimators). Its ``epsilon``, ``delta`` and
        ``random_state`` are set by the search.
    param_distributions : dict
        Parameter names to lists (drawn uniformly, with replacement) or scipy
        distributions (``rvs``). Fixed before looking at the data: a grid chosen
        from the data leaks what the guarantee does not cover.
    epsilon : float, default=1.0
        Total epsilon of the search (selection and refit).
    delta : float or "auto", default="auto"
        Total delta; "auto" is ``min(1e-5, n ** -1.1)``.
    n_candidates : float, default=10
        Mean number of candidate runs.
    shape : float, default=0.0
        ``eta`` of the law of the number of runs: 0 logarithmic (the default;
        least privacy per candidate), 1 geometric; larger values concentrate
        ``K`` around its mean at a higher privacy price.
    validation_fraction : float in (0, 1), default=0.2
        Share of the rows, chosen at random before the data are read, on which
        candidates are scored.
    refit : bool, default=True
        Refit the selected hyper-parameters on all rows (``best_estimator_``).
        Without refit, ``best_estimator_`` is the selected run, trained on the
        training part only, and all of ``epsilon`` goes to the runs.
    refit_share : float in [0, 1), default=0.5
        Share of ``epsilon`` given to the refit.
    target_bound : float, default=None
        Regressors only: public bound ``b`` of the absolute error that still
        counts; each validation record scores ``1 - min(|y - y_hat| / b, 1)``.
        Classifiers score accuracy.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the number of runs and the candidates (public), and,
        if an integer, the noise of every run: reproducible, and then the
        guarantee assumes the seed is secret. None (production) draws fresh
        entropy for the noise.
    verbose : int, default=0
        Print the plan and each run's public hyper-parameters (never a score
        other than the released best).

    Attributes
    ----------
    best_estimator_ : estimator
        The selected hyper-parameters refitted on all rows (or the selected
        run without refit).
    best_params_ : dict
        The selected hyper-parameters.
    best_score_ : float
        The selected run's noisy validation score (released by the mechanism).
    n_candidates_ : int
        ``K``, the number of runs drawn (public).
    cv_results_ : dict
        ``params`` (every candidate drawn: public, independent of the data) and
        ``selected`` (a mask of the released one). The other runs' scores are
        never released.
    privacy_guarantee_ : SearchBudget
        The whole search's figure, with the refit's and the selection's parts.

    Examples
    --------
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.datasets import load_dataset
    >>> from skforget.model_selection import PrivateSearchCV
    >>> d = load_dataset("breast_cancer")
    >>> search = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]),
    ...                          {"C": [0.01, 0.1, 1.0]}, epsilon=1.0,
    ...                          random_state=0).fit(d.data, d.target)
    >>> search.privacy_guarantee_.epsilon <= 1.0
    True
    >>> search.best_params_["C"] in (0.01, 0.1, 1.0)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "partial_unlearn"])],
        "param_distributions": [dict],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "n_candidates": [Interval(Real, 1, None, closed="left")],
        "shape": [Interval(Real, 0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean"],
        "refit_share": [Interval(Real, 0, 1, closed="left")],
        "target_bound": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator, param_distributions, *, epsilon=1.0, delta="auto",
                 n_candidates=10, shape=0.0, validation_fraction=0.2, refit=True,
                 refit_share=0.5, target_bound=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_candidates = n_candidates
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.refit_share = refit_share
        self.target_bound = target_bound
        self.random_state = random_state
        self.verbose = verbose

    def _check_inputs(self, n):
        reserved = sorted(set(self.param_distributions) & set(_RESERVED))
        if reserved:
            raise ValueError(
                f"param_distributions names {reserved}: the search sets the "
                "candidates' epsilon, delta and random_state itself (the total "
                "is the search's epsilon).")
        params = self.estimator.get_params()
        unknown = sorted(set(self.param_distributions) - set(params))
        if unknown:
            raise ValueError(f"param_distributions names {unknown}, which "
                             f"{type(self.estimator).__name__} does not have.")
        for name, values in self.param_distributions.items():
            if not hasattr(values, "rvs") and (isinstance(values, str)
                                                or len(values) == 0):
                raise ValueError(f"param_distributions[{name!r}] must be a "
                                 "non-empty list or a scipy distribution.")
        if not ("epsilon" in params and hasattr(self.estimator, "partial_unlearn")):
            raise TypeError("PrivateSearchCV tunes skforget's private estimators; "
                            f"got {type(self.estimator).__name__}.")
        if is_regressor(self.estimator) and self.target_bound is None:
            raise ValueError(
                "target_bound is required for a regressor: the public bound of the "
                "absolute error that still counts in the validation score (each "
                "record scores 1 - min(|y - y_hat| / target_bound, 1)).")
        n_val = int(math.ceil(self.validation_fraction * n))
        if not (1 <= n_val < n):
            raise ValueError(f"validation_fraction={self.validation_fraction!r} "
                             f"leaves {n - n_val} training rows of {n}.")
        return n_val

    def _utilities(self, model, X, y):
        """Per-record utility in [0, 1] (Lemma 17.1)."""
        pred = model.predict(X)
        if is_classifier(model):
            return (np.asarray(pred) == np.asarray(y)).astype(np.float64)
        err = np.abs(np.asarray(y, dtype=np.float64) - pred) / self.target_bound
        return 1.0 - np.minimum(err, 1.0)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Run the private search and refit the selected hyper-parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : object
        """
        X, y = indexable(X, y)
        n = len(y)
        n_val = self._check_inputs(n)
        delta = (accounting.default_delta(n_samples=n) if self.delta == "auto"
                 else float(self.delta))
        budget = accounting.plan_search(
            epsilon=float(self.epsilon), delta=delta, mean=float(self.n_candidates),
            shape=float(self.shape),
            refit_share=float(self.refit_share) if self.refit else 0.0)
        public = check_random_state(self.random_state)
        seeded = isinstance(self.random_state, Integral)
        # Secret noise for the scores; the runs get their own seeds (or None).
        noise = np.random.default_rng(
            public.randint(2**31) if seeded else None)

        order = public.permutation(n)
        val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
        k = accounting.sample_repetitions(
            np.random.default_rng(public.randint(2**31)),
            mean=float(self.n_candidates), shape=float(self.shape))
        candidates = [{name: _draw(values, public)
                       for name, values in sorted(self.param_distributions.items())}
                      for _ in range(k)]
        if self.verbose:
            print(f"[skforget] PrivateSearchCV: {k} candidate runs, each planned "
                  f"for epsilon {budget.run_epsilon:.4g}; {budget}")
        X_train, y_train = _safe_split(self.estimator, X, y, train)
        X_val, y_val = _safe_split(self.estimator, X, y, val)
        group = int(self.estimator.get_params().get("group_size", 1))
        sigma_score = group / (n_val * math.sqrt(2.0 * budget.run_rho))
        best = None
        for i, params in enumerate(candidates):
            est = clone(self.estimator).set_params(
                **params, epsilon=budget.run_epsilon, delta=delta,
                random_state=int(public.randint(2**31)) if seeded else None)
            with warnings.catch_warnings():
                # One run's advice (e.g. noise-dominated) is about the run, not
                # the search; the run's plan is public, the warning text too.
                warnings.simplefilter("ignore", UserWarning)
                est.fit(X_train, y_train)
            rho = est.privacy_guarantee_.rho
            if not rho <= budget.run_rho:
                raise RuntimeError(
                    f"Candidate {params} reports rho={rho:.6g}, above the "
                    f"{budget.run_rho:.6g} the selection was planned for: "
                    "please report this.")
            score = float(np.mean(self._utilities(est, X_val, y_val))
                          + noise.normal(0.0, sigma_score))
            if self.verbose:
                print(f"[skforget]   run {i + 1}/{k}: {params}")
            if best is None or score > best[0]:
                best = (score, i, est)
        score, index, model = best
        self.best_params_ = dict(candidates[index])
        self.best_score_ = score
        self.best_index_ = index
        self.n_candidates_ = k
        self.cv_results_ = {"params": candidates,
                            "selected": np.arange(k) == index}
        if self.refit:
            model = clone(self.estimator).set_params(
                **self.best_params_, epsilon=budget.refit_epsilon, delta=delta,
                random_state=int(public.randint(2**31)) if seeded else None)
            model.fit(X, y)
            if not model.privacy_guarantee_.rho <= budget.refit_rho:
                raise RuntimeError(
                    f"The refit reports rho={model.privacy_guarantee_.rho:.6g}, "
                    f"above the {budget.refit_rho:.6g} it was planned for: please "
                    "report this.")
        self.best_estimator_ = model
        self.privacy_guarantee_ = budget
        self.seeded_ = seeded
        if hasattr(model, "n_features_in_"):
            self.n_features_in_ = model.n_features_in_
        if hasattr(model, "classes_"):
            self.classes_ = model.classes_
        return self

    # --- delegation to the selected model ---------------------------------
    @available_if(_best_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_``."""
        return self.best_estimator_.predict(X)

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``."""
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``best_estimator_``."""
        return self.best_estimator_.decision_function(X)

    @available_if(_best_has("score"))
    def score(self, X, y):
        """``best_estimator_.score(X, y)`` (not private: X, y are yours)."""
        return self.best_estimator_.score(X, y)

    @available_if(_best_has("partial_unlearn"))
    def partial_unlearn(self, edits):
        """Serve an edit request on ``best_estimator_`` (refit=True).

        The model is certified against a run with the same hyper-parameters;
        the choice of those hyper-parameters keeps what the selection saw of
        the deleted records, bounded by ``privacy_guarantee_.selection_epsilon``
        (privacy-accounting.md, 17.4).
        """
        if not self.refit:
            raise ValueError("Without refit, best_estimator_ was trained on the "
                             "search's training part only; fit with refit=True "
                             "to serve deletions on the whole database.")
        self.best_estimator_.partial_unlearn(edits)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.input_tags.sparse = inner.input_tags.sparse
        return tags
