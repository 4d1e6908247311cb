# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared machinery of the noisy-GD estimators: fit, partial_unlearn, margins."""

import contextlib
import dataclasses
import time

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.validation import check_is_fitted

from skforget import accounting
from skforget._database import database_weights, unwrap_database
from skforget._edits import EditRequest
from skforget._fit_plan import FitPlan, UnlearnPlan
from skforget._linear import (
    _atomic_edit,
    _BasePrivateLinear,
    check_edit_weighting,
)
from skforget._release import (
    edit_figure,
    holds_previous,
    mark_committed,
    note_entry,
    releasing,
    releasing_atomically,
)
from skforget._rows import plan_weighting, row_weights
from skforget._solver import effective_n_jobs, initial_draw, run_segment
from skforget._utils import check_sample_weight, no_interrupts
from skforget._validation import (
    LAZY_CONSTRAINTS,
    PRIVACY_CONSTRAINTS,
    check_delta,
    check_finite_params,
    consumes_selection_context,
    fixed_errstate,
    resolve_deletion_epsilon,
    segment_rng,
    user_stacklevel,
    warn,
)
from skforget.distributed import (
    ShardedDatabase,
    ShardedEditRequest,
    is_dask_collection,
)
from skforget.exceptions import UnlearningError

# Above this many projected seconds, fit and partial_unlearn warn (once they
# have timed the first block of steps) that the run will be long.
_LONG_SECONDS = 60.0


class _BaseNoisyGD(_BasePrivateLinear):
    """Noisy gradient descent: fit, partial_unlearn and their shared segment."""

    _parameter_constraints: dict = {**PRIVACY_CONSTRAINTS, **LAZY_CONSTRAINTS}

    def __setstate__(self, state):
        # Models pickled before max_lazy_records existed read "auto" (their
        # plan keeps the deletion target they were fitted with).
        if "max_lazy_records" not in state:
            state = {**state, "max_lazy_records": "auto"}
        super().__setstate__(state)

    def _start_tracking(self, design, plan, *, segment):
        """Optional per-step bookkeeping for one segment (fit is segment 0).

        Returns None, or an object with ``step(t, W, b, G, Gb)`` (passed to the
        solver as its callback) and ``finish()`` returning a dict of attributes to
        set once the segment has succeeded. Used by prediction certificates.
        """
        return None

    def _run_segment(self, design, W0, b0, *, plan, steps, segment, rng,
                     label="fit", n_batches=None, weight=None):
        """Run one segment of the history (``fit``, an edit, or a retraining)
        from ``(W0, b0)``: ``steps`` steps, a whole number of passes.

        Returns the new parameter and the attributes the certificate tracker
        recorded along the way (empty unless ``_start_tracking`` returned one).
        """
        tracker = self._start_tracking(design, plan, segment=segment)
        E = plan.n_batches if n_batches is None else n_batches
        schedule = plan.segment(E, steps)  # the accountant's batch normaliser
        W, b = run_segment(design, W0, b0, segment=schedule, lam=plan.lam,
                           sigma=plan.sigma, normaliser=plan.normaliser, rng=rng,
                           weight=weight,
                           fit_intercept=self.fit_intercept, verbose=self.verbose,
                           callback=None if tracker is None else tracker.step,
                           label=label, on_projection=self._warn_if_long,
                           n_jobs=self.n_jobs)
        return W, b, ({} if tracker is None else tracker.finish())

    @staticmethod
    def _warn_if_long(label, projected_seconds, passes):
        """Called by the solver once it has timed its first block of steps."""
        if projected_seconds > _LONG_SECONDS:
            warn(
                f"This {label} will take about {projected_seconds:.0f} s on this "
                f"machine ({passes} passes over the data). plan(X, y) shows the plan "
                "before fitting; stronger regularisation (a smaller C, a larger "
                "alpha), a larger batch count or max_iter shortens it.",
                UserWarning, stacklevel=user_stacklevel())

    # --- fit -------------------------------------------------------------------
    @consumes_selection_context
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Train by noisy (mini-batch) gradient descent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or Database
            Training rows. Rows whose norm exceeds ``data_norm`` are projected
            onto that ball (or rejected with ``clip_rows=False``). C-contiguous
            float64 or float32 rows (a :class:`numpy.memmap` included, for data
            larger than memory) and canonical CSR are read in place, never
            copied. A
            :class:`~skforget.Database` (``y`` omitted) also sets
            ``database_version_``: ``partial_unlearn`` then refuses requests
            built on any other database or version. A
            :class:`~skforget.distributed.ShardedDatabase` (``y`` omitted) or
            dask arrays are trained on where they live, on a Dask cluster
            (:ref:`scaling`; classifiers then need the public ``classes``).
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            A weight per record (finite, nonnegative; part of the record, not
            derived from the data), as in scikit-learn: the objective becomes
            ``C * sum_i w_i loss_i + ||w||^2 / 2``. Weights above
            ``max_sample_weight`` count as that bound (privacy-accounting.md,
            Section 4.4). A :class:`~skforget.Database` or
            :class:`~skforget.distributed.ShardedDatabase` carries its own.

        Returns
        -------
        self : object
            Fitted estimator, with ``privacy_guarantee_`` stating what the
            released coefficients satisfy.
        """
        # Warnings about the released model wait until it is recorded (20.3).
        with releasing_atomically(self), fixed_errstate():
            self._freeze_params()
            if isinstance(X, ShardedDatabase) or is_dask_collection(X):
                self._fit_sharded(X, y, sample_weight)
            else:
                sample_weight = database_weights(X, sample_weight)
                X, y, self.database_version_ = unwrap_database(X, y)
                self._fit(X, y, sample_weight)
        return self

    def _make_plan(self, X, y, sample_weight=None):
        """Validate the inputs and plan the fit from public numbers only.

        Returns ``(X, y_enc, loss, new_attrs, plan, public, weights)``, with
        ``public`` the guarantee's flags of what was read from the data.
        """
        check_finite_params(self, ["epsilon", "deletion_epsilon", "data_norm",
                                   "clip_norm", "intercept_scaling", "learning_rate",
                                   *self._finite_extra])
        X, y = self._validate_rows(X, y, reset=True, y_numeric=self._y_numeric)
        y_enc, n_outputs, loss, new_attrs = self._encode_targets(y, fit=True)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X.shape[0])
        plan, public = self._plan_public(X.shape, n_outputs, loss, new_attrs,
                                         weighted=sample_weight is not None)
        weights = row_weights(sample_weight, y_enc, **plan_weighting(plan))
        return X, y_enc, loss, new_attrs, plan, public, weights

    def _plan_public(self, shape, n_outputs, loss, new_attrs, *, weighted):
        """The plan from public numbers only: the data's shape, the outputs and
        loss, and whether the records carry weights (a sharded database
        weights its rows where they live, with the plan's public weighting).

        Returns ``(plan, public)``, ``public`` the guarantee's flags of what was
        read from the data.
        """
        # Go into the guarantee, not onto the estimator.
        public = {"label_set_public": new_attrs.pop("_label_set_public", True),
                  "target_scale_public": new_attrs.pop("_target_scale_public", True)}
        n, d = shape
        delta = accounting.resolve_delta(self.delta, n_samples=n)
        check_delta(delta, n)
        n_params = n_outputs * (d + int(self.fit_intercept))
        for name, value in new_attrs.items():  # classes_ for class_weight
            setattr(self, name, value)
        weighting = self._weighting(weighted, n_outputs)
        epsilon = float(self.epsilon)
        deletion_epsilon = float(resolve_deletion_epsilon(self.epsilon,
                                                          self.deletion_epsilon))
        budget = self._prevalence_budget(n_outputs, loss, delta, n)
        if budget is not None:
            # Noisy GD gets what the class counts leave of the target (18.2);
            # fresh counts add nothing to a deletion certificate (18.4 (ii)),
            # kept ones are charged to it against the whole target (12.12).
            if deletion_epsilon > float(self.epsilon):
                raise ValueError(
                    f"deletion_epsilon={deletion_epsilon!r} must be <= epsilon="
                    f"{self.epsilon!r}: every record is already epsilon-DP, so a "
                    "weaker deletion target would certify nothing (CS23 Theorem "
                    "5.1 assumes eps_dd <= eps_dp).")
            epsilon = budget.epsilon_training
            public.update(target_deletion_epsilon=deletion_epsilon)
            deletion_epsilon = min(deletion_epsilon, epsilon)
            public.update(rho_counts=budget.rho_counts,
                          count_noise=budget.noise_scale,
                          target_epsilon=float(self.epsilon),
                          class_statistics=self._class_statistics())
        lam = self._regularization_for(loss, n, n_params, n_outputs, delta)
        if not self._auto_regularization():
            # C / alpha keep their meaning with weights (4.4)
            lam /= weighting["weight_bound"]
        elif weighting["class_weights"]:
            # Class weights normalised to mean 1 over the classes at the
            # unweighted default (Section 18.5, rule b2): dividing them by
            # their largest alone would leave the common classes' records
            # counting a fraction each against an unchanged penalty.
            cw = weighting["class_weights"]
            lam *= (sum(cw) / len(cw)) / max(cw)
        self._check_conditioning(loss, n, lam)
        batches = self._n_batches(n)
        plan = accounting.plan_training(
            loss=loss, n_samples=n, n_params=n_params, lam=lam,
            row_norm=self._row_norm_bound(loss), clip_norm=self._clip_norm(loss),
            epsilon=epsilon, delta=delta, deletion_epsilon=deletion_epsilon,
            max_edit_size=self.max_edit_size, relation=self.relation,
            group_size=self.group_size, learning_rate=self.learning_rate,
            recipe=self.recipe, fit_steps=self.max_iter,
            n_classes=max(2, n_outputs), n_batches=batches,
            fit_recipe="worst_case" if self.recipe == "cs23" else "typical",
            n_features=d, data_norm=self.data_norm,
            target_bound=self._target_bound(),
        )
        return dataclasses.replace(plan, **weighting), public

    def plan(self, X, y=None, sample_weight=None):
        """The plan ``fit(X, y, sample_weight)`` would run, and its expected time.

        Validates the inputs and plans the fit exactly as :meth:`fit` does (from
        public numbers only), then times one pass of the step loop over the rows
        where they live: on this machine, or on the Dask cluster holding a
        :class:`~skforget.distributed.ShardedDatabase`. Nothing is trained and
        the estimator is not changed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), \
                Database or ShardedDatabase
            Training rows, as for :meth:`fit` (dask arrays included).
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            As for :meth:`fit` (a database carries its own): weights divide the
            regularisation by their public bound, so they change the plan.

        Returns
        -------
        plan : FitPlan
            Batches, passes, steps, noise, edit mode and the expected seconds.

        Examples
        --------
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> d = load_dataset("breast_cancer")
        >>> p = NoisyGDClassifier(classes=[0, 1]).plan(d.data, d.target)
        >>> p.passes == p.steps // p.n_batches and p.expected_seconds > 0
        True
        """
        # Validation sets n_features_in_ and friends: plan on a shallow copy,
        # so the estimator itself (and a predict or an edit running beside this
        # call in another thread) never sees a planning state.
        est = object.__new__(type(self))
        est.__dict__.update(self.__dict__)
        with fixed_errstate():
            est._freeze_params()
            if isinstance(X, ShardedDatabase) or is_dask_collection(X):
                # The plan from the shape; the pass timed on the cluster.
                with est._cluster_rows(X, y, sample_weight) as (source, plan, *_):
                    per_pass = est._time_one_pass(source, plan, X.shape[1])
            else:
                sample_weight = database_weights(X, sample_weight)
                X, y, _ = unwrap_database(X, y)
                X, y_enc, loss, _, plan, _, weights = est._make_plan(
                    X, y, sample_weight)
                per_pass = est._time_one_pass(
                    est._design(X, y_enc, loss, where="X"), plan, X.shape[1],
                    weights)
            n_samples, n_features = X.shape
        return FitPlan(
            n_samples=n_samples, n_features=n_features, n_batches=plan.n_batches,
            batch_size=plan.batch_size, passes=plan.fit_epochs,
            steps=plan.fit_steps, learning_rate=plan.learning_rate,
            regularization=plan.lam, noise_scale=plan.sigma,
            noise_factor=plan.noise_factor, edit_mode=plan.edit_mode,
            # the whole release's target (the plan's is what counts leave)
            epsilon=float(est.epsilon), delta=plan.delta, seconds_per_pass=per_pass,
            expected_seconds=per_pass * plan.fit_epochs)

    def _time_one_pass(self, source, plan, n_features, weights=None):
        """Seconds of one pass of the step loop over a row source (in memory or
        on a cluster), from zero coefficients with a fixed generator: nothing
        of it is kept or released."""
        n_outputs = self._n_outputs(plan, n_features)
        one_pass = plan.segment(plan.n_batches, plan.n_batches)
        start = time.perf_counter()
        run_segment(source, np.zeros((n_outputs, n_features)), np.zeros(n_outputs),
                    segment=one_pass, lam=plan.lam, sigma=plan.sigma,
                    normaliser=plan.normaliser, rng=np.random.default_rng(0),
                    fit_intercept=self.fit_intercept, n_jobs=self.n_jobs,
                    weight=weights)
        return time.perf_counter() - start

    def _n_batches(self, n_samples):
        """Batches per pass from ``batch_size``: "auto" (public rule), None
        (full batch), or rows per batch.

        "auto" is full batch when data-dependent certificate tracking is on
        (``certify_k_max > 0``), which follows full-batch gradients step by step.
        """
        if self.batch_size is None or self.recipe == "cs23":
            return 1
        if self.batch_size == "auto":
            return 1 if getattr(self, "certify_k_max", 0) else "auto"
        return max(1, min(n_samples, round(n_samples / self.batch_size)))

    def _target_bound(self):
        """Public bound on regression targets (1 for classifiers)."""
        return 1.0

    def _fit(self, X, y, sample_weight=None):
        X, y_enc, loss, new_attrs, plan, public, weights = \
            self._make_plan(X, y, sample_weight)
        self._warn_noise_dominated(plan, X.shape[0])
        design = self._design(X, y_enc, loss, where="X")
        return self._fit_rows(design, plan, new_attrs, public, weights)

    def _warn_noise_dominated(self, plan, n):
        if plan.noise_dominated and self.max_iter is None:
            warn(
                f"At epsilon={self.epsilon!r} on {n} rows the privacy noise alone "
                "exceeds the accounting's utility target, so the model will be "
                f"mostly noise; fit runs {plan.fit_epochs} passes (one relaxation "
                "time) rather than none" + (
                    " (max_iter caps them; the model is noise either way)"
                    if plan.fit_epochs > 1000 else "") + ". Raise epsilon, use more "
                f"rows, or regularise more ({self._regularization_name}='auto' "
                "chooses for the budget).", UserWarning, stacklevel=user_stacklevel())

    def _fit_sharded(self, X, y, sample_weight):
        """``fit`` on a :class:`~skforget.distributed.ShardedDatabase` (or dask
        arrays, sharded for the duration of the fit): the rows stay on the
        workers; only public numbers reach the plan."""
        with self._cluster_rows(X, y, sample_weight) as (source, plan, public,
                                                         new_attrs, version):
            self._warn_noise_dominated(plan, source.n_samples)
            self._fit_rows(source, plan, new_attrs, public, None)
            self.database_version_ = version
        return self

    @contextlib.contextmanager
    def _cluster_rows(self, X, y, sample_weight):
        """The checks, public plan and row source of a fit on a cluster:
        yields ``(source, plan, public, new_attrs, version)``, where version is
        None for dask arrays (a database made for this call and closed after
        it), and releases the source's maps on the workers afterwards."""
        if self.certify_k_max:
            raise ValueError(
                "certify_k_max > 0 tracks the data-dependent certificate radius over "
                "every row, which needs the rows in memory: fit on in-memory arrays, "
                "or set certify_k_max=0 (certify() with the public radius works "
                "with any input).")
        check_finite_params(self, ["epsilon", "deletion_epsilon", "data_norm",
                                   "clip_norm", "intercept_scaling", "learning_rate",
                                   *self._finite_extra])
        temporary = not isinstance(X, ShardedDatabase)
        if temporary:
            if y is None:
                raise ValueError("y is required with dask arrays.")
            db = ShardedDatabase(X, y, sample_weight=sample_weight)
        else:
            if y is not None:
                raise ValueError("y is given twice: a ShardedDatabase holds its "
                                 "targets, so fit with fit(database).")
            if sample_weight is not None:
                raise ValueError(
                    "sample_weight is given to fit, but a ShardedDatabase holds its "
                    "records' weights (they move with the records on edits): pass "
                    "ShardedDatabase(X, y, sample_weight=...).")
            db = X
        try:
            n_outputs, loss, new_attrs, classes = self._public_targets()
            self.n_features_in_ = db.n_features
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            plan, public = self._plan_public(db.shape, n_outputs, loss, new_attrs,
                                             weighted=db.weighted)
            spec = self._row_map_spec(loss, classes, "fit", plan,
                                      new_attrs.get("_target_scale", 1.0),
                                      new_attrs.get("_target_offset", 0.0))
            with db._reading():
                # Never exclusive: another fit may map its rows between this
                # read's claim and its own prepare, and clearing every map
                # then dropped that fit's (a race seen in CI). Maps left by
                # interrupted reads go with the next edit, which clears
                # every map before it changes a row.
                source = db._row_source(spec, loss=loss, exclusive=False,
                                        n_jobs=effective_n_jobs(self.n_jobs))
                try:
                    yield (source, plan, public, new_attrs,
                           None if temporary else db.version)
                finally:
                    source.release()
        finally:
            if temporary:
                db.close()

    def _row_map_spec(self, loss, classes, error, plan, target_scale=None,
                      target_offset=None):
        """The public parameters a worker needs to map, encode and weight its
        rows (``target_scale`` and ``target_offset``: the fit's, by default the
        fitted model's)."""
        return {"loss": loss, "classes": classes, "error": error,
                "weighting": plan_weighting(plan),
                "target_scale": (self._output_scale() if target_scale is None
                                 else float(target_scale)),
                "target_offset": (self._target_centre() if target_offset is None
                                  else float(target_offset)),
                "data_norm": float(self.data_norm),
                "intercept_scaling": self._intercept_scaling(loss),
                "gradient_bound": self._output_gradient_bound(loss),
                "clip_rows": bool(self.clip_rows)}

    def _fit_rows(self, design, plan, new_attrs, public, weights):
        """Train from a row source (in memory or on a cluster) and set the
        fitted attributes; the planned figure is reserved on the ledger (if
        any) before the first step and recorded once the fit succeeds."""
        self._warn_about_callers(plan.rho_target + public.get("rho_counts", 0.0),
                                 plan.delta)
        planned = accounting.guarantee_after_fit(
            plan, steps=plan.fit_steps, seeded=self.random_state is not None,
            **public)
        with self._ledger_spending("fit", planned.rho, 0) as spent:
            self._train_rows(design, plan, new_attrs, public, weights)
            spent["rho"] = self.privacy_guarantee_.rho
        note_entry(self, spent, fit=True)
        return self

    def _train_rows(self, design, plan, new_attrs, public, weights):
        d = self.n_features_in_
        n_outputs = self._n_outputs(plan, d)
        rng = segment_rng(self.random_state, 0)
        W0, b0 = initial_draw(rng, (n_outputs, d), fit_intercept=self.fit_intercept,
                              init_variance=plan.init_variance)
        if self.verbose:
            print(f"[skforget] fit: {plan.fit_epochs} passes of {plan.n_batches} "
                  f"batch(es) of about {plan.batch_size:.0f} rows "
                  f"({plan.fit_steps} noisy steps), sigma={plan.sigma:.4g}, "
                  f"learning_rate={plan.learning_rate:.4g}, lambda={plan.lam:.4g}")
        W, b, tracked = self._run_segment(design, W0, b0, plan=plan,
                                          steps=plan.fit_steps, segment=0, rng=rng,
                                          weight=weights)
        guarantee = accounting.guarantee_after_fit(
            plan, steps=plan.fit_steps, seeded=self.random_state is not None,
            **public)
        new_attrs = {**new_attrs, **tracked}
        for name, value in new_attrs.items():
            setattr(self, name, value)
        self._plan = plan  # before the coefficients: it fixes "auto" scalings
        self._redraw_counts(lambda: design.class_counts(len(self.classes_)),
                            guarantee.count_noise, segment=0,
                            exact_moments=lambda u: design.class_moments(
                                len(self.classes_), u),
                            coef=W, statistics=guarantee.class_statistics)
        self._set_coefficients(W, b)
        self.n_iter_ = np.array([plan.fit_epochs], dtype=np.int32)
        self.privacy_guarantee_ = guarantee
        self._warn_if_constant()
        return self

    # --- partial_unlearn -------------------------------------------------------
    def partial_unlearn(self, edits, *, deletion_epsilon=None):
        """Serve an edit request with certified, stateless unlearning.

        Runs ``K_R`` noisy gradient steps on the edited database, starting from
        the current coefficients (Chourasia and Shah 2023, Def. 5.1), or, when
        the accountant finds it no dearer, retrains from a fresh start on the
        edited database (the removed records then have no influence at all),
        or, for a deletion the current model already certifies at the target
        (privacy-accounting.md, Theorem 12.9), runs nothing and reads no row
        until ``max_lazy_records`` records await a pass; then swaps in the new
        coefficients and a new ``privacy_guarantee_``
        whose last :class:`~skforget.accounting.EditCertificate` certifies the
        removed records. The estimator keeps no training row and no other
        data-dependent state, so nothing about a deleted record can leak through
        later releases beyond the certified bound.

        If anything fails (an invalid request, a database that is not the
        model's current one, an interruption), the estimator is left exactly as
        it was.

        Parameters
        ----------
        edits : EditRequest or ShardedEditRequest
            Rows of the current database to delete or replace, and records to
            insert. After the call, ``edits.apply()`` returns the edited
            database (an :class:`~skforget.EditRequest`), which the caller
            keeps for the next request. A
            :class:`~skforget.distributed.ShardedEditRequest` (from
            ``ShardedDatabase.edit``) has no ``apply()``: it is applied to the
            shards on the workers, and only if the call succeeds.
        deletion_epsilon : float, default=None
            This request's deletion target, at the model's ``delta``: at most
            the model's ``deletion_epsilon`` (a request may only ask for a
            stronger target; a weaker one is refused); None: the model's. A smaller
            target costs passes; :meth:`plan_unlearn` says how many.

        Returns
        -------
        self : object
        """
        check_is_fitted(self)
        if not isinstance(edits, EditRequest | ShardedEditRequest):
            raise TypeError("edits must be a skforget.EditRequest (or a "
                            "ShardedEditRequest), got "
                            f"{type(edits).__name__}.")
        with releasing(), self._fit_hyperparameters(), fixed_errstate():
            if isinstance(edits, ShardedEditRequest):
                return self._partial_unlearn_sharded(edits, deletion_epsilon)
            # A request built with in_place=True edits the caller's arrays when
            # it is applied; if this call applies it and then fails or is
            # interrupted, the rows go back with the model (_atomic_edit).
            with _atomic_edit(self, edits):
                return self._partial_unlearn(edits, deletion_epsilon)

    def _partial_unlearn(self, edits, deletion_epsilon=None):
        # Planned before any row is read: an edit served without a pass never
        # applies the request (issue 25: no copy of the database per request).
        self._check_edit_request(edits)
        return self._unlearn_rows(
            edits, self._plan, self.privacy_guarantee_,
            lambda: self._edited_database(edits, checked=True), deletion_epsilon)

    def plan_unlearn(self, edits, *, deletion_epsilon=None):
        """How :meth:`partial_unlearn` would serve ``edits``, before any data pass.

        Checks the request against the model as ``partial_unlearn`` does and
        plans it from public numbers only (no row is read, the estimator is
        not changed).

        Parameters
        ----------
        edits : EditRequest or ShardedEditRequest
        deletion_epsilon : float, default=None
            As for :meth:`partial_unlearn`.

        Returns
        -------
        plan : UnlearnPlan
            Passes and steps, whether it retrains or needs no pass, and the
            certificate it will give.

        Examples
        --------
        >>> from skforget import EditRequest, NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> d = load_dataset("breast_cancer")
        >>> clf = NoisyGDClassifier(classes=[0, 1], random_state=0)
        >>> clf = clf.fit(d.data, d.target)
        >>> p = clf.plan_unlearn(EditRequest(d.data, d.target, delete=[3]))
        >>> p.how in ("without_pass", "continue", "retrain")
        True
        """
        check_is_fitted(self)
        if not isinstance(edits, EditRequest | ShardedEditRequest):
            raise TypeError("edits must be a skforget.EditRequest (or a "
                            f"ShardedEditRequest), got {type(edits).__name__}.")
        with self._fit_hyperparameters(), fixed_errstate():
            self._check_edit_request(edits)
            plan, previous = self._plan, self.privacy_guarantee_
            edit = self._plan_edit(
                edits, plan, previous, deletion_epsilon,
                lazy=not isinstance(edits, ShardedEditRequest))
            guarantee = self._edit_guarantee(edits, plan, previous, edit)
        cert = guarantee.deletion
        how = ("without_pass" if cert.without_pass else
               "retrain" if edit.retrained else "continue")
        return UnlearnPlan(
            how=how, passes=edit.steps // edit.n_batches, steps=edit.steps,
            fit_passes=plan.fit_epochs, n_batches=edit.n_batches,
            deletion_epsilon=float(plan.deletion_epsilon if deletion_epsilon is None
                                   else deletion_epsilon),
            pending_records=cert.n_pending if cert.without_pass else
            accounting.pending_removals(previous),
            lazy_records=self._lazy_limit(plan), certificate=cert)

    def _lazy_limit(self, plan):
        """Records that may be removed without a pass (Section 12.9): none
        while data-dependent prediction certificates are tracked or held (they
        follow every segment's rows; the next pass clears stale ones)."""
        if getattr(self, "certify_k_max", 0) or getattr(self, "certified_radii_",
                                                         None):
            return 0
        # Inside _fit_hyperparameters: the value frozen at fit ("auto" for a
        # model pickled before the parameter existed).
        value = getattr(self, "max_lazy_records", "auto")
        return plan.lazy_records if isinstance(value, str) else int(value)

    def _plan_edit(self, edits, plan, previous, deletion_epsilon, lazy=True):
        """The accountant's plan for ``edits`` (public numbers only). A sharded
        request is staged on the workers before it is planned, so it always
        passes over the data (``lazy=False``)."""
        try:
            return accounting.plan_unlearning(
                plan, previous, n_samples=edits.n_samples_after,
                n_deleted=edits.n_deleted, n_replaced=edits.n_replaced,
                n_inserted=edits.n_inserted, deletion_epsilon=deletion_epsilon,
                max_lazy_records=self._lazy_limit(plan) if lazy else 0)
        except (TypeError, ValueError) as exc:
            raise UnlearningError(str(exc)) from exc

    def _edit_guarantee(self, edits, plan, previous, edit):
        return accounting.guarantee_after_edit(
            plan, previous, steps=edit.steps, n_samples=edits.n_samples_after,
            n_deleted=edits.n_deleted, n_replaced=edits.n_replaced,
            n_inserted=edits.n_inserted, seeded=self.random_state is not None,
            retrained=edit.retrained, data_weight=edit.data_weight,
            n_batches=edit.n_batches)

    def _partial_unlearn_sharded(self, edits, deletion_epsilon=None):
        """``partial_unlearn`` on a sharded database: the edit is staged on the
        shards, the model unlearns, and then the model's new state and the
        database's new version are taken in one step that Ctrl-C cannot split;
        on any error before it, both stay as they were (``restore_on_error``, by hand:
        the decision must be inside the protected block)."""
        snapshot = dict(self.__dict__)
        committed = False
        try:
            self._check_edit_request(edits)
            edits._stage()
            self._unlearn_rows(edits, self._plan, self.privacy_guarantee_, None,
                               deletion_epsilon)
            with no_interrupts():
                edits._commit()
                committed = True
                mark_committed()
        except BaseException:
            if not committed:
                with no_interrupts():
                    self.__dict__.clear()
                    self.__dict__.update(snapshot)
                edits._abort()
            raise
        finally:
            if committed:
                edits._release()
        return self

    def _unlearn_rows(self, edits, plan, previous, edited, deletion_epsilon=None):
        """The unlearning segment on the edited rows: in memory (``edited``,
        a callable returning ``_edited_database``'s tuple, called only when the
        edit passes over the data), or staged on the shards of a sharded
        database (None)."""
        sharded = edited is None
        n_new = edits.n_samples_after
        check_edit_weighting(plan, edits.database.weighted if sharded
                             else edits.sample_weight is not None)
        edit = self._plan_edit(edits, plan, previous, deletion_epsilon,
                               lazy=not sharded)
        if edit.steps == 0 and not edit.retrained:
            return self._certify_without_pass(edits, plan, previous, edit)
        if sharded:
            loss, weights, rows = plan.loss, None, None
        else:
            rows = edited()
            loss, weights = rows[2], rows[3]
        ratio = n_new / plan.normaliser
        if not 0.5 <= ratio <= 2.0:
            warn(
                f"The database now has {n_new} rows, {ratio:.2f} times the "
                f"{plan.normaliser} the model was fitted on; the fixed gradient "
                "normaliser keeps the guarantee but shifts the objective. Refitting "
                "is recommended.",
                UserWarning, stacklevel=user_stacklevel())
        # The edit's release, reserved on the ledger before any pass over the
        # edited rows (privacy-accounting.md, Section 20.1): a pure function
        # of the plan, the previous guarantee and the edit's public sizes.
        planned = accounting.guarantee_after_edit(
            plan, previous, steps=edit.steps, n_samples=n_new,
            n_deleted=edits.n_deleted, n_replaced=edits.n_replaced,
            n_inserted=edits.n_inserted, seeded=self.random_state is not None,
            retrained=edit.retrained, data_weight=edit.data_weight,
            n_batches=edit.n_batches)
        # Said before any pass, from public numbers: a filter raising them as
        # errors stops the edit before anything is spent (Section 20.3).
        self._warn_after_edit(planned)
        # The edit's own term from the previous model holds only beside that
        # model's release (Section 20.1): a ledger given after the fit gets
        # the edited model's whole figure.
        holds = holds_previous(self)
        with self._ledger_spending("partial_unlearn", edit_figure(
                self, accounting.release_rho(planned, plan), planned.rho,
                holds), len(previous.edits) + 1) as spent:
            self._unlearn_pass(edits, plan, previous, edit, rows, n_new, loss,
                               weights)
            g = self.privacy_guarantee_
            spent["rho"] = edit_figure(self, accounting.release_rho(g, plan), g.rho,
                                       holds)
        note_entry(self, spent)
        return self

    def _unlearn_pass(self, edits, plan, previous, edit, rows, n_new, loss,
                      weights):
        """The edit's pass over its rows: ``rows`` is ``_edited_database``'s
        tuple in memory, None for rows staged on the shards."""
        sharded = rows is None
        if not sharded:
            X_new, y_enc, _, _ = rows
        if sharded:
            design = edits.database._row_source(
                self._row_map_spec(loss, getattr(self, "classes_", None), "unlearn",
                                   plan),
                loss=loss, n_jobs=effective_n_jobs(self.n_jobs), exclusive=True,
                shard_sizes=edits.shard_sizes_after)
        else:
            design = self._design(X_new, y_enc, loss, where="the edited database")
        try:
            return self._unlearn_segment(edits, plan, previous, edit, design,
                                         n_new, weights)
        finally:
            if sharded:
                design.release()

    def _unlearn_segment(self, edits, plan, previous, edit, design, n_new, weights):
        segment = len(previous.edits) + 1
        rng = segment_rng(self.random_state, segment)
        steps = edit.steps
        if edit.retrained:
            # Training afresh costs no more passes than unlearning would: a new
            # initial draw and fresh noise, so the removed records have no
            # influence at all on the new model.
            W0, b0 = initial_draw(rng, self._theta()[0].shape,
                                  fit_intercept=self.fit_intercept,
                                  init_variance=plan.init_variance)
        else:
            W0, b0 = self._theta()
        if self.verbose:
            how = "retraining from a fresh start" if edit.retrained else "unlearning"
            print(f"[skforget] partial_unlearn: {how}, {steps // edit.n_batches} "
                  f"passes ({steps} noisy steps)")
        W, b, tracked = self._run_segment(design, W0, b0, plan=plan, steps=steps,
                                          segment=segment, rng=rng,
                                          label="partial_unlearn",
                                          n_batches=edit.n_batches, weight=weights)
        guarantee = self._edit_guarantee(edits, plan, previous, edit)
        for name, value in tracked.items():
            setattr(self, name, value)
        # Fresh counts of the edited database, or none (18.3).
        self._redraw_counts(lambda: design.class_counts(len(self.classes_)),
                            previous.count_noise, segment=segment,
                            exact_moments=lambda u: design.class_moments(
                                len(self.classes_), u),
                            coef=W, statistics=previous.class_statistics)
        self._set_coefficients(W, b)
        self.n_unlearn_iter_ = steps // edit.n_batches
        self.privacy_guarantee_ = guarantee
        self.database_version_ = edits.version_after
        self._warn_if_constant()
        return self

    def _certify_without_pass(self, edits, plan, previous, edit):
        """A deletion the current model already certifies (Theorem 12.9): the
        coefficients stay, with the class statistics released with them
        (Theorem 12.12: the certificate charges what they still say about the
        removed records), and a new certificate and database version are
        taken. No row is read; the request's layout (features, their names)
        is checked on a zero-row view, as a pass would check it."""
        X = edits.X
        self._validate_rows(X.iloc[:0] if hasattr(X, "iloc") else X[:0],
                            reset=False, ensure_min_samples=0)
        guarantee = self._edit_guarantee(edits, plan, previous, edit)
        if self.verbose:
            print("[skforget] partial_unlearn: no pass over the data (the model "
                  "already certifies the removed records)")
        self.n_unlearn_iter_ = 0
        self.privacy_guarantee_ = guarantee
        self.database_version_ = edits.version_after
        self._warn_after_edit(guarantee)
        self._warn_if_constant()
        return self
