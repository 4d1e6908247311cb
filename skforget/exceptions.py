# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and errors raised by skforget."""

__all__ = [
    "CoarseRangeWarning",
    "DataDependentStepError",
    "NotCertifiableError",
    "PrivacyLeakWarning",
    "UnlearningError",
]


class PrivacyLeakWarning(UserWarning):
    """A setting weakens or voids the privacy guarantee the user may expect.

    Raised, for instance, when ``delta`` is not well below ``1 / n_samples``.
    skforget shows these warnings every time they occur.
    """


class PrivacyBudgetWarning(PrivacyLeakWarning):
    """Privacy is spent beyond what the model's own guarantee reports.

    Raised, for instance, when scikit-learn's ``GridSearchCV`` or
    ``cross_val_score`` fits a private estimator many times on overlapping
    rows. Each fit warns (scikit-learn's cross-validation records every
    fit's warnings, so one figure may show once per fit).
    """


class CoarseRangeWarning(UserWarning):
    """A private range kept a single bin: the column may keep little of its spread.

    Raised by :class:`~skforget.preprocessing.PrivateStandardScaler` (and the
    private pipeline that uses it) when a column's released range is one bin
    of the noisy log histogram: the transform then clips the column to a
    factor-of-two interval (or to the bin around 0). Unless the column's
    values do lie within it, they land on the range's ends and the column
    keeps little more than its sign or octave. It is computed from the
    released log histogram alone (its range before a refinement within it,
    which ``bounds_`` may show). The remedy is more budget for the
    preprocessing, or public bounds.
    """


class UnlearningError(ValueError):
    """An edit request cannot be served by the fitted model.

    The estimator is left exactly as it was. The message says which field or
    index of the request is at fault, or why the model cannot absorb the edit
    (in which case fitting a new model on the edited data is the remedy).
    """


class NotCertifiableError(ValueError):
    """A prediction certificate was requested where its preconditions fail."""


class DataDependentStepError(ValueError):
    """A preprocessing step would keep state learned from the training rows.

    Raised by :class:`~skforget.pipeline.ForgetPipeline` (before anything is
    fitted) and by :func:`~skforget.preprocessing.check_public`. A scaler,
    encoder or imputer fitted on the rows keeps statistics of them (a mean, a
    category seen once) that no ``partial_unlearn`` removes, so a deleted
    record would survive in the preprocessing. The message names the step,
    says what it learns, and what to use instead: constants given as
    parameters, :class:`~skforget.preprocessing.PublicScaler`, or a transformer
    fitted on public data and frozen with ``sklearn.frozen.FrozenEstimator``.
    """
