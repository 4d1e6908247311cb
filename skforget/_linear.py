# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What every private linear estimator of skforget shares, whatever its solver.

Rows in memory enter through one door (``_validate_rows``, then the public row
map of :mod:`skforget._rows`; rows on a cluster go through the same row map on
their workers), coefficients are kept in one layout (``_theta``), predictions
go through the same row map as training (``_margins``), and fitted state is
swapped all at once or not at all (``restore_on_error``, ``_atomic_edit``). The
classification and regression mixins (target encoding, the public label set, the
prediction methods) are in :mod:`skforget._tasks`. Solvers (noisy gradient
descent, output perturbation) subclass :class:`_BasePrivateLinear` and implement
``fit`` and ``partial_unlearn``.
"""

import copy
import functools
import math
import sys
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from skforget import accounting
from skforget._database import check_version
from skforget._marks import (
    FITTED_AFTER,
    FITTED_BY,
    PIPELINE_STEP,
    check_not_pipeline_step,
    check_not_selected,
    warn_what_the_edit_keeps,
)
from skforget._release import mark_committed, release_spending, warn_about_callers
from skforget._rows import (
    augmented_norms,
    canonical_csr,
    make_design,
    plan_weighting,
    project_rows,
    row_weights,
)
from skforget._utils import no_interrupts
from skforget._validation import (
    SelectionContextMixin,
    check_labels_present,
    model_selection_label,
    noise_key,
    user_stacklevel,
    warn,
)
from skforget.accounting._calibration import curvature_trace
from skforget.exceptions import (
    PrivacyBudgetWarning,
    PrivacyLeakWarning,
    UnlearningError,
)

#: Version of the rules by which "auto" hyper-parameters resolve, recorded at
#: fit so that a model keeps its meaning of "auto" for every later edit.
#: 1: the softmax unclipped; 2: noisy GD's softmax clipped at ``data_norm``;
#: 3: noisy GD's softmax ``C="auto"`` grows with the number of records;
#: 4, 5: privacy-accounting.md, Section 16.1.
_AUTO_RULES = 5


def check_edit_weighting(plan, weighted):
    """A request's records carry weights exactly when the fit's did."""
    if plan.sample_weight_bound and not weighted:
        raise UnlearningError(
            "The model was fitted with sample weights, but the request carries "
            "none: build it on a skforget.Database with sample_weight, or pass "
            "EditRequest(..., sample_weight=...) and the new records' weights.")
    if not plan.sample_weight_bound and weighted:
        raise UnlearningError(
            "The request carries sample weights, but the model was fitted "
            "without: fit with sample_weight to use them.")


def warn_if_adaptive_exceeds(cert, target):
    """Say when an edit's figure against requests adapted to the earlier
    releases (Theorem 6.3; a pipeline's, Theorem 19.6) passes ``target``,
    the model's epsilon: a model's edit and a pipeline's say it alike."""
    # Relative slack: after one release the figure is that release's epsilon,
    # reached by another sum of the same terms (a pipeline's: equal to the
    # last digit or two, not above it).
    if cert is None or not cert.epsilon_adaptive > target * (1 + 1e-9):
        return
    warn(
        f"After {cert.index} edit(s), the figure against requests adapted to "
        f"earlier releases is epsilon {cert.epsilon_adaptive:.3g}, above the "
        f"model's target {target:.3g}. If requests may depend on what the models "
        "revealed, fit a new model on the current database (it restarts the "
        "count; privacy_guarantee_ explains).",
        PrivacyBudgetWarning, stacklevel=user_stacklevel())


@contextmanager
def _atomic_edit(estimator, edits):
    """``restore_on_error`` for ``partial_unlearn``: the estimator and the caller's
    arrays of an in-place request change together or not at all.

    An in-place request applied inside the block is committed (its dead rows
    zeroed, its undo copies dropped) in the same step, that Ctrl-C cannot
    split, as the block's success; on any error or interrupt before it, the
    estimator's attributes and the caller's rows are both put back (review
    findings 2 and 3).
    """
    snapshot = dict(estimator.__dict__)
    applied_here = edits._result is None
    committed = False
    try:
        yield
        with no_interrupts():
            if applied_here:
                edits._commit_in_place()
            committed = True
            mark_committed()
    except BaseException:
        if not committed:
            with no_interrupts():
                estimator.__dict__.clear()
                estimator.__dict__.update(snapshot)
                if applied_here:
                    edits._restore()
        raise


def _same_value(a, b):
    """Whether two parameter values are equal: array-likes (lists, arrays,
    pandas Series or Index) elementwise, NaN equal to NaN, the rest by ``==``."""
    def array_like(v):
        return isinstance(v, list | tuple) or hasattr(v, "__array__")

    try:
        if array_like(a) or array_like(b):
            a, b = np.asarray(a), np.asarray(b)
            if a.shape != b.shape:
                return False
            nan = a.dtype.kind in "fc" and b.dtype.kind in "fc"
            return bool(np.array_equal(a, b, equal_nan=nan))
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
        return bool(a == b)
    except (TypeError, ValueError):
        return False


@functools.cache
def _param_names(cls):
    return BaseEstimator._get_param_names.__func__(cls)


def _first_non_finite(X, y, message):
    """``"row i of X"`` or ``"y[i]"``: where scikit-learn's "contains NaN /
    infinity" refusal found its value (None for any other error)."""
    if "contains NaN" not in message and "contains infinity" not in message:
        return None
    name, values = ("y", y) if message.startswith("Input y") else ("X", X)
    try:
        values = values.toarray() if sp.issparse(values) else np.asarray(
            values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    bad = ~np.isfinite(values)
    rows = np.flatnonzero(bad.reshape(len(values), -1).any(axis=1)) \
        if values.ndim else np.array([], dtype=int)
    if rows.size == 0:
        return None
    return f"y[{int(rows[0])}]" if name == "y" else f"row {int(rows[0])} of X"


class _BasePrivateLinear(SelectionContextMixin, BaseEstimator):
    """Rows, coefficients and margins of a private linear model.

    Subclasses (through the mixins below) define the targets and the
    regularisation; solver subclasses define ``fit`` and ``partial_unlearn``.

    Every hyper-parameter but ``_free_params`` is frozen at ``fit``
    (:meth:`_freeze_params`): the row map, the clipping, the noise and every
    privacy figure of a fitted model follow from the values in force then, so
    edits, predictions and certificates use those values, whatever
    ``set_params`` changed since (privacy-accounting.md, Section 16).
    """

    #: Whose default regularisation ``C="auto"`` / ``alpha="auto"`` is
    #: (:func:`~skforget.accounting.coef_norm_growth`; Section 8.5): noisy GD's,
    #: unless a solver says otherwise (output perturbation does).
    _mechanism = "noisy_gd"
    #: Whether ``C="auto"`` / ``alpha="auto"`` lets its nominal coefficient
    #: norm grow with ``rho`` above epsilon = 1, and the softmax's with the
    #: number of records (Section 8.5): measured for noisy GD's classifiers;
    #: a regressor keeps the epsilon = 1 rule.
    _default_norm_grows = True

    #: Hyper-parameters an edit takes as they are now: they bound work, print
    #: public numbers, seed the noise (a seed is flagged in the guarantee),
    #: choose which prediction certificates are tracked on the side or where
    #: spends are recorded (``ledger``); none changes the law of a release.
    _free_params = ("verbose", "n_jobs", "random_state", "certify_k_max",
                    "certify_modes", "ledger")

    @classmethod
    def _get_param_names(cls):
        # scikit-learn reads the signature of __init__ on every get_params (a
        # fit calls it several times: a fifth of a small table's fit); a
        # class's signature does not change, so it is read once per class.
        return _param_names(cls)

    # --- hyper-parameters frozen at fit ----------------------------------------
    def _freeze_params(self):
        """Keep the hyper-parameters in force for this fit (called first thing
        in ``fit`` and ``plan``; a deep copy, so mutating a dict or list passed
        as a parameter later changes nothing). Free parameters are recorded
        too (``interval_certify`` replays the fit's seed) but not enforced."""
        self._fit_params = copy.deepcopy(self.get_params(deep=False))
        # "auto" resolves by the rules in force now, for this fit and every
        # edit of it: a later release of skforget may change a default, not
        # what a fitted model's "auto" meant (Section 16.1).
        self._auto_rules = _AUTO_RULES

    def __setstate__(self, state):
        super().__setstate__(state)
        # Pickled before estimators took a ledger: none.
        self.__dict__.setdefault("ledger", None)
        if "_fit_params" in self.__dict__ or "_plan" in self.__dict__:
            # Frozen before "auto" rules were versioned: the first rules.
            self.__dict__.setdefault("_auto_rules", 1)
        if "_plan" in self.__dict__ and "_fit_params" not in self.__dict__:
            # Pickled before parameters were frozen: the pickled parameters
            # are the best record of the fit, if they agree with its plan;
            # otherwise nothing says what the fit used, and edits are refused.
            self._fit_params = copy.deepcopy(self.get_params(deep=False))
            if not self._params_agree_with_plan():
                self._fit_params = None

    def _bounds_agree_with_plan(self):
        """Whether the frozen parameters give the plan's clipping threshold and
        row bound, hence its per-record gradient bound (Section 16.1)."""
        plan = self._plan
        try:
            clip = self._clip_norm(plan.loss)
            same_clip = (clip is None and plan.clip_norm is None) or (
                clip is not None and plan.clip_norm is not None
                and math.isclose(float(clip), plan.clip_norm, rel_tol=1e-12))
            return same_clip and math.isclose(self._row_norm_bound(plan.loss),
                                              plan.row_norm, rel_tol=1e-12)
        except (AttributeError, TypeError, ValueError):
            return False

    def _params_agree_with_plan(self):
        """Whether the frozen parameters give the plan's public constants."""
        plan = self._plan
        try:
            return (self._bounds_agree_with_plan()
                    and math.isclose(float(self._param("epsilon")), plan.epsilon,
                                     rel_tol=1e-12)
                    and int(self._param("max_edit_size")) == plan.max_edit_size
                    and self._param("relation") == plan.relation
                    and int(self._param("group_size")) == plan.group_size)
        except (AttributeError, TypeError, ValueError):
            return False

    def _param(self, name):
        """Hyper-parameter ``name`` as frozen at fit (its current value before
        any fit, or for a model pickled before parameters were frozen)."""
        frozen = self.__dict__.get("_fit_params")
        if frozen is not None and name in frozen:
            return frozen[name]
        return getattr(self, name)

    def _changed_params(self):
        """``{name: (value at fit, value now)}`` for every frozen
        hyper-parameter that ``set_params`` has changed since ``fit``."""
        if "_fit_params" in self.__dict__ and self._fit_params is None:
            raise UnlearningError(
                "This model was pickled by an older skforget after set_params had "
                "changed parameters that its plan fixed (clip_norm, data_norm, "
                "intercept_scaling, epsilon, max_edit_size, relation or "
                "group_size), so nothing records the values it was fitted with "
                "and an edit cannot be certified. Fit it again.")
        frozen = self.__dict__.get("_fit_params") or {}
        return {k: (v, getattr(self, k)) for k, v in frozen.items()
                if k not in self._free_params and not _same_value(v, getattr(self, k))}

    @contextmanager
    def _fit_hyperparameters(self):
        """Run an edit with the hyper-parameters frozen at ``fit``.

        An edit continues (or refits) the fitted model under the plan made at
        ``fit``: the noise, step sizes and every privacy figure assume that
        fit's row map, clipping, weighting and targets. Values changed by
        ``set_params`` since are set aside for the block, with a warning that
        names them (an incremental method works from the fitted state; a
        refit uses the new values), and restored afterwards.
        """
        changed = self._changed_params()
        if changed:
            listed = ", ".join(f"{k}={old!r} (now {new!r})"
                               for k, (old, new) in changed.items())
            warn(
                f"set_params changed {listed} since fit. partial_unlearn serves the "
                "edit with the values fixed at fit, which the model's plan and "
                "certificates assume; call fit to use the new values.",
                UserWarning, stacklevel=user_stacklevel())
        current = {k: getattr(self, k) for k in changed}
        try:
            for k, (old, _) in changed.items():
                setattr(self, k, copy.deepcopy(old))
            if "_plan" in self.__dict__ and not self._bounds_agree_with_plan():
                # Only a rule that resolves "auto" differently from the fit's
                # (e.g. a model fitted by a newer skforget) gets here: the
                # edit's gradients would not be bounded by the G its noise was
                # calibrated for (Section 16.1).
                raise UnlearningError(
                    "The hyper-parameters frozen at fit no longer give this model's "
                    "plan: clip_norm resolves to "
                    f"{self._clip_norm(self._plan.loss)!r} and the row bound to "
                    f"{self._row_norm_bound(self._plan.loss):.6g}, "
                    f"where the plan has {self._plan.clip_norm!r} and "
                    f"{self._plan.row_norm:.6g}, so an edit could not be "
                    "certified. "
                    "Was the model fitted by another version of skforget? Use that "
                    "version, or fit it again.")
            yield
        finally:
            for k, v in current.items():
                setattr(self, k, v)

    # --- hooks for subclasses ------------------------------------------------
    def _encode_targets(self, y, *, fit):
        """Return ``(y_float, n_outputs, loss, new_attributes)``."""
        raise NotImplementedError

    def _regularization(self, n_samples):
        """L2 strength ``lambda`` of the per-sample objective."""
        raise NotImplementedError

    def _set_coefficients(self, W, b):
        """Store coefficients in the subclass's public layout."""
        raise NotImplementedError

    def _check_new_targets(self, edits):
        """Subclass hook: reject new records whose targets the model cannot use."""

    def _output_scale(self):
        """Public factor between the solver's outputs and the model's (1 except
        for a regressor fitted with a ``target_scale``)."""
        return 1.0

    def _target_centre(self):
        """Public origin of the model's outputs (0 except for a regressor
        fitted with a ``target_offset``)."""
        return 0.0

    def _public_targets(self):
        """``(n_outputs, loss, new_attributes, classes or None)`` from public
        parameters alone, for rows whose targets stay on a cluster."""
        raise NotImplementedError

    def _dp_conversion(self):
        """Conversion of this estimator's DP figure and target (Section 21):
        ``"gaussian"`` for the tight recipe and output perturbation, whose
        releases are ``sqrt(2 rho)``-GDP; ``"improved"`` for ``recipe="cs23"``."""
        return accounting.dp_conversion(recipe=getattr(self, "recipe", "tight"))

    def _warn_about_callers(self, rho, delta):
        """Warn about what the scikit-learn code running this fit does to the
        guarantee (:func:`skforget._release.warn_about_callers`); ``rho`` is
        the fit's planned rho-coefficient (public). It may mark the model
        (``_marks``); an earlier fit's marks go first."""
        for mark in (FITTED_AFTER, FITTED_BY, PIPELINE_STEP):
            self.__dict__.pop(mark, None)
        warn_about_callers(self, rho, delta)

    def _ledger_spending(self, what, rho, segment):
        """Reserve a planned release on ``ledger`` before any training pass
        (privacy-accounting.md, Section 20.3): raises PrivacyBudgetExceeded if
        it would not fit, or if it draws the seeded noise of a recorded
        release (its ``segment`` of the history: 0 at fit); records it, with
        the final figure the block may put in the yielded dict as ``"rho"``,
        when the public call (``releasing``) has succeeded; cancels it if the
        call fails before. A no-op without a ledger."""
        ledger = getattr(self, "ledger", None)
        label = f"{type(self).__name__}.{what}"
        context = self.__dict__.get("_selection_context", ())
        return release_spending(
            ledger, label + (model_selection_label(context) if ledger is not None
                             else ""), context, owner=self,
            rho=rho, relation=self._param("relation"),
            group_size=int(self._param("group_size")),
            # GDP releases compose as GDP (privacy-accounting.md, 20.2, 21.5)
            gaussian=self._dp_conversion() == "gaussian",
            noise=(noise_key(self.random_state, segment),))

    @classmethod
    def _warn_after_edit(cls, guarantee):
        """The warnings every edit owes its user (adaptive figure, label set)."""
        cls._warn_if_adaptive_exceeds(guarantee)
        cls._warn_if_label_set_kept(guarantee)

    @staticmethod
    def _warn_if_label_set_kept(guarantee):
        """Say that an edit kept a label set read from the training labels."""
        if not getattr(guarantee, "label_set_public", True):
            # The label set is part of the model (classes_, the coefficients'
            # shape) and is fixed at fit: an edit keeps it, so a deleted
            # record whose label no remaining record has still shows there.
            warn(
                "This model's label set was read from the training labels at fit "
                "and every edit keeps it: a deleted record whose label no "
                "remaining record has still shows in classes_ (and in the "
                "coefficients' shape), which the deletion certificate does not "
                "cover. Fit with classes=[...] (a public label set) to forget "
                "such records entirely.",
                PrivacyLeakWarning, stacklevel=user_stacklevel())

    @staticmethod
    def _warn_if_adaptive_exceeds(guarantee):
        """Say when an edit's adaptive figure passes the model's epsilon."""
        if guarantee.adaptive_exceeds_target:
            warn_if_adaptive_exceeds(guarantee.deletion, guarantee.target_epsilon)

    # --- shared helpers --------------------------------------------------------
    def _intercept_scaling(self, loss=None):
        """Feature value ``s_b`` of the intercept coordinate (0 without one).

        "auto" is ``0.1 * data_norm`` for the softmax, ``data_norm`` otherwise:
        the unclipped softmax's sensitivity and smoothness grow with
        ``R^2 = data_norm^2 + s_b^2`` (the intercept would take half of both at
        ``s_b = data_norm``), while the clipped losses' sensitivity does not
        depend on it and imbalanced binary data need a lightly penalised
        intercept (its penalty is ``lambda / s_b^2``). ``loss`` defaults to the
        fitted model's.
        """
        if not self._param("fit_intercept"):
            return 0.0
        s_b = self._param("intercept_scaling")
        if isinstance(s_b, str) and s_b == "auto":
            loss = self._plan.loss if loss is None else loss
            return (0.1 if loss == "multinomial" else 1.0) * float(
                self._param("data_norm"))
        return float(s_b)

    def _row_norm_bound(self, loss=None):
        """Public bound ``R`` on ``||[x, s_b]||`` (privacy-accounting.md, 10.2)."""
        R = math.hypot(self._param("data_norm"), self._intercept_scaling(loss))
        if not math.isfinite(R * R) or R * R < sys.float_info.min:
            # Below, the curvature and the noise scale underflow to 0 or to
            # subnormals, which lose their digits (red team r2).
            raise ValueError(
                f"data_norm={self.data_norm!r} and intercept_scaling="
                f"{self.intercept_scaling!r} give a row-norm bound whose square "
                f"{'overflows' if R > 1 else 'underflows'} float64; rescale the rows "
                "with a public constant instead (to a data_norm near 1).")
        return R

    def _check_conditioning(self, loss, n_samples, lam=None):
        """Refuse regularisation so weak next to the curvature that a noisy step
        cannot contract in float64 (``1 - eta lam`` rounds to 1), naming the
        parameters at fault."""
        lam = self._regularization(n_samples) if lam is None else lam
        beta = accounting.smoothness(loss=loss, row_norm=self._row_norm_bound(loss))
        kappa = (lam + beta) / lam if lam > 0 else math.inf
        if not kappa < 1e12:
            name = self._regularization_name
            raise ValueError(
                f"{name}={getattr(self, name)!r} on {n_samples} rows gives lambda="
                f"{lam:.3g} per sample, while data_norm={self.data_norm!r} gives a "
                f"curvature bound of {beta:.3g}: the condition number {kappa:.3g} is "
                "too large for noisy gradient descent to contract in float64. Scale "
                "the rows to a public data_norm near 1 or regularise more.")
        if not lam <= 1e100 * beta:
            name = self._regularization_name
            weaker = "a larger C" if name == "C" else "a smaller alpha"
            raise ValueError(
                f"{name}={getattr(self, name)!r} on {n_samples} rows gives lambda="
                f"{lam:.3g} per sample, over 1e100 times the curvature bound "
                f"{beta:.3g}: the model would be zero up to its noise, whose "
                f"variance underflows float64. Regularise less ({weaker}).")

    def _rules(self):
        """The version of the "auto" rules this model resolves by: the one
        recorded at its fit (Section 16.1), today's before any fit."""
        return self.__dict__.get("_auto_rules", _AUTO_RULES)

    def _auto_regularization(self):
        value = getattr(self, self._regularization_name)
        return isinstance(value, str) and value == "auto"

    def _regularization_for(self, loss, n_samples, n_params, n_outputs, delta):
        """``lambda`` per sample: from ``C`` / ``alpha`` when given, else the
        public default of :func:`skforget.accounting.default_regularization`."""
        value = getattr(self, self._regularization_name)
        if not (isinstance(value, str) and value == "auto"):
            return self._regularization(n_samples)
        G = accounting.gradient_bound(loss=loss, row_norm=self._row_norm_bound(loss),
                                      clip_norm=self._clip_norm(loss),
                                      n_classes=max(2, n_outputs))
        S = accounting.sensitivity(gradient_bound=G, relation=self.relation,
                                   group_size=self.group_size)
        # The same rho the plan calibrates to (privacy-accounting.md, 8.5, 21.5).
        rho = accounting.epsilon_to_rho(epsilon=float(self.epsilon), delta=delta,
                                        method=self._dp_conversion())
        # The softmax's nominal norm grows with the table too (rules >= 3):
        # on the census's multiclass tables the default over-regularised
        # from about N_REFERENCE records on; the binary ones did not move.
        # Rules >= 4: the noise's cost counts the directions the data curve
        # (at most 2 T / lambda), not every parameter (Section 8.5); noisy GD
        # only, whose noise settles in the Gibbs law, and with at least as many
        # records as features, below which the regulariser also stands in for
        # the sampling error that the balance leaves out.
        n_features = n_params // max(1, n_outputs) - int(bool(self.fit_intercept))
        # Rules >= 5: the squared loss's own nominal norm, and output
        # perturbation's regressor at its own balance, the cube root (8.5).
        squared = loss == "squared" and self._rules() >= 5
        trace = None
        if (self._rules() >= 4 and n_samples >= n_features
                and (self._mechanism == "noisy_gd" or squared)):
            trace = curvature_trace(loss=loss, row_norm=self._row_norm_bound(loss),
                                    n_classes=max(2, n_outputs))
        if squared:
            coef_norm = accounting.SQUARED_COEF_NORM
        elif self._default_norm_grows:
            coef_norm = None
        else:
            coef_norm = accounting.DEFAULT_COEF_NORM
        return accounting.default_regularization(
            sensitivity=S, n_params=n_params, rho=rho, n_samples=n_samples,
            data_norm=self.data_norm, mechanism=self._mechanism,
            coef_norm=coef_norm,
            grow_with_samples=loss == "multinomial" and self._rules() >= 3,
            curvature_trace=trace)

    def _class_weights(self, n_classes, class_weight=None):
        """Per-class weights from ``class_weight`` (None: no class weights).

        Classifiers override it; regressors have none.
        """
        return None

    def _weighting(self, weighted, n_outputs):
        """The public weighting of a fit (privacy-accounting.md, Section 4.4),
        as :func:`~skforget._rows.row_weights` keywords: ``max_sample_weight``
        if the records carry weights (else 0), the per-class weights (empty if
        unset) and ``weight_bound``, the bound ``W`` of their product.

        Dividing every weight by ``W`` keeps it in [0, 1], so the per-record
        gradient bound, the sensitivity and the smoothness are those of the
        unweighted model; the caller divides ``lambda`` by ``W`` so that ``C``
        / ``alpha`` keep their scikit-learn meaning (``C sum_i w_i loss_i +
        ||w||^2 / 2``).
        """
        sample_weight_bound = float(self.max_sample_weight) if weighted else 0.0
        per_class = self._class_weights(max(2, n_outputs))
        # A multiclass model's class weights shift its decision instead of
        # weighting its records (privacy-accounting.md, Section 18.13).
        class_weights = () if per_class is None or n_outputs >= 3 else \
            tuple(map(float, per_class))
        bound = ((sample_weight_bound if weighted else 1.0)
                 * (max(class_weights) if class_weights else 1.0))
        if not (math.isfinite(bound) and bound > 0.0):
            # Every row weight would be divided by inf (the model would train
            # on nothing while reporting its guarantee) or by 0.
            largest = max(class_weights) if class_weights else 1.0
            raise ValueError(
                f"max_sample_weight={self.max_sample_weight!r} times the largest "
                f"class_weight ({largest:.6g}) is {bound!r}, the public bound every "
                "record's weight is divided by. Rescale sample_weight and "
                "class_weight with a public constant (only their ratios matter) "
                "so that the product of the two bounds is a positive, finite "
                "number.")
        return {"sample_weight_bound": sample_weight_bound,
                "class_weights": class_weights, "weight_bound": bound}

    def _edited_database(self, edits, *, checked=False):
        """Validate an edit request against the current model and apply it.

        Shared by every solver's ``partial_unlearn`` (:meth:`_check_edit_request`,
        skipped when the caller has ``checked`` it). Returns the edited rows
        (validated like ``fit``'s), their encoded targets, the loss and the row
        weights of the fit's public weighting.
        """
        if not checked:
            self._check_edit_request(edits)
        # Undoable until the caller's _atomic_edit commits (in-place requests).
        X_new, y_new = edits._apply_uncommitted()
        X_new, y_new = self._validate_rows(X_new, y_new, reset=False,
                                           y_numeric=self._y_numeric,
                                           ensure_min_samples=0)
        y_enc, _, loss, _ = self._encode_targets(y_new, fit=False)
        return X_new, y_enc, loss, self._edit_weights(self._plan, edits, y_enc)

    def _check_edit_request(self, edits):
        """An edit request must be built on the model's current database
        (version and size), name at most ``max_edit_size`` rows and carry
        targets the model can use; in memory or on a sharded database."""
        check_not_selected(self)
        check_not_pipeline_step(self, edits)
        plan = self._plan
        previous = self.privacy_guarantee_
        # getattr: models pickled before databases had versions lack it.
        check_version(edits.version, getattr(self, "database_version_", None),
                      warn_unversioned=not getattr(edits, "_version_checked", False))
        if edits.n_samples_before != previous.n_samples:
            raise UnlearningError(
                f"The request names a database of {edits.n_samples_before} rows, but "
                f"the model's current database has {previous.n_samples} rows. Build "
                "the request on the database the model was fitted on, or on the one "
                "returned by the previous request's apply()."
            )
        if edits.size > plan.max_edit_size:
            raise UnlearningError(
                f"The request edits {edits.size} rows, more than max_edit_size="
                f"{plan.max_edit_size} that this model was planned for. Split it into "
                "smaller requests or fit with a larger max_edit_size."
            )
        self._check_new_targets(edits)
        edits._check_finite_rows()
        warn_what_the_edit_keeps(self)   # once checked (17.4)

    @staticmethod
    def _edit_weights(plan, edits, y_enc):
        """Row weights of the edited database, with the fit's public weighting
        (a stateless model keeps no weights: the request carries them)."""
        w_after = edits.sample_weight_after
        check_edit_weighting(plan, w_after is not None)
        return row_weights(w_after, y_enc, **plan_weighting(plan))

    def _clip_norm(self, loss):
        """The clipping threshold in force: ``clip_norm``, with "auto" resolved.

        "auto" clips each logistic output at ``0.5 * data_norm`` (the measured
        sweet spot: an eighth of the noise variance of the natural bound
        ``sqrt(2) * data_norm`` with the default intercept, for a Huber-like cap
        on badly fitted records). Noisy GD's softmax is clipped at ``data_norm``
        (the clipped softmax of Lemma 4.5: about half the noise variance of its
        natural bound ``sqrt(2) R``, ``R = 1.005 data_norm`` with the default
        intercept). Models fitted before the rules were recorded
        (``_auto_rules == 1``) and output perturbation, which needs the softmax
        itself (Section 15), do not clip it (None).
        """
        L = self._param("clip_norm")
        if isinstance(L, str) and L == "auto":
            if loss == "squared":
                return None
            data_norm = float(self._param("data_norm"))
            if loss != "multinomial":
                return 0.5 * data_norm
            if self._rules() >= 2 and self._mechanism == "noisy_gd":
                return data_norm
            return None
        return L

    def _output_gradient_bound(self, loss):
        """Per-output bound on the clipped gradient the kernel enforces.

        ``min(L, R)`` for each logistic output (``R`` when ``clip_norm`` is None:
        the clamp is then inactive for rows within the ball), ``L`` for the
        squared loss, ``min(L, sqrt(2) R)`` for the softmax (the clipped
        softmax of Lemma 4.5 below its natural bound).
        """
        R = self._row_norm_bound(loss)
        L = self._clip_norm(loss)
        if loss == "multinomial":
            # One joint bound (the clipped softmax of Lemma 4.5 below sqrt(2) R).
            return accounting.gradient_bound(loss=loss, row_norm=R, clip_norm=L)
        if loss == "squared":
            return float(L)
        return R if L is None else min(float(L), R)

    def _validate_rows(self, X, y="no_validation", *, reset, order="C", **kwargs):
        """``validate_data`` for rows (and targets, if given), in the layouts the
        kernel reads: float64 or float32, C-contiguous (unless ``order`` says
        otherwise) or CSR.

        A CSR matrix is checked for sorted, unique, in-range indices in one pass
        (SciPy's cached canonical flag is not trusted) and duplicates are summed
        into a copy: a row holding 0.7 twice in one column is the value 1.4 and
        must not pass the ``data_norm`` bound with norm 0.99. The caller's matrix
        is never modified.
        """
        rows_only = isinstance(y, str) and y == "no_validation"
        if not rows_only and y is not None and not self._y_numeric:
            check_labels_present(y, ValueError if reset else UnlearningError)
        try:
            out = validate_data(self, X, y, reset=reset, accept_sparse="csr",
                                dtype=[np.float64, np.float32], order=order,
                                **kwargs)
        except ValueError as exc:
            where = _first_non_finite(X, y, str(exc))
            if where is None:
                raise
            # scikit-learn's message names the input; add the row at fault.
            raise ValueError(f"{exc} The first is {where}.") from None
        X = out if rows_only else out[0]
        if sp.issparse(X):
            X = canonical_csr(X)
        return X if rows_only else (X, out[1])

    def _design(self, X, y, loss, *, where):
        return make_design(X, y, loss=loss, data_norm=self._param("data_norm"),
                           intercept_scaling=self._intercept_scaling(loss),
                           gradient_bound=self._output_gradient_bound(loss),
                           clip_rows=self._param("clip_rows"), where=where)

    def _n_outputs(self, plan, n_features):
        """Outputs ``K`` of a plan's model on ``n_features`` features (the plan
        counts ``K (d + 1)`` parameters with an intercept, ``K d`` without)."""
        return plan.n_params // (n_features + int(self._param("fit_intercept")))

    def _prevalence_budget(self, n_outputs, loss, delta, n_samples):
        """The split of the target with noisy class counts (None: no counts;
        classifiers override it, Section 18)."""
        return None

    def _redraw_counts(self, exact_counts, noise_scale, *, segment, exact_moments,
                       coef, statistics):
        """Drop and redraw released class statistics (classifiers hold them)."""

    def _class_statistics(self):
        """What a prevalence share buys (classifiers, Section 18.11)."""
        return "counts"

    def _warn_if_constant(self):
        """Warn when the released model is constant on the ball (classifiers)."""

    def _intercept_offset(self):
        """The public offset in ``intercept_`` that the solver's parameter does
        not hold (a classifier's prevalence offset, Section 18.3); 0 here."""
        return 0.0

    def _certificate_norms(self, X, scale, norms, s_b):
        """What a certificate's radius multiplies for each mapped row:
        ``||[a x, s_b]||`` (a classifier with the class-mean midpoint
        overrides it, certificates.md 9.11)."""
        return augmented_norms(norms, s_b)

    def _theta(self):
        """Current parameter ``(W, b)`` in the solver's layout."""
        out = self._output_scale()
        W = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64)) / out
        s_b = self._intercept_scaling()
        trained = self.__dict__.get("_trained_intercept")
        intercept = np.atleast_1d(np.asarray(
            self.intercept_ if trained is None else trained, dtype=np.float64))
        b = intercept / (s_b * out) if s_b > 0 else np.zeros(W.shape[0])
        return np.ascontiguousarray(W), b

    # --- prediction ------------------------------------------------------------
    def _margins(self, X, *, return_norms=False):
        """``a(x) * (X @ coef.T) + intercept``: rows are mapped onto the
        ``data_norm`` ball exactly as in training (a public, per-row map, the
        same row map as ``fit``; at prediction over-norm rows are always
        projected, never refused).

        With ``return_norms`` also the norms ``||[a(x) x, s_b]||`` of the mapped
        rows times the output scale: what prediction certificates multiply their
        radius (a distance between solver parameters) by.
        """
        check_is_fitted(self)
        X = self._validate_rows(X, reset=False, order=None)
        if return_norms:  # certificates: no float32 rounding in their margins
            X = X.astype(np.float64)
        X, scale, norms = project_rows(X, self._param("data_norm"), clip_rows=True)
        W, b = self._theta()
        s_b = self._intercept_scaling()
        # Rows whose product overflows are recomputed below; underflow is
        # the intended result for tiny rows, whatever the caller's errstate.
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            Z = safe_sparse_dot(X, W.T.astype(X.dtype, copy=False),
                                dense_output=True)
            Z = np.asarray(Z, dtype=np.float64) * scale[:, None] + (
                b * s_b + self._intercept_offset())
        bad = np.flatnonzero(~np.all(np.isfinite(Z), axis=1))
        if bad.size:
            # float32 rows with entries near its largest value overflow X @ W in
            # float32; their margins are recomputed in float64 from the mapped
            # rows (rows with extreme norms were already projected in a copy).
            rows = X[bad].toarray() if sp.issparse(X) else X[bad]
            with np.errstate(under="ignore"):
                mapped = np.asarray(rows, dtype=np.float64) * scale[bad, None]
                Z[bad] = mapped @ W.T + (b * s_b + self._intercept_offset())
        out = self._output_scale()
        if out != 1.0:
            Z *= out
        if not return_norms:
            return Z
        return Z, self._certificate_norms(X, scale, norms, s_b) * out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
