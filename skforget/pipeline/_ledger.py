# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A pipeline's release with private preprocessing on a ledger: its planned
figure, the figure an enclosing model selection reads, and the one entry it
records (privacy-accounting.md, Sections 19 and 20.3)."""

from contextlib import contextmanager

from skforget import accounting
from skforget._public import private_step_names
from skforget._release import note_entry, release_spending
from skforget._validation import pipeline_noise


def _planned_release(pipeline, n_samples):
    """``(rho, delta)`` bounding a release of a pipeline with private steps: the
    steps' (19.2), and the estimator's target by its conversion (Thm 19.5)."""
    _, rho, delta, _ = _preprocessing_release(pipeline, pipeline._final_estimator)
    est = pipeline._final_estimator
    est_delta = accounting.resolve_delta(est.delta, n_samples=n_samples)
    rho += accounting.epsilon_to_rho(epsilon=float(est.epsilon), delta=est_delta,
                                     method=est._dp_conversion())
    return rho, delta


def _preprocessing_release(pipeline, estimator):
    """``(label, rho, delta, ledger)`` of the private steps a pipeline fits
    before ``estimator`` (their ``rho`` and selection ``delta``, Section
    19.2; the ledger recording the release), or None: read by the
    estimator's model-selection warning (``ENCLOSING_PREPROCESSING``)."""
    # A skforget pipeline (it has _own_releases), whose last step is the model.
    private = private_step_names(pipeline) if hasattr(pipeline, "_own_releases") \
        and pipeline._final_estimator is estimator else ()
    if not private:
        return None
    steps = [pipeline.named_steps[name].get_params() for name in private]
    rho = sum(float(p["rho"]) for p in steps) + sum(
        r for _, r, _, _ in pipeline._own_releases())
    delta = sum(float(p.get("delta", 0.0) or 0.0) for p in steps)
    return (type(pipeline).__name__, rho, delta, pipeline.__dict__.get(
        "_recording_ledger") or getattr(estimator, "ledger", None))


@contextmanager
def _pipeline_ledger(pipeline, label, private, n_samples, seeds, segment=0):
    """Record a release with private preprocessing as **one** ledger entry.

    The ledger is the final estimator's (else a private step's). The whole release
    (every private statistic and the model, Theorem 19.5) is checked and
    reserved before the first data pass, from public numbers; the estimator's
    and the private steps' own recording is switched off meanwhile (each
    would count its part alone); on success the entry gets the composed
    figure, on failure it is cancelled (Section 20.3)."""
    est = pipeline._final_estimator
    unit = est.get_params(deep=False)
    parts = [est, *(pipeline.named_steps[n] for n in private)]
    kept = [p.get_params(deep=False).get("ledger") for p in parts]
    # The estimator's ledger, else a private step's: the release is one.
    ledger = next((own for own in kept if own is not None), None) if private else None
    if ledger is None:
        yield
        return
    rho, delta = _planned_release(pipeline, n_samples)
    # Approximately GDP when the estimator's figures are GDP (Corollary 21.9).
    gaussian = accounting.pipeline_conversion(
        getattr(est, "_dp_conversion", lambda: "improved")()) == "gaussian"
    for part in (p for p, own in zip(parts, kept, strict=True) if own is not None):
        part.set_params(ledger=None)
    pipeline._recording_ledger = ledger
    relation, group = unit.get("relation", "replace"), unit.get("group_size", 1)
    try:
        with release_spending(
                ledger, label, pipeline.__dict__.get("_selection_context", ()),
                owner=pipeline, rho=rho, delta=delta, gaussian=gaussian,
                relation=relation, group_size=group,
                noise=pipeline_noise(seeds, private, pipeline.steps[-1][0], bool(
                    pipeline.__dict__.get("_target_release", (0.0,))[0]),
                    segment)) as final:
            yield
            g = pipeline.privacy_guarantee_
            final.update(rho=g.rho, delta=g.delta_selection)
            # The release is this entry: ledger.record of the pipeline or of
            # its estimator would count it again (a second reader).
            for part in (pipeline, est):
                note_entry(part, final)
    finally:
        for part, own in zip(parts, kept, strict=True):
            if own is not None:
                part.set_params(ledger=own)
        pipeline.__dict__.pop("_recording_ledger", None)
