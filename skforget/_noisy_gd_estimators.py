# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The noisy-GD family's estimators: logistic regression and ridge-type regression.

Both train by noisy gradient descent (:class:`~skforget._noisy_gd._BaseNoisyGD`)
and delete records with a certificate; they differ in the loss, the labels and
the parameters.
"""

from numbers import Integral, Real

from sklearn.base import ClassifierMixin, RegressorMixin

from skforget._noisy_gd import _BaseNoisyGD
from skforget._tasks import (
    _MIN_TARGET_SCALE,
    _PrivateClassifierMixin,
    _PrivateRegressorMixin,
)
from skforget._utils import fill_doc
from skforget._validation import Interval, StrOptions
from skforget.certify._ball import MODES
from skforget.certify._mixin import CertifyMixin

#: Parameters the two estimators document alike (filled in by fill_doc below).
_SHARED_PARAMETERS = {
    "delta": """\
    delta : float or "auto", default="auto"
        DP failure probability; "auto" is ``min(1e-5, n_samples ** -1.1)``.""",
    "max_edit_size": """\
    max_edit_size : int, default=100
        Largest number of rows one edit request may name. The number of
        deletion passes does not depend on it (privacy-accounting.md, 6.2); the
        certificate shows the request's records together as a group, whose
        figure grows as the square of their number.""",
    "max_lazy_records": """\
    max_lazy_records : "auto" or int, default="auto"
        Records that may be deleted without a pass over the data since the
        last one, when the model already certifies them at
        ``deletion_epsilon`` (privacy-accounting.md, 12.9): "auto" is the
        public rule ``N lambda sqrt(p v_0) / G`` (the removals move the
        optimum by at most the privacy noise the model already carries); 0
        makes every deletion pass over the data (for regulated or coordinated
        deletions, where every erasure must change the model at once or the
        pending records need protection as a group). Replacements and
        insertions always do.""",
    "max_sample_weight": """\
    max_sample_weight : float, default=1.0
        Public bound on ``sample_weight``: larger weights count as the bound.
        Row weights are divided by it (times the largest class weight), so each
        record's influence, hence the noise, is that of the unweighted model,
        and ``C`` / ``alpha`` are scaled to keep their scikit-learn meaning
        (privacy-accounting.md, Section 4.4). Set it to the largest weight a
        record can have (2 for a record that counts twice).""",
    "data_norm": """\
    data_norm : float, default=1.0
        Public bound on the L2 norm of each row of ``X``.""",
    "verbose": """\
    verbose : int, default=0
        Print progress of the noisy gradient steps.""",
    "n_jobs": """\
    n_jobs : int or None, default=None
        Threads that sum the clipped gradients of each batch, over contiguous
        ranges of its rows (OpenMP in the compiled kernel; builds without
        OpenMP run the ranges one after the other). None means 1, -1 all
        CPUs (joblib's rule). A batch of ``m`` rows uses
        ``min(n_jobs, m // 8192)`` threads (at least one), so mini-batches
        smaller than that run on one thread: starting and joining threads costs
        every step. The coefficients match ``n_jobs=1`` up to the order of
        floating-point sums (about 1e-15 relative per step) and are
        reproducible for a given ``n_jobs``; the privacy guarantee does not
        depend on it.""",
    "ledger": """\
    ledger : PrivacyLedger or None, default=None
        A :class:`~skforget.accounting.PrivacyLedger` of the training data:
        ``fit`` and ``partial_unlearn`` check their planned figure against its
        budget before any training pass (raising
        :class:`~skforget.accounting.PrivacyBudgetExceeded`, the model
        unchanged, if it would not fit) and record it when they succeed
        (privacy-accounting.md, Section 20). Not frozen at ``fit``: an edit
        records into the ledger set at the time. Clones share it; for
        ``GridSearchCV(n_jobs > 1)`` use :class:`skforget.store.SharedLedger`.""",
    "certify_k_max": """\
    certify_k_max : int, default=0
        Largest budget ``k`` for which ``fit`` and ``partial_unlearn`` track the
        data-dependent radius of the prediction certificates (one extra pass
        over the rows per step). 0 turns the tracking off; :meth:`certify` with
        the public radius needs no tracking.""",
    "certify_modes": """\
    certify_modes : str or tuple of str, default=("remove",)
        Neighbourhoods tracked when ``certify_k_max > 0``: any of ``"remove"``,
        ``"replace"``, ``"add"``, ``"add_remove"``.""",
}


class NoisyGDClassifier(CertifyMixin, _PrivateClassifierMixin, ClassifierMixin,
                        _BaseNoisyGD):
    """Logistic regression trained by noisy gradient descent, with certified deletion.

    A drop-in replacement for :class:`~sklearn.linear_model.LogisticRegression`
    (L2 penalty; binary, or multinomial for three classes and more) whose
    coefficients are (``epsilon``, ``delta``)-differentially private for every
    training record, and from which records can later be deleted, replaced or
    added with :meth:`partial_unlearn`: a few more noisy steps on the edited data
    make the model ``deletion_epsilon``-indistinguishable from one that never saw
    the removed records, or, when that is no dearer, a retraining from a fresh
    start removes them outright.

    Training is noisy gradient descent over mini-batches in a fixed random order
    (or full batches, ``batch_size=None``, the source paper's algorithm):
    per-example gradients clipped to ``clip_norm``, L2 regularisation on every
    coordinate including the intercept, Gaussian initialisation and Gaussian
    noise, with the batch count, noise scale, step size and number of passes
    planned by :mod:`skforget.accounting` from public numbers (Chourasia and
    Shah 2023, with the shifted-Rényi accounting of the skforget spec). A fit
    typically costs ten to a few dozen passes over the data. The guarantee assumes
    ``data_norm``, ``clip_norm`` and the label set are public, i.e. chosen
    without looking at the training rows.

    Read more in the :ref:`User Guide <privacy>`.

    Parameters
    ----------
    classes : array-like of shape (n_classes,), default=None
        The public label set. ``classes_`` is set to its sorted unique values,
        so a label that no training record carries still gets its coefficients,
        and a record with a label outside it is rejected (naming the row). None
        reads the label set from the training labels: one record with a rare
        label then changes the model's shape, which the guarantee does not cover
        (fit warns with a :class:`~skforget.PrivacyLeakWarning` and the
        guarantee says so).
    class_weight : dict or "balanced", default=None
        Public weight of each class, ``{class: weight}`` (missing classes weigh
        1); e.g. ``{c: 1 / (n_classes * p_c)}`` from public class frequencies
        ``p_c`` corrects for imbalance. Binary models: the weights multiply the
        records' losses as in ``LogisticRegression``, divided by their largest
        like ``sample_weight`` (see ``max_sample_weight``), and replace the
        private threshold (see ``prevalence_share``). Three classes or more:
        the model is trained as without weights and its intercepts are shifted
        by ``(log w_c - mean log w) / 2``, a public constant (with
        ``fit_intercept=False``, ``intercept_`` is that shift): weighting the
        records would make the noise grow as the largest weight over the mean
        one, and the shift raised balanced accuracy more, on more tables
        (privacy-accounting.md, Section 18.13). "balanced" (binary models):
        decisions for the balanced error at the midpoint of the two class
        means of the rows,
        ``intercept_ = -coef_ . (mu_0 + mu_1) / 2``, from the class counts and
        class sums released with Gaussian noise inside the same ``epsilon``
        (``prevalence_share``; privacy-accounting.md, Section 18.11); it does
        not read the trained intercept, which the penalty shrinks. Three
        classes or more: the intercepts are shifted as by public weights
        (above) with scikit-learn's ``n / (n_classes n_c)`` read from the class
        counts released with Gaussian noise (``prevalence_share``;
        privacy-accounting.md, Section 18.14; needs ``fit_intercept=True``);
        such a model has no prediction certificates.
    prevalence_share : float in [0, 1) or "auto", default="auto"
        Share of the privacy budget (of ``rho``, privacy-accounting.md,
        Section 18.2) that a binary model spends on its class statistics,
        released with Gaussian noise after training, redrawn on the current
        database at every :meth:`partial_unlearn` that passes over the data
        and kept, charged to the deletion certificate, by a deletion served
        without a pass (Theorem 12.12). By default (no
        ``class_weight``) they are the two class counts, the class sums of the
        rows and the sum of the rows' squared scores along ``coef_``, and they
        set the intercept to the error-minimising threshold of a Gaussian
        model of the scores (``intercept_ = -||w|| tau``, Section 18.12): the
        decisions ``LogisticRegression()`` makes, for the error, where the
        private model's own intercept (penalised and clipped) would predict
        the majority class everywhere on a table with a rare class. With
        ``class_weight="balanced"`` they are the counts and class sums of
        the class-mean midpoint (Section 18.11). The whole release stays
        within ``epsilon`` (noisy GD is planned for what the statistics leave);
        an edit that passes over the data draws them afresh, and a deletion
        served without a pass keeps them and adds their share to its
        certificate (Theorem 12.12). 0 turns them off
        (decisions at the trained intercept, all of the budget to training);
        unused for three classes or more (except with ``"balanced"``, the class
        counts) and with a ``class_weight`` dict.
        "auto" is 0.10, spent only with ``C="auto"`` (with an explicit ``C``
        the model keeps its raw threshold, as ``LogisticRegression(C=...)``
        does) and when the table is large enough for the statistics' noise
        (``n_samples >= 20 sigma_m``, about 530 rows at ``epsilon=1``);
        always with ``class_weight="balanced"``.
    C : float or "auto", default="auto"
        Inverse regularisation strength, as in ``LogisticRegression``: the
        objective is ``C * sum_i loss_i + ||w||^2 / 2`` (intercept included),
        i.e. ``lambda = 1 / (C * n_samples)`` per sample. "auto" balances the
        privacy noise against the regularisation bias from public numbers only
        (``epsilon``, the sensitivity set by ``clip_norm``, the number of
        parameters; privacy-accounting.md, Section 8.5); differential privacy
        needs more regularisation than the non-private default of 1.0. Above
        ``epsilon=1`` it grows as the budget's rho, up to 16 times (6.2 times
        the ``epsilon=1`` rule at ``epsilon=8``, ``delta=1e-5``), so the model
        approaches ``LogisticRegression`` as the noise fades. For the softmax
        (three classes or more, ``multi_class="multinomial"``) it also grows as
        ``n_samples / 4000`` above 4,000 records (the product capped at 16):
        measured on 642 raw tables, the largest multiclass tables gained 3
        points of accuracy, the binary ones nothing. Where the parameters far
        outnumber the directions the data curve (wide rows, many classes, few
        records), "auto" counts only the latter: the noise in the others
        costs the predictions nothing (Section 8.5, rules 4; with at least as
        many records as features). A smaller ``C`` serves more deletions
        without a pass.
    multi_class : {"multinomial", "ovr"}, default="multinomial"
        Model for three classes or more: one softmax model (sensitivity
        ``sqrt(2) R``, or ``clip_norm`` below it: the clipped softmax of
        privacy-accounting.md, Lemma 4.5), or one binary model per class
        trained jointly in the same steps, each clipped at ``clip_norm``
        (sensitivity ``sqrt(n_classes) * min(clip_norm, R)``). ``"ovr"`` is the
        model prediction certificates cover.
    epsilon : float, default=1.0
        DP target for every record present (``(epsilon, delta)``-DP, replace-one).
    {delta}
    deletion_epsilon : float, default=None
        Deletion target at the same ``delta``: after :meth:`partial_unlearn`, a
        removed record is ``(deletion_epsilon, delta)``-indistinguishable from
        one never seen. None means ``epsilon``: a deleted record is certified
        no more exposed than a record still present (privacy-accounting.md,
        12.10; the certificate states the figure reached, often about
        ``epsilon / 2``). At this default a deletion may leave the model
        unchanged (``max_lazy_records``): its guarantee then rests on the DP of
        the fit, and the record's influence stays until the next pass. Must not
        exceed ``epsilon``; a request may ask for less, never more
        (``partial_unlearn(edits, deletion_epsilon=...)``).
    {max_edit_size}
    {max_lazy_records}
    {max_sample_weight}
    group_size : int, default=1
        Records per privacy unit (e.g. the rows one person owns).
    relation : {"replace", "zero_out"}, default="replace"
        Neighbouring relation of the guarantee: one unit replaced by arbitrary
        records, or by null records (half the sensitivity).
    {data_norm}
    clip_rows : bool, default=True
        Project rows with a larger norm onto the ``data_norm`` ball (a per-row,
        data-independent map); if False, such rows raise an error (rows over
        the bound by rounding only, at most ``1e-12`` relative, are projected).
    clip_norm : float, "auto" or None, default="auto"
        Per-example gradient clipping threshold. "auto" is ``0.5 * data_norm``
        for each logistic output (binary and one-vs-rest; an eighth of the noise
        variance of the natural bound with the default intercept) and
        ``data_norm`` for the softmax. None: no clipping beyond the natural
        bound of the logistic loss (``R`` binary, ``sqrt(2) R`` multinomial,
        ``R = sqrt(data_norm^2 + intercept_scaling^2)``). Below ``sqrt(2) R``
        the multinomial model's loss is the clipped softmax (Lemma 4.5): each
        record's softmax is kept within distance ``clip_norm / ||x||`` of its
        label, a convex surrogate whose gradient norm is at most
        ``clip_norm``; it needs less noise (see
        ``benchmarks/results/multinomial_clip.md`` for accuracy and fit time
        against the unclipped softmax on five multiclass tables), and a row
        outside the bound costs a small root-finding instead of a softmax
        (smaller values clip more rows and fit slower). A fitted model keeps
        the meaning "auto" had when it was fitted, for all its edits.
    fit_intercept : bool, default=True
        Fit an intercept (an ordinary, regularised coordinate).
    intercept_scaling : float or "auto", default="auto"
        Feature value of the intercept coordinate; ``intercept_`` is this value
        times the coordinate, and the intercept's penalty is
        ``lambda / intercept_scaling^2``. "auto" is ``0.1 * data_norm`` for the
        multinomial model (whose unclipped sensitivity grows with it) and
        ``data_norm`` otherwise.
    learning_rate : float, default=None
        Step size; None for ``2 / (2 lambda + 1.1 beta)``, the largest the
        contraction analysis allows with room for batches to grow by 10%. Must
        not exceed ``2 / (2 lambda + beta)``.
    max_iter : int, default=None
        Passes over the data (epochs) of ``fit``; None for the accounting's
        recipe (privacy-accounting.md, Section 8.4). With ``batch_size=None`` a
        pass is one step. The privacy guarantee holds for any value.
    batch_size : int, "auto" or None, default="auto"
        Rows per mini-batch. "auto" chooses the number of batches from public
        numbers (ten passes per relaxation time of the regulariser, batches of at
        least 64 rows; full batch for small data or when ``certify_k_max > 0``);
        None is full-batch noisy gradient descent. The order of the batches is a
        random permutation drawn for each fit or edit, independent of the data.
        The accountant covers the mini-batch schedule exactly
        (privacy-accounting.md, Section 12).
    recipe : {"tight", "cs23"}, default="tight"
        Planning of noise and steps: the shifted-Rényi recipe, or the source
        paper's Theorem 5.1 (more noise, more steps; same reported accounting).
    random_state : int, RandomState instance or None, default=None
        Source of the noise. None draws fresh OS entropy, the only setting in
        which the guarantee holds against someone who could guess a seed; an
        integer makes runs reproducible (flagged in the guarantee). Clones share
        the seed: in ``GridSearchCV`` or ``cross_val_score`` every fit would draw
        the same noise, and comparing fits on overlapping rows cancels it, so
        use None whenever the fitted models are released.
    {verbose}
    {n_jobs}
    {ledger}
    {certify_k_max}
    {certify_modes}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels: the sorted ``classes`` if given, else those of ``y``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts (including ``intercept_offset_``).
    C_ : float
        The ``C`` the latest fit or edit trained with, as
        ``LogisticRegressionCV.C_`` reports its choice: ``C`` when given, else
        what ``"auto"`` resolved to, ``1 / (N * lambda * W)`` of the public plan
        (``N`` the fit's rows, ``lambda`` the penalty per sample,
        ``privacy_guarantee_.regularization``, and ``W`` the public weight
        bound, 1 without weights; privacy-accounting.md, Section 4.4).
        ``C=C_`` refits with the same penalty, hence the same model under the
        same ``random_state``, except that an explicit ``C`` spends no share on
        class statistics under ``prevalence_share="auto"``. "auto" reads public
        numbers only (sizes, the privacy target, the sensitivity; Section 8.5),
        so ``C_`` tells nothing about the rows. Edits keep it: they run under
        the fit's plan, whose normaliser stays ``N`` (Section 10.1).
    noisy_class_count_ : ndarray of shape (2,)
        Only for a binary model that spends ``prevalence_share``: the class
        counts of the current database plus Gaussian noise (standard deviation
        ``privacy_guarantee_.count_noise`` records), covered by the guarantee
        and redrawn at every edit that passes over the data (a deletion served
        without a pass keeps them; they then count the rows it removed, which
        its certificate covers: privacy-accounting.md, Theorem 12.12).
    noisy_class_sum_ : ndarray of shape (2, n_features)
        With ``noisy_class_count_``: the sums of each class's rows (as mapped
        into the ``data_norm`` ball) plus Gaussian noise, released and redrawn
        with the counts.
    noisy_score_square_ : float
        Only for the default error threshold (no ``class_weight``): the sum of
        the rows' squared scores along ``coef_ / ||coef_||`` plus Gaussian
        noise, released and redrawn with the counts (Section 18.12).
    intercept_offset_ : float or ndarray of shape (n_classes,)
        Only with ``noisy_class_count_``: ``intercept_`` minus the trained
        intercept, the part of ``intercept_`` that training did not set (one
        per class for a multiclass ``class_weight="balanced"``).
    n_iter_ : ndarray of shape (1,)
        Passes over the data run by ``fit`` (as in ``LogisticRegression``).
    n_unlearn_iter_ : int
        Passes run by the last :meth:`partial_unlearn` (only after an edit).
    database_version_ : DatabaseVersion or None
        Version of the :class:`~skforget.Database` the model is current with
        (None when fitted on plain arrays): :meth:`partial_unlearn` refuses a
        request built on any other database or version.
    privacy_guarantee_ : PrivacyGuarantee
        What the current coefficients guarantee, with one certificate per edit.
    certified_radii_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: per tracked mode, the data-dependent
        radius contributed by the current segment (``fit``, or the last
        ``partial_unlearn``) for ``k = 0..certify_k_max`` (one column per class
        for one-vs-rest). A function of the private rows: do not publish it.
        Dropped by the next ``fit`` or edit.
    contraction_factor_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: the contraction factors used for those
        radii (they involve the largest eigenvalue of the rows' Gram matrix;
        sensitive too).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    NoisyGDRegressor : The squared-loss counterpart.
    sklearn.linear_model.LogisticRegression : The non-private model.

    Notes
    -----
    The privacy figures are rho-coefficients of Rényi DP converted to
    ``(epsilon, delta)`` (Balle et al. 2020, Thm 21), computed by privacy
    amplification by iteration (Feldman et al. 2018): in closed form for full
    batches (the deletion bound ``rho_inf * (1 - eta lambda) ** (2 K_R)``), and
    by the exact optimal shift schedule for mini-batches
    (privacy-accounting.md, Section 12). Preprocessing fitted on the training rows
    (e.g. a ``StandardScaler`` in a Pipeline) is outside the guarantee.

    References
    ----------
    .. [1] R. Chourasia and N. Shah. Forget Unlearning: Towards True Data-Deletion
       in Machine Learning. ICML 2023.

    Examples
    --------
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.datasets import load_dataset
    >>> data = load_dataset("breast_cancer")  # unit-norm rows, public scaling
    >>> clf = NoisyGDClassifier(classes=[0, 1], epsilon=1.0, random_state=0)
    >>> clf.fit(data.data, data.target).score(data.data, data.target) > 0.9
    True
    >>> print(clf.privacy_guarantee_)  # doctest: +ELLIPSIS
    (0.9..., 1e-05)-DP for every record present, replace-one ...
    """

    _parameter_constraints: dict = {
        **_BaseNoisyGD._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "multi_class": [StrOptions({"multinomial", "ovr"})],
        "classes": ["array-like", None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "prevalence_share": [Interval(Real, 0, 1, closed="left"),
                             StrOptions({"auto"})],
        "certify_k_max": [Interval(Integral, 0, None, closed="left")],
        "certify_modes": [StrOptions(set(MODES)), tuple, list],
        "clip_norm": [Interval(Real, 0, None, closed="neither"), None,
                      StrOptions({"auto"})],
    }
    _finite_extra = ("C",)

    def __init__(self, C="auto", *, classes=None, class_weight=None,
                 prevalence_share="auto",
                 multi_class="multinomial", epsilon=1.0, delta="auto",
                 deletion_epsilon=None,
                 max_edit_size=100, max_lazy_records="auto",
                 max_sample_weight=1.0, group_size=1,
                 relation="replace", data_norm=1.0,
                 clip_rows=True, clip_norm="auto", fit_intercept=True,
                 intercept_scaling="auto", learning_rate=None, max_iter=None,
                 batch_size="auto", recipe="tight", random_state=None, verbose=0,
                 n_jobs=None,
                 certify_k_max=0, certify_modes=("remove",), ledger=None):
        self.C = C
        self.classes = classes
        self.class_weight = class_weight
        self.prevalence_share = prevalence_share
        self.multi_class = multi_class
        self.epsilon = epsilon
        self.delta = delta
        self.deletion_epsilon = deletion_epsilon
        self.max_edit_size = max_edit_size
        self.max_lazy_records = max_lazy_records
        self.max_sample_weight = max_sample_weight
        self.group_size = group_size
        self.relation = relation
        self.data_norm = data_norm
        self.clip_rows = clip_rows
        self.clip_norm = clip_norm
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.recipe = recipe
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.certify_k_max = certify_k_max
        self.certify_modes = certify_modes
        self.ledger = ledger

    def _regularization(self, n_samples):
        return 1.0 / (self.C * n_samples)


class NoisyGDRegressor(CertifyMixin, _PrivateRegressorMixin, RegressorMixin,
                       _BaseNoisyGD):
    """Ridge-type regression by noisy gradient descent, with certified deletion.

    A drop-in replacement for :class:`~sklearn.linear_model.Ridge` whose
    coefficients are (``epsilon``, ``delta``)-differentially private for every
    training record, and from which records can later be deleted, replaced or
    added with :meth:`partial_unlearn`.

    The loss is the squared error with per-example gradient clipping at
    ``clip_norm``: for a linear model this is exactly a Huber loss whose
    threshold on the residual is ``clip_norm / ||[x, s_b]||`` (privacy-
    accounting.md, Lemma 2.1), so large residuals are down-weighted. Targets
    should therefore live on a public scale comparable to ``clip_norm``
    (divide them by a public constant, never by a statistic of the data).

    Read more in the :ref:`User Guide <privacy>`.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularisation strength, as in ``Ridge``: the objective is
        ``||y - Xw||^2 + alpha ||w||^2`` (intercept included, squared loss
        clipped), i.e. ``lambda = alpha / n_samples`` per sample. Differential
        privacy needs a larger ``alpha`` than ``Ridge``'s default: the noise it
        leaves in the coefficients has variance of order
        ``1 / (alpha**2 rho)`` whatever ``n_samples`` (Section 15.6), so
        ``"auto"`` depends on epsilon, not on the table's size.
        ``"auto"`` balances the privacy noise against the regularisation bias
        from public numbers (privacy-accounting.md, Section 8.5: a nominal
        norm of half the scaled targets' bound, the same at every epsilon).
        Until the "auto" rules 5 the default was ``alpha=10``, which on ten
        real tables at epsilon = 1 gave a negative held-out R^2 on six.
    epsilon : float, default=1.0
        DP target for every record present.
    {delta}
    deletion_epsilon : float, default=None
        Deletion target at the same ``delta``; None means ``epsilon``
        (privacy-accounting.md, 12.10). At this default a deletion may leave
        the model unchanged: its guarantee then rests on the DP of the fit.
    {max_edit_size}
    {max_lazy_records}
    {max_sample_weight}
    group_size : int, default=1
        Records per privacy unit.
    relation : {"replace", "zero_out"}, default="replace"
        Neighbouring relation of the guarantee.
    {data_norm}
    clip_rows : bool, default=True
        Project rows over ``data_norm`` onto its ball; if False, raise (rows
        over it by rounding only, at most ``1e-12`` relative, are projected).
    clip_norm : float, default=1.0
        Per-example gradient clipping threshold (required: the squared loss has
        unbounded gradients).
    target_scale : float or None, default=None
        Public constant the targets are divided by before fitting (predictions,
        ``coef_`` and ``intercept_`` are in the original units). The clipped
        squared loss fits residuals up to about ``clip_norm / ||[x, s_b]||``
        unclipped, so targets should lie within about ``[-1, 1]`` after the
        change of units: give the half-width of the quantity's known range
        here and its centre as ``target_offset`` (160 and 185 for a score
        known to run from 25 to 345), never a statistic of the training
        targets. With None the targets are used as
        they are, and the estimator checks whether most of them lie more than
        ten times beyond that reach: if so it warns (``PrivacyLeakWarning``),
        and either way the guarantee notes that the targets were read for this
        check (``target_scale_public=False``). On a
        :class:`~skforget.distributed.ShardedDatabase` the targets never reach
        the driver: None then means 1 and nothing is checked. At least 1e-200:
        an edit restarts from ``coef_ / target_scale``, which smaller scales
        would round.
    target_offset : float, default=0.0
        Public constant subtracted from the targets before ``target_scale``
        divides them (predictions and ``intercept_`` are in the original
        units): the centre of the quantity's known range, never a statistic
        of the training targets (:func:`~skforget.pipeline.make_private_pipeline`
        releases one privately). The regulariser pulls the intercept towards
        it, not towards 0.
    fit_intercept : bool, default=True
        Fit an intercept (regularised, unlike ``Ridge``: the guarantee needs
        strong convexity in every direction).
    intercept_scaling : float, default=1.0
        Feature value of the intercept coordinate.
    learning_rate : float, default=None
        Step size; None for ``2 / (2 lambda + 1.1 beta)``, the largest the
        contraction analysis allows with room for batches to grow by 10%.
    max_iter : int, default=None
        Passes over the data (epochs) of ``fit``; None for the accounting's
        recipe (privacy-accounting.md, Section 8.4). With ``batch_size=None`` a
        pass is one step.
    batch_size : int, "auto" or None, default="auto"
        Rows per mini-batch. "auto" chooses the number of batches from public
        numbers (full batch for small data or when ``certify_k_max > 0``);
        None is full-batch noisy gradient descent (privacy-accounting.md,
        Section 12).
    recipe : {"tight", "cs23"}, default="tight"
        Planning of noise and steps.
    random_state : int, RandomState instance or None, default=None
        Source of the noise (None: fresh OS entropy). An integer makes runs
        reproducible; clones (``GridSearchCV``, ``cross_val_score``) then share
        the noise, so use None whenever the fitted models are released.
    {verbose}
    {n_jobs}
    {ledger}
    {certify_k_max}
    {certify_modes}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    alpha_ : float
        The ``alpha`` the latest fit or edit trained with, as
        ``RidgeCV.alpha_`` reports its choice: ``alpha`` when given, else what
        ``"auto"`` resolved to, ``N * lambda * W`` of the public plan (``N`` the
        fit's rows, ``lambda`` the penalty per sample,
        ``privacy_guarantee_.regularization``, and ``W`` the public bound
        ``max_sample_weight`` with sample weights, else 1). ``alpha=alpha_``
        refits with the same penalty, hence the same model under the same
        ``random_state``. "auto" reads public numbers only (privacy-accounting.md,
        Section 8.5), so ``alpha_`` tells nothing about the rows or targets.
        Edits keep it: they run under the fit's plan (Section 10.1).
    n_iter_ : ndarray of shape (1,)
        Passes over the data run by ``fit``.
    n_unlearn_iter_ : int
        Passes run by the last :meth:`partial_unlearn` (only after an edit).
    database_version_ : DatabaseVersion or None
        Version of the :class:`~skforget.Database` the model is current with
        (None when fitted on plain arrays).
    privacy_guarantee_ : PrivacyGuarantee
        What the current coefficients guarantee, with one certificate per edit.
    certified_radii_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: per tracked mode, the data-dependent
        radius contributed by the current segment (``fit``, or the last
        ``partial_unlearn``) for ``k = 0..certify_k_max``. A function of
        the private rows: do not publish it. Dropped by the next ``fit`` or edit.
    contraction_factor_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: the contraction factors used for those
        radii (they involve the largest eigenvalue of the rows' Gram matrix;
        sensitive too).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)

    See Also
    --------
    NoisyGDClassifier : The logistic-loss counterpart.
    sklearn.linear_model.Ridge : The non-private model.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget import NoisyGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 3)) / np.sqrt(3)
    >>> y = X @ np.array([1.0, -0.5, 0.25]) + 0.05 * rng.standard_normal(2000)
    >>> reg = NoisyGDRegressor(alpha=5.0, epsilon=2.0, target_scale=1.0,
    ...                        random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.5
    True

    Targets on a larger public scale (a score between 0 and 350, say) are
    divided by a public constant; predictions come back in the original units:

    >>> reg = NoisyGDRegressor(alpha=5.0, epsilon=2.0, target_scale=100.0,
    ...                        random_state=0).fit(X, 100 * y)
    >>> reg.score(X, 100 * y) > 0.5
    True
    """

    # The growth of the default with rho (Section 8.5) was measured for the
    # classifiers; on three regression tables at epsilon = 8 it was never
    # better and lost 7 points of R^2 on the smallest, so "auto" keeps its
    # epsilon = 1 rule here.
    _default_norm_grows = False

    _parameter_constraints: dict = {
        **_BaseNoisyGD._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "target_scale": [Interval(Real, _MIN_TARGET_SCALE, None, closed="left"), None],
        "target_offset": [Real],
        "certify_k_max": [Interval(Integral, 0, None, closed="left")],
        "certify_modes": [StrOptions(set(MODES)), tuple, list],
    }
    _finite_extra = ("alpha", "target_scale", "target_offset")

    def __init__(self, alpha="auto", *, epsilon=1.0, delta="auto",
                 deletion_epsilon=None, max_edit_size=100, max_lazy_records="auto",
                 max_sample_weight=1.0, group_size=1,
                 relation="replace", data_norm=1.0, clip_rows=True, clip_norm=1.0,
                 target_scale=None, target_offset=0.0, fit_intercept=True,
                 intercept_scaling=1.0, learning_rate=None, max_iter=None,
                 batch_size="auto", recipe="tight",
                 random_state=None, verbose=0, n_jobs=None, certify_k_max=0,
                 certify_modes=("remove",), ledger=None):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.deletion_epsilon = deletion_epsilon
        self.max_edit_size = max_edit_size
        self.max_lazy_records = max_lazy_records
        self.max_sample_weight = max_sample_weight
        self.group_size = group_size
        self.relation = relation
        self.data_norm = data_norm
        self.clip_rows = clip_rows
        self.clip_norm = clip_norm
        self.target_scale = target_scale
        self.target_offset = target_offset
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.recipe = recipe
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.certify_k_max = certify_k_max
        self.certify_modes = certify_modes
        self.ledger = ledger


for _cls in (NoisyGDClassifier, NoisyGDRegressor):
    fill_doc(_cls, **_SHARED_PARAMETERS)
