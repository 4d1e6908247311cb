# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a fitted classifier says about its decisions, read from released numbers.

A model whose coefficients give one class on the whole ball of rows
(Proposition 18.8), one whose class moments put nearly every row on one side of
its threshold (Section 18.6's estimate), and a class-mean midpoint or class
shift resting on a class whose noisy count is mostly noise (Sections 18.11,
18.14): each is read from released numbers and public ``data_norm`` alone, so
saying it costs no privacy. :class:`ClassDecisionWarnings` is a base of the
classifier mixin (``_tasks._PrivateClassifierMixin``).
"""

import numpy as np

from skforget._release import warn_about_release
from skforget.accounting import moment_predicted_share

#: With the class-mean midpoint, a class whose noisy count is under this many
#: times the release's noise has a mean that is mostly noise (the noise of its
#: mean score is ``sigma ||w|| R / n_c``, a fifth of the score's half-range here).
MIDPOINT_MIN_COUNT_PER_NOISE = 5.0

#: A binary model with class moments warns when their Gaussian model of the
#: scores puts fewer than this share of the rows on one side of its threshold
#: (Section 18.6): nearly one class on the data, though not on the whole ball.
NEARLY_CONSTANT_SHARE = 0.01


class ClassDecisionWarnings:
    """The decision warnings of a fitted private classifier (see the module)."""

    def _warn_if_constant(self):
        """Warn when the released coefficients give one class on the whole
        ball of rows ``||x|| <= data_norm`` (Proposition 18.8): visible from the
        coefficients and public ``data_norm`` alone, so the check costs no
        privacy. Also warns when a class-mean midpoint rests on a class whose
        noisy count is small against its noise (:meth:`_warn_if_means_noisy`)."""
        self._warn_if_means_noisy()
        W = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))
        b = np.atleast_1d(np.asarray(self.intercept_, dtype=np.float64))
        R = float(self._param("data_norm"))
        if W.shape[0] == 1:
            W = np.vstack([np.zeros_like(W[0]), W[0]])
            b = np.array([0.0, b[0]])
        # A threshold clipped to the ball's edge (Section 18.12) leaves a
        # margin of 0 up to rounding, of either sign ("by 2.22e-16" read as
        # nonsense; one in five such models was missed, a second reader).
        tol = 1e-9 * max(1.0, float(np.abs(b).max()))
        for c in range(W.shape[0]):
            others = [k for k in range(W.shape[0]) if k != c]
            margins = [b[c] - b[k] - np.linalg.norm(W[c] - W[k]) * R for k in others]
            if min(margins) >= -tol:
                edge = min(margins) <= tol
                how = ("there: its decision threshold lies at the ball's edge or "
                       "beyond" if edge else f"by {min(margins):.3g} there")
                warn_about_release(
                    f"The model predicts class {np.asarray(self.classes_[c]).item()!r} "
                    "for every row of "
                    f"norm <= data_norm={R:g}: its intercept outweighs its "
                    f"coefficients {how}. At this epsilon and "
                    "size the private model does not separate the classes well "
                    "enough to predict the other one anywhere (as "
                    "LogisticRegression() may, for the error); for a binary model "
                    "class_weight='balanced' decides for the balanced error "
                    "privately, and a larger epsilon, more rows or a larger C let "
                    "it learn more (privacy-accounting.md, Sections 18.6, 18.12).",
                    UserWarning)
                return
        self._warn_if_nearly_constant()

    def _warn_if_nearly_constant(self):
        """Warn when the released class moments' Gaussian model of the scores
        (Section 18.12) puts under :data:`NEARLY_CONSTANT_SHARE` of the rows on
        one side of the threshold: the model then gives nearly every row the
        same class, though not every point of the ball (Section 18.6). Reads
        released numbers only, so it costs no privacy."""
        square = self.__dict__.get("noisy_score_square_")
        if square is None:
            return
        w = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))[0]
        shares = moment_predicted_share(
            self.noisy_class_count_, self.noisy_class_sum_, square, w,
            data_norm=float(self._param("data_norm")))
        rare = int(np.argmin(shares))
        if not shares[rare] < NEARLY_CONSTANT_SHARE:
            return
        label = np.asarray(self.classes_[1 - rare]).item()
        # Two digits, never rounded up to the 1 % it is under (a second reader).
        pct = f"{100.0 * shares[rare]:.2g}"
        pct = pct if float(pct) < 100.0 * NEARLY_CONSTANT_SHARE else "0.99"
        warn_about_release(
            f"The model predicts class {label!r} for nearly every row it was "
            f"trained on (the other class for about {pct} % "
            "of them, as estimated from its released class statistics: a "
            "Gaussian model of the scores along its direction). At this epsilon "
            "and size the private model separates the classes too little, or its "
            "noisy class statistics put the threshold too far, to predict the "
            "other class often; class_weight='balanced' decides for the balanced "
            "error privately, and a larger epsilon, more rows or a larger C let "
            "it learn more (privacy-accounting.md, Sections 18.6, 18.12).",
            UserWarning)

    def _warn_if_means_noisy(self):
        """With ``class_weight="balanced"`` (Sections 18.11, 18.14), warn when
        a class's noisy count is under :data:`MIDPOINT_MIN_COUNT_PER_NOISE`
        times the release's noise: that class's mean, hence the threshold (two
        classes), or its weight, hence the shift (more), is then mostly noise.
        Reads released numbers only. (The default error
        threshold of Section 18.12 falls back to the more frequent class when
        the means are not ordered, which :meth:`_warn_if_constant` reports.)"""
        counts = self.__dict__.get("noisy_class_count_")
        shift = counts is not None and len(counts) > 2   # Section 18.14
        if not shift and ("noisy_class_sum_" not in self.__dict__
                          or "noisy_score_square_" in self.__dict__):
            return
        sigma = float(self.privacy_guarantee_.count_noise) if hasattr(
            self, "privacy_guarantee_") else 0.0
        counts = np.asarray(counts, dtype=np.float64)
        limit = MIDPOINT_MIN_COUNT_PER_NOISE * sigma
        if not (sigma > 0 and counts.min() < limit):
            return
        if shift:
            does, noisy, section = ("shifts the intercepts by class counts released",
                                    "its weight (and the shift) is", "18.14")
        else:
            does, noisy, section = ("puts the threshold at the midpoint of the two "
                                    "class means of the rows, released",
                                    "its mean (and the decisions) are", "18.11")
        c = int(counts.argmin())
        warn_about_release(
            f"class_weight='balanced' {does} with noise of {sigma:.3g} records; "
            f"class {np.asarray(self.classes_[c]).item()!r} has a noisy count of "
            f"{counts[c]:.0f}, under {limit:.0f}, so {noisy} mostly noise. A larger "
            "epsilon or prevalence_share, more rows, or public class weights help "
            f"(privacy-accounting.md, Section {section}).", UserWarning)
