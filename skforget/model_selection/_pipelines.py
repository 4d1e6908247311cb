# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A private search over a pipeline with private preprocessing
(privacy-accounting.md, Theorem 17.5).

The pipeline's statistics are released **once**, on all rows, at the share
an untuned pipeline gives them; the search then repeats only the estimator's
runs on the rows mapped through them. Refitting the statistics in every run
would exclude an event of probability ``delta_S`` per run, and the number of
runs is hidden and unbounded (17.4). A refit (held-out part, ``refit=True``)
is the estimator's, on all rows mapped through the same statistics.
"""

import dataclasses

from sklearn.base import clone, is_classifier

from skforget import accounting
from skforget._public import private_step_names, split_preprocessing
from skforget._validation import check_labels_present, fixed_errstate
from skforget.pipeline._private import PipelineShare


def private_pipeline(estimator):
    """``estimator`` if it is a pipeline with a private split of one total
    (a :class:`~skforget.pipeline.PrivatePipeline`), else None."""
    from skforget.pipeline import PrivatePipeline

    if isinstance(estimator, PrivatePipeline) and private_step_names(estimator):
        return estimator
    return None


def final_step_search(pipeline, distributions):
    """``(name, estimator, distributions)`` of the final step, the names
    stripped of its prefix: only the estimator's parameters may be drawn (the
    statistics are released once, before the runs)."""
    name, estimator = pipeline.steps[-1]
    prefix = f"{name}__"
    others = sorted(key for key in distributions if not key.startswith(prefix))
    if others:
        raise ValueError(
            f"param_distributions names {others}: a search over a pipeline with "
            "private preprocessing draws only its estimator's parameters "
            f"({prefix}<parameter>), since the private statistics are released "
            "once, before the runs (privacy-accounting.md, Theorem 17.5).")
    return name, estimator, {key[len(prefix):]: value
                             for key, value in distributions.items()}


def pipeline_shares(pipeline, estimator):
    """The pipeline's split parameters, as :func:`~skforget.accounting.
    plan_search` takes them (``pipeline=``)."""
    return {"preprocessing_share": float(pipeline.preprocessing_share),
            "selection_share": float(pipeline.selection_share),
            "estimator_conversion": getattr(estimator, "_dp_conversion",
                                            lambda: "improved")()}


def pipeline_ledger(pipeline, estimator):
    """The ledger a pipeline's release records into: the estimator's, else a
    private step's (as ``PrivatePipeline.fit`` reads it)."""
    kept = [estimator.get_params(deep=False).get("ledger"),
            *(pipeline.named_steps[name].get_params(deep=False).get("ledger")
              for name in private_step_names(pipeline))]
    return next((ledger for ledger in kept if ledger is not None), None)


def _quiet_steps(pipeline, seeds):
    """No step records into a ledger (the search's one entry covers them);
    the private steps draw from ``seeds`` (the search's secret generator:
    integers when the search is seeded, else fresh entropy)."""
    for name in private_step_names(pipeline):
        step = pipeline.named_steps[name]
        update = {"random_state": seeds()}
        if "ledger" in step.get_params(deep=False):
            update["ledger"] = None
        step.set_params(**update)


def fit_statistics(pipeline, X, y, *, epsilon, delta, seeds, statistics):
    """Release a pipeline's private statistics on all rows (Theorem 17.5,
    step 1) at the ``(rho, delta_S)`` the search's plan gave them
    (``statistics``): a clone at ``(epsilon, delta)`` whose steps but the
    last are fitted. Returns ``(clone, Xt, target)``: the mapped rows and
    the regressor's released ``(target_offset, target_scale)`` or None."""
    with fixed_errstate():   # as a pipeline's fit (Section 16.2)
        return _fit_statistics(pipeline, X, y, epsilon=epsilon, delta=delta,
                               seeds=seeds, statistics=statistics)


def _fit_statistics(pipeline, X, y, *, epsilon, delta, seeds, statistics):
    pre = clone(pipeline).set_params(epsilon=epsilon, delta=delta)
    _quiet_steps(pre, seeds)
    split = pre._plan_split(X, y, statistics)
    # The checks a pipeline's fit makes before any statistic is drawn: the
    # steps' unit, clip_rows=False (whose refusal of a mapped row would
    # depend on the statistics), a missing label.
    pre._check_private_units(split[1])
    if y is not None and is_classifier(pre._final_estimator):
        check_labels_present(y)
    pre._set_split(*split)
    pre.budget_ = split[0]
    target = pre._release_target(X, y)
    Xt = X
    for _, step in pre.steps[:-1]:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        # fit then transform, as Pipeline.fit: a FrozenEstimator has no
        # fit_transform, and its fit keeps what it was fitted on.
        Xt = step.fit(Xt, y).transform(Xt)
    return pre, Xt, target


def release_pipeline(pipeline, pre, model, target, version):
    """The pipeline a search releases: the statistics of
    :func:`fit_statistics` (``pre``) and the selected run or the refit as its
    final step, with the state of a fitted ``pipeline``. The private steps get
    the user's own ``random_state`` back (the derived seeds would replay the noise) and
    the estimator its own target parameters (the released centre and scale
    are the pipeline's ``target_offset_`` and ``target_scale_``, as after a
    fit). A selected run's guarantee, marked, makes the pipeline's the
    search's and its edits refused; a refit's pipeline is an ordinary one,
    whose edits re-estimate and retrain (Theorem 17.5)."""
    name = pipeline.steps[-1][0]
    if target is not None:
        given = pipeline.steps[-1][1].get_params()
        model.set_params(target_offset=given["target_offset"],
                         target_scale=given["target_scale"])
        pre.target_offset_, pre.target_scale_ = target
    pre.steps[-1] = (name, model)
    public, private = split_preprocessing(pre)
    own = {step: pipeline.named_steps[step].get_params().get("random_state")
           for step in private}
    for step in private:
        given = pipeline.named_steps[step].get_params(deep=False)
        pre.named_steps[step].set_params(**{key: given[key] for key in (
            "random_state", "ledger") if key in given})
    pre.public_preprocessing_ = public
    pre.private_preprocessing_ = private
    pre.database_version_ = version
    pre.pipeline_edits_ = ()
    pre.random_states_ = {**own, name: model.get_params().get("random_state")}
    # The split as used: the statistics' part and the estimator's target.
    est = model.get_params()
    pre.budget_ = dataclasses.replace(
        pre.budget_, estimator_epsilon=float(est["epsilon"]),
        delta_conversion=float(est["delta"]),
        rho=pre.budget_.rho_preprocessing + accounting.estimator_rho_bound(
            model.privacy_guarantee_))
    if not model.privacy_guarantee_.selected_by_search:
        # A refit, whose edits the pipeline serves by retraining: its
        # estimator says so, and its figures are the pipeline's share, not a
        # number its author wrote (a second reader: "No records deleted yet;
        # partial_unlearn will certify ...", and a clone refitted warned).
        model.set_params(epsilon=PipelineShare(est["epsilon"]),
                         delta=PipelineShare(est["delta"]))
        pre._mark_retrained(private)
    g = pre.privacy_guarantee_
    pre._releases = ((g.rho, g.delta_selection, g.rho_replace),)
    pre.target_epsilon_ = g.epsilon
    return pre
