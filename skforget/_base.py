# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared machinery of the noisy-GD estimators: fit, partial_unlearn, margins."""

import math
import warnings
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils.extmath import row_norms, safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from skforget import accounting
from skforget._edits import EditRequest
from skforget._solver import initial_draw, make_design, row_sq_norms, run_noisy_gd
from skforget._validation import (
    PRIVACY_CONSTRAINTS,
    check_delta,
    check_finite_params,
    resolve_deletion_epsilon,
    row_scale,
    segment_rng,
)
from skforget.exceptions import UnlearningError

# Above this many planned steps, fit warns that training will be slow.
_LONG_PLAN = 20_000


@contextmanager
def _atomic(estimator):
    """Restore every attribute of ``estimator`` if the block raises.

    Fitted attributes are only ever replaced, never mutated in place, so a
    shallow snapshot of ``__dict__`` is enough to undo a failed call exactly.
    """
    snapshot = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(snapshot)
        raise


class _BaseNoisyGD(BaseEstimator):
    """Base class: subclasses define the loss, targets and regularisation."""

    _parameter_constraints: dict = dict(PRIVACY_CONSTRAINTS)

    # --- hooks for subclasses ------------------------------------------------
    def _encode_targets(self, y, *, fit):
        """Return ``(y_float, n_outputs, loss, new_attributes)``."""
        raise NotImplementedError

    def _regularization(self, n_samples):
        """L2 strength ``lambda`` of the per-sample objective."""
        raise NotImplementedError

    def _set_coefficients(self, W, b):
        """Store coefficients in the subclass's public layout."""
        raise NotImplementedError

    def _start_tracking(self, design, plan, *, segment):
        """Optional per-step bookkeeping for one segment (fit is segment 0).

        Returns None, or an object with ``step(t, W, b, G, Gb)`` (passed to the
        solver as its callback) and ``finish()`` returning a dict of attributes to
        set once the segment has succeeded. Used by prediction certificates.
        """
        return None

    # --- shared helpers --------------------------------------------------------
    def _intercept_scaling(self):
        return float(self.intercept_scaling) if self.fit_intercept else 0.0

    def _row_norm_bound(self):
        """Public bound ``R`` on ``||[x, s_b]||`` (privacy-accounting.md, 10.2)."""
        s_b = self._intercept_scaling()
        return math.sqrt(self.data_norm**2 + s_b**2)

    def _validate_rows(self, X, y="no_validation", *, reset, order="C", **kwargs):
        """``validate_data`` for rows (and targets, if given), in the layouts the
        kernel reads: float64 or float32, C-contiguous (unless ``order`` says
        otherwise) or CSR.

        A CSR matrix with duplicate entries is summed into a copy: its row norms
        are computed from the stored entries, and a row holding 0.7 twice in one
        column (the value 1.4) would otherwise pass the ``data_norm`` bound with
        norm 0.99. The caller's matrix is never modified.
        """
        rows_only = isinstance(y, str) and y == "no_validation"
        out = validate_data(self, X, y, reset=reset, accept_sparse="csr",
                            dtype=[np.float64, np.float32], order=order, **kwargs)
        X = out if rows_only else out[0]
        if sp.issparse(X) and not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X if rows_only else (X, out[1])

    def _design(self, X, y, loss, *, where):
        sq = row_sq_norms(X)
        scale = row_scale(sq, self.data_norm, self.clip_rows, where=where)
        return make_design(X, y, scale=scale, sq_norms=sq, loss=loss,
                           intercept_scaling=self._intercept_scaling(),
                           clip_norm=self.clip_norm)

    def _run_segment(self, design, W0, b0, *, plan, steps, segment, rng):
        """Run one segment of the history (``fit`` or an edit) from ``(W0, b0)``.

        Returns the new parameter and the attributes the certificate tracker
        recorded along the way (empty unless ``_start_tracking`` returned one).
        """
        tracker = self._start_tracking(design, plan, segment=segment)
        W, b = run_noisy_gd(design, W0, b0, steps=steps,
                            learning_rate=plan.learning_rate, lam=plan.lam,
                            sigma=plan.sigma, normaliser=plan.normaliser, rng=rng,
                            fit_intercept=self.fit_intercept, verbose=self.verbose,
                            callback=None if tracker is None else tracker.step)
        return W, b, ({} if tracker is None else tracker.finish())

    def _theta(self):
        """Current parameter ``(W, b)`` in the solver's layout."""
        W = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))
        s_b = self._intercept_scaling()
        intercept = np.atleast_1d(np.asarray(self.intercept_, dtype=np.float64))
        b = intercept / s_b if s_b > 0 else np.zeros(W.shape[0])
        return np.ascontiguousarray(W), b

    # --- fit -------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train by full-batch noisy gradient descent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows. Rows whose norm exceeds ``data_norm`` are projected
            onto that ball (or rejected with ``clip_rows=False``).
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : object
            Fitted estimator, with ``privacy_guarantee_`` stating what the
            released coefficients satisfy.
        """
        with _atomic(self):
            return self._fit(X, y)

    def _fit(self, X, y):
        check_finite_params(self, ["epsilon", "deletion_epsilon", "data_norm",
                                   "clip_norm", "intercept_scaling", "learning_rate",
                                   *self._finite_extra])
        X, y = self._validate_rows(X, y, reset=True, y_numeric=self._y_numeric)
        y_enc, n_outputs, loss, new_attrs = self._encode_targets(y, fit=True)
        n, d = X.shape
        delta = (accounting.default_delta(n_samples=n) if self.delta == "auto"
                 else float(self.delta))
        check_delta(delta, n)
        plan = accounting.plan_training(
            loss=loss, n_samples=n,
            n_params=n_outputs * (d + int(self.fit_intercept)),
            lam=self._regularization(n), row_norm=self._row_norm_bound(),
            clip_norm=self.clip_norm, epsilon=float(self.epsilon), delta=delta,
            deletion_epsilon=float(
                resolve_deletion_epsilon(self.epsilon, self.deletion_epsilon)),
            max_edit_size=self.max_edit_size, relation=self.relation,
            group_size=self.group_size, learning_rate=self.learning_rate,
            recipe=self.recipe, fit_steps=self.max_iter,
            n_classes=max(2, n_outputs),
        )
        if plan.fit_steps > _LONG_PLAN:
            kappa = (plan.lam + plan.beta) / plan.lam
            warnings.warn(
                f"The accounting plans {plan.fit_steps} noisy gradient steps "
                f"(condition number {kappa:.0f}: lambda={plan.lam:.3g} per sample is "
                f"small next to the curvature {plan.beta:.3g}). Training will be "
                "slow; stronger "
                "regularisation (a smaller C, a larger alpha) or max_iter shortens it.",
                UserWarning, stacklevel=3)
        design = self._design(X, y_enc, loss, where="X")
        rng = segment_rng(self.random_state, 0)
        W0, b0 = initial_draw(rng, (n_outputs, d), fit_intercept=self.fit_intercept,
                              init_variance=plan.init_variance)
        if self.verbose:
            print(f"[skforget] fit: {plan.fit_steps} noisy steps, sigma="
                  f"{plan.sigma:.4g}, learning_rate={plan.learning_rate:.4g}, "
                  f"lambda={plan.lam:.4g}")
        W, b, tracked = self._run_segment(design, W0, b0, plan=plan,
                                          steps=plan.fit_steps, segment=0, rng=rng)
        guarantee = accounting.guarantee_after_fit(
            plan, steps=plan.fit_steps, seeded=self.random_state is not None)
        new_attrs = {**new_attrs, **tracked}
        for name, value in new_attrs.items():
            setattr(self, name, value)
        self._set_coefficients(W, b)
        self.n_iter_ = plan.fit_steps
        self._plan = plan
        self.privacy_guarantee_ = guarantee
        return self

    # --- partial_unlearn -------------------------------------------------------
    def partial_unlearn(self, edits):
        """Serve an edit request with certified, stateless unlearning.

        Runs ``K_R`` noisy gradient steps on the edited database, starting from
        the current coefficients (Chourasia and Shah 2023, Def. 5.1), then
        swaps in the new coefficients and a new ``privacy_guarantee_`` whose
        last :class:`~skforget.accounting.EditCertificate` certifies the
        removed records. The estimator keeps no training row and no other
        data-dependent state, so nothing about a deleted record can leak through
        later releases beyond the certified bound.

        If anything fails (an invalid request, a database that is not the
        model's current one, an interruption), the estimator is left exactly as
        it was.

        Parameters
        ----------
        edits : EditRequest
            Rows of the current database to delete or replace, and records to
            insert. After the call, ``edits.apply()`` returns the edited
            database, which the caller keeps for the next request.

        Returns
        -------
        self : object
        """
        check_is_fitted(self)
        if not isinstance(edits, EditRequest):
            raise TypeError("edits must be a skforget.EditRequest, got "
                            f"{type(edits).__name__}.")
        with _atomic(self):
            return self._partial_unlearn(edits)

    def _partial_unlearn(self, edits):
        plan = self._plan
        previous = self.privacy_guarantee_
        if edits.n_samples_before != previous.n_samples:
            raise UnlearningError(
                f"The request names a database of {edits.n_samples_before} rows, but "
                f"the model's current database has {previous.n_samples} rows. Build "
                "the request on the database the model was fitted on, or on the one "
                "returned by the previous request's apply()."
            )
        if edits.size > plan.max_edit_size:
            raise UnlearningError(
                f"The request edits {edits.size} rows, more than max_edit_size="
                f"{plan.max_edit_size} that this model was planned for. Split it into "
                "smaller requests or fit with a larger max_edit_size."
            )
        self._check_new_targets(edits)
        X_new, y_new = edits.apply()
        X_new, y_new = self._validate_rows(X_new, y_new, reset=False,
                                           y_numeric=self._y_numeric,
                                           ensure_min_samples=0)
        y_enc, _, loss, _ = self._encode_targets(y_new, fit=False)
        n_new = X_new.shape[0]
        try:
            steps = accounting.plan_unlearning(plan, previous, n_samples=n_new,
                                               edit_size=edits.size)
        except ValueError as exc:
            raise UnlearningError(str(exc)) from exc
        ratio = n_new / plan.normaliser
        if not 0.5 <= ratio <= 2.0:
            warnings.warn(
                f"The database now has {n_new} rows, {ratio:.2f} times the "
                f"{plan.normaliser} the model was fitted on; the fixed gradient "
                "normaliser keeps the guarantee but shifts the objective. Refitting "
                "is recommended.",
                UserWarning, stacklevel=2)
        design = self._design(X_new, y_enc, loss, where="the edited database")
        segment = len(previous.edits) + 1
        rng = segment_rng(self.random_state, segment)
        W0, b0 = self._theta()
        W, b, tracked = self._run_segment(design, W0, b0, plan=plan, steps=steps,
                                          segment=segment, rng=rng)
        guarantee = accounting.guarantee_after_edit(
            plan, previous, steps=steps, n_samples=n_new, n_deleted=edits.n_deleted,
            n_replaced=edits.n_replaced, n_inserted=edits.n_inserted,
            seeded=self.random_state is not None)
        for name, value in tracked.items():
            setattr(self, name, value)
        self._set_coefficients(W, b)
        self.n_iter_ = steps
        self.privacy_guarantee_ = guarantee
        return self

    def _check_new_targets(self, edits):
        """Subclass hook: reject new records whose targets the model cannot use."""

    # --- prediction ------------------------------------------------------------
    def _margins(self, X, *, return_norms=False):
        """``a(x) * (X @ coef.T) + intercept``: rows are mapped onto the
        ``data_norm`` ball exactly as in training (a public, per-row map, the
        same ``row_scale`` as ``fit``; at prediction over-norm rows are always
        projected, never refused).

        With ``return_norms`` also the norms ``||[a(x) x, s_b]||`` of the mapped
        rows, which prediction certificates multiply their radius by.
        """
        check_is_fitted(self)
        X = self._validate_rows(X, reset=False, order=None)
        sq = row_norms(X, squared=True).astype(np.float64, copy=False)
        scale = row_scale(sq, self.data_norm, clip_rows=True)
        W, b = self._theta()
        s_b = self._intercept_scaling()
        Z = safe_sparse_dot(X, W.T.astype(X.dtype, copy=False), dense_output=True)
        Z = Z * scale[:, None] + b * s_b
        if not return_norms:
            return Z
        return Z, np.sqrt(scale**2 * sq + s_b**2)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
