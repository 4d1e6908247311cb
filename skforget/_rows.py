# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The public row map: how every row enters training and prediction.

Design
------
The privacy guarantee rests on two per-row facts, both for *every finite input*:

1. after the row map, ``||[a_i x_i, s_b]|| <= R`` (the public row-norm bound), and
2. every clipped per-record gradient has norm at most the bound ``G`` the
   accountant uses (privacy-accounting.md, Lemma 2.1 and Section 10.2).

Both are enforced here, by construction rather than by patching non-finite
values afterwards:

* Norms are computed in float64 with scaling (``row_norms_*`` in the kernel), so
  a row with entries of 1e200 or 1e-200 gets its true norm, never ``inf`` or 0.
* Rows over the bound are scaled by ``a_i = min(1, R' / ||x_i||)`` where
  ``R' = R (1 - s)`` sits a few rounding errors inside the bound, so the mapped
  row's exact norm cannot exceed ``R`` through rounding (``s`` covers the error
  of a float64 norm of ``d`` terms).
* A row whose factor ``a_i`` would be subnormal (norm above ``R' 2**500``, or not
  finite as a double) loses precision when multiplied; such rows are replaced by
  their exact projection in a copy (only they are rewritten, and only then is the
  input copied), so the kernel never multiplies by a denormal factor.
* The clip threshold on the loss derivative is ``tau_i = G' / ||x~_i||`` with
  ``||x~_i|| = hypot(a_i ||x_i||, s_b)`` (no squaring, so no underflow for tiny
  rows or a tiny intercept scaling), ``G'`` the gradient bound a few rounding
  errors inside ``G``, capped at the largest double and 0 for an all-zero
  augmented row (whose gradient is 0 anyway). It is never infinite, so no row
  can skip clipping. The logistic losses are clamped at their natural bound too
  (inactive for rows within the ball), so the per-record bound does not depend on
  the projection's accuracy either.
* CSR input is checked in one pass for sorted, unique, in-range column indices,
  without trusting SciPy's cached ``has_canonical_format`` flag (a caller may edit
  ``indices`` in place after it was cached). Duplicates are summed into a copy.
  Mixed ``indices`` / ``indptr`` dtypes are unified.

Everything here is a data-independent map applied to each row on its own, so it
keeps differential privacy; nothing derived from the rows outlives the segment.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from skforget import _kernels, accounting
from skforget._validation import fixed_errstate
from skforget.accounting._noisy_gd import SOFTMAX_CUTOVER

#: Rows whose scale factor would fall below this are rewritten (see Design).
_TINY_FACTOR = 2.0**-500
_DBL_MAX = np.finfo(np.float64).max
_EPS = np.finfo(np.float64).eps


def rounding_margin(n_features):
    """Relative margin ``s`` that keeps mapped rows and clipped gradients inside
    their bounds despite float64 rounding: a norm of ``d`` terms is accurate to
    about ``(d / 2 + 2) eps``; we keep ``(d + 16) eps`` and at least ``2**-44``."""
    return max(2.0**-44, (n_features + 16) * _EPS)


def canonical_csr(X, *, where="X"):
    """Return ``X`` as CSR with sorted, unique, in-range indices of one dtype.

    The structure is checked in one pass (never trusting SciPy's cached
    ``has_canonical_format``); a matrix that needs fixing is copied, so the
    caller's matrix is never modified.
    """
    X = X.tocsr() if X.format != "csr" else X
    indices, indptr = X.indices, X.indptr
    if indices.dtype != indptr.dtype or indices.dtype not in (np.int32, np.int64):
        # The kernel reads both with one integer type; the copy is of the index
        # arrays only.
        dtype = np.int64
        X = sp.csr_matrix((X.data, indices.astype(dtype), indptr.astype(dtype)),
                          shape=X.shape, copy=False)
        indices, indptr = X.indices, X.indptr
    if indptr.shape[0] != X.shape[0] + 1:
        raise ValueError(f"{where} is a CSR matrix whose indptr has "
                         f"{indptr.shape[0]} entries; {X.shape[0] + 1} expected.")
    code, row = _kernels.csr_structure_error(indices, indptr, X.shape[1])
    if code == 2:
        raise ValueError(
            f"{where} is not a valid CSR matrix: row {row} has a column index out "
            f"of range [0, {X.shape[1]}) or its indptr entries are malformed.")
    if code == 1:
        # Unsorted or duplicate indices. Duplicates add up in SciPy's semantics,
        # so norms must be taken after summing them (a row holding 0.7 twice in
        # one column is the value 1.4).
        X = X.copy()
        X.has_canonical_format = False
        X.sum_duplicates()
    return X


def row_norms(X):
    """Float64 L2 norms of the rows of dense or canonical CSR ``X`` (robust)."""
    if sp.issparse(X):
        return _kernels.row_norms_csr(X.data, X.indptr)
    # Prediction accepts any layout; the kernel reads C-contiguous rows.
    return _kernels.row_norms_dense(np.ascontiguousarray(X))


@fixed_errstate
def _project_rows_exactly(X, rows, radius):
    """Copy of ``X`` in which ``rows`` are replaced by their projection onto the
    ball of ``radius``, computed with a power-of-two prescaling so that no
    intermediate over- or underflows. Used only for rows with extreme norms."""
    X = X.copy()
    for i in rows:
        if sp.issparse(X):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            x = np.asarray(X.data[lo:hi], dtype=np.float64)
        else:
            x = np.asarray(X[i], dtype=np.float64)
        m = float(np.max(np.abs(x)))
        _, e = math.frexp(m)
        u = np.ldexp(x, -e)  # exact, entries in (-1, 1)
        nu = float(np.sqrt(np.sum(u * u)))
        v = u * (radius / nu)
        if sp.issparse(X):
            X.data[lo:hi] = v
        else:
            X[i] = v
    return X


def _check_finite_rows(X, norms, where, first_row=0):
    """Refuse NaN and infinite entries, which scikit-learn's validation lets
    through under ``assume_finite=True``: a NaN row would make every
    coefficient NaN while the guarantee is reported. A finite row has a
    finite norm unless its entries are near the largest double, so only rows
    whose norm is not finite are read again."""
    suspects = np.flatnonzero(~np.isfinite(norms))
    for i in suspects:
        row = (X.data[X.indptr[i]:X.indptr[i + 1]] if sp.issparse(X)
               else np.asarray(X[i]))
        if not np.all(np.isfinite(row)):
            raise ValueError(
                f"Row {first_row + int(i)} of {where} holds NaN or infinite values, "
                "which no privacy bound covers (scikit-learn's assume_finite=True "
                "skips the usual check). Impute or drop them with public rules "
                "first.")


@fixed_errstate
def project_rows(X, data_norm, *, clip_rows=True, where="X", first_row=0):
    """Apply the public row-norm bound to every row.

    Parameters
    ----------
    X : ndarray of shape (n, d) or canonical CSR matrix
        float32 or float64 rows.
    data_norm : float
        Public bound ``R_x`` on ``||x||``.
    clip_rows : bool, default=True
        Project rows over the bound; if False, rows over it by more than
        ``1e-12`` relative raise an error naming the first one.
    where : str
        Name of the input in error messages.
    first_row : int, default=0
        Index of ``X``'s first row in the input ``where`` names (a shard's
        offset in its database), so that messages name rows as the user does.

    Returns
    -------
    X : ndarray or CSR matrix
        The input itself, or (only when some row has an extreme norm) a copy in
        which those rows are already projected.
    scale : ndarray of shape (n,)
        Factors ``a_i`` with ``||a_i x_i|| <= data_norm`` in exact arithmetic.
    norms : ndarray of shape (n,)
        ``||a_i x_i||`` as computed (before rounding margin effects).
    """
    norms = row_norms(X)
    n_features = X.shape[1]
    _check_finite_rows(X, norms, where, first_row)
    if not clip_rows:
        refused = ~(norms <= data_norm * (1.0 + 1e-12))
        if np.any(refused):
            i = int(np.flatnonzero(refused)[0])
            raise ValueError(
                f"Row {first_row + i} of {where} has an L2 norm above data_norm="
                f"{data_norm!r} ({int(refused.sum())} row(s) in all). Scale the rows "
                "with public constants (e.g. sklearn.preprocessing.Normalizer), raise "
                "data_norm, or set clip_rows=True to project rows onto the ball of "
                "radius data_norm.")
    inner = data_norm * (1.0 - rounding_margin(n_features))
    with np.errstate(divide="ignore", over="ignore"):
        scale = np.minimum(1.0, inner / norms)
    extreme = np.flatnonzero(~(scale >= _TINY_FACTOR))
    if extreme.size:
        X = _project_rows_exactly(X, extreme, inner)
        fixed = row_norms(X[extreme]) if not sp.issparse(X) else \
            row_norms(canonical_csr(X[extreme]))
        norms[extreme] = fixed
        with np.errstate(divide="ignore"):
            scale[extreme] = np.minimum(1.0, inner / fixed)
    return X, scale, scale * norms


@fixed_errstate
def augmented_norms(mapped_norms, intercept_scaling):
    """``||[a_i x_i, s_b]||`` without squaring (no underflow for tiny values)."""
    return np.hypot(mapped_norms, intercept_scaling)


@fixed_errstate
def clip_thresholds(aug_norms, bound, n_features):
    """Finite thresholds ``tau_i`` on the loss derivative (Lemma 2.1).

    ``tau_i = G' / ||x~_i||`` with ``G'`` a rounding margin inside ``bound``;
    capped at the largest double (a row that small contributes at most
    ``G'``) and 0 for an all-zero augmented row, whose gradient is 0 anyway.
    """
    inner = bound * (1.0 - rounding_margin(n_features + 1))
    with np.errstate(divide="ignore", over="ignore"):
        tau = np.where(aug_norms > 0, inner / aug_norms, 0.0)
    return np.minimum(tau, _DBL_MAX)


#: Fewest rows a thread is given within one batch. A batch of ``m`` rows is
#: summed by ``min(n_jobs, m // MIN_ROWS_PER_THREAD)`` threads (at least one):
#: each step pays a few microseconds to start and join its threads, and much
#: more when the cores are shared, while 8192 rows of 50 features take about half
#: a millisecond on one core. A public rule: the split depends on the batch
#: bounds and ``n_jobs`` only.
MIN_ROWS_PER_THREAD = 8192


_NO_ORDER = np.zeros(0, dtype=np.int64)


def _weights(weight):
    return np.zeros(0) if weight is None else np.ascontiguousarray(weight, np.float64)


def class_counts(codes, n_classes):
    """Records per class code (a classifier's encoded targets), as floats:
    what the noisy class counts of Section 18.1 add noise to."""
    return np.bincount(np.asarray(codes).astype(np.int64), minlength=n_classes)[
        :n_classes].astype(np.float64)


def class_sums(X, scale, codes, n_classes):
    """Sums of each class's mapped rows ``a_i x_i`` (a binary classifier's
    class statistics, Sections 18.11 and 18.12), in float64, as a dense
    ``(n_classes, d)`` array: a function of the rows and their labels only."""
    return class_sums_and_square(X, scale, codes, n_classes)[0]


def _row_blocks(X, elements=1 << 16):
    """Row ranges of about ``elements`` entries: dense float32 or memory-mapped
    rows are read a block at a time in float64, never copied whole."""
    n = X.shape[0]
    step = n if sp.issparse(X) else max(1, elements // max(1, X.shape[1]))
    return [(lo, min(lo + step, n)) for lo in range(0, n, step)] or [(0, 0)]


def _float64_rows(X, lo, hi):
    if sp.issparse(X):  # one block: the whole matrix, copied only if not float64
        return X.astype(np.float64, copy=False)
    return np.asarray(X[lo:hi], dtype=np.float64)


def score_squares(X, scale, direction):
    """Sum over the rows of the squared scores ``(u^T a_i x_i)^2`` along a
    direction ``u`` (Section 18.12's pooled square, before its noise), in
    float64: a function of the rows and ``u`` only."""
    return class_sums_and_square(X, scale, None, 0, direction)[1]


def class_sums_and_square(X, scale, codes, n_classes, direction=None):
    """:func:`class_sums` (when ``codes`` is given) and :func:`score_squares`
    (when ``direction`` is) in one read of the rows, a block of rows at a time
    in float64: the class moments' release (Section 18.12) needs both."""
    scale = np.asarray(scale, dtype=np.float64)
    if codes is not None:
        codes = np.asarray(codes).astype(np.int64)
    u = None if direction is None else np.asarray(direction, dtype=np.float64)
    out, total = np.zeros((n_classes, X.shape[1])), 0.0
    for lo, hi in _row_blocks(X):
        rows = _float64_rows(X, lo, hi)
        if codes is not None:
            # The block's scale factors in their classes' columns: one product.
            onehot = np.zeros((hi - lo, n_classes))
            onehot[np.arange(hi - lo), codes[lo:hi]] = scale[lo:hi]
            out += (rows.T @ onehot).T if sp.issparse(rows) else onehot.T @ rows
        if u is not None:
            scores = np.asarray(rows @ u).ravel() * scale[lo:hi]
            total += float(scores @ scores)
        del rows  # before the next block's copy: one block in memory at a time
    return out, total


@dataclass(frozen=True)
class Design:
    """Training rows prepared for the kernel (lives for one fit or edit only).

    The in-memory *row source* of the solver: it answers ``n_samples`` and
    ``loss``, sums clipped gradients (:meth:`gradient_sum`) and runs blocks of
    noisy steps (:meth:`run_steps`) with the noise, step sizes and batch
    layout the solver hands it. Its public row map (scale factors and clip
    thresholds) is computed by :func:`make_design`, once per segment. Another
    row source (rows held elsewhere) answers the same calls and leaves the
    generator, the noise and the accounting to the solver.

    Attributes
    ----------
    X : ndarray of shape (n, d) or CSR matrix
        The caller's rows, not copied when already float, C-contiguous or
        canonical CSR, and free of extreme rows.
    y : ndarray of shape (n,)
        float64 targets: {0, 1} labels, class codes, or regression targets.
    scale : ndarray of shape (n,)
        Public row-norm factors ``a_i``.
    tau : ndarray of shape (n,)
        Finite clip thresholds on the loss derivative.
    aug_norms : ndarray of shape (n,)
        ``||[a_i x_i, s_b]||``.
    intercept_scaling : float
        Feature value ``s_b`` of the intercept coordinate (0 without intercept).
    loss : str
    """

    X: object
    y: np.ndarray
    scale: np.ndarray
    tau: np.ndarray
    aug_norms: np.ndarray
    intercept_scaling: float
    loss: str

    @property
    def n_samples(self):
        return self.X.shape[0]

    def class_counts(self, n_classes):
        """Records per class code of these rows (:func:`class_counts`)."""
        return class_counts(self.y, n_classes)

    def class_moments(self, n_classes, direction=None):
        """Sums of each class's mapped rows and, along ``direction``, the sum
        of their squared scores, in one read (:func:`class_sums_and_square`)."""
        return class_sums_and_square(self.X, self.scale, self.y, n_classes,
                                     direction)

    def gradient_sum(self, W, b, G, Gb, *, loss_code, weight=None, n_threads=1,
                     order=None, lo=0, hi=-1):
        """Fill ``G`` (K, d) and ``Gb`` (K,) with the sum of the clipped
        gradients at ``(W, b)`` over all rows (or the rows ``order[lo:hi]``),
        over up to ``n_threads`` row ranges."""
        X, wt = self.X, _weights(weight)
        order = _NO_ORDER if order is None else order
        if sp.issparse(X):
            _kernels.clipped_gradient_csr(
                X.data, X.indices, X.indptr, self.y, self.scale, self.tau, W, b,
                self.intercept_scaling, loss_code, G, Gb, wt, n_threads,
                MIN_ROWS_PER_THREAD, order, lo, hi)
        else:
            _kernels.clipped_gradient_dense(
                X, self.y, self.scale, self.tau, W, b, self.intercept_scaling,
                loss_code, G, Gb, wt, n_threads, MIN_ROWS_PER_THREAD, order, lo, hi)

    def run_steps(self, W, b, *, order, bounds, first_batch, etas, noise, sigma,
                  lam, inv_B, loss_code, fit_intercept, weight=None, n_threads=1):
        """Run ``len(etas)`` noisy steps in place on ``(W, b)`` in one kernel
        call (see ``run_steps_dense``): batch ``(first_batch + t) % E`` is the
        positions ``bounds[j]:bounds[j + 1]`` of ``order``."""
        X, wt = self.X, _weights(weight)
        if sp.issparse(X):
            _kernels.run_steps_csr(
                X.data, X.indices, X.indptr, self.y, self.scale, self.tau, wt,
                order, bounds, first_batch, etas, noise, sigma, lam, inv_B,
                self.intercept_scaling, loss_code, fit_intercept, W, b, n_threads,
                MIN_ROWS_PER_THREAD)
        else:
            _kernels.run_steps_dense(
                X, self.y, self.scale, self.tau, wt, order, bounds, first_batch,
                etas, noise, sigma, lam, inv_B, self.intercept_scaling, loss_code,
                fit_intercept, W, b, n_threads, MIN_ROWS_PER_THREAD)


#: The public weighting of a fit, as an accounting plan records it
#: (privacy-accounting.md, Section 4.4).
WEIGHTING = ("sample_weight_bound", "class_weights", "weight_bound")


def plan_weighting(plan):
    """A plan's public weighting, as :func:`row_weights` keywords."""
    return {name: getattr(plan, name) for name in WEIGHTING}


def row_weights(sample_weight, y_enc, *, sample_weight_bound, class_weights,
                weight_bound):
    """Per-row kernel weights in [0, 1], or None when nothing is weighted.

    A row's weight is ``min(sample_weight, sample_weight_bound)`` times its
    class's weight (``class_weights[code]``), divided by the public
    ``weight_bound`` (their product's bound). Each row's weight depends on its
    own record and public numbers only: a per-record map, like projecting a
    row onto ``data_norm``, so it can run wherever the rows live.
    """
    weights = None
    if sample_weight_bound:
        weights = np.minimum(sample_weight, sample_weight_bound)
    if class_weights:
        factor = np.asarray(class_weights, dtype=np.float64)[y_enc.astype(np.intp)]
        weights = factor if weights is None else weights * factor
    return None if weights is None else \
        np.ascontiguousarray(weights / weight_bound, dtype=np.float64)


def make_design(X, y, *, loss, data_norm, intercept_scaling, gradient_bound,
                clip_rows=True, where="X", first_row=0):
    """Map validated rows (float, C-contiguous or canonical CSR) for the kernel.

    ``gradient_bound`` is the per-record bound the accountant assumes for
    ``loss``: ``min(L, R)`` for the logistic losses (per output), ``L`` for the
    squared loss, ``sqrt(2) R`` for the softmax (not clamped: its bound follows
    from the projection), or ``L`` below it for the clipped softmax of Lemma
    4.5 (``tau_i = L / ||x~_i||`` is then the radius of each row's ball).
    """
    X, scale, norms = project_rows(X, data_norm, clip_rows=clip_rows, where=where,
                                   first_row=first_row)
    aug = augmented_norms(norms, intercept_scaling)
    tau = clip_thresholds(aug, gradient_bound, X.shape[1])
    natural = accounting.gradient_bound(
        loss="multinomial", row_norm=math.hypot(data_norm, intercept_scaling)) \
        if loss == "multinomial" else math.inf
    if gradient_bound >= natural * (1.0 - SOFTMAX_CUTOVER):
        # The plain softmax: its natural bound holds row by row, and a
        # threshold that never binds keeps the kernel on its softmax path.
        tau = np.full_like(tau, _DBL_MAX)
    return Design(X=X, y=np.ascontiguousarray(y, dtype=np.float64),
                  scale=np.ascontiguousarray(scale, dtype=np.float64), tau=tau,
                  aug_norms=aug, intercept_scaling=float(intercept_scaling),
                  loss=loss)
