# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and errors raised by skforget."""


class PrivacyLeakWarning(UserWarning):
    """A setting weakens or voids the privacy guarantee the user may expect.

    Raised, for instance, when ``delta`` is not well below ``1 / n_samples``.
    skforget shows these warnings every time they occur.
    """


class UnlearningError(ValueError):
    """An edit request cannot be served by the fitted model.

    The estimator is left exactly as it was. The message says which field or
    index of the request is at fault, or why the model cannot absorb the edit
    (in which case fitting a new model on the edited data is the remedy).
    """


class NotCertifiableError(ValueError):
    """A prediction certificate was requested where its preconditions fail."""
