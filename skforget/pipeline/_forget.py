# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""ForgetPipeline: public or private preprocessing, then a skforget estimator."""

import dataclasses
import inspect
import secrets

from sklearn import get_config
from sklearn.base import clone, is_classifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_is_fitted

from skforget import accounting
from skforget._database import Database, _describe, check_version, unwrap_database
from skforget._edits import EditRequest, check_new_targets
from skforget._linear import _atomic_edit, warn_if_adaptive_exceeds
from skforget._marks import (
    FITTED_AFTER,
    FITTED_BY,
    PIPELINE_STEP,
    check_not_pipeline_step,
    check_not_selected,
    warn_what_the_edit_keeps,
)
from skforget._public import (
    check_public_preprocessing,
    check_rows_apart,
    register_pipeline_class,
    split_preprocessing,
)
from skforget._release import mark_committed, releasing
from skforget._utils import atomic_tree, check_sample_weight, edit_seed
from skforget._validation import (
    ENCLOSING_PREPROCESSING,
    SelectionContextMixin,
    check_distinct_seeds,
    check_labels_present,
    consumes_selection_context,
    fixed_errstate,
)
from skforget.exceptions import NotCertifiableError, UnlearningError
from skforget.pipeline._certificates import PipelineCertificates, final_estimator_has
from skforget.pipeline._ledger import _pipeline_ledger, _preprocessing_release

__all__ = ["ForgetPipeline", "make_forget_pipeline"]


class ForgetPipeline(SelectionContextMixin, PipelineCertificates, Pipeline):
    """A pipeline with public preprocessing that serves edits on raw records.

    A :class:`~sklearn.pipeline.Pipeline` (same parameters, same methods)
    whose last step is a skforget estimator, with two additions:

    * ``fit`` first checks that every preprocessing step is public (keeps
      nothing learned from the training rows, see
      :func:`~skforget.preprocessing.check_public`) and refuses, with
      :class:`~skforget.exceptions.DataDependentStepError`, a step that
      learns from them: a scaler fitted on the rows would keep a deleted
      person's contribution after the model forgot it.
    * ``partial_unlearn(request)`` takes an :class:`~skforget.EditRequest` on
      the raw records, maps the database and the new records through the
      preprocessing, and has the final estimator unlearn. It exists only when
      the final step has ``partial_unlearn``.

    Fitted on a :class:`~skforget.Database` (``fit(database)``), the pipeline
    keeps its :class:`~skforget.DatabaseVersion` and refuses requests built on
    any other database or version. It keeps no training row: the public
    steps hold only their constants, the estimator only its coefficients.

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        Public transformers, then a skforget estimator.
    transform_input : list of str, default=None
        As in :class:`~sklearn.pipeline.Pipeline`.
    memory : None
        Must be None: a cache would keep the training rows on disk.
    verbose : bool, default=False
        As in :class:`~sklearn.pipeline.Pipeline`.

    Attributes
    ----------
    public_preprocessing_ : tuple of (str, str)
        Each preprocessing step (by path) and why it is public, as shown in
        ``privacy_guarantee_``.
    database_version_ : DatabaseVersion or None
        Version of the database the pipeline serves (None: fitted on plain
        arrays, only sizes are checked).
    privacy_guarantee_ : PrivacyGuarantee
        The final estimator's guarantee, with ``preprocessing`` set to
        ``public_preprocessing_``.

    See Also
    --------
    make_forget_pipeline : Build one from steps, naming them automatically.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skforget import Database, EditRequest, NoisyGDClassifier
    >>> from skforget.pipeline import ForgetPipeline
    >>> from skforget.preprocessing import PublicScaler
    >>> X = pd.DataFrame({"age": [25, 52, 38, 61, 44, 30],
    ...                   "job": ["a", "b", "a", "b", "b", "a"]},
    ...                  index=["p1", "p2", "p3", "p4", "p5", "p6"])
    >>> y = [0, 1, 0, 1, 1, 0]
    >>> prep = ColumnTransformer(
    ...     [("job", OneHotEncoder(categories=[["a", "b"]]), ["job"]),
    ...      ("age", PublicScaler(center=50, scale=50), ["age"])],
    ...     sparse_threshold=0)
    >>> clf = NoisyGDClassifier(classes=[0, 1], epsilon=100.0, random_state=0)
    >>> pipe = ForgetPipeline([("prep", prep), ("clf", clf)])
    >>> db = Database(X, y)
    >>> pipe = pipe.fit(db)
    >>> request = EditRequest(db, delete=["p2"], by="id")
    >>> pipe = pipe.partial_unlearn(request)
    >>> db = request.apply()               # the next version, kept by the owner
    >>> db.ids.tolist()
    ['p1', 'p3', 'p4', 'p5', 'p6']
    >>> pipe.privacy_guarantee_.preprocessing[0]
    ('prep/job', 'OneHotEncoder: categories given as constants')
    """

    @consumes_selection_context
    def fit(self, X, y=None, **params):
        """Check that the preprocessing is public, then fit like a Pipeline.

        Parameters
        ----------
        X : DataFrame, array-like or Database
            Raw training records; a :class:`~skforget.Database` (``y``
            omitted) also sets ``database_version_``, and its records' sample
            weights go to the final step.
        y : array-like of shape (n_samples,), default=None
            Targets.
        **params : dict
            Passed on as by :meth:`sklearn.pipeline.Pipeline.fit`.

        Returns
        -------
        self : ForgetPipeline
        """
        public, private = split_preprocessing(self)
        self._check_private_units(private)
        params = self._database_weights(X, params)
        X, y, version = unwrap_database(X, y)
        check_rows_apart(self, X, y, private)
        if y is not None and is_classifier(self._final_estimator):
            # Before any private step draws: a label no record may lack, or
            # one outside a public label set.
            check_labels_present(y)
            check = getattr(self._final_estimator, "_check_public_labels", None)
            if check is not None:
                check(y)
        # The estimator's sample weights likewise (a trial: a negative one was
        # refused after the statistics were drawn, and the ledger charged).
        key = ("sample_weight" if get_config().get("enable_metadata_routing")
               else f"{self.steps[-1][0]}__sample_weight")
        if params.get(key) is not None:
            check_sample_weight(params[key], _num_samples(X))
        # The seeds of this fit: its ledger entry names their noise, and its
        # edits derive theirs from them (random_states_).
        seeds = {name: self.named_steps[name].get_params().get("random_state")
                 for name in (*private, self.steps[-1][0])}
        with releasing(), atomic_tree(self), fixed_errstate(), _pipeline_ledger(
                self, f"{type(self).__name__}.fit", private, _num_samples(X), seeds):
            self._fit_steps(X, y, **params)
            self._mark_retrained(private)
            # Fitted again on its own, it is no longer an enclosing pipeline's
            # step (inside the block: a failed fit keeps the mark).
            self.__dict__.pop(PIPELINE_STEP, None)
            self.public_preprocessing_ = public
            self.private_preprocessing_ = private
            self.database_version_ = version
            self.pipeline_edits_ = ()
            if private:
                self.random_states_ = seeds
                guarantee = self.privacy_guarantee_
                self._releases = ((guarantee.rho, guarantee.delta_selection,
                                   guarantee.rho_replace),)
            mark_committed()
        return self

    def _check_private_units(self, private, seeds=None):
        """Private steps must use the estimator's relation and group size,
        and draw their own noise (from ``seeds``: at an edit, those of fit)."""
        if not private:
            return
        check_distinct_seeds((name, self.named_steps[name].get_params()["random_state"]
                              if seeds is None else seeds[name]) for name in private)
        est = self._final_estimator.get_params(deep=False)
        if "param_distributions" in est:
            # A search's figure is a Rényi curve of its own (Section 17), not
            # an estimator's target that Theorem 19.5 composes; it would fail
            # after the statistics were computed, with an unreadable error.
            steps = ", ".join(map(repr, private))
            raise ValueError(
                f"The final step {self.steps[-1][0]!r} is a private search: it "
                f"cannot follow private preprocessing ({steps}), "
                "whose figure composes with an estimator's (epsilon, delta) "
                "target. Search over the whole pipeline instead: PrivateSearch"
                "CV(make_private_pipeline(estimator), {'estimator__C': [...]}).")
        if est.get("clip_rows") is False:
            # The rows the estimator receives come out of noisy statistics, so
            # its refusal of a row beyond data_norm would depend on them and on
            # the rows, after their noise was drawn and before any release
            # (the message names a row and its norm): refuse before any step.
            raise ValueError(
                f"The final step {self.steps[-1][0]!r} has clip_rows=False, which "
                "refuses rows outside data_norm by raising: behind private "
                f"preprocessing ({', '.join(map(repr, private))}) whether a row is "
                "outside depends on noisy statistics, so the error would reveal "
                "what no guarantee covers. Keep clip_rows=True (the default), "
                "which projects such rows onto the ball.")
        for name in private:
            step = self.named_steps[name].get_params()
            for param in ("relation", "group_size"):
                if param in est and step.get(param) != est[param]:
                    raise ValueError(
                        f"Private step {name!r} has {param}={step.get(param)!r} but "
                        f"the estimator has {param}={est[param]!r}: the two "
                        "guarantees add up only for the same privacy unit.")

    def _refuse_if_private(self, what):
        if getattr(self, "private_preprocessing_", ()):
            raise NotCertifiableError(
                f"{what} is not available with private preprocessing: a "
                "neighbouring database changes the released statistics as well "
                "as the model, which the final step's certificate does not cover.")

    @available_if(final_estimator_has("plan"))
    def plan(self, X, y=None, **params):
        """The plan ``fit(X, y)`` would run, and its expected time.

        Checks that the preprocessing is public, maps the raw records through
        copies of the steps (public steps learn nothing from them) and asks the
        final estimator's ``plan``. Nothing is trained and the pipeline is not
        changed.

        Parameters
        ----------
        X : DataFrame, array-like or Database
            Raw training records, as for :meth:`fit`.
        y : array-like of shape (n_samples,), default=None
            Targets.
        **params : dict
            ``sample_weight`` for the final step, if any (a Database carries
            its own).

        Returns
        -------
        plan : FitPlan

        Examples
        --------
        >>> import numpy as np
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.pipeline import make_forget_pipeline
        >>> from skforget.preprocessing import PublicScaler
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> y = (X[:, 0] > 0).astype(int)
        >>> pipe = make_forget_pipeline(PublicScaler(center=0.0, scale=3.0),
        ...                             NoisyGDClassifier(classes=[0, 1]))
        >>> pipe.plan(X, y).n_samples
        200
        """
        if split_preprocessing(self)[1]:
            raise ValueError(
                "plan() is not available with private preprocessing: the plan "
                "depends on the released statistics (e.g. the number of one-hot "
                "columns), which only fit releases, and estimating them here "
                "would spend budget.")
        check_public_preprocessing(self)
        weights = params.pop("sample_weight", None)
        if params:
            raise TypeError(f"plan() takes sample_weight only, got {sorted(params)}.")
        if isinstance(X, Database) and X.sample_weight is not None:
            if weights is not None:
                raise ValueError("sample_weight is given twice: the Database holds "
                                 "the records' weights.")
            weights = X.sample_weight
        X, y, _ = unwrap_database(X, y)
        with fixed_errstate():
            for _, step in self.steps[:-1]:
                if step is None or (isinstance(step, str) and step == "passthrough"):
                    continue
                # fit then transform: FrozenEstimator's fit is a no-op and it
                # has no fit_transform of its own.
                X = clone(step).fit(X, y).transform(X)
            return self._final_estimator.plan(X, y, sample_weight=weights)

    def _database_weights(self, X, params):
        """A weighted Database's weights go to the final step, as scikit-learn
        routes ``sample_weight`` (``<last step>__sample_weight``, or
        ``sample_weight`` under metadata routing, which the step must request)."""
        weights = getattr(X, "sample_weight", None) if isinstance(X, Database) \
            else None
        if weights is None:
            return params
        key = ("sample_weight" if get_config().get("enable_metadata_routing")
               else f"{self.steps[-1][0]}__sample_weight")
        if key in params:
            raise ValueError(f"{key} is given twice: the Database holds the "
                             "records' weights.")
        return {**params, key: weights}

    def _fit_steps(self, X, y, **params):
        """Fit every step (a hook: a private pipeline releases more first)."""
        return Pipeline.fit(self, X, y, **params)

    def _mark_retrained(self, private):
        """Mark the fitted estimator as this pipeline's step: its edits go
        through the pipeline (:func:`~skforget._marks.check_not_pipeline_step`).
        With private steps the pipeline's edits retrain it (Theorem 19.6): its
        guarantee says so, not what its own ``partial_unlearn`` would certify
        (a trial read "No records deleted yet" after two deletions)."""
        est = self._final_estimator
        self._renew_step_token()
        guarantee = est.__dict__.get("privacy_guarantee_")
        if private and guarantee is not None and "retrained_by_pipeline" in {
                f.name for f in dataclasses.fields(guarantee)}:
            est.privacy_guarantee_ = dataclasses.replace(
                guarantee, retrained_by_pipeline=True)

    def _own_releases(self):
        """``(name, rho, delta, rho_replace)`` of the pipeline's own releases."""
        return ()

    @property
    def privacy_guarantee_(self):
        guarantee = self._final_estimator.privacy_guarantee_
        check_is_fitted(self, "public_preprocessing_")
        private = getattr(self, "private_preprocessing_", ())
        if not private:
            # A search's figure (a SearchBudget) has no field for free steps.
            if "preprocessing" not in {f.name for f in dataclasses.fields(guarantee)}:
                return guarantee
            return dataclasses.replace(guarantee,
                                       preprocessing=self.public_preprocessing_)
        parts, replace = [], []
        for name in private:
            released = self.named_steps[name].__skforget_private__()
            parts.extend((f"{name}/{col}", rho, delta)
                         for col, rho, delta in released.columns)
            replace.append(getattr(released, "rho_replace", None))
        for name, rho, delta, rho_replace in self._own_releases():
            parts.append((name, rho, delta))
            replace.append(rho_replace)
        return accounting.compose_pipeline_guarantee(
            preprocessing_rho_replace=None if None in replace else sum(replace),
            parts=parts, estimator_guarantee=guarantee,
            delta_conversion=guarantee.delta,
            public_preprocessing=self.public_preprocessing_,
            edits=self.pipeline_edits_,
            target_epsilon=getattr(self, "target_epsilon_", None),
            seeded=any(state is not None
                       for state in getattr(self, "random_states_", {}).values()))

    def _preprocess(self, X):
        for _, step in self.steps[:-1]:
            if step is None or (isinstance(step, str) and step == "passthrough"):
                continue
            X = step.transform(X)
        return X

    def _preprocess_block(self, X, name, ids):
        """Transform records; a failure names the first row (and ID) at fault."""
        try:
            return self._preprocess(X)
        except Exception as exc:  # noqa: BLE001 - re-raised with the row named
            error = exc
        take = (lambda i: X.iloc[[i]]) if hasattr(X, "iloc") else (lambda i: X[[i]])
        for i in range(X.shape[0]):
            try:
                self._preprocess(take(i))
            except Exception as exc:  # noqa: BLE001
                who = "" if ids is None else f" (ID {_describe(ids[i])})"
                raise UnlearningError(f"{name} row {i}{who} cannot be preprocessed: "
                                      f"{exc}") from exc
        raise UnlearningError(f"{name} cannot be preprocessed: {error}") from error

    @available_if(final_estimator_has("partial_unlearn"))
    @fixed_errstate
    def partial_unlearn(self, edits, **unlearn_params):
        """Serve an edit request on raw records.

        The database, the replacing and the inserted records are mapped
        through the (public, fitted) preprocessing; the final estimator then
        runs its ``partial_unlearn`` on the same positions. If anything fails
        (a stale request, a record the preprocessing cannot map, the
        estimator refusing the edit), the pipeline is left exactly as it was.

        Parameters
        ----------
        edits : EditRequest
            A request on the raw records the pipeline was fitted on (or those
            returned by the previous request's ``apply()``).
        **unlearn_params : dict
            Passed to the final estimator's ``partial_unlearn`` (for instance
            ``deletion_epsilon``).

        Returns
        -------
        self : ForgetPipeline
        """
        private = self._check_request(edits, unlearn_params)
        # Warnings about the released model wait until it is recorded (20.3).
        with releasing():
            return self._partial_unlearn(edits, unlearn_params, private)

    def _check_request(self, edits, unlearn_params):
        """The checks of an edit (served or previewed) before anything runs;
        returns the private steps' names (:func:`split_preprocessing`)."""
        check_is_fitted(self, "public_preprocessing_")
        if not isinstance(edits, EditRequest):
            raise TypeError("edits must be a skforget.EditRequest, got "
                            f"{type(edits).__name__}.")
        check_not_pipeline_step(self, edits)   # nested: the outer one edits it
        self._check_step_unchanged()
        check_not_selected(self._final_estimator)   # before re-estimating (17.5)
        self._check_unlearn_params(unlearn_params)
        # Parameters may have been set since fit; the steps must still be public.
        _, private = split_preprocessing(self)
        check_version(edits.version, self.database_version_)
        return private

    def _step_models(self):
        """The final step, and a search step's ``best_estimator_``: the models
        that carry this pipeline's token."""
        est = self._final_estimator
        best = getattr(est, "__dict__", {}).get("best_estimator_")
        return (est,) if best is None else (est, best)

    def _renew_step_token(self):
        """A fresh token shared by this pipeline and its step (and a search
        step's ``best_estimator_``), drawn at every fit and committed edit: an
        edit checks that the step still holds it, so a step refitted on its
        own, swapped in, or served by a copy of this pipeline since does not
        (a second reader's copies and swaps)."""
        token = self._step_token = secrets.token_hex(8)
        for model in self._step_models():
            model.__dict__[PIPELINE_STEP] = token

    def _check_step_unchanged(self):
        """Refuse an edit when the final step is not the model this pipeline
        fitted (refitted on its own, or replaced by ``set_params``): its
        database is then not the pipeline's, and a request on the pipeline's
        records could train again on a record the step's own edit removed (a
        second reader). Pipelines pickled before the token pass."""
        token = self.__dict__.get("_step_token")
        if token is not None and any(
                getattr(m, "__dict__", {}).get(PIPELINE_STEP) != token
                for m in self._step_models()):
            raise UnlearningError(
                "The pipeline's final step was refitted or replaced since the "
                "pipeline was fitted (pipe[-1].fit(...), or set_params of the "
                "step): its records are not the pipeline's, so an edit through "
                "the pipeline could train again on a record it removed. Fit the "
                "pipeline again.")

    def _check_unlearn_params(self, unlearn_params):
        """The keywords the final step's ``partial_unlearn`` takes, checked
        before anything runs: a refit (private steps) uses none of them, and
        took a typo (``deletion_epsilom=0.1``) or a target past the model's in
        silence (a trial)."""
        final = self._final_estimator
        # A step that passes its keywords on (a search, a nested pipeline) is
        # read through to the model that takes them.
        while any(p.kind is inspect.Parameter.VAR_KEYWORD for p in
                  inspect.signature(final.partial_unlearn).parameters.values()):
            inner = getattr(final, "__dict__", {}).get("best_estimator_") or \
                getattr(final, "_final_estimator", None)
            if inner is None or not hasattr(inner, "partial_unlearn"):
                break
            final = inner
        try:
            inspect.signature(final.partial_unlearn).bind(None, **unlearn_params)
        except TypeError:
            takes = [p for p in inspect.signature(final.partial_unlearn).parameters
                     if p != "edits"]
            raise TypeError(
                f"partial_unlearn got {sorted(unlearn_params)}; the final step "
                f"{type(final).__name__} takes "
                f"{', '.join(takes) if takes else 'no keyword'}.") from None
        eps = unlearn_params.get("deletion_epsilon")
        plan = getattr(final, "__dict__", {}).get("_plan")
        if eps is not None and plan is not None:
            # A step without a plan of its own (a search) checks it itself.
            accounting.check_deletion_target(plan, eps)

    def _partial_unlearn(self, edits, unlearn_params, private):
        if private or getattr(self, "private_preprocessing_", ()):
            return self._refit_edit(edits, private)
        inner = self._mapped_request(edits)
        self._final_estimator.partial_unlearn(inner, **unlearn_params)
        self._renew_step_token()
        self.database_version_ = edits.version_after
        mark_committed()
        return self

    def _mapped_request(self, edits):
        """The request on the mapped records: the same positions and records,
        through the (public, fitted) steps; the records keep their weights."""
        ids = edits._ids
        Xt = self._preprocess_block(edits.X, "X", ids)
        Xt_replace = Xt_insert = None
        if edits.n_replaced:
            Xt_replace = self._preprocess_block(
                edits.X_replace, "X_replace",
                None if ids is None else ids[edits.replace])
        if edits.n_inserted:
            Xt_insert = self._preprocess_block(edits.X_insert, "X_insert",
                                               edits._new_ids)
        inner = EditRequest(
            Xt, edits.y, delete=edits.delete, replace=edits.replace, by="position",
            X_replace=Xt_replace, y_replace=edits.y_replace, X_insert=Xt_insert,
            y_insert=edits.y_insert, sample_weight=edits.sample_weight,
            sample_weight_replace=edits._weights_replace,
            sample_weight_insert=edits._weights_insert)
        inner._version_checked = True  # checked above, on the raw records
        inner._by_pipeline = True   # the step's edits go through here only
        return inner

    @available_if(final_estimator_has("plan_unlearn"))
    @fixed_errstate
    def plan_unlearn(self, edits, **unlearn_params):
        """Preview an edit request on raw records without serving it.

        With public steps: the final estimator's plan (passes, whether it
        retrains, the certificate it would give) for the request mapped as
        :meth:`partial_unlearn` maps it. With private steps every edit
        re-estimates the statistics and retrains the estimator (Theorem
        19.6): it costs a fit on the edited records, which :meth:`plan`
        previews, so this method refuses.

        Parameters
        ----------
        edits : EditRequest
            A request on the pipeline's current records.
        **unlearn_params : dict
            As for :meth:`partial_unlearn` (for instance ``deletion_epsilon``).

        Returns
        -------
        plan : object
            The final estimator's ``plan_unlearn`` result.
        """
        private = self._check_request(edits, unlearn_params)
        if private or getattr(self, "private_preprocessing_", ()):
            raise UnlearningError(
                "With private steps every edit re-estimates the statistics and "
                "retrains the estimator on the edited records: it costs a fit, "
                "which pipe.plan(X_edited, y_edited) previews.")
        return self._final_estimator.plan_unlearn(self._mapped_request(edits),
                                                  **unlearn_params)

    def _refit_edit(self, edits, private):
        """Serve an edit by re-estimating every private statistic with fresh
        noise and retraining the estimator on the edited records (Thm 19.6)."""
        if private != self.private_preprocessing_:
            raise UnlearningError("The private steps changed since fit; fit again.")
        self._check_private_units(private, self.random_states_)
        self._check_units_since_fit()
        # The estimator is refitted on every edit's records, so its guarantee
        # counts the pipeline's current database.
        n = self._final_estimator.privacy_guarantee_.n_samples
        if edits.n_samples_before != n:
            # Without a Database no version tells a stale request: its rows
            # could hold a record an earlier edit removed, which the refit
            # would train on again while that edit's certificate stands.
            raise UnlearningError(
                f"The request was built on {edits.n_samples_before} records, but "
                f"the pipeline's database now has {n}: build it on the records "
                "the previous request's apply() returned (a Database checks this "
                "by version).")
        self._check_new_records(edits)
        final = self._final_estimator
        # What a search's choice keeps (17.5), and what wraps the pipeline (a
        # meta-estimator, steps before it): said, and the marks kept across
        # the refit (a second reader).
        warn_what_the_edit_keeps(final)
        marks = {k: final.__dict__[k] for k in (FITTED_AFTER, FITTED_BY)
                 if k in final.__dict__}
        # An in-place request changes the caller's rows only if the edit
        # succeeds: undoable until the block below commits it.
        with _atomic_edit(self, edits):
            out = self._refit_edited(edits, private, edits._apply_uncommitted())
            self._final_estimator.__dict__.update(marks)
            return out

    #: The estimator's parameters an edit's refit may not see changed since fit.
    _FIXED_SINCE_FIT = ("relation", "group_size")

    def _check_units_since_fit(self):
        """Refuse an edit after one of :attr:`_FIXED_SINCE_FIT` was set since
        fit, with :meth:`_changed_since_fit`'s reason, or any other of the
        estimator's frozen parameters (those its own edits keep)."""
        changed = self._final_estimator._changed_params()
        for param in self._FIXED_SINCE_FIT:
            if param in changed:
                raise UnlearningError(self._changed_since_fit(param, *changed[param]))
        changed = {k: v for k, v in changed.items()
                   if k not in self._own_estimator_params()}
        if changed:
            # Any other frozen parameter: the refit would use the new value in
            # silence (a trial's alpha=1e-3 took the noise from 0.1 to 8687, a
            # target_scale was replaced by a fresh release), where a model's
            # own edit keeps the fit's and says so.
            name = self.steps[-1][0]
            said = ", ".join(f"{name}__{k}={now!r} (fitted with {before!r})"
                             for k, (before, now) in changed.items())
            raise UnlearningError(
                f"{said} set since the pipeline was fitted: its edits retrain the "
                "estimator, and would retrain it with the new value. Set it back "
                "to serve the edit, or fit the pipeline again.")

    def _own_estimator_params(self):
        """The estimator's parameters this pipeline sets at fit itself (left
        to its own check by :meth:`_check_units_since_fit`)."""
        return ()

    @staticmethod
    def _changed_since_fit(param, before, now):
        """A privacy unit other than the fitted one's: the edit's certificate
        adds up the earlier releases (Theorem 19.6), calibrated for the old
        unit, which spend more against a larger group than they say."""
        return (f"{param}={now!r} was set since the pipeline was fitted with "
                f"{param}={before!r}: its earlier releases are calibrated for that "
                "unit, and the edit's certificate adds them up. Set "
                f"{param}={before!r} again to serve the edit, or fit again for "
                "the new unit.")

    def _check_new_records(self, edits):
        """Refuse a replacing or inserted record the refit could not use, by
        its name in the request (``X_insert`` row ``k``, ``y_insert[k]``),
        before any statistic is drawn: the refit would name its row in the
        edited table. The records are mapped by the fitted steps (released
        statistics) and the labels checked against the model's fixed set."""
        ids = edits._ids
        if edits.n_replaced:
            self._preprocess_block(edits.X_replace, "X_replace",
                                   None if ids is None else ids[edits.replace])
        if edits.n_inserted:
            self._preprocess_block(edits.X_insert, "X_insert", edits._new_ids)
        est = self._final_estimator
        check_new_targets(edits, getattr(est, "classes_", None)
                          if is_classifier(est) else None)

    def _refit_edited(self, edits, private, edited):
        """The refit of :meth:`_refit_edit` on the edited records."""
        X_new, y_new = edited
        weights = edits.sample_weight_after
        params = {}
        if weights is not None:
            key = ("sample_weight" if get_config().get("enable_metadata_routing")
                   else f"{self.steps[-1][0]}__sample_weight")
            params[key] = weights
        index = len(self.pipeline_edits_) + 1
        # The schema is public and fixed at fit (Section 19.3): which columns
        # a step took as numbers must not follow the edited records' dtypes.
        kinds = {name: getattr(self.named_steps[name], "numeric_columns_", None)
                 for name in private}
        with atomic_tree(self), _pipeline_ledger(
                self, f"{type(self).__name__}.partial_unlearn", private,
                _num_samples(X_new), self.random_states_, f"pipeline edit {index}"):
            # The edit's streams are passed for this fit only: afterwards each
            # step holds the user's own random_state again, never a derived one.
            for name, state in self.random_states_.items():
                self.named_steps[name].set_params(random_state=edit_seed(state, index))
            final = self.steps[-1][1]
            if hasattr(final, "classes_"):   # kept, as the estimators' edits do
                final._refit_label_set = final.classes_
            try:
                self._fit_steps(X_new, y_new, **params)
            except Exception as exc:
                raise UnlearningError(f"The edited records cannot be fitted: "
                                      f"{exc}") from exc
            finally:
                for name, state in self.random_states_.items():
                    self.named_steps[name].set_params(random_state=state)
                final.__dict__.pop("_refit_label_set", None)
            self._mark_retrained(private)
            if hasattr(final, "_warn_if_label_set_kept"):
                final._warn_if_label_set_kept(final.privacy_guarantee_)
            for name, before in kinds.items():
                step = self.named_steps[name]
                after = getattr(step, "numeric_columns_", None)
                if after != before:
                    moved = sorted(set(before or ()) ^ set(after or ()))
                    names = [str(step.feature_names_in_[j]) if hasattr(
                        step, "feature_names_in_") else f"x{j}" for j in moved]
                    raise UnlearningError(
                        f"The edited records change the kind (number or category) "
                        f"of column(s) {names} of step {name!r}: the schema is "
                        "fixed at fit. Cast them to the table's dtypes, or fit again.")
            release = self.privacy_guarantee_
            # A release kept by an older version has no replace-pair figure:
            # the largest factor of Theorem 19.6 (4, the estimator's) bounds it.
            releases = [(*r, None)[:3] for r in self._releases]
            cert = accounting.pipeline_edit_certificate(
                conversion=release.conversion, index=index,
                rho_releases=[r for r, _, _ in releases],
                delta_selections=[d for _, d, _ in releases],
                rho_replace_releases=[4 * r if q is None else q
                                      for r, _, q in releases],
                delta=release.delta,
                n_deleted=edits.n_deleted, n_replaced=edits.n_replaced,
                n_inserted=edits.n_inserted, n_samples=edits.n_samples_after)
            self._releases = (*self._releases, (release.rho, release.delta_selection,
                                                release.rho_replace))
            self.pipeline_edits_ = (*self.pipeline_edits_, cert)
            self.database_version_ = edits.version_after
            mark_committed()
        warn_if_adaptive_exceeds(cert, release.epsilon)   # as an estimator's edit
        return self


register_pipeline_class(ForgetPipeline)
ENCLOSING_PREPROCESSING.append(_preprocessing_release)


def make_forget_pipeline(*steps, memory=None, transform_input=None, verbose=False):
    """Build a :class:`ForgetPipeline` from steps, naming them automatically.

    The counterpart of :func:`sklearn.pipeline.make_pipeline`.

    Parameters
    ----------
    *steps : list of estimators
        Public transformers, then a skforget estimator.
    memory : None
        Must be None (checked at fit).
    transform_input : list of str, default=None
    verbose : bool, default=False

    Returns
    -------
    pipeline : ForgetPipeline

    Examples
    --------
    >>> from sklearn.preprocessing import Normalizer
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.pipeline import make_forget_pipeline
    >>> make_forget_pipeline(Normalizer(), NoisyGDClassifier()).steps[0][0]
    'normalizer'
    """
    plain = make_pipeline(*steps, memory=memory, transform_input=transform_input,
                          verbose=verbose)
    return ForgetPipeline(plain.steps, memory=memory, transform_input=transform_input,
                          verbose=verbose)

