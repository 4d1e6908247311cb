# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a model's history says about its edits, read from marks it carries.

A model a ``PrivateSearchCV`` selected refuses edits (its guarantee's
``selected_by_search``, 17.4); a pipeline's final step is edited through the
pipeline only (its token, :data:`PIPELINE_STEP`; a private pipeline's
estimator by its guarantee's ``retrained_by_pipeline``, Theorem 19.6); a
model tuned by a search, fitted after steps that learned from its rows, or
fitted by a scikit-learn meta-estimator says so at each edit, since no
certificate of the model undoes those (privacy-accounting.md, 17.4, 19.4,
20.4). The marks are public: set from the caller's code and parameters, never
from the rows.
"""

from skforget._validation import user_stacklevel, warn
from skforget.exceptions import (
    PrivacyBudgetWarning,
    PrivacyLeakWarning,
    UnlearningError,
)


def is_selected(model):
    """Whether ``model`` (or a pipeline's final step) is the run a search
    selected: marked in the guarantee the search gives it
    (``selected_by_search``; the model's next fit replaces it, 17.4)."""
    final = getattr(model, "_final_estimator", model)
    return bool(getattr(getattr(final, "privacy_guarantee_", None),
                        "selected_by_search", False))


def check_not_selected(model):
    """Refuse an edit of the run a ``PrivateSearchCV`` selected (its default
    mode): the run was kept because its score, which reads the records, was
    the best, so its law is not a run's, and a certificate computed for one
    run would overstate what an edit forgets (privacy-accounting.md, 17.4)."""
    if is_selected(model):
        raise UnlearningError(
            "This model is the run a PrivateSearchCV selected (without "
            "validation_fraction, or without refit): its noise was selected "
            "with the records present, so no deletion certificate for one run "
            "holds for it. Search with validation_fraction=... and refit=True, "
            "whose refitted model deletions certify, or run the search again on "
            "the edited database.")


#: Where a pipeline's final step keeps the token of the pipeline that fitted
#: it (drawn afresh at each pipeline fit and committed edit; cleared by the
#: step's own fit, so that the pipeline sees a refit step).
PIPELINE_STEP = "_pipeline_step"


def check_not_pipeline_step(model, edits):
    """Refuse an edit of a pipeline's final step on its own (a request the
    pipeline did not build, ``edits._by_pipeline``).

    With private steps (the guarantee's ``retrained_by_pipeline``) the
    pipeline's statistics were released with the records present and map
    every row the estimator reads: an edit of the estimator alone would
    certify a deletion they still hold. The pipeline serves its edits by
    re-estimating them and retraining the estimator (privacy-accounting.md,
    Theorem 19.6), never through this method. With public steps an edit of
    the step alone leaves the pipeline's database version behind the model's:
    a request built on the old records is then accepted by the pipeline and
    trains again on a record the step's edit certified as removed (a trial's
    reproducer)."""
    guarantee = getattr(model, "__dict__", {}).get("privacy_guarantee_")
    if getattr(guarantee, "retrained_by_pipeline", False):
        raise UnlearningError(
            "This model is the estimator of a private pipeline "
            "(make_private_pipeline): the pipeline's private statistics were "
            "estimated with the records present and still hold them, so an edit "
            "of the estimator alone would certify a deletion they do not make. "
            "Edit through the pipeline, pipe.partial_unlearn(EditRequest(...)), "
            "which re-estimates them and retrains this model.")
    if getattr(model, "__dict__", {}).get(PIPELINE_STEP) and not getattr(
            edits, "_by_pipeline", False):
        raise UnlearningError(
            "This model is the final step of a ForgetPipeline: edit through the "
            "pipeline, pipe.partial_unlearn(EditRequest(...)) on the raw records, "
            "which maps them and keeps the pipeline's database version in step "
            "with the model. An edit of the step alone would leave the pipeline "
            "behind: a request built on the old records would then be accepted "
            "and train again on a record this edit removes. (Fitted on its own, "
            "outside a pipeline, the model serves its own edits.)")


#: Where a model refitted by a scikit-learn search (``GridSearchCV``...) keeps
#: the search's name: its hyper-parameters were chosen from exact scores.
TUNED_BY_SKLEARN = "_tuned_by_sklearn"


def tuned_caveat(model):
    """What a model whose hyper-parameters a ``PrivateSearchCV`` chose keeps
    after an edit, in one sentence, or None (privacy-accounting.md, 17.4,
    17.5). The search marks its refitted model (``tuned_by_search_``: the
    search's ``(epsilon, delta)`` and its selection's ``epsilon``); a
    scikit-learn search's refit is marked at its fit (:data:`TUNED_BY_SKLEARN`),
    with no figure to state."""
    final = getattr(model, "_final_estimator", model)   # a pipeline's
    mark = getattr(final, "__dict__", {}).get("tuned_by_search_")
    if mark is None:
        by = getattr(final, "__dict__", {}).get(TUNED_BY_SKLEARN)
        if by is None:
            return None
        return (f"Its hyper-parameters were chosen by scikit-learn's {by} from "
                "exact scores of the records present: no figure bounds what that "
                "choice keeps about each of them, deleted ones included, and no "
                "deletion certificate of this model undoes it. Tune with "
                "skforget.model_selection.PrivateSearchCV (validation_fraction "
                "and refit serve deletions), or on public data.")
    return (f"Its hyper-parameters were chosen by a PrivateSearchCV ((epsilon "
            f"{mark['epsilon']:.4g}, delta {mark['delta']:.2g}) in all) with the "
            "records present: the choice keeps up to (epsilon "
            f"{mark['selection_epsilon']:.4g}, delta {mark['delta']:.2g}) about each "
            "of them, deleted ones included, which no deletion certificate of this "
            "model undoes, and the adaptive figures count this model's releases "
            "only (requests adapted to the search's output add its figure). Run "
            "the search again on the current database to forget them entirely.")


#: Where a model fitted as the last step of a plain scikit-learn ``Pipeline``
#: keeps the names of the steps before it that learned from its rows (set by
#: the pipelines layer's check at fit, cleared by each fit).
FITTED_AFTER = "_fitted_after_steps"


#: Where a model fitted by a scikit-learn meta-estimator outside model
#: selection keeps its name (set at fit, cleared by each fit).
FITTED_BY = "_fitted_by_meta"


def warn_what_the_edit_keeps(model):
    """Before an edit that passed its checks, say what no certificate of the
    model undoes (public statements; a filter raising one as an error stops
    the edit before anything is spent, 20.3): what a search's choice of its
    hyper-parameters keeps (17.4); what a meta-estimator that fitted it made
    of its fits or of the rows (its other fits, a target transformer's exact
    mean: a second reader); and the steps before it that learned from the
    rows (a plain ``Pipeline`` with a fitted ``StandardScaler``; its fit
    warned), which still hold the records the edit removes."""
    said = tuned_caveat(model)
    if said is not None:
        warn(f"After this edit the model certifies the deleted records. {said}",
             PrivacyBudgetWarning, stacklevel=user_stacklevel())
    meta = getattr(model, "__dict__", {}).get(FITTED_BY)
    if meta:
        warn(f"{type(model).__name__} was fitted by scikit-learn's {meta}: what "
             f"{meta} made of its fits or of the rows (its other models, errors, "
             "a target transformer's exact statistics) still holds the records "
             "this edit removes, and its certificate covers this model only. Fit "
             "the meta-estimator again on the edited rows.",
             PrivacyLeakWarning, stacklevel=user_stacklevel())
    steps = getattr(model, "__dict__", {}).get(FITTED_AFTER)
    if steps:
        warn(f"{type(model).__name__} was fitted as the last step of a "
             f"scikit-learn Pipeline after step(s) {', '.join(map(repr, steps))} "
             "that learned from the rows: they still hold the records this edit "
             "removes, and its certificate covers this model only. Refit them on "
             "the edited rows and this model after them, or use "
             "skforget.pipeline.ForgetPipeline (public steps) or "
             "make_private_pipeline (private statistics, re-estimated at every "
             "edit).", PrivacyLeakWarning, stacklevel=user_stacklevel())

