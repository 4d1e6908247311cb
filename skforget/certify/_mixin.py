# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Estimator methods for prediction certificates (mixed into both estimators).

The public radius is recomputed at every query from the model's public history
(``privacy_guarantee_`` and the plan), so it always matches the current
coefficients and needs no stored state. The data-dependent radius is recorded
during the current segment only, by a tracker the solver calls at every step
(``_start_tracking``), and is dropped by the next ``fit`` or edit.
"""

from numbers import Integral

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from skforget._validation import user_stacklevel, warn
from skforget.accounting import statistics_age
from skforget.certify._ball import (
    BallTracker,
    ClearingTracker,
    check_loss,
    check_mode,
    check_step_size,
    output_gradient_bound,
    public_radius,
    segments_from_guarantee,
)
from skforget.exceptions import NotCertifiableError

# Floating-point slack of certificates.md, Section 3.5: the bounds are attained
# exactly in some cases, so a query on the boundary must not be certified.
_REL_SLACK = 1e-9
_ABS_SLACK = 1e-12

# Parameters a future solver might add for a data-dependent stopping rule; the
# counterfactual run must execute the same number of steps (P1).
_STOPPING_PARAMS = ("early_stopping", "tol", "n_iter_no_change")


def check_modes(modes):
    """Validate ``certify_modes``: one mode name or a non-empty sequence of them."""
    if isinstance(modes, str):
        modes = (modes,)
    modes = tuple(dict.fromkeys(modes))
    if not modes:
        raise ValueError("certify_modes must name at least one mode.")
    for mode in modes:
        check_mode(mode)
    return modes


def _check_budget(k, name="k"):
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {k!r}.")
    return int(k)


def check_no_count_shift(estimator):
    """Refuse a model whose intercepts move with its noisy class counts (a
    multiclass ``class_weight="balanced"``, privacy-accounting.md 18.14): no
    certificate here bounds that move on a neighbouring database."""
    counts = estimator.__dict__.get("noisy_class_count_")
    if counts is not None and len(counts) > 2:
        raise NotCertifiableError(
            "A multiclass model with class_weight='balanced' shifts its "
            "intercepts by its noisy class counts (privacy-accounting.md, "
            "Section 18.14), a move on a neighbouring database that no "
            "certificate here bounds yet. Use public class weights to certify.")


def _is_regressor(estimator):
    return isinstance(estimator, RegressorMixin)


def _is_classifier(estimator):
    return not isinstance(estimator, RegressorMixin)


class CertifyMixin:
    """Prediction certificates for the noisy-GD estimators.

    A certificate for a query ``x`` and a budget ``k`` states that the same
    training pipeline (same seed, same realised noise, hyper-parameters frozen
    at their fitted values, in particular the normaliser ``N``) run on any
    database with up to ``k`` records removed (``mode="remove"``; or replaced,
    added, added and removed) would make the same prediction at ``x``
    (certificates.md). The counterfactual runs stay in a ball around the
    fitted coefficients whose radius this mixin computes.
    """

    #: Fitted attributes computed from the private rows (certificates.md, 7): kept
    #: in memory for data-dependent certificates, never written into a pickle.
    _PRIVATE_ATTRIBUTES = ("certified_radii_", "contraction_factor_")

    def __getstate__(self):
        # The data-dependent radii are functions of the training rows: they must
        # not leave with the model unless the caller saves them on purpose (they
        # are plain attributes for that). Unpickled models certify with the
        # public radius.
        state = super().__getstate__()
        if any(name in state for name in self._PRIVATE_ATTRIBUTES):
            state = dict(state)
            for name in self._PRIVATE_ATTRIBUTES:
                state.pop(name, None)
        return state

    # --- bookkeeping during fit / partial_unlearn -----------------------------
    def _start_tracking(self, design, plan, *, segment):
        modes = check_modes(self.certify_modes)
        k_max = self.certify_k_max
        if k_max == 0:
            if hasattr(self, "certified_radii_"):
                # Radii of an earlier segment must not survive (statelessness).
                return ClearingTracker(segment)
            return super()._start_tracking(design, plan, segment=segment)
        if segment > 0 and (plan.n_batches > 1 or plan.loss == "multinomial"
                            or not hasattr(design, "X")):
            # certify_k_max was raised after fit (it is free): the tracking it
            # asks for cannot run on this plan or on rows held by a cluster.
            # The edit itself must not fail for an optional side computation.
            warn(
                f"certify_k_max={k_max} was set after fit, but the data-dependent "
                "radius needs a full-batch ovr or binary plan and rows in memory; "
                "this edit is served without it (the public radius still "
                "applies). Fit with certify_k_max > 0 to track it.",
                UserWarning, stacklevel=user_stacklevel())
            # No tracker: radii of an earlier segment are never used again
            # (_radii checks their segment), and the solver runs as without.
            return None
        check_loss(plan.loss)
        check_step_size(learning_rate=plan.learning_rate, lam=plan.lam)
        if plan.n_batches > 1:
            raise NotCertifiableError(
                f"certify_k_max={k_max} tracks the data-dependent radius step by "
                "step over full-batch gradients, but this plan runs "
                f"{plan.n_batches} batches per pass: set batch_size=None for "
                "full-batch training, or use the public radius "
                "(certify_k_max=0; certify(..., data_dependent=False)).")
        n_coords = design.X.shape[1] + int(self.fit_intercept)
        return BallTracker(
            design, k_max=k_max, modes=modes, learning_rate=plan.learning_rate,
            lam=plan.lam, beta=plan.beta, row_norm=plan.row_norm,
            normaliser=plan.normaliser,
            gradient_bound=output_gradient_bound(loss=plan.loss,
                                                 row_norm=plan.row_norm,
                                                 clip_norm=plan.clip_norm),
            n_outputs=plan.n_params // n_coords, segment=segment)

    # --- shared machinery -------------------------------------------------------
    def _check_certifiable(self):
        check_is_fitted(self)
        check_loss(self._plan.loss)
        params = self.get_params(deep=False)
        stopping = {p: params[p] for p in _STOPPING_PARAMS
                    if params.get(p) not in (None, False)}
        if stopping:
            raise NotCertifiableError(
                f"Prediction certificates need a fixed number of steps, but {stopping} "
                "enables a data-dependent stop: a run on fewer records could stop "
                "at another step (certificates.md, P1).")
        check_no_count_shift(self)
        g = self.privacy_guarantee_
        if self._plan.n_batches > 1 or any(
                getattr(e, "n_batches", 1) > 1 for e in g.edits):
            # A run on the edited database draws its batch layout from its
            # row count: removing a record moves the other rows between
            # batches, which the radius does not cover (an audit: 57 times
            # the radius at batch_size=64; certificates.md, L4).
            raise NotCertifiableError(
                "Prediction certificates need full-batch training: this model "
                "ran several batches per pass, and a same-seed run on a database "
                "with k records fewer puts the other rows in other batches, "
                "which no radius here covers. Fit with batch_size=None, or with "
                "certify_k_max > 0, which makes batch_size='auto' full batch "
                "(certificates.md, L4).")
        last = g.edits[-1] if g.edits else g
        planned = (last.steps if g.edits else g.fit_steps) \
            // getattr(last, "n_batches", 1)
        ran = (getattr(self, "n_unlearn_iter_", None) if g.edits
               else int(np.ravel(self.n_iter_)[0]))
        if ran != planned:
            raise NotCertifiableError(
                f"The last run made {ran} passes but its history records {planned}: "
                "a run that stops early is not covered (certificates.md, P1).")
        check_step_size(learning_rate=g.learning_rate, lam=g.regularization)
        return g

    def _radii(self, ks, mode, data_dependent, include_forgotten):
        """Radii for budgets ``ks``, shape ``(len(ks), n_outputs)``."""
        check_mode(mode)
        g = self._check_certifiable()
        plan = self._plan
        n_outputs = np.atleast_2d(self.coef_).shape[0]
        ks = np.asarray(ks, dtype=np.intp)
        segments = segments_from_guarantee(g)
        common = dict(
            mode=mode, learning_rate=g.learning_rate, lam=g.regularization,
            beta=plan.beta, row_norm=g.row_norm, normaliser=g.normaliser,
            gradient_bound=output_gradient_bound(loss=plan.loss, row_norm=g.row_norm,
                                                 clip_norm=g.clip_norm),
            include_forgotten=bool(include_forgotten))
        if not data_dependent:
            r = public_radius(segments, ks, **common)
            return np.repeat(r[:, None], n_outputs, axis=1)
        radii = getattr(self, "certified_radii_", {})
        if (mode not in radii
                or getattr(self, "_certified_segment", None) != len(g.edits)):
            raise NotCertifiableError(
                f"No data-dependent radius for mode={mode!r} in the current segment: "
                f"fit (or serve the edit) with certify_k_max >= k and {mode!r} in "
                "certify_modes, or use the public radius (data_dependent=False). "
                "Data-dependent radii are never pickled with the model.")
        own = np.asarray(radii[mode], dtype=np.float64).reshape(len(radii[mode]), -1)
        k_max = own.shape[0] - 1
        if ks.size and ks.max() > k_max:
            raise NotCertifiableError(
                f"k={int(ks.max())} exceeds certify_k_max={k_max}, the largest budget "
                "tracked during training; refit with a larger certify_k_max or use "
                "the public radius.")
        rho = np.asarray(self.contraction_factor_[mode])[ks]
        # Earlier segments always enter through their public radius, decayed by
        # the current segment's contraction (certificates.md, Section 2.3).
        carried = rho ** segments[-1].steps * public_radius(segments[:-1], ks, **common)
        # Both radii bound the same distance; the smaller one is as valid (the
        # tracked one can exceed the public one by rounding when the top-k
        # gradients are all clipped).
        public = public_radius(segments, ks, **common)
        return np.minimum(carried[:, None] + own[ks], public[:, None])

    def _scores_and_norms(self, X):
        """Margins ``(m, K)`` (exactly those of ``decision_function`` /
        ``predict``) and the norms ``||[a x, s_b]||`` of the mapped rows."""
        return self._margins(X, return_norms=True)

    def _statistics_age(self, include_forgotten):
        """Records the released class statistics are away from a
        counterfactual without the rows deleted since they were drawn
        (Theorem 12.12; 0 when those rows are not covered)."""
        return statistics_age(getattr(self, "privacy_guarantee_", None)) \
            if include_forgotten else 0

    def _half_width(self, radius, scores, aug, k, age):
        # The margin range over the ball B(theta, r) is exactly m +- r ||x||;
        # the slack absorbs rounding in the margin and in the recursion.
        width = (radius[None, :] * aug[:, None] * (1.0 + _REL_SLACK)
                 + _ABS_SLACK * (1.0 + np.abs(scores)))
        # The same run on the neighbouring database draws the same count noise,
        # so a prevalence offset moves by at most this much (certificates.md,
        # Section 9.10; 0 for models without one).
        # With the class-mean midpoint (9.11) the bound also grows with the
        # radius: (r + ||w||) delta_c(k).
        # Statistics kept by deletions served without a pass were drawn on a
        # database that still held the rows removed since (privacy-accounting.md,
        # Theorem 12.12): a counterfactual without those rows is ``age``
        # records further from it.
        change = getattr(self, "_offset_change", None)
        if change is not None:
            width = width + change(k + age, radius) * (1.0 + _REL_SLACK)
        return width

    def _certified_mask(self, scores, width, tol):
        if _is_regressor(self):
            return width[:, 0] <= tol
        if scores.shape[1] == 1:
            # Ties are never certified: a zero margin predicts the first class.
            return np.abs(scores[:, 0]) > width[:, 0]
        rows = np.arange(scores.shape[0])
        top = scores.argmax(axis=1)
        upper = scores + width
        upper[rows, top] = -np.inf
        return scores[rows, top] - width[rows, top] > upper.max(axis=1)

    def _check_tol(self, tol):
        if _is_regressor(self):
            if tol is None:
                raise ValueError("A regressor's certificate needs tol, the largest "
                                 "change of a prediction to tolerate.")
            tol = float(tol)
            if not tol >= 0:
                raise ValueError(f"tol must be >= 0, got {tol!r}.")
            return tol
        if tol is not None:
            raise ValueError("tol applies to regressors only; a classifier's "
                             "certificate is about the predicted class.")
        return None

    def _bounds(self, X, k, mode, data_dependent, include_forgotten):
        k = _check_budget(k)
        radius = self._radii([k], mode, data_dependent, include_forgotten)[0]
        scores, aug = self._scores_and_norms(X)
        width = self._half_width(radius, scores, aug, k,
                                 self._statistics_age(include_forgotten))
        return scores - width, scores + width

    # --- public methods -----------------------------------------------------------
    def certified_radius(self, k=0, mode="remove", *, data_dependent=False,
                         include_forgotten=True):
        """Radius of the ball holding every counterfactual coefficient vector.

        Every same-seed run of the model's pipeline on a database in the
        ``mode`` neighbourhood of size ``k`` (and, with ``include_forgotten``,
        without the rows deleted by earlier ``partial_unlearn`` calls) ends
        within this Euclidean distance of the current ``(coef_, intercept_ /
        intercept_scaling)``.

        Parameters
        ----------
        k : int, default=0
            Number of records removed, replaced or added.
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        data_dependent : bool, default=False
            Use the radius tracked during training (``certify_k_max >= k``):
            tighter, but a function of the private rows. The default public
            radius depends only on sizes, step counts and hyper-parameters.
        include_forgotten : bool, default=True
            Also cover the rows deleted by earlier edits. With ``k=0`` the
            radius is then the forgetting certificate.

        Returns
        -------
        radius : float or ndarray of shape (n_classes,)
            One radius per output for one-vs-rest models.

        Examples
        --------
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> d = load_dataset("breast_cancer")
        >>> clf = NoisyGDClassifier(classes=[0, 1], random_state=0)
        >>> clf = clf.fit(d.data, d.target)
        >>> clf.certified_radius(0), round(clf.certified_radius(1), 4)
        (0.0, 0.0479)
        """
        r = self._radii([_check_budget(k)], mode, data_dependent, include_forgotten)[0]
        return float(r[0]) if r.shape[0] == 1 else r

    def certify(self, X, k=0, mode="remove", *, tol=None, data_dependent=False,
                include_forgotten=True):
        """Which predictions no neighbouring database of size ``k`` can change.

        ``True`` at a row means: the same training pipeline (same seed and
        realised noise, hyper-parameters frozen at their fitted values, including
        the normaliser ``N``) run on any database obtained by removing
        (``mode="remove"``), replacing, adding, or adding and removing up to
        ``k`` records makes the same prediction there (a regressor's within
        ``tol``). With ``k=0`` after :meth:`partial_unlearn` it is the
        forgetting certificate: the prediction is exactly that of the pipeline
        that never saw the deleted rows. Full-batch models only
        (``batch_size=None``): a model trained in mini-batches raises
        :class:`~skforget.exceptions.NotCertifiableError`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        k : int, default=0
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        tol : float, default=None
            Regressors only (required): largest tolerated change of a prediction.
        data_dependent : bool, default=False
            Use the tighter radius tracked during training. It depends on the
            private rows: do not publish the resulting mask, or a serve/no-serve
            decision based on it.
        include_forgotten : bool, default=True
            Also cover the rows deleted by earlier edits (the released
            intercept's class statistics too, when deletions served without a
            pass kept them: they count those rows, Theorem 12.12).

        Returns
        -------
        certified : ndarray of bool of shape (n_samples,)

        Examples
        --------
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> d = load_dataset("breast_cancer")
        >>> clf = NoisyGDClassifier(clip_norm=0.5, random_state=0)
        >>> clf = clf.fit(d.data, d.target)
        >>> mask = clf.certify(d.data, k=1)
        >>> mask.shape, bool(mask.mean() > 0.8)
        ((569,), True)
        """
        tol = self._check_tol(tol)
        k = _check_budget(k)
        radius = self._radii([k], mode, data_dependent, include_forgotten)[0]
        scores, aug = self._scores_and_norms(X)
        width = self._half_width(radius, scores, aug, k,
                                 self._statistics_age(include_forgotten))
        return self._certified_mask(scores, width, tol)

    def certified_k(self, X, mode="remove", *, tol=None, data_dependent=False,
                    include_forgotten=True):
        """Largest certified budget of every prediction.

        The radius grows with ``k``, so a prediction certified at ``k`` is
        certified at every smaller budget. The search covers ``k`` up to the
        current database size (public radius) or ``certify_k_max``
        (data-dependent).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        tol : float, default=None
            Regressors only (required).
        data_dependent : bool, default=False
        include_forgotten : bool, default=True

        Returns
        -------
        k : ndarray of int of shape (n_samples,)
            ``-1`` where not even ``k = 0`` is certified (a zero margin, or a
            forgetting certificate that does not hold yet).

        Examples
        --------
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> d = load_dataset("breast_cancer")
        >>> clf = NoisyGDClassifier(clip_norm=0.5, random_state=0)
        >>> clf = clf.fit(d.data, d.target)
        >>> ks = clf.certified_k(d.data[:5])
        >>> bool((ks >= 1).all())
        True
        """
        tol = self._check_tol(tol)
        if data_dependent:
            radii = getattr(self, "certified_radii_", {})
            k_hi = len(radii[mode]) - 1 if mode in radii else 0
        else:
            k_hi = self.privacy_guarantee_.n_samples if hasattr(
                self, "privacy_guarantee_") else 0
        all_radii = self._radii(np.arange(k_hi + 1), mode, data_dependent,
                                include_forgotten)
        scores, aug = self._scores_and_norms(X)
        best = np.full(scores.shape[0], -1, dtype=np.intp)
        alive = np.ones(scores.shape[0], dtype=bool)
        age = self._statistics_age(include_forgotten)
        for k, radius in enumerate(all_radii):
            # Radii are non-decreasing in k, so once a row fails it stays failed.
            width = self._half_width(radius, scores, aug, k, age)
            alive &= self._certified_mask(scores, width, tol)
            if not alive.any():
                break
            best[alive] = k
        return best

    @available_if(_is_classifier)
    def decision_function_bounds(self, X, k=0, mode="remove", *,
                                 data_dependent=False, include_forgotten=True):
        """Interval holding every counterfactual decision function value.

        Classifiers only (``NoisyGDRegressor`` has :meth:`predict_bounds`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        k : int, default=0
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        data_dependent : bool, default=False
        include_forgotten : bool, default=True

        Returns
        -------
        lower, upper : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Shaped like :meth:`decision_function`.

        Examples
        --------
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> d = load_dataset("breast_cancer")
        >>> clf = NoisyGDClassifier(clip_norm=0.5, random_state=0)
        >>> clf = clf.fit(d.data, d.target)
        >>> lo, hi = clf.decision_function_bounds(d.data[:3], k=2)
        >>> bool((lo <= clf.decision_function(d.data[:3])).all() and (lo < hi).all())
        True
        """
        lo, hi = self._bounds(X, k, mode, data_dependent, include_forgotten)
        if lo.shape[1] == 1:
            return lo[:, 0], hi[:, 0]
        return lo, hi

    @available_if(_is_regressor)
    def predict_bounds(self, X, k=0, mode="remove", *, data_dependent=False,
                       include_forgotten=True):
        """Interval holding every counterfactual prediction.

        Regressors only (``NoisyGDClassifier`` has
        :meth:`decision_function_bounds`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        k : int, default=0
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        data_dependent : bool, default=False
        include_forgotten : bool, default=True

        Returns
        -------
        lower, upper : ndarray of shape (n_samples,)

        Examples
        --------
        >>> import numpy as np
        >>> from skforget import NoisyGDRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(-1, 1, size=(500, 3)) / np.sqrt(3)
        >>> y = X @ np.array([1.0, -0.5, 0.25])
        >>> reg = NoisyGDRegressor(alpha=5.0, batch_size=None, random_state=0).fit(X, y)
        >>> lo, hi = reg.predict_bounds(X[:2], k=1)
        >>> bool(((lo < reg.predict(X[:2])) & (reg.predict(X[:2]) < hi)).all())
        True
        """
        lo, hi = self._bounds(X, k, mode, data_dependent, include_forgotten)
        return lo[:, 0], hi[:, 0]
