# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Implementation of the clipped-gradient kernel. It is compiled twice, by
# _gd_fast.pyx (portable flags) and _gd_fast_avx2.pyx (x86-64-v3), and
# skforget._kernels picks the build the CPU supports.
#
# Design
# ------
# Noisy gradient descent spends nearly all of its time in one computation per step:
#
#     G = sum_i a_i psi_i(z_i) x_i,   z_i = a_i (W x_i) + s_b b,
#
# where a_i = min(1, R_x / ||x_i||) is the public row-norm bound applied on the fly
# (rows over the bound are never copied), s_b the intercept scaling, and psi_i the
# loss derivative clamped at +-tau_i = +-L / ||[a_i x_i, s_b]||. For a generalised
# linear model that clamp *is* per-example L2 clipping of the gradient
# (privacy-accounting.md, Lemma 2.1), so no per-example gradient is ever formed.
#
# * Dense rows go four at a time: the four margins share each load of W, and the
#   four gradient contributions share each load and store of G, so a row costs a
#   little over one read of x from memory plus one from L1. The rows two blocks
#   ahead are prefetched explicitly, between the margins and the gradient update
#   of the current block (measured against one X @ w on 200000 x 100: 1.35 with
#   no prefetch, 1.2 prefetching before the margins, 1.05 after them).
# * Margins accumulate in several partial sums; the build's -fassociative-math lets
#   the compiler turn them into SIMD lanes. Results are deterministic for a given
#   build and may differ from another build in the last bits.
# * CSR rows go one at a time with a sparse dot and a sparse axpy, so the dot of
#   one row overlaps the scatter of the previous one.
# * The AVX2 build computes the logistic sigmoids of a dense block in one vector
#   call (skf_sigmoid4, a polynomial exp accurate to a few ulps): a scalar libm
#   exp per row cost about 15% of a dense step. Accuracy does not touch the
#   guarantee: the clamp at +-tau comes after it.
# * float32 rows are widened to double as they are read: margins, residuals, clip
#   thresholds and the gradient are double, so ||clipped gradient|| <= L holds in
#   float64 whatever the input dtype.
# * Everything runs without the GIL and draws no random numbers: the noise belongs
#   to the solver, which owns the numpy Generator.

from cython cimport floating
from libc.math cimport exp, fabs, fmax, fmin
from libc.stdlib cimport calloc, free, malloc

import numpy as np

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SKF_PREFETCH(p) __builtin_prefetch((p), 0, 3)
    #else
    #define SKF_PREFETCH(p) ((void)0)
    #endif
    #if defined(__AVX2__) && defined(__FMA__)
    #include <immintrin.h>
    #define SKF_SIGMOID4 1
    /* Four logistic sigmoids at once, in place. exp(-z) on [-708, 708] by
       Cody-Waite reduction, exp(r) = sum_{j<=12} r^j / j! on |r| <= ln2/2
       (truncation below 2e-16), and 2^k from the exponent bits. Clamping the
       argument keeps 2^k a normal number; the sigmoid is already exactly 0 or 1
       in double beyond it. */
    static inline void skf_sigmoid4(double *z) {
        const __m256d one = _mm256_set1_pd(1.0);
        __m256d x = _mm256_sub_pd(_mm256_setzero_pd(), _mm256_loadu_pd(z));
        x = _mm256_min_pd(_mm256_max_pd(x, _mm256_set1_pd(-708.0)),
                          _mm256_set1_pd(708.0));
        __m256d k = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(6.93147180369123816490e-01), x);
        r = _mm256_fnmadd_pd(k, _mm256_set1_pd(1.90821492927058770002e-10), r);
        __m256d p = _mm256_set1_pd(1.0 / 479001600.0);
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 39916800.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 3628800.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 362880.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 40320.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 5040.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 720.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 120.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 24.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 6.0));
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(0.5));
        p = _mm256_fmadd_pd(p, r, one);
        p = _mm256_fmadd_pd(p, r, one);
        __m256i e = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k));
        e = _mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(1023)), 52);
        __m256d ex = _mm256_mul_pd(p, _mm256_castsi256_pd(e));
        _mm256_storeu_pd(z, _mm256_div_pd(one, _mm256_add_pd(one, ex)));
    }
    #else
    #define SKF_SIGMOID4 0
    static inline void skf_sigmoid4(double *z) { (void)z; }
    #endif
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    static int skf_cpu_has_avx2_fma(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    #else
    static int skf_cpu_has_avx2_fma(void) { return 0; }
    #endif
    """
    void SKF_PREFETCH(const void *p) noexcept nogil
    bint SKF_SIGMOID4
    void skf_sigmoid4(double *z) noexcept nogil
    int skf_cpu_has_avx2_fma() noexcept nogil

# Loss codes, shared with skforget._solver.
LOGISTIC = 0
SQUARED = 1
MULTINOMIAL = 2
OVR = 3

ctypedef fused index_t:
    int
    long long

# Rows ahead of the current block whose cache lines are requested.
cdef Py_ssize_t _PREFETCH_ROWS = 8


def cpu_has_avx2_fma():
    """Whether this CPU can run the x86-64-v3 build of the kernel."""
    return bool(skf_cpu_has_avx2_fma())


cdef inline double _sigmoid(double z) noexcept nogil:
    # Branch-free (a select, not a jump): the sign of a margin is as good as
    # random from row to row, and a mispredicted branch per row was measurable.
    cdef double e = exp(-fabs(z))
    cdef double s = 1.0 / (1.0 + e)
    return s if z >= 0 else e * s


cdef inline double _clamp(double v, double t) noexcept nogil:
    return fmax(-t, fmin(t, v))


cdef inline bint _batch_sigmoids(int loss, double *z, Py_ssize_t count) noexcept nogil:
    """Replace ``count`` margins by their sigmoids four at a time, where the build
    has the vector sigmoid and the loss is logistic; returns whether it did.
    One scalar exp per row costs about as much as reading a 100-feature row."""
    cdef Py_ssize_t t
    if not SKF_SIGMOID4 or (loss != 0 and loss != 3) or count % 4 != 0:
        return False
    for t in range(0, count, 4):
        skf_sigmoid4(&z[t])
    return True


cdef inline void _residuals(int loss, double *z, Py_ssize_t K, double y,
                            double tau, bint probs) noexcept nogil:
    """Overwrite the K margins of one row with its clipped loss derivatives
    (``probs``: the logistic losses' margins are already sigmoids)."""
    cdef Py_ssize_t k
    cdef double m, s
    if loss == 0:  # binary logistic, y in {0, 1}
        z[0] = _clamp((z[0] if probs else _sigmoid(z[0])) - y, tau)
    elif loss == 1:  # squared error
        z[0] = _clamp(z[0] - y, tau)
    elif loss == 3:  # one-vs-rest: K binary logistic models, each clipped
        for k in range(K):
            z[k] = _clamp((z[k] if probs else _sigmoid(z[k]))
                          - (1.0 if k == <Py_ssize_t> y else 0.0), tau)
    else:  # softmax minus one-hot; never clipped (natural bound sqrt(2) R)
        m = z[0]
        for k in range(1, K):
            m = fmax(m, z[k])
        s = 0.0
        for k in range(K):
            z[k] = exp(z[k] - m)
            s += z[k]
        for k in range(K):
            z[k] /= s
        z[<Py_ssize_t> y] -= 1.0


cdef int _dense_pass(const floating[:, ::1] X,  # in (n, d)
                     const double[::1] y,  # in (n,)
                     const double[::1] scale,  # in (n,) row factors a_i
                     const double[::1] tau,  # in (n,) clip thresholds
                     const double[:, ::1] W,  # in (K, d)
                     const double[::1] b,  # in (K,)
                     double s_b,
                     int loss,
                     double[:, ::1] G,  # out (K, d)
                     double[::1] Gb,  # out (K,)
                     ) noexcept nogil:
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = W.shape[0]
    cdef Py_ssize_t i, j, k, r, m, byte, block_bytes = 4 * d * sizeof(floating)
    cdef double z0, z1, z2, z3, c0, c1, c2, c3, wj
    cdef const floating *x0
    cdef const floating *x1
    cdef const floating *x2
    cdef const floating *x3
    cdef const char *ahead
    cdef const double *wk
    cdef double *gk
    cdef bint probs
    # Zeroed: the lanes of a short last block go through the vector sigmoid too.
    cdef double *zb = <double *> calloc(4 * K, sizeof(double))
    if zb == NULL:
        return -1
    for k in range(K):
        Gb[k] = 0.0
        for j in range(d):
            G[k, j] = 0.0
    i = 0
    while i < n:
        m = n - i if n - i < 4 else 4
        x0 = &X[i, 0]
        # Rows past the end are aliased to the block's first row and given zero
        # coefficients, so the tail shares the four-row code path.
        x1 = x0 + d if m > 1 else x0
        x2 = x0 + 2 * d if m > 2 else x0
        x3 = x0 + 3 * d if m > 3 else x0
        for k in range(K):
            wk = &W[k, 0]
            z0 = 0.0
            z1 = 0.0
            z2 = 0.0
            z3 = 0.0
            for j in range(d):
                wj = wk[j]
                z0 = z0 + x0[j] * wj
                z1 = z1 + x1[j] * wj
                z2 = z2 + x2[j] * wj
                z3 = z3 + x3[j] * wj
            zb[k] = z0
            zb[K + k] = z1
            zb[2 * K + k] = z2
            zb[3 * K + k] = z3
        for r in range(m):
            for k in range(K):
                zb[r * K + k] = scale[i + r] * zb[r * K + k] + s_b * b[k]
        probs = _batch_sigmoids(loss, zb, 4 * K)
        for r in range(m):
            _residuals(loss, &zb[r * K], K, y[i + r], tau[i + r], probs)
        for r in range(m, 4):
            for k in range(K):
                zb[r * K + k] = 0.0
        # Prefetch while the gradient loop works from cache: issued before the
        # margin loop, these requests competed with its own loads from memory.
        if i + 4 + _PREFETCH_ROWS <= n:
            ahead = <const char *> (x0 + _PREFETCH_ROWS * d)
            for byte in range(0, block_bytes, 64):
                SKF_PREFETCH(ahead + byte)
        for k in range(K):
            c0 = zb[k]
            c1 = zb[K + k]
            c2 = zb[2 * K + k]
            c3 = zb[3 * K + k]
            Gb[k] += s_b * (c0 + c1 + c2 + c3)
            if m > 0:
                c0 = c0 * scale[i]
            if m > 1:
                c1 = c1 * scale[i + 1]
            if m > 2:
                c2 = c2 * scale[i + 2]
            if m > 3:
                c3 = c3 * scale[i + 3]
            gk = &G[k, 0]
            for j in range(d):
                gk[j] = gk[j] + c0 * x0[j] + c1 * x1[j] + c2 * x2[j] + c3 * x3[j]
        i += m
    free(zb)
    return 0


cdef inline double _sparse_dot(const floating *data, const index_t *indices,
                               Py_ssize_t lo, Py_ssize_t hi,
                               const double *w) noexcept nogil:
    # Two partial sums halve the latency chain of a short row's dot product.
    cdef double s0 = 0.0, s1 = 0.0
    cdef Py_ssize_t jj = lo
    while jj + 1 < hi:
        s0 = s0 + data[jj] * w[indices[jj]]
        s1 = s1 + data[jj + 1] * w[indices[jj + 1]]
        jj += 2
    if jj < hi:
        s0 = s0 + data[jj] * w[indices[jj]]
    return s0 + s1


cdef inline void _csr_rows(Py_ssize_t K, Py_ssize_t n, Py_ssize_t d,
                           const floating *data, const index_t *indices,
                           const index_t *indptr, const double *y,
                           const double *scale, const double *tau,
                           const double *W, const double *b, double s_b, int loss,
                           double *G, double *Gb, double *z) noexcept nogil:
    # Rows one at a time, so the dot of one row overlaps the scatter of the
    # previous one. Called with a literal K = 1 for the single-output losses:
    # once inlined, K, the loops over it and z fold into registers (measured:
    # about 10% faster than the generic loop).
    cdef Py_ssize_t i, k, jj, lo, hi
    cdef double a, coef
    cdef double *gk
    for i in range(n):
        a = scale[i]
        lo = indptr[i]
        hi = indptr[i + 1]
        for k in range(K):
            z[k] = a * _sparse_dot(data, indices, lo, hi, W + k * d) + s_b * b[k]
        _residuals(loss, z, K, y[i], tau[i], False)
        for k in range(K):
            Gb[k] += s_b * z[k]
            coef = a * z[k]
            if coef != 0.0:
                gk = G + k * d
                for jj in range(lo, hi):
                    gk[indices[jj]] += coef * data[jj]


cdef int _csr_pass(const floating[::1] data,  # in (nnz,)
                   const index_t[::1] indices,  # in (nnz,)
                   const index_t[::1] indptr,  # in (n + 1,)
                   const double[::1] y,
                   const double[::1] scale,
                   const double[::1] tau,
                   const double[:, ::1] W,  # in (K, d)
                   const double[::1] b,
                   double s_b,
                   int loss,
                   double[:, ::1] G,  # out (K, d)
                   double[::1] Gb,  # out (K,)
                   ) noexcept nogil:
    cdef Py_ssize_t n = indptr.shape[0] - 1, d = G.shape[1], K = W.shape[0]
    cdef Py_ssize_t k, j
    cdef double z1
    cdef double *zrow
    # Blocking rows for the vector sigmoid sped the logistic loss up by 15-20%
    # but slowed the squared loss by 40% (measured), so it is not done.
    for k in range(K):
        Gb[k] = 0.0
        for j in range(d):
            G[k, j] = 0.0
    # Raw pointers: memoryview indexing in these short loops costs (measured).
    if K == 1:
        _csr_rows(1, n, d, &data[0], &indices[0], &indptr[0], &y[0], &scale[0],
                  &tau[0], &W[0, 0], &b[0], s_b, loss, &G[0, 0], &Gb[0], &z1)
        return 0
    zrow = <double *> malloc(K * sizeof(double))
    if zrow == NULL:
        return -1
    _csr_rows(K, n, d, &data[0], &indices[0], &indptr[0], &y[0], &scale[0],
              &tau[0], &W[0, 0], &b[0], s_b, loss, &G[0, 0], &Gb[0], zrow)
    free(zrow)
    return 0


def _check_shapes(Py_ssize_t n, Py_ssize_t d, y, scale, tau, W, b, G, Gb, int loss):
    # The loops trust their inputs (no bounds checks), so the entry points check
    # every shape once per call.
    if y.shape[0] != n or scale.shape[0] != n or tau.shape[0] != n:
        raise ValueError("y, scale and tau must have one entry per row of X")
    K = W.shape[0]
    if K < 1 or W.shape[1] != d or G.shape[0] != K or G.shape[1] != d:
        raise ValueError("W and G must have shape (K, n_features) with K >= 1")
    if b.shape[0] != K or Gb.shape[0] != K:
        raise ValueError("b and Gb must have shape (K,)")
    if loss not in (LOGISTIC, SQUARED, MULTINOMIAL, OVR) or (
            loss in (LOGISTIC, SQUARED) and K != 1):
        raise ValueError("unknown loss code, or K != 1 for a single-output loss")


def clipped_gradient_dense(const floating[:, ::1] X, const double[::1] y,
                           const double[::1] scale, const double[::1] tau,
                           const double[:, ::1] W, const double[::1] b, double s_b,
                           int loss, double[:, ::1] G, double[::1] Gb):
    """Sum over rows of the clipped gradient, for dense C-contiguous ``X``.

    Fills ``G`` (K, n_features) with the coefficient part and ``Gb`` (K,) with the
    intercept part (``s_b`` times the summed clipped derivatives). For the
    multinomial and one-vs-rest losses ``y`` holds class codes in ``[0, K)``.
    """
    cdef int status = 0
    _check_shapes(X.shape[0], X.shape[1], y, scale, tau, W, b, G, Gb, loss)
    with nogil:
        status = _dense_pass(X, y, scale, tau, W, b, s_b, loss, G, Gb)
    if status != 0:
        raise MemoryError("could not allocate the kernel's margin buffer")


def clipped_gradient_csr(const floating[::1] data, const index_t[::1] indices,
                         const index_t[::1] indptr, const double[::1] y,
                         const double[::1] scale, const double[::1] tau,
                         const double[:, ::1] W, const double[::1] b, double s_b,
                         int loss, double[:, ::1] G, double[::1] Gb):
    """CSR twin of :func:`clipped_gradient_dense` (canonical CSR expected)."""
    cdef int status = 0
    _check_shapes(indptr.shape[0] - 1, G.shape[1], y, scale, tau, W, b, G, Gb, loss)
    with nogil:
        status = _csr_pass(data, indices, indptr, y, scale, tau, W, b, s_b, loss,
                           G, Gb)
    if status != 0:
        raise MemoryError("could not allocate the kernel's margin buffer")


def row_sq_norms_dense(const floating[:, ::1] X):
    """Squared row norms accumulated in float64 (clip thresholds need float64)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i, j
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef double acc, v
    with nogil:
        for i in range(n):
            acc = 0.0
            for j in range(d):
                v = X[i, j]
                acc = acc + v * v
            o[i] = acc
    return out


def row_sq_norms_csr(const floating[::1] data, const index_t[::1] indptr):
    """Squared row norms of a CSR matrix, accumulated in float64."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, i, jj
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef double acc, v
    with nogil:
        for i in range(n):
            acc = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                v = data[jj]
                acc = acc + v * v
            o[i] = acc
    return out
