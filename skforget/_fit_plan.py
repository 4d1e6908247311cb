# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a fit will do, said before it runs (``estimator.plan(X, y)``)."""

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class FitPlan:
    """The public plan of one ``fit``, with its expected cost on this machine.

    Returned by :meth:`NoisyGDClassifier.plan` and :meth:`NoisyGDRegressor.plan`.
    Every field except the timings is a function of public numbers (sizes,
    parameters, privacy targets), the same ones ``fit`` uses; the timings come
    from one pass of the step loop over the rows, timed here.

    Attributes
    ----------
    n_samples, n_features : int
        Shape of the training data.
    n_batches : int
        Batches per pass (1: full-batch gradient descent).
    batch_size : float
        Rows per batch, ``n_samples / n_batches``.
    passes : int
        Passes over the data (epochs) the fit runs.
    steps : int
        Noisy gradient steps, ``passes * n_batches``.
    learning_rate, regularization, noise_scale : float
        ``eta``, ``lambda`` per sample and ``sigma``.
    noise_factor : float
        ``sigma^2`` over the full-batch noise for the same target.
    edit_mode : {"continue", "retrain"}
        How edits will be served: unlearning steps from the current model when
        cheaper, or always by retraining from a fresh start (when the fit is
        shorter than any deletion's unlearning; the noise then covers the fit
        alone).
    epsilon, delta : float
        The DP target.
    seconds_per_pass : float
        One pass of the step loop over these rows, measured.
    expected_seconds : float
        ``passes * seconds_per_pass``: the training time to expect (validation
        and the row map add about one more pass).
    """

    n_samples: int
    n_features: int
    n_batches: int
    batch_size: float
    passes: int
    steps: int
    learning_rate: float
    regularization: float
    noise_scale: float
    noise_factor: float
    edit_mode: str
    epsilon: float
    delta: float
    seconds_per_pass: float
    expected_seconds: float

    def to_dict(self):
        """Plain ``dict`` of the fields."""
        return asdict(self)

    def __str__(self):
        batches = ("full batch" if self.n_batches == 1 else
                   f"{self.n_batches} batches of about {self.batch_size:.0f} rows")
        edits = ("edits retrain from a fresh start" if self.edit_mode == "retrain"
                 else "edits run unlearning steps (or retrain when cheaper)")
        return (
            f"fit: {self.passes} passes over {self.n_samples} rows ({batches}, "
            f"{self.steps} noisy steps), about {self.expected_seconds:.3g} s here "
            f"({self.seconds_per_pass:.3g} s per pass); ({self.epsilon:.4g}, "
            f"{self.delta:.3g})-DP target, sigma={self.noise_scale:.4g}, "
            f"lambda={self.regularization:.4g}, learning_rate="
            f"{self.learning_rate:.4g}; {edits}."
        )


@dataclass(frozen=True, slots=True)
class UnlearnPlan:
    """How ``partial_unlearn(edits)`` would serve a request, said before it runs.

    Returned by :meth:`NoisyGDClassifier.plan_unlearn` and
    :meth:`NoisyGDRegressor.plan_unlearn`, from public numbers only (the
    request's counts, the model's plan and history); no row is read. The
    certificate is the one ``partial_unlearn`` issues when it serves the same
    request on the same model (privacy-accounting.md, Sections 12.5, 12.7, 12.9).

    Attributes
    ----------
    how : {"without_pass", "continue", "retrain"}
        ``"without_pass"``: the model already certifies the removed records at
        the deletion target (Theorem 12.9), nothing is computed on the rows;
        ``"continue"``: noisy passes from the current model; ``"retrain"``: a
        fresh start on the edited data.
    passes, steps : int
        Passes over the edited data and noisy steps (0 without a pass).
    fit_passes : int
        Passes of the model's ``fit``, for comparison (a refit's cost).
    n_batches : int
        Batches per pass of the edit's steps.
    deletion_epsilon : float
        The deletion target the request is served at.
    pending_records, lazy_records : int
        Records removed without a pass since the last one (this request's
        included, when it is served without a pass), and how many may be
        (eq. 12.5'); the next request past it passes over the data.
    certificate : EditCertificate
        The certificate ``partial_unlearn`` would attach.
    """

    how: str
    passes: int
    steps: int
    fit_passes: int
    n_batches: int
    deletion_epsilon: float
    pending_records: int
    lazy_records: int
    certificate: object

    def __str__(self):
        cost = {"without_pass": "no pass over the data",
                "continue": f"{self.passes} unlearning pass(es)",
                "retrain": f"retraining from a fresh start, {self.passes} pass(es)"}
        return (f"partial_unlearn: {cost[self.how]} (a refit takes "
                f"{self.fit_passes}); deletion target epsilon "
                f"{self.deletion_epsilon:.4g} (the model's target or below it: "
                f"a share goes to its class statistics, if any).\n"
                f"{self.certificate}")
