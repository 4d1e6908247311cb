# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Which preprocessing is public: fitted state that holds nothing of the rows.

A step inside a deletion pipeline may keep state only if that state is fixed
before the rows are seen: it is stateless, its state is given as constants,
or it was fitted elsewhere (on public data) and frozen. Anything learned from
the training rows (a mean, the categories seen, a quantile) would keep a
deleted record after ``partial_unlearn`` and is outside the certificate.

Whether a transformer learns from the rows depends on its class *and* its
parameters (``OneHotEncoder`` with ``categories="auto"`` learns the categories
present; with explicit lists it does not), so the check is an explicit
allow-list with one predicate per known transformer. It does not guess:
anything else is refused, unless its class declares itself public through
the opt-in protocol ``__skforget_public__``.

The protocol: a transformer class may define ``__skforget_public__(self)``
returning a short text that says why its fitted state holds nothing of the
rows in the current configuration (e.g. ``"bins given as constants"``). It
raises :class:`~skforget.exceptions.DataDependentStepError`, or returns
None, when the configuration does learn from the rows.
"""


import numpy as np

from skforget._marks import FITTED_AFTER
from skforget._validation import ENCLOSING_PIPELINE_CHECKS, user_stacklevel, warn
from skforget.exceptions import DataDependentStepError, PrivacyLeakWarning

PROTOCOL = "__skforget_public__"
# Private steps (skforget.preprocessing's Private* transformers) define
# ``__skforget_private__(self)``, returning the fitted step's release
# guarantee: a ForgetPipeline accepts them as top-level steps and adds their
# cost to its guarantee (privacy-accounting.md, Section 19).
PRIVATE_PROTOCOL = "__skforget_private__"

# Pipeline classes defined above this module (skforget.pipeline's
# ForgetPipeline), checked step by step like a scikit-learn Pipeline. Their
# module registers them, so that this one imports nothing of ours but the
# exceptions and no import cycle hides behind a function-level import.
_PIPELINE_CLASSES = set()


def register_pipeline_class(cls):
    """Check instances of exactly ``cls`` step by step, like a ``Pipeline``."""
    _PIPELINE_CLASSES.add(cls)
    return cls

_FROZEN_HINT = ("fit it on public data and freeze it, "
                "sklearn.frozen.FrozenEstimator(step.fit(X_public))")

# Transformers that are fitted on the rows in every configuration, with what
# they learn and what to use instead.
_SCALERS = {
    "StandardScaler": "the mean and standard deviation of every feature",
    "MinMaxScaler": "the minimum and maximum of every feature",
    "MaxAbsScaler": "the largest absolute value of every feature",
    "RobustScaler": "the median and quantiles of every feature",
}
_DATA_FITTED = {
    "QuantileTransformer": "quantiles of every feature",
    "PowerTransformer": "a power parameter per feature (and, by default, means "
                        "and variances)",
    "KBinsDiscretizer": "bin edges from the range or quantiles of every feature",
    "TargetEncoder": "the mean target of every category, from the rows and labels",
    "PCA": "principal directions of the rows",
    "TruncatedSVD": "singular directions of the rows",
    "VarianceThreshold": "which features vary in the rows",
    "SelectKBest": "which features score best on the rows and labels",
    "SelectPercentile": "which features score best on the rows and labels",
    "KNNImputer": "the training rows themselves (to find neighbours)",
    "IterativeImputer": "regression models of each feature on the others",
    "Nystroem": "a sample of training rows as kernel centres",
}


class _NotPublic(Exception):
    """Internal: why a step is not public and what to use instead."""

    def __init__(self, why, instead=_FROZEN_HINT):
        super().__init__(why)
        self.why, self.instead = why, instead


def _name(obj):
    return type(obj).__name__


# --- predicates of known transformers -------------------------------------------
# Each returns how the step is public, or raises _NotPublic with why it is not.

def _stateless(text):
    return lambda est: text


def _function_transformer(est):
    if est.check_inverse and est.func is not None and est.inverse_func is not None:
        raise _NotPublic("with check_inverse=True, fit runs func and inverse_func on "
                         "the rows and warns about them", "set check_inverse=False")
    func = "identity" if est.func is None else getattr(est.func, "__name__",
                                                       repr(est.func))
    return f"stateless function {func} (assumed to map each row on its own)"


def _encoder(est):
    if isinstance(est.categories, str):
        raise _NotPublic(f'categories="{est.categories}" learns the categories present '
                         "in the rows (a category only a deleted person had would "
                         "stay)",
                         "give the categories as constants, categories=[[...], ...] "
                         "(e.g. from the data's documentation)")
    for param in ("min_frequency", "max_categories"):
        if getattr(est, param, None) is not None:
            raise _NotPublic(f"{param}={getattr(est, param)!r} counts how often each "
                             "category occurs in the rows", f"leave {param}=None")
    text = "categories given as constants"
    drop = getattr(est, "drop", None)
    if isinstance(drop, str):
        # With explicit categories, "first" and "if_binary" read the given lists.
        text += f", drop={drop!r} of those lists"
    return text


def _simple_imputer(est):
    if est.strategy != "constant":
        raise _NotPublic(f'strategy="{est.strategy}" computes the fill value from the '
                         "rows", 'strategy="constant" with a public fill_value')
    if est.add_indicator:
        raise _NotPublic("add_indicator=True keeps an indicator only for features "
                         "with missing values in the rows",
                         "add_indicator=False, and a MissingIndicator(features='all') "
                         "in a FeatureUnion if the indicators are needed")
    if not est.keep_empty_features:
        raise _NotPublic("keep_empty_features=False drops the features that are "
                         "missing in every row", "keep_empty_features=True")
    return f"constant fill_value={est.fill_value!r}, all features kept"


def _missing_indicator(est):
    if est.features != "all":
        raise _NotPublic(f'features="{est.features}" keeps only the features with '
                         "missing values in the rows", 'features="all"')
    return 'features="all"'


def _spline(est):
    if isinstance(est.knots, str):
        raise _NotPublic(f'knots="{est.knots}" places the knots from the range or '
                         "quantiles of the rows",
                         "give the knots as an array of public positions")
    return "knots given as constants"


# --- composites ---------------------------------------------------------------------

def _pipeline(est, path, out):
    if est.memory is not None:
        raise _NotPublic("memory caches the fitted steps on disk, keyed by the "
                         "training rows", "memory=None")
    for name, step in est.steps:
        _check(step, f"{path}/{name}" if path else name, out)


def _column_transformer(est, path, out):
    if est.sparse_threshold not in (0, 0.0):
        raise _NotPublic(f"sparse_threshold={est.sparse_threshold} chooses a sparse "
                         "or dense output from the density of the transformed rows, "
                         "a bit of state learned from them",
                         "sparse_threshold=0 (always dense)")
    from sklearn.compose import make_column_selector

    parts = [(name, step, cols) for name, step, cols in est.transformers]
    parts.append(("remainder", est.remainder, None))
    for name, step, columns in parts:
        if callable(columns) and not isinstance(columns, make_column_selector):
            raise _NotPublic(f"the columns of {name!r} are chosen by "
                             f"{getattr(columns, '__name__', repr(columns))}, a "
                             "function that may read the rows",
                             "name the columns, or select them with "
                             "sklearn.compose.make_column_selector (which reads "
                             "names and dtypes only)")
        if isinstance(step, str) and step == "drop":
            continue
        _check(step, f"{path}/{name}", out)


def _feature_union(est, path, out):
    for name, step in est.transformer_list:
        if isinstance(step, str) and step == "drop":
            continue
        _check(step, f"{path}/{name}", out)


def _rules():
    """Predicates by class, imported lazily (exact classes: a subclass may
    change what ``fit`` learns, so it must declare itself)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import MissingIndicator, SimpleImputer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import (
        Binarizer,
        FunctionTransformer,
        Normalizer,
        OneHotEncoder,
        OrdinalEncoder,
        PolynomialFeatures,
        SplineTransformer,
    )

    leaves = {
        Normalizer: _stateless("stateless (each row divided by its own norm)"),
        Binarizer: _stateless("stateless (threshold given)"),
        PolynomialFeatures: _stateless("stateless (fixed polynomial expansion)"),
        FunctionTransformer: _function_transformer,
        OneHotEncoder: _encoder,
        OrdinalEncoder: _encoder,
        SimpleImputer: _simple_imputer,
        MissingIndicator: _missing_indicator,
        SplineTransformer: _spline,
    }
    composites = {
        Pipeline: _pipeline,
        **dict.fromkeys(_PIPELINE_CLASSES, _pipeline),
        ColumnTransformer: _column_transformer,
        FeatureUnion: _feature_union,
    }
    return leaves, composites


def _check(step, path, out):
    if step is None or (isinstance(step, str) and step == "passthrough"):
        out.append((path, "passthrough (values used as given)"))
        return
    from sklearn.frozen import FrozenEstimator

    # FrozenEstimator forwards attribute lookups to what it wraps, so it is
    # recognised by class before the protocol is looked up.
    if type(step) is FrozenEstimator:
        out.append((path, f"FrozenEstimator({_name(step.estimator)}): fitted "
                          "elsewhere and frozen; public if the data it was fitted "
                          "on is public"))
        return
    try:
        if getattr(type(step), PRIVATE_PROTOCOL, None) is not None:
            raise _NotPublic(
                "it releases private statistics of the rows, whose cost must be "
                "added to the estimator's guarantee and which a deletion must "
                "re-estimate",
                "make it a top-level step of a skforget.pipeline.ForgetPipeline "
                "(skforget.pipeline.make_private_pipeline builds one from a total "
                "epsilon; PrivateTableEncoder encodes columns by dtype)")
        declared = getattr(type(step), PROTOCOL, None)
        if declared is not None:
            how = declared(step)
            if not how:
                raise _NotPublic(f"{_name(step)}.{PROTOCOL}() says this configuration "
                                 "learns from the rows")
            out.append((path, f"{_name(step)}: {how}"))
            return
        leaves, composites = _rules()
        if type(step) in composites:
            composites[type(step)](step, path, out)
            return
        if type(step) in leaves:
            out.append((path, f"{_name(step)}: {leaves[type(step)](step)}"))
            return
        _refuse_unknown(step)
    except _NotPublic as exc:
        raise DataDependentStepError(
            f"Preprocessing step {path!r} ({_name(step)}) is not public: {exc.why}. A "
            "deletion could not remove what it learned from a deleted record. "
            f"Instead: {exc.instead}.") from None


def _refuse_unknown(step):
    name = _name(step)
    if name in _SCALERS:
        raise _NotPublic(f"it learns {_SCALERS[name]} from the rows",
                         "skforget.preprocessing.PublicScaler(center=..., scale=...) "
                         "with constants chosen without the rows (documented ranges, "
                         "published statistics), or " + _FROZEN_HINT)
    if name in _DATA_FITTED:
        raise _NotPublic(f"it learns {_DATA_FITTED[name]}")
    raise _NotPublic(
        f"skforget cannot tell whether {name} learns from the rows (it knows a list "
        "of public transformers and configurations)",
        f"if its fitted state is fixed before the rows are seen, declare it by "
        f"defining {name}.{PROTOCOL}(self) to return how; otherwise {_FROZEN_HINT}")


def check_public(step, name=None):
    """Check that a preprocessing step keeps nothing learned from the rows.

    Composite steps (``Pipeline``, ``ColumnTransformer``, ``FeatureUnion``)
    are checked recursively, with their column selectors and options. A step
    is public when it is stateless, when its state is given as constants
    (``OneHotEncoder`` with explicit ``categories``,
    :class:`~skforget.preprocessing.PublicScaler`, ...), when it is a
    transformer fitted elsewhere and wrapped in
    :class:`~sklearn.frozen.FrozenEstimator`, or when its class declares
    itself public through ``__skforget_public__``.

    Parameters
    ----------
    step : estimator, "passthrough" or None
        The preprocessing to check (unfitted is fine: only its class and
        parameters are read).
    name : str, default=None
        Its name in the error messages and the result (default: the class
        name, lower case).

    Returns
    -------
    public : tuple of (str, str)
        One ``(path, how)`` pair per public leaf step, e.g.
        ``("columntransformer/cat", "OneHotEncoder: categories given as
        constants")``. :class:`~skforget.pipeline.ForgetPipeline` shows these
        in its guarantee.

    Raises
    ------
    DataDependentStepError
        If a step learns from the rows; the message names the step, says what
        it learns and what to use instead.

    Examples
    --------
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from skforget.preprocessing import check_public
    >>> check_public(OneHotEncoder(categories=[["a", "b"]]))
    (('onehotencoder', 'OneHotEncoder: categories given as constants'),)
    >>> check_public(StandardScaler())
    Traceback (most recent call last):
    ...
    skforget.exceptions.DataDependentStepError: Preprocessing step 'standardscaler' (StandardScaler) is not public: ...
    """  # noqa: E501
    out = []
    _check(step, name or _name(step).lower(), out)
    return tuple(out)


def check_public_preprocessing(pipeline):
    """:func:`check_public` of every step of a pipeline but the last."""
    if pipeline.memory is not None:
        raise DataDependentStepError(
            "The pipeline's memory caches the fitted steps on disk, keyed by the "
            "training rows; a deleted record would stay in the cache. Instead: "
            "memory=None.")
    out = []
    for name, step in pipeline.steps[:-1]:
        _check(step, name, out)
    return tuple(out)


def private_step_names(pipeline):
    """Names of a pipeline's top-level private steps (those marked with the
    ``__skforget_private__`` protocol), in order; no check of the others."""
    return tuple(name for name, step in pipeline.steps[:-1]
                 if getattr(type(step), PRIVATE_PROTOCOL, None) is not None)


def split_preprocessing(pipeline):
    """:func:`check_public` of every step but the last, except top-level private
    steps, which are returned by name: ``(public, private_names)``."""
    if pipeline.memory is not None:
        check_public_preprocessing(pipeline)
    private = private_step_names(pipeline)
    out = []
    for name, step in pipeline.steps[:-1]:
        if name not in private:
            _check(step, name, out)
    return tuple(out), private


#: Rows the row-by-row check reads: the first ``_PROBE`` rows transformed
#: alone and as the head of the first ``2 * _PROBE``.
_PROBE = 2


def _opaque(step):
    """Whether ``step`` holds a part whose public status is assumed, not read
    from its parameters: a ``FunctionTransformer``'s function, or a class
    declaring itself public (the allow-listed ones, constants or frozen, are
    public by what they hold)."""
    from sklearn.preprocessing import FunctionTransformer

    parts = [step]
    try:
        parts += list(step.get_params(deep=True).values())
    except Exception:  # noqa: BLE001 - "passthrough" and the like
        pass
    return any(isinstance(p, FunctionTransformer)
               or getattr(type(p), PROTOCOL, None) is not None for p in parts)


def check_rows_apart(pipeline, X, y, private):
    """Refuse a public step whose output for a row changes with the other rows.

    A ``FunctionTransformer``'s function, or a class declaring itself public,
    is *assumed* to map each row on its own; a function that computes column
    statistics (``lambda D: (D - D.mean()) / D.std()``) learns from the rows
    on every call, and the guarantee listed it as public (a trial). The
    public steps before the first private one are fitted on the first
    ``2 * _PROBE`` rows and transform the first ``_PROBE`` rows alone and as
    the head of those; each step holding such a part must give the same
    values (to its dtype's rounding). A check of one case, not a proof (a
    function may depend on other rows only past these); what it reads is the
    user's own code on the rows, what it says names the step only, and no
    warnings filter is touched (they are every thread's). Pipelines that
    cannot run on so few rows are not checked.
    """
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline
    from sklearn.utils import _safe_indexing
    from sklearn.utils.validation import _num_samples

    steps = []
    for name, step in pipeline.steps[:-1]:
        if name in private:
            break
        steps.append((name, step))
    opaque = [_opaque(step) for _, step in steps]
    if not any(opaque) or _num_samples(X) < 2 * _PROBE:
        return
    head = _safe_indexing(X, list(range(2 * _PROBE)))
    y_head = None if y is None else _safe_indexing(y, list(range(2 * _PROBE)))
    for i, (name, step) in enumerate(steps):
        if not opaque[i]:
            continue
        try:
            part = Pipeline([(n, clone(s)) for n, s in steps[:i + 1]])
            part.fit(head, y_head)
            together = _values(part.transform(head))[:_PROBE]
            alone = _values(part.transform(_safe_indexing(head, list(range(_PROBE)))))
        except Exception:  # noqa: BLE001 - a pipeline that needs more rows
            return
        if not _same(together, alone):
            raise DataDependentStepError(
                f"Preprocessing step {name!r} ({_name(step)}) is not public: its "
                "output for a row changes with the other rows it is given (the "
                f"first {_PROBE} rows transformed alone and among "
                f"{2 * _PROBE} differ), so it computes something from the rows, "
                "such as a column's mean, or draws random numbers. A deletion "
                "could not remove what it learned from a deleted record. "
                "Instead: compute the constants without the rows and give them "
                "(skforget.preprocessing.PublicScaler(center=..., scale=...)), "
                "or use a private step (skforget.pipeline.make_private_pipeline).")


def _values(out):
    out = out.toarray() if hasattr(out, "toarray") else out
    return np.asarray(out.to_numpy() if hasattr(out, "to_numpy") else out)


def _same(a, b):
    """Equal to the rounding of their dtype (BLAS sums rows in blocks whose
    order may change with the rows' number); values that are not numbers
    exactly, a missing value matching a missing one."""
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        rtol = 1e3 * max(np.finfo(a.dtype).eps, np.finfo(b.dtype).eps)
        scale = float(np.nanmax(np.abs(a), initial=0.0))
        return bool(np.allclose(a, b, rtol=rtol, atol=rtol * scale, equal_nan=True))
    flat_a, flat_b = a.astype(object).ravel(), b.astype(object).ravel()
    for x, y in zip(flat_a, flat_b, strict=True):
        gone = _missing(x), _missing(y)
        if gone[0] != gone[1] or (not gone[0] and not bool(x == y)):
            return False
    return True


def _missing(v):
    """None, NaN, NaT or pandas' NA (whose comparisons are not booleans)."""
    try:
        return v is None or bool(v != v)
    except TypeError:
        return True


def _learned_steps(pipeline):
    """Names of the steps before the last that are not public (each checked
    alone; a cached pipeline is not public as a whole: all of its steps)."""
    names = []
    for name, step in pipeline.steps[:-1]:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        try:
            if pipeline.memory is not None:
                raise DataDependentStepError(name)
            check_public(step, name)
        except DataDependentStepError:
            names.append(name)
    return names


def _warn_if_steps_not_public(pipeline, estimator):
    """A private estimator fitted as the last step of a plain scikit-learn
    ``Pipeline``: warn when a step before it learned from the rows (a
    ``StandardScaler`` fitted on them), which the guarantee does not cover
    and ``partial_unlearn`` cannot remove. ``ForgetPipeline`` refuses such
    steps itself, before fitting."""
    if any(isinstance(pipeline, cls) for cls in _PIPELINE_CLASSES):
        return
    # The caller (skforget._stack.enclosing_pipelines) passes only pipelines
    # whose last step leads to the estimator: it, a nested pipeline, or a
    # wrapper fitting a clone of it.
    try:
        check_public_preprocessing(pipeline)
    except DataDependentStepError as exc:
        # Its edits say it too (_marks.warn_what_the_edit_keeps): the steps
        # keep the records an edit of the model alone deletes (an enclosing
        # pipeline's are added to a nested one's).
        estimator.__dict__[FITTED_AFTER] = (
            *estimator.__dict__.get(FITTED_AFTER, ()), *_learned_steps(pipeline))
        private = [name for name in private_step_names(pipeline) if getattr(
            pipeline.named_steps[name], "ledger", None) is None]
        unrecorded = ""
        if private and getattr(estimator, "ledger", None) is not None:
            # Their statistics were released before this fit, outside the
            # estimator's ledger (privacy-accounting.md, Section 20.4).
            unrecorded = (
                f" Its ledger records this fit only, not the statistics the "
                f"private step(s) {', '.join(map(repr, private))} released: "
                "give each the ledger (ledger=...) or, if it drew fresh noise, "
                "record it with ledger.record(name, step).")
        warn(
            f"{type(estimator).__name__} is fitted as the last step of a "
            "scikit-learn Pipeline whose preprocessing is outside its guarantee: "
            f"{exc}{unrecorded} skforget.pipeline.ForgetPipeline refuses such "
            "steps before fitting and serves deletions through the steps; "
            "skforget.pipeline.make_private_pipeline estimates the statistics "
            "privately from a raw table, inside one guarantee and one ledger "
            "entry.",
            PrivacyLeakWarning, stacklevel=user_stacklevel())


ENCLOSING_PIPELINE_CHECKS.append(_warn_if_steps_not_public)
