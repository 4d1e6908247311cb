# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Output perturbation: fit by one certified solve plus Gaussian noise, delete by refit.

The estimators share everything about rows, targets, weights and predictions
with the noisy-GD estimators (:class:`~skforget._linear._BasePrivateLinear` and
its mixins); only the release differs (privacy-accounting.md, Section 15):
solve the clipped, L2-regularised objective to the public gradient tolerance
``tau`` (:func:`skforget._erm.solve_certified`), then add ``N(0, sigma^2 I)``
with ``sigma`` from :func:`skforget.accounting.output_perturbation_noise`. An
edit is served by doing exactly that again on the edited database, with fresh
noise: the new model's law depends on the edited data alone.
"""

import math
from numbers import Integral, Real

from sklearn.base import _fit_context
from sklearn.utils.validation import check_is_fitted

from skforget import accounting
from skforget._database import database_weights, unwrap_database
from skforget._edits import EditRequest
from skforget._erm import solve_certified
from skforget._linear import _atomic_edit, _BasePrivateLinear
from skforget._release import (
    edit_figure,
    note_entry,
    releasing,
    releasing_atomically,
)
from skforget._rows import plan_weighting, row_weights
from skforget._utils import check_sample_weight
from skforget._validation import (
    PRIVACY_CONSTRAINTS,
    Interval,
    check_delta,
    check_finite_params,
    consumes_selection_context,
    fixed_errstate,
    segment_rng,
    user_stacklevel,
    warn,
)
from skforget.accounting._calibration import output_noise_dominates
from skforget.accounting._output_perturbation import MAX_TOL, certified_solve_bounds
from skforget.distributed import ShardedDatabase
from skforget.exceptions import UnlearningError

_SHARED = ("epsilon", "delta", "max_edit_size", "max_sample_weight", "group_size",
           "relation", "data_norm", "clip_rows", "fit_intercept",
           "intercept_scaling", "random_state", "verbose", "ledger")


def _count_fields(budget, epsilon, statistics="counts"):
    """The guarantee's count fields for a release with noisy class statistics
    (``budget`` from ``_prevalence_budget``) or without (None); ``epsilon``
    is the whole release's target, ``statistics`` what the share buys."""
    if budget is None:
        return {"rho_counts": 0.0, "count_noise": 0.0, "target_epsilon": None}
    return {"rho_counts": budget.rho_counts, "count_noise": budget.noise_scale,
            "target_epsilon": float(epsilon), "class_statistics": statistics}


def _statistics_record(counts):
    """``(rho_counts, kind)`` of one release, from its :func:`_count_fields`:
    what the adaptive figure of a later refit charges it (eq. 18.3). Public."""
    return (float(counts["rho_counts"]), counts.get("class_statistics", "counts"))


class _BaseOutputPerturbation(_BasePrivateLinear):
    """Output perturbation: ``fit`` and ``partial_unlearn`` (a refit)."""

    # Whose default regularisation: no growth with rho (Section 8.5).
    _mechanism = "output_perturbation"

    # max_iter bounds the certified solve's fast path only (Theorem 15.2a).
    _free_params = ("max_iter", "verbose", "n_jobs", "random_state", "ledger")

    _parameter_constraints: dict = {
        **{name: PRIVACY_CONSTRAINTS[name] for name in _SHARED},
        "tol": [Interval(Real, 0, MAX_TOL, closed="right")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    # --- fit -------------------------------------------------------------------
    @consumes_selection_context
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Solve the regularised objective exactly, then add Gaussian noise.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or Database
            Training rows. Rows whose norm exceeds ``data_norm`` are projected
            onto that ball (or rejected with ``clip_rows=False``). A
            :class:`~skforget.Database` (``y`` omitted) also sets
            ``database_version_``.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            A weight per record, as for the noisy-GD estimators (weights above
            ``max_sample_weight`` count as that bound).

        Returns
        -------
        self : object
            Fitted estimator, with ``privacy_guarantee_``.
        """
        if isinstance(X, ShardedDatabase):
            raise TypeError(
                "output perturbation solves in memory: fit it on arrays (or a "
                "skforget.Database), not on a ShardedDatabase; NoisyGDClassifier "
                "and NoisyGDRegressor train on a cluster.")
        # Warnings about the released model wait until it is recorded (20.3).
        with releasing_atomically(self), fixed_errstate():
            self._freeze_params()
            sample_weight = database_weights(X, sample_weight)
            X, y, self.database_version_ = unwrap_database(X, y)
            check_finite_params(self, ["epsilon", "data_norm", "clip_norm",
                                       "intercept_scaling", *self._finite_extra])
            X, y = self._validate_rows(X, y, reset=True, y_numeric=self._y_numeric)
            y_enc, n_outputs, loss, new_attrs = self._encode_targets(y, fit=True)
            public = {"label_set_public": new_attrs.pop("_label_set_public", True),
                      "target_scale_public":
                          new_attrs.pop("_target_scale_public", True)}
            n = X.shape[0]
            delta = accounting.resolve_delta(self.delta, n_samples=n)
            check_delta(delta, n)
            for name, value in new_attrs.items():  # classes_ for class_weight
                setattr(self, name, value)
            if sample_weight is not None:
                sample_weight = check_sample_weight(sample_weight, n)
            plan, budget = self._plan_release(
                loss, n, X.shape[1], n_outputs, delta,
                self._weighting(sample_weight is not None, n_outputs))
            counts = _count_fields(budget, self.epsilon, self._class_statistics())
            self._warn_noise_dominated(plan, n, n_outputs)
            self._warn_about_callers(plan.rho_target + counts["rho_counts"],
                                     plan.delta)
            weights = row_weights(sample_weight, y_enc, **plan_weighting(plan))
            # A pure function of the plan: reserved on the ledger before the
            # solve (privacy-accounting.md, Section 20.3).
            guarantee = accounting.guarantee_after_output_perturbation(
                plan, seeded=self.random_state is not None, **public, **counts)
            with self._ledger_spending("fit", guarantee.rho, 0) as spent:
                design = self._design(X, y_enc, loss, where="X")
                W, b = self._release(design, weights, plan, segment=0)
            note_entry(self, spent, fit=True)
            self._plan = plan  # before the coefficients: it fixes "auto" scalings
            # The plan of every release, for the adaptive figure of later refits,
            # and the hyper-parameters they must reuse (Theorem 15.4): public.
            self._release_plans = (plan,)
            self._release_statistics = (_statistics_record(counts),)
            self._release_class_counts(design, budget, W, segment=0)
            self._set_coefficients(W, b)
            self.privacy_guarantee_ = guarantee
            self._warn_if_constant()
        return self

    def _warn_noise_dominated(self, plan, n, n_outputs):
        """Say, from public numbers before the solve, when the release's noise
        alone moves a score as far as the data can (Section 15.6): a Ridge-like
        alpha gave R^2 of -200 without a word."""
        if output_noise_dominates(loss=plan.loss, n_classes=max(2, n_outputs),
                                  target_bound=1.0, sigma=plan.sigma,
                                  row_norm=plan.row_norm):
            warn(
                f"At epsilon={self.epsilon!r} on {n} rows the privacy noise alone "
                f"moves a score by about {plan.sigma * plan.row_norm:.3g} on a row "
                "of the data_norm ball, as far as the data can move it from 0: the "
                "model will be mostly noise. Raise epsilon, use more rows, or "
                f"regularise more ({self._regularization_name}='auto' chooses "
                "for the budget).", UserWarning, stacklevel=user_stacklevel())

    def _release_class_counts(self, design, budget, W, *, segment):
        """Drop the previous release's class statistics and, when this release
        spends a share on them, draw fresh ones from the release's own rows,
        the squared scores along the released coefficients ``W`` (Sections
        18.10-18.12)."""
        self._redraw_counts(lambda: design.class_counts(2),
                            0.0 if budget is None else budget.noise_scale,
                            segment=segment,
                            exact_moments=lambda u: design.class_moments(2, u),
                            coef=W, statistics=self._class_statistics())

    def _fit_samples(self):
        """The fit's number of rows, at which a refit resolves ``"auto"``
        (rules >= 5, where the regressor's default is not ``1 / N`` times a
        constant): ``N lambda`` then stays the fit's (Lemma 15.5). Public."""
        plans = getattr(self, "_release_plans", None)
        if self._rules() < 5 or not plans:
            return None
        return plans[0].normaliser

    def _plan_release(self, loss, n, d, n_outputs, delta, weighting, fit_samples=None):
        """The public plan of one release on ``n`` rows (fit or refit), with
        the public ``weighting`` (:meth:`_weighting`), and the split of the
        target with noisy class counts (None when the release has none,
        Section 18.10)."""
        budget = self._prevalence_budget(n_outputs, loss, delta, n)
        epsilon = float(self.epsilon) if budget is None else budget.epsilon_training
        n_params = n_outputs * (d + int(self.fit_intercept))
        if fit_samples is not None and self._auto_regularization():
            # "auto" resolved at the fit's size: N lambda stays the fit's.
            lam = self._regularization_for(loss, fit_samples, n_params, n_outputs,
                                           delta) * (fit_samples / n)
        else:
            lam = self._regularization_for(loss, n, n_params, n_outputs, delta)
        if not self._auto_regularization():
            # C / alpha keep their meaning with weights (4.4)
            lam /= weighting["weight_bound"]
        self._check_regularization_representable(lam, n, loss)
        plan = accounting.plan_output_perturbation(
            loss=loss, n_samples=n, n_params=n_params, lam=lam,
            row_norm=self._row_norm_bound(loss), clip_norm=self._clip_norm(loss),
            epsilon=epsilon, delta=delta, tol=float(self.tol),
            relation=self.relation, group_size=self.group_size,
            n_classes=max(2, n_outputs), max_edit_size=self.max_edit_size)
        self._check_plan_representable(plan)
        # Section 15.3's public precondition, from public numbers only and
        # before the solve: whether the release can be certified must never
        # depend on the rows.
        _, e_pub, steps = certified_solve_bounds(
            n_samples=n, n_params=n_params, gradient_bound=plan.gradient_bound,
            row_norm=plan.row_norm, lam=plan.lam, beta=plan.beta,
            tolerance=plan.tolerance)
        if steps is None:
            raise ValueError(
                f"tol={self.tol!r} is too small for a certified solve on {n} rows "
                f"and {n_params} parameters: the public float64 rounding bound "
                f"{e_pub:.3g} exceeds half the gradient tolerance tol * S / N = "
                f"{plan.tolerance:.3g}. Raise tol (the noise grows by the factor "
                f"1 + 2 * tol) or regularise more ({self._regularization_name}) "
                "(privacy-accounting.md, Section 15.3).")
        return accounting.OutputPerturbationPlan(**{
            **{f: getattr(plan, f) for f in plan.__slots__}, **weighting}), budget

    def _check_plan_representable(self, plan):
        """Refuse, before the solve, a plan whose sensitivity or noise float64
        cannot carry (``alpha=1e300`` divided by a noise of 0 after the solve,
        ``clip_norm=1e300`` reached a NaN figure: a trial), naming the
        parameters that set them."""
        # Their squares enter the figure (rho = Delta^2 / (2 sigma^2)).
        values = (plan.l2_sensitivity, plan.sigma)
        if all(math.isfinite(v * v) and v * v > 0.0 for v in values):
            return
        name = self._regularization_name
        raise ValueError(
            f"{name}={getattr(self, name)!r} with clip_norm={self.clip_norm!r} and "
            f"data_norm={self.data_norm!r} gives a sensitivity of "
            f"{plan.l2_sensitivity:.3g} and a noise scale of {plan.sigma:.3g}, "
            "which float64 cannot carry. Rescale the rows and targets with public "
            f"constants (data_norm and clip_norm near 1) and set {name} nearer 1.")

    def _check_regularization_representable(self, lam, n, loss):
        """Refuse a ``lambda`` that is not a positive float64 with the
        parameters that set it, from public numbers before the solve: the
        planner's own check named its internal ``lam`` (trial 26, F4: a
        regressor with ``clip_norm=1e160`` or ``data_norm=1e-160``)."""
        if math.isfinite(lam) and lam > 0.0:
            return
        name = self._regularization_name
        value = getattr(self, name)
        if self._auto_regularization():
            clip = self._clip_norm(loss)
            what = (f"{name}={value!r} with data_norm={self.data_norm!r}"
                    + ("" if clip is None else f" and clip_norm={self.clip_norm!r}"))
            fix = ("Rescale the rows and targets with public constants "
                   "(data_norm and clip_norm near 1), or set "
                   f"{name} to a number.")
        else:
            what = f"{name}={value!r}"
            fix = f"Set {name} to a number nearer 1."
        raise ValueError(
            f"{what} on {n} rows gives lambda={lam!r} per sample, "
            f"{'which underflows to 0 in' if lam == 0.0 else 'which is not finite in'} "
            "float64: "
            f"no noise can be calibrated to it. {fix}")

    def _release(self, design, weights, plan, *, segment):
        """Certified solve on the rows of ``design``, plus fresh Gaussian noise."""
        n_outputs = self._n_outputs(plan, design.X.shape[1])
        if self.verbose:
            # Public numbers only: the iteration count and the gradient norm
            # reached depend on the rows and are never shown.
            print(f"[skforget] output perturbation: solve on {plan.normaliser} rows "
                  f"to ||grad|| <= {plan.tolerance:.3g}, then noise sigma="
                  f"{plan.sigma:.4g} (lambda={plan.lam:.4g}, minimiser sensitivity "
                  f"Delta={plan.l2_sensitivity:.4g} for a per-record bound S="
                  f"{plan.sensitivity:.4g})")
        # Never fails once the plan passed its public precondition
        # (Theorem 15.2a): max_iter bounds only the fast path's work.
        W, b = solve_certified(
            design, lam=plan.lam, n_outputs=n_outputs, normaliser=plan.normaliser,
            tolerance=plan.tolerance, gradient_bound=plan.gradient_bound,
            beta=plan.beta, row_norm=plan.row_norm, weight=weights,
            fit_intercept=self.fit_intercept, max_iter=self.max_iter)
        rng = segment_rng(self.random_state, segment)
        noise = rng.standard_normal((n_outputs, W.shape[1] + int(self.fit_intercept)))
        noise *= plan.sigma
        W = W + noise[:, :W.shape[1]]
        if self.fit_intercept:
            b = b + noise[:, -1]
        return W, b

    # --- partial_unlearn ---------------------------------------------------------
    def partial_unlearn(self, edits):
        """Serve an edit request by refitting on the edited data with fresh noise.

        Applies the request, solves the objective on the edited database to the
        certified tolerance and adds fresh Gaussian noise, exactly as ``fit``
        would on that database (the normaliser and ``lambda`` follow its size).
        The refit uses the plan frozen at ``fit`` (target, ``delta``, ``tol``,
        relation, group size, regularisation rule, ``clip_norm``,
        ``data_norm``): hyper-parameters changed by ``set_params`` since are
        set aside here with a warning, except ``max_iter``, ``verbose`` and
        ``random_state`` (privacy-accounting.md, 16.1). The new model's law
        depends on the edited data and those public constants alone, so the
        removed records have no influence on it: the certificate says
        ``retrained=True`` and ``rho_deletion=0``; the adaptive figure sums a
        term per release seen before the edit (privacy-accounting.md, Theorem
        15.4, eq. 15.3). Like ``fit``, it never fails because of the data
        (Theorem 15.2a); its running time does depend on the data.

        If anything fails (an invalid request, a database that is not the
        model's current one, an interruption), the estimator is left exactly as
        it was.

        Parameters
        ----------
        edits : EditRequest
            Rows of the current database to delete or replace, and records to
            insert.

        Returns
        -------
        self : object
        """
        check_is_fitted(self)
        if not isinstance(edits, EditRequest):
            raise TypeError("edits must be a skforget.EditRequest, got "
                            f"{type(edits).__name__}.")
        with releasing(), self._fit_hyperparameters(), _atomic_edit(self, edits), \
                fixed_errstate():
            plan = self._plan
            previous = self.privacy_guarantee_
            X_new, y_enc, loss, weights = self._edited_database(edits)
            n_new = X_new.shape[0]
            if n_new == 0:
                raise UnlearningError("The edit leaves no rows: there is nothing to "
                                      "refit on.")
            n_outputs = self._n_outputs(plan, X_new.shape[1])
            new_plan, budget = self._plan_release(
                loss, n_new, X_new.shape[1], n_outputs, plan.delta,
                plan_weighting(plan), fit_samples=self._fit_samples())
            earlier = getattr(self, "_release_plans", None)
            earlier_stats = getattr(self, "_release_statistics", None)
            if earlier_stats is None:  # pickled before they were kept
                bound = self._prevalence_budget(n_outputs, loss, plan.delta, None)
                history = {"statistics_bound": 0.0 if bound is None
                           else bound.rho_counts}
            else:
                history = {"earlier_statistics": earlier_stats}
            counts = _count_fields(budget, self.epsilon, self._class_statistics())
            guarantee = accounting.guarantee_after_output_perturbation(
                new_plan, seeded=self.random_state is not None, previous=previous,
                earlier=earlier, n_deleted=edits.n_deleted,
                n_replaced=edits.n_replaced, n_inserted=edits.n_inserted,
                **counts, **history)
            # Said before the solve, from public numbers (Section 20.3).
            self._warn_after_edit(guarantee)
            # A fresh release (Section 20.1), reserved before the solve.
            # A refit's figure is its whole one; a search's refit records the
            # search's, fixed before it (Section 20.1).
            with self._ledger_spending("partial_unlearn", edit_figure(
                    self, guarantee.rho, guarantee.rho, False),
                    len(previous.edits) + 1) as spent:
                design = self._design(X_new, y_enc, loss,
                                      where="the edited database")
                W, b = self._release(design, weights, new_plan,
                                     segment=len(previous.edits) + 1)
            note_entry(self, spent)
            self._plan = new_plan
            if earlier is not None:
                self._release_plans = earlier + (new_plan,)
            if earlier_stats is not None:
                self._release_statistics = earlier_stats + (
                    _statistics_record(counts),)
            self._release_class_counts(design, budget, W,
                                       segment=len(previous.edits) + 1)
            self._set_coefficients(W, b)
            self.privacy_guarantee_ = guarantee
            self.database_version_ = edits.version_after
            self._warn_if_constant()
            return self
