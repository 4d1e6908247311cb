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
#   no prefetch, 1.2 prefetching before the margins, 1.05 after them), unless
#   one batch's rows, in order, fit in the caches (_PREFETCH_MIN_BYTES).
# * Margins accumulate in several partial sums; the build's -fassociative-math lets
#   the compiler turn them into SIMD lanes. Results are deterministic for a given
#   build and may differ from another build in the last bits.
# * CSR rows go one at a time with a sparse dot and a sparse axpy, so the dot of
#   one row overlaps the scatter of the previous one.
# * The AVX2 build computes the logistic sigmoids of a dense block in one vector
#   call (skf_sigmoid4, a polynomial exp accurate to a few ulps): a scalar libm
#   exp per row cost about 15% of a dense step. Accuracy does not touch the
#   guarantee: the clamp at +-tau comes after it.
# * The softmax's residual p - e_y is already within sqrt(2) of 0; a tau_i below
#   that selects the clipped softmax (privacy-accounting.md, Lemma 4.5): a row
#   whose residual leaves the ball of radius tau_i gets q* - e_y instead, q*
#   the maximiser of <q, z> + H(q) over the simplex within the ball: Newton's
#   method on the two KKT equations at once (a few softmaxes' worth for such a
#   row), or, when that does not converge (margins in the tens), nested scalar
#   solves bracketed in the ball's multiplier (tens of softmaxes).
# * float32 rows are widened to double as they are read: margins, residuals, clip
#   thresholds and the gradient are double, so ||clipped gradient|| <= L holds in
#   float64 whatever the input dtype.
# * Everything runs without the GIL and draws no random numbers: the noise belongs
#   to the solver, which owns the numpy Generator.
# * n_threads > 1 splits each batch's positions into that many contiguous ranges,
#   summed by OpenMP threads (prange) into private buffers that are then added
#   in range order. The ranges depend only on the batch bounds and on n_threads
#   (never on which thread ran them or how many OpenMP actually granted), so a
#   run is reproducible for a given n_threads; it differs from one thread only
#   in the order of the floating-point sums. A batch gets at most one range per
#   min_rows positions, since a parallel region costs a few microseconds of
#   synchronisation per step. Built without OpenMP, the ranges run one after
#   the other and give the same numbers.

from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport NAN, exp, fabs, fmax, fmin, log, sqrt
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
    /* exp(x) of four doubles on [-708, 708] (clamped; NaN stays NaN) by
       Cody-Waite reduction, exp(r) = sum_{j<=12} r^j / j! on |r| <= ln2/2
       (truncation below 2e-16), and 2^k from the exponent bits. Clamping the
       argument keeps 2^k a normal number. */
    static inline __m256d skf_exp4_pd(__m256d x) {
        const __m256d one = _mm256_set1_pd(1.0);
        x = _mm256_min_pd(_mm256_set1_pd(708.0), _mm256_max_pd(_mm256_set1_pd(-708.0), x));
        __m256d k = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(6.93147180369123816490e-01), x);
        r = _mm256_fnmadd_pd(k, _mm256_set1_pd(1.90821492927058770002e-10), r);
        /* Estrin's scheme: pairs, then powers r^2, r^4, r^8; four dependent
           levels where Horner's rule had twelve (the four values of a block
           wait on this chain, not on the FMA units). */
        __m256d r2 = _mm256_mul_pd(r, r);
        __m256d r4 = _mm256_mul_pd(r2, r2);
        __m256d r8 = _mm256_mul_pd(r4, r4);
        __m256d p01 = _mm256_fmadd_pd(r, one, one);
        __m256d p23 = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 6.0), _mm256_set1_pd(0.5));
        __m256d p45 = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 120.0),
                                      _mm256_set1_pd(1.0 / 24.0));
        __m256d p67 = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 5040.0),
                                      _mm256_set1_pd(1.0 / 720.0));
        __m256d p89 = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 362880.0),
                                      _mm256_set1_pd(1.0 / 40320.0));
        __m256d pab = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 39916800.0),
                                      _mm256_set1_pd(1.0 / 3628800.0));
        __m256d q0 = _mm256_fmadd_pd(p23, r2, p01);
        __m256d q1 = _mm256_fmadd_pd(p67, r2, p45);
        __m256d q2 = _mm256_fmadd_pd(pab, r2, p89);
        __m256d s0 = _mm256_fmadd_pd(q1, r4, q0);
        __m256d s1 = _mm256_fmadd_pd(_mm256_set1_pd(1.0 / 479001600.0), r4, q2);
        __m256d p = _mm256_fmadd_pd(s1, r8, s0);
        __m256i e = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k));
        e = _mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(1023)), 52);
        return _mm256_mul_pd(p, _mm256_castsi256_pd(e));
    }
    /* Four logistic sigmoids at once, in place: 1 / (1 + exp(-z)). Beyond
       the clamp it is 1 exactly above 708, and 3.3e-308 (not 0) below -708:
       within the rounding of any residual it enters. */
    static inline void skf_sigmoid4(double *z) {
        const __m256d one = _mm256_set1_pd(1.0);
        __m256d ex = skf_exp4_pd(_mm256_sub_pd(_mm256_setzero_pd(), _mm256_loadu_pd(z)));
        _mm256_storeu_pd(z, _mm256_div_pd(one, _mm256_add_pd(one, ex)));
    }
    /* Four exps in place (the softmax's, of margins shifted to <= 0: one
       below -708 gives about 3e-308 against a sum of at least 1). */
    static inline void skf_exp4(double *z) {
        _mm256_storeu_pd(z, skf_exp4_pd(_mm256_loadu_pd(z)));
    }
    #else
    #define SKF_SIGMOID4 0
    static inline void skf_sigmoid4(double *z) { (void)z; }
    static inline void skf_exp4(double *z) { (void)z; }
    #endif
    #ifdef _OPENMP
    #define SKF_OPENMP 1
    #else
    #define SKF_OPENMP 0
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
    void skf_exp4(double *z) noexcept nogil
    int skf_cpu_has_avx2_fma() noexcept nogil
    bint SKF_OPENMP

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
# Rows in order (one batch) of fewer bytes than this stay in the
# caches from one pass to the next, where the hardware prefetcher keeps up and
# explicit requests only take issue slots (caravan's 3 MB: 0.099 -> 0.089 ms a
# pass without them; 8 MB: 0.254 -> 0.227; 40 MB: 1.31 -> 3.68, so they stay
# on above it and for batches gathered through an order).
cdef Py_ssize_t _PREFETCH_MIN_BYTES = 4 << 20


def cpu_has_avx2_fma():
    """Whether this CPU can run the x86-64-v3 build of the kernel."""
    return bool(skf_cpu_has_avx2_fma())


def openmp_enabled():
    """Whether this build runs row ranges in parallel OpenMP threads."""
    return bool(SKF_OPENMP)


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


cdef inline void _exps(double *z, Py_ssize_t K) noexcept nogil:
    """``z[k] <- exp(z[k])`` for ``k < K``: four at a time where the build has
    the vector exp (a softmax's ten scalar exps cost more than its row's
    dot products), the rest by libm."""
    cdef Py_ssize_t k = 0
    if SKF_SIGMOID4:
        while k + 4 <= K:
            skf_exp4(&z[k])
            k += 4
    while k < K:
        z[k] = exp(z[k])
        k += 1


cdef enum:
    # Largest number of classes whose margins the clipped softmax keeps on
    # the stack; more classes use the heap (a row at a time, violating rows).
    _SOFTMAX_STACK = 64
#: The natural bound of ||softmax(z) - e_y||: a threshold at or above it never
#: binds (privacy-accounting.md, Lemma 4.5 (v)).
cdef double _SQRT2 = 1.4142135623730951


cdef inline double _lambert_refine(double s, double t, double *e_out) noexcept nogil:
    """``s`` with ``exp(s) + s = t`` (``log W(exp(t))``), by Halley's steps on
    ``f(s) = e^s + s - t`` (``f' = e^s + 1``, ``f'' = f''' = e^s``) from ``s``;
    writes ``exp(s)`` at the returned ``s`` to ``e_out``.

    Near the root Halley's error contracts as ``|e_next| <= 0.42 |e|^3`` (the
    constant ``f''^2 / (4 f'^2) - f''' / (6 f')`` lies in ``(-1/6, 1/4)`` for
    this ``f``), so after a step of at most ``1e-6`` the error is below
    ``1e-18``, under the rounding of ``s``: the loop stops there instead of
    paying one more ``exp`` to see a step of ``1e-18``. ``exp(s)`` is then
    ``e (1 - step + step^2 / 2)``, exact to ``step^3 / 6``, and one Newton
    step on it (no ``exp``) rounds ``s`` as the old extra step did: the 2-D
    Newton of ``_ball_newton`` tests its residuals at 1e-14, which a root
    one ulp off made it miss on some rows of 30 classes (then the bracketed
    solver, 1e-13 in ``log mu``)."""
    cdef double e, f, step, d
    cdef int it
    for it in range(100):
        e = exp(s)
        f = e + s - t
        d = (e + 1.0) - 0.5 * f * e / (e + 1.0)
        # Where f e overflows Halley's denominator is infinite and its step a
        # -0.0 that would pass for converged: Newton's step then.
        step = f / d if fabs(d) <= 1e300 else f / (e + 1.0)
        s -= step
        if fabs(step) <= 1e-6:
            # One Newton step at the rounding level, on exp(s) from the
            # series (no exp): it puts s where the next Halley step would.
            e *= 1.0 - step + 0.5 * step * step
            step = (e + s - t) / (e + 1.0)
            s -= step
            e_out[0] = e * (1.0 - step)
            return s
    e_out[0] = exp(s)
    return s


cdef inline double _lambert_log(double t, double *e_out) noexcept nogil:
    """``s`` with ``exp(s) + s = t``, i.e. ``log W(exp(t))``, from a start
    (``t - log1p(e^t) + log1p(log1p(e^t))``) exact to first order at both
    ends; ``exp(s)`` to ``e_out``."""
    cdef double lp = t + log(1.0 + exp(-t)) if t > 0.0 else log(1.0 + exp(t))
    return _lambert_refine(t - lp + log(1.0 + lp), t, e_out)


cdef double _ball_q(const double *z, Py_ssize_t K, Py_ssize_t y, double mu,
                    double *q, double *slope_out, double *cp_io) noexcept nogil:
    """The simplex point of Lemma 4.5's KKT conditions for the multiplier
    ``mu > 0`` of the ball: ``log q_k + mu q_k = z_k + mu [k = y] + c``, i.e.
    ``mu q_k = W(exp(t_k))``, ``t_k = z_k + mu [k = y] + c + log mu``, with
    ``c`` such that ``sum q = 1``. In ``c' = c + log mu`` the sum ``sum_k
    W(exp(t_k))`` is convex and increasing with slope in ``(0, K)``; Newton
    starts right of the root (where the ``y`` term alone equals ``mu``), so
    it descends monotonically. Writes ``q``; returns ``||q - e_y||^2`` and,
    in ``slope_out``, its derivative in ``log mu`` (implicit differentiation
    of the KKT conditions)."""
    cdef Py_ssize_t k
    cdef double cp = log(mu) - z[y], tot, slope, step, w, t, d2, a, sa, sea, dc, dd
    cdef int it
    if cp_io[0] == cp_io[0]:
        # Warm start from the last multiplier's solution (not NaN), kept only
        # if it lies right of the root, where Newton descends monotonically.
        tot = 0.0
        for k in range(K):
            _lambert_log(z[k] + (mu if k == y else 0.0) + cp_io[0], &w)
            tot += w
        if tot >= mu:
            cp = cp_io[0]
    for it in range(200):
        tot = 0.0
        slope = 0.0
        for k in range(K):
            _lambert_log(z[k] + (mu if k == y else 0.0) + cp, &w)
            q[k] = w
            tot += w
            slope += w / (1.0 + w)
        # Relative to mu: the sum's own rounding is about K ulps of it.
        if fabs(tot - mu) <= 1e-13 * mu:
            break
        step = (tot - mu) / slope
        cp -= step
        if fabs(step) <= 1e-15 * (1.0 + fabs(cp)):
            break
    tot = 0.0
    for k in range(K):
        _lambert_log(z[k] + (mu if k == y else 0.0) + cp, &q[k])
        tot += q[k]
    d2 = 0.0
    sa = 0.0
    sea = 0.0
    for k in range(K):
        q[k] /= tot
        t = q[k] - (1.0 if k == y else 0.0)
        d2 += t * t
        a = q[k] / (1.0 + mu * q[k])
        sa += a
        sea += (-t) * a
    # q_k' = (e_yk - q_k + c') a_k in mu, with c' keeping sum q = 1.
    dc = -sea / sa
    dd = 0.0
    for k in range(K):
        t = q[k] - (1.0 if k == y else 0.0)
        a = q[k] / (1.0 + mu * q[k])
        dd += 2.0 * t * (-t + dc) * a
    slope_out[0] = mu * dd
    cp_io[0] = cp
    return d2


cdef bint _ball_newton(const double *z, Py_ssize_t K, Py_ssize_t y, double tau2,
                       double lse, double d2, double *q, double *sk) noexcept nogil:
    """Newton's method on Lemma 4.5's two KKT equations at once, in ``c'``
    and ``u = log mu``: ``sum_k W(exp(t_k)) = mu`` and ``||q - e_y||^2 =
    tau^2``, ``t_k = z_k + mu [k = y] + c'``, ``q_k = W(exp(t_k)) / mu``, with
    each ``log W`` refined from the last iterate's (``sk``, scratch). The
    solution of both equations with ``mu > 0`` is the maximiser (the problem
    is strictly concave), so when this converges it returns what the
    bracketed solver would; it returns False (and the caller falls back to
    that solver) when it does not converge in 40 damped steps.

    On entry ``q`` holds the softmax ``p`` of ``z``, ``lse`` is
    ``log sum exp z`` and ``d2 = ||p - e_y||^2 > tau2``. The start solves
    the KKT equations of ``y`` and of the largest other class exactly at the
    naive clip ``q0 = e_y + (tau / ||p - e_y||)(p - e_y)`` (feasible, on the
    ball): from ``mu = 1`` Newton failed on most rows with margins of a few
    units, from here it converges in 3-6 steps on all but extreme ones."""
    cdef Py_ssize_t k, j = 0 if y != 0 else 1
    cdef double u, mu, cp, tot, f1, f2, a, j11, j12, j21, j22
    cdef double det, dc, du, t, sa, ay, lam, alpha, qy, by, bj, pj, fy, f0
    cdef int it
    for k in range(K):
        if k != y and q[k] > q[j]:
            j = k
    alpha = sqrt(tau2 / d2)
    # log q0_k - z_k = c + mu ([k = y] - q0_k) for k = y and k = j, with
    # log q0_j = log alpha + z_j - lse in the log domain (q0_j may underflow).
    qy = (1.0 - alpha) + alpha * q[y]
    by = log(qy) - z[y]
    bj = log(alpha) - lse
    mu = (by - bj) / ((1.0 - qy) + alpha * q[j])
    if not (mu > 1e-6):
        mu = 1e-6
    elif mu > 1e200:
        return False
    u = log(mu)
    # c' = c + log mu (the parametrisation of the equations below).
    cp = bj + mu * alpha * q[j] + u
    # The naive clip's log(mu q0_k) is a root's start where it is close:
    # f = e^s + s - t there is mu alpha (p_k - p_j) for k != y (0 for j) and
    # (b_y - b_j) - mu (1 - q0_y + alpha p_j) for y (0 unless mu was
    # clamped), in closed form; within 2 of the root (f' >= 1) Halley needs a
    # step or two. Farther (a class whose margin lies hundreds below), the
    # start of _lambert_log: from there the naive clip sent Halley where f e
    # overflowed (a second reader's rows of margins 300 apart).
    pj = q[j]   # q[k] is overwritten with the roots below
    fy = (by - bj) - mu * ((1.0 - qy) + alpha * pj)
    for k in range(K):
        t = z[k] + (mu if k == y else 0.0) + cp
        f0 = fy if k == y else mu * alpha * (q[k] - pj)
        if fabs(f0) <= 2.0:
            sk[k] = _lambert_refine(u + (log(qy) if k == y else bj + z[k]), t, &q[k])
        else:
            sk[k] = _lambert_log(t, &q[k])
    for it in range(40):
        # Residuals and Jacobian at (c', u).
        tot = 0.0
        sa = 0.0
        ay = 0.0
        for k in range(K):
            # Refined from the last iterate's root: a step or two.
            sk[k] = _lambert_refine(sk[k], z[k] + (mu if k == y else 0.0) + cp,
                                    &q[k])
            tot += q[k]
            a = q[k] / (1.0 + q[k])
            sa += a
            if k == y:
                ay = a
        f1 = tot - mu
        f2 = -tau2
        j21 = 0.0
        j22 = 0.0
        for k in range(K):
            t = q[k] / mu - (1.0 if k == y else 0.0)
            a = q[k] / (1.0 + q[k])
            f2 += t * t
            j21 += 2.0 * t * a / mu
            j22 += 2.0 * t * ((a if k == y else 0.0) - q[k] / mu)
        # f2 relative to tau^2, down to what its rounding allows: t_y =
        # q_y / mu - 1 cancels, an absolute error of a few ulps, so f2 is
        # known to about 4 eps tau (an absolute 1e-14 stopped short by up to
        # 3e-6 tau at tau = 1e-6; the second reading's mpmath reference).
        if (fabs(f1) <= 1e-14 * mu
                and fabs(f2) <= 1e-14 * tau2 + 3.6e-15 * sqrt(tau2)):
            for k in range(K):
                q[k] /= tot
            return True
        if not (f1 == f1 and f2 == f2) or mu > 1e250:
            return False
        j11 = sa
        j12 = mu * (ay - 1.0)
        det = j11 * j22 - j12 * j21
        if det == 0.0 or not (det == det):
            return False
        dc = (j22 * f1 - j12 * f2) / det
        du = (j11 * f2 - j21 * f1) / det
        # Damping: at most two units of log mu and of c' per step.
        lam = 1.0
        if fabs(du) > 2.0:
            lam = 2.0 / fabs(du)
        if fabs(dc) * lam > 2.0:
            lam = 2.0 / fabs(dc)
        cp -= lam * dc
        u -= lam * du
        mu = exp(u)
    return False


cdef void _softmax_ball(double *z, Py_ssize_t K, Py_ssize_t y,
                        double tau) noexcept nogil:
    """Overwrite the margins ``z`` of one row with ``q* - e_y``, the gradient
    of the clipped softmax ``l_tau`` (privacy-accounting.md, Lemma 4.5): the
    softmax's own ``softmax(z) - e_y`` inside the ball ``||. || <= tau``.

    Outside it, Newton's method on the two KKT equations (``_ball_newton``);
    if that does not converge, the ball's multiplier ``mu`` (``||q(mu) -
    e_y||`` decreases in it) is bracketed in ``log mu`` and found by
    safeguarded Newton steps over nested scalar solves, ending on the
    feasible side of the bracket. Either way the point's distance to ``e_y``
    is scaled onto the ball in the last bits, so
    ``||q - e_y|| <= tau`` holds in float64 (the rounding of any clipped
    gradient, Section 16.2). A row whose scratch memory cannot be allocated
    (more than 64 classes) gets a zero gradient, within every bound."""
    cdef double stack_margins[_SOFTMAX_STACK]
    cdef double stack_q[_SOFTMAX_STACK]
    cdef double sk_stack[_SOFTMAX_STACK]
    cdef double *zz = stack_margins
    cdef double *q = stack_q
    cdef bint heap = K > _SOFTMAX_STACK
    cdef Py_ssize_t k
    cdef double m, s, d2, lo, hi, u, fu, df, t, norm, tau2 = tau * tau
    cdef double cpw = NAN  # no warm start yet
    cdef int it
    if tau <= 0.0:
        # An all-zero augmented row (tau_i = 0): its gradient is 0 whatever
        # its residual (privacy-accounting.md, Lemma 4.5, tau = infinity there).
        for k in range(K):
            z[k] = 0.0
        return
    if heap:
        zz = <double *> malloc(3 * K * sizeof(double))
        if zz == NULL:
            for k in range(K):
                z[k] = 0.0
            return
        q = zz + K
    m = z[0]
    for k in range(1, K):
        m = fmax(m, z[k])
    s = 0.0
    for k in range(K):
        zz[k] = z[k] - m   # shifted margins: c absorbs the shift
        q[k] = zz[k]
    _exps(q, K)
    for k in range(K):
        s += q[k]
    d2 = 0.0
    for k in range(K):
        q[k] /= s
        t = q[k] - (1.0 if k == y else 0.0)
        d2 += t * t
    if d2 > tau2 and not _ball_newton(zz, K, y, tau2, log(s), d2, q,
                                      zz + 2 * K if heap else sk_stack):
        # Safeguarded Newton in u = log mu on f(u) = ||q - e_y||^2 - tau^2,
        # decreasing in u, inside a bracket [lo, hi] with f(lo) > 0 >= f(hi).
        lo = -30.0
        hi = 10.0
        while _ball_q(zz, K, y, exp(hi), q, &df, &cpw) > tau2 and hi < 600.0:
            lo = hi
            hi += 10.0
        u = 0.0 if lo < 0.0 < hi else 0.5 * (lo + hi)
        for it in range(100):
            fu = _ball_q(zz, K, y, exp(u), q, &df, &cpw) - tau2
            if fu > 0.0:
                lo = u
            else:
                hi = u
            if fu == 0.0 or hi - lo <= 1e-13 * (1.0 + fabs(hi)):
                break
            t = u - fu / df if df < 0.0 else 0.5 * (lo + hi)
            if not (lo < t < hi):
                t = 0.5 * (lo + hi)
            if fabs(t - u) <= 1e-13 * (1.0 + fabs(u)):
                # Converged: step once past the root to the feasible side.
                if fu > 0.0:
                    hi = fmin(hi, u + 1e-12 * (1.0 + fabs(u)))
                break
            u = t
        _ball_q(zz, K, y, exp(hi), q, &df, &cpw)
    for k in range(K):
        z[k] = q[k] - (1.0 if k == y else 0.0)
    if d2 > tau2:
        norm = 0.0
        for k in range(K):
            norm += z[k] * z[k]
        norm = sqrt(norm)
        if not (norm <= tau):
            # Rounding only: scale the residual itself onto the ball (scaling
            # q - e_y and subtracting e_y again rounded q_y near 1, an error
            # of eps / tau relative). A NaN residual (margins apart by about
            # 1e308) gets the zero gradient, within every bound.
            for k in range(K):
                z[k] = z[k] * (tau / norm) if norm == norm else 0.0
    if heap:
        free(zz)


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
    elif tau < _SQRT2:  # clipped softmax (privacy-accounting.md, Lemma 4.5)
        _softmax_ball(z, K, <Py_ssize_t> y, tau)
    else:  # softmax minus one-hot, within its natural bound sqrt(2) R
        m = z[0]
        for k in range(1, K):
            m = fmax(m, z[k])
        s = 0.0
        for k in range(K):
            z[k] = z[k] - m
        _exps(z, K)
        for k in range(K):
            s += z[k]
        for k in range(K):
            z[k] /= s
        z[<Py_ssize_t> y] -= 1.0


cdef inline Py_ssize_t _row(const long long *order, Py_ssize_t i) noexcept nogil:
    # A batch is a range of positions in the segment's order (a permutation of the
    # rows); without an order the positions are the rows themselves.
    return <Py_ssize_t> order[i] if order != NULL else i


cdef void _dense_rows(const floating *X, Py_ssize_t d, Py_ssize_t K,
                      const long long *order, Py_ssize_t lo, Py_ssize_t hi,
                      const double *y, const double *scale, const double *tau,
                      const double *wt, const double *W, const double *b,
                      double s_b, int loss, double *G, double *Gb,
                      double *zb, Py_ssize_t ahead_rows) noexcept nogil:
    """Add the clipped gradients of the rows at positions ``lo..hi`` to ``G``,
    ``Gb``. ``zb`` is a zeroed scratch buffer of ``4 K`` doubles; the rows of
    ``ahead_rows`` (0 or 4) blocks ahead are prefetched (_prefetched_rows)."""
    cdef Py_ssize_t i = lo, j, k, r, m, row, byte
    cdef Py_ssize_t row_bytes = d * sizeof(floating)
    cdef Py_ssize_t rr[4]
    cdef double z0, z1, z2, z3, c0, c1, c2, c3, wj
    cdef const floating *x0
    cdef const floating *x1
    cdef const floating *x2
    cdef const floating *x3
    cdef const char *ahead
    cdef const double *wk
    cdef double *gk
    cdef bint probs
    while i < hi:
        m = hi - i if hi - i < 4 else 4
        for r in range(4):
            rr[r] = _row(order, i + r) if r < m else rr[0]
        # Rows past the end of the range are aliased to the block's first row and
        # given zero coefficients, so the tail shares the four-row code path.
        x0 = X + rr[0] * d
        x1 = X + rr[1] * d
        x2 = X + rr[2] * d
        x3 = X + rr[3] * d
        for k in range(K):
            wk = W + k * d
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
                zb[r * K + k] = scale[rr[r]] * zb[r * K + k] + s_b * b[k]
        probs = _batch_sigmoids(loss, zb, 4 * K)
        for r in range(m):
            _residuals(loss, &zb[r * K], K, y[rr[r]], tau[rr[r]], probs)
            if wt != NULL:
                for k in range(K):
                    zb[r * K + k] = zb[r * K + k] * wt[rr[r]]
        for r in range(m, 4):
            for k in range(K):
                zb[r * K + k] = 0.0
        # Prefetch the rows of the next blocks while the gradient loop works from
        # cache: issued before the margin loop, these requests competed with its
        # own loads from memory (rows are gathered through the order, so each is
        # requested on its own).
        for r in range(ahead_rows):
            if i + _PREFETCH_ROWS + r < hi:
                row = _row(order, i + _PREFETCH_ROWS + r)
                ahead = <const char *> (X + row * d)
                for byte in range(0, row_bytes, 64):
                    SKF_PREFETCH(ahead + byte)
        for k in range(K):
            c0 = zb[k]
            c1 = zb[K + k]
            c2 = zb[2 * K + k]
            c3 = zb[3 * K + k]
            Gb[k] += s_b * (c0 + c1 + c2 + c3)
            c0 = c0 * scale[rr[0]]
            if m > 1:
                c1 = c1 * scale[rr[1]]
            if m > 2:
                c2 = c2 * scale[rr[2]]
            if m > 3:
                c3 = c3 * scale[rr[3]]
            gk = G + k * d
            for j in range(d):
                gk[j] = gk[j] + c0 * x0[j] + c1 * x1[j] + c2 * x2[j] + c3 * x3[j]
        i += m


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


cdef inline void _csr_rows(Py_ssize_t K, const long long *order, Py_ssize_t lo,
                           Py_ssize_t hi, Py_ssize_t d,
                           const floating *data, const index_t *indices,
                           const index_t *indptr, const double *y,
                           const double *scale, const double *tau, const double *wt,
                           const double *W, const double *b, double s_b, int loss,
                           double *G, double *Gb, double *z) noexcept nogil:
    # Rows one at a time, so the dot of one row overlaps the scatter of the
    # previous one. Called with a literal K = 1 for the single-output losses:
    # once inlined, K, the loops over it and z fold into registers (measured:
    # about 10% faster than the generic loop).
    cdef Py_ssize_t ii, i, k, jj, a0, a1
    cdef double a, coef
    cdef double *gk
    for ii in range(lo, hi):
        i = _row(order, ii)
        a = scale[i]
        a0 = indptr[i]
        a1 = indptr[i + 1]
        for k in range(K):
            z[k] = a * _sparse_dot(data, indices, a0, a1, W + k * d) + s_b * b[k]
        _residuals(loss, z, K, y[i], tau[i], False)
        if wt != NULL:
            for k in range(K):
                z[k] = z[k] * wt[i]
        for k in range(K):
            Gb[k] += s_b * z[k]
            coef = a * z[k]
            # No shortcut for coef == 0 (a saturated or zero-weight row): a
            # step's work then depends on the batches' sparsity structure only,
            # never on the values (privacy-accounting.md, Section 16.3).
            gk = G + k * d
            for jj in range(a0, a1):
                gk[indices[jj]] += coef * data[jj]


cdef inline void _zero(double *G, double *Gb, Py_ssize_t K, Py_ssize_t d) noexcept nogil:
    cdef Py_ssize_t k, j
    for k in range(K):
        Gb[k] = 0.0
        for j in range(d):
            G[k * d + j] = 0.0


cdef inline void _noisy_update(double *W, double *b, const double *G,
                               const double *Gb, const double *xi, Py_ssize_t K,
                               Py_ssize_t d, double eta, double lam, double inv_B,
                               double sigma, bint fit_intercept) noexcept nogil:
    # theta <- (1 - eta lam) theta - (eta / B) G + sqrt(2 eta) sigma xi, with xi a
    # block of standard normals drawn by the solver (one row of d + 1 per output,
    # the last entry for the intercept coordinate).
    cdef double shrink = 1.0 - eta * lam, step = eta * inv_B
    cdef double sd = sqrt(2.0 * eta) * sigma
    cdef Py_ssize_t k, j
    cdef const double *xk
    for k in range(K):
        xk = xi + k * (d + 1)
        for j in range(d):
            W[k * d + j] = shrink * W[k * d + j] - step * G[k * d + j] + sd * xk[j]
        if fit_intercept:
            b[k] = shrink * b[k] - step * Gb[k] + sd * xk[d]


def _check_shapes(Py_ssize_t n, Py_ssize_t d, y, scale, tau, weight, W, b, int loss):
    # The loops trust their inputs (no bounds checks), so the entry points check
    # every shape once per call.
    if y.shape[0] != n or scale.shape[0] != n or tau.shape[0] != n:
        raise ValueError("y, scale and tau must have one entry per row of X")
    if weight.shape[0] not in (0, n):
        raise ValueError("weight must be empty or have one entry per row of X")
    K = W.shape[0]
    if K < 1 or W.shape[1] != d:
        raise ValueError("W must have shape (K, n_features) with K >= 1")
    if b.shape[0] != K:
        raise ValueError("b must have shape (K,)")
    if loss not in (LOGISTIC, SQUARED, MULTINOMIAL, OVR) or (
            loss in (LOGISTIC, SQUARED) and K != 1):
        raise ValueError("unknown loss code, or K != 1 for a single-output loss")


def _check_steps(Py_ssize_t n, order, bounds, etas, noise, Py_ssize_t K, Py_ssize_t d):
    if order.shape[0] not in (0, n):
        raise ValueError("order must be empty or a permutation of the rows")
    if bounds.shape[0] < 2 or bounds[0] != 0 or bounds[bounds.shape[0] - 1] != n:
        raise ValueError("bounds must run from 0 to n_samples")
    if np.any(np.diff(bounds) < 0):
        raise ValueError("bounds must not decrease")
    if order.shape[0] and (np.min(order) < 0 or np.max(order) >= n):
        raise ValueError("order holds a row index out of range")
    if noise.shape[0] != etas.shape[0] or noise.shape[1] != K or noise.shape[2] != d + 1:
        raise ValueError("noise must have shape (n_steps, K, n_features + 1)")


cdef inline const double *_opt(const double[::1] a) noexcept nogil:
    return &a[0] if a.shape[0] else NULL


cdef inline const long long *_opt_order(const long long[::1] a) noexcept nogil:
    return &a[0] if a.shape[0] else NULL


cdef inline Py_ssize_t _threads_for(Py_ssize_t rows, Py_ssize_t n_threads,
                                    Py_ssize_t min_rows) noexcept nogil:
    # At most one range per min_rows positions: a function of public numbers.
    cdef Py_ssize_t p = n_threads
    if min_rows > 0 and rows // min_rows < p:
        p = rows // min_rows
    return p if p > 1 else 1


cdef inline Py_ssize_t _stride(Py_ssize_t K, Py_ssize_t d) noexcept nogil:
    # Doubles per range buffer: G (K d), Gb (K) and 4 K of margin scratch, rounded
    # up to whole 64-byte lines plus one, so no two threads write the same line.
    return ((K * (d + 1) + 4 * K + 7) // 8 + 1) * 8


cdef inline void _sum_buffers(double *buf, Py_ssize_t stride, Py_ssize_t p,
                              Py_ssize_t m) noexcept nogil:
    # Range c's partial gradient is added after range c - 1's: a fixed order.
    cdef Py_ssize_t c, j
    cdef const double *src
    for c in range(1, p):
        src = buf + c * stride
        for j in range(m):
            buf[j] = buf[j] + src[j]


cdef void _dense_range(Py_ssize_t c, Py_ssize_t p, const floating *X, Py_ssize_t d,
                       Py_ssize_t K, const long long *order, Py_ssize_t lo,
                       Py_ssize_t hi, const double *y, const double *scale,
                       const double *tau, const double *wt, const double *W,
                       const double *b, double s_b, int loss, double *buf,
                       Py_ssize_t stride) noexcept nogil:
    # Range c of p of the positions lo..hi, into buffer c.
    cdef Py_ssize_t a = lo + (hi - lo) * c // p, e = lo + (hi - lo) * (c + 1) // p
    cdef double *G = buf + c * stride
    _zero(G, G + K * d, K, d)
    if e > a:
        _dense_rows(X, d, K, order, a, e, y, scale, tau, wt, W, b, s_b, loss, G,
                    G + K * d, G + K * (d + 1),
                    _prefetched_rows(order, (hi - lo) * d * sizeof(floating)))


cdef inline Py_ssize_t _prefetched_rows(const long long *order,
                                        Py_ssize_t batch_bytes) noexcept nogil:
    # Decided for the whole batch, not for a thread's share of it: the
    # batch's rows are what must stay in the caches between passes.
    return 4 if order != NULL or batch_bytes >= _PREFETCH_MIN_BYTES else 0


cdef void _dense_gradient(Py_ssize_t p, const floating *X, Py_ssize_t d,
                          Py_ssize_t K, const long long *order, Py_ssize_t lo,
                          Py_ssize_t hi, const double *y, const double *scale,
                          const double *tau, const double *wt, const double *W,
                          const double *b, double s_b, int loss, double *buf,
                          Py_ssize_t stride) noexcept nogil:
    """Clipped gradient sum of positions lo..hi over p ranges, left in buf
    (G, then Gb); buf holds p buffers of stride doubles."""
    cdef Py_ssize_t c
    if p == 1:
        _dense_range(0, 1, X, d, K, order, lo, hi, y, scale, tau, wt, W, b, s_b,
                     loss, buf, stride)
        return
    for c in prange(p, num_threads=p, schedule="static", chunksize=1):
        _dense_range(c, p, X, d, K, order, lo, hi, y, scale, tau, wt, W, b, s_b,
                     loss, buf, stride)
    _sum_buffers(buf, stride, p, K * (d + 1))


cdef void _csr_range(Py_ssize_t c, Py_ssize_t p, Py_ssize_t K,
                     const long long *order, Py_ssize_t lo, Py_ssize_t hi,
                     Py_ssize_t d, const floating *data, const index_t *indices,
                     const index_t *indptr, const double *y, const double *scale,
                     const double *tau, const double *wt, const double *W,
                     const double *b, double s_b, int loss, double *buf,
                     Py_ssize_t stride) noexcept nogil:
    cdef Py_ssize_t a = lo + (hi - lo) * c // p, e = lo + (hi - lo) * (c + 1) // p
    cdef double *G = buf + c * stride
    _zero(G, G + K * d, K, d)
    if K == 1:
        _csr_rows(1, order, a, e, d, data, indices, indptr, y, scale, tau, wt, W,
                  b, s_b, loss, G, G + d, G + d + 1)
    else:
        _csr_rows(K, order, a, e, d, data, indices, indptr, y, scale, tau, wt, W,
                  b, s_b, loss, G, G + K * d, G + K * (d + 1))


cdef void _csr_gradient(Py_ssize_t p, Py_ssize_t K, const long long *order,
                        Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t d,
                        const floating *data, const index_t *indices,
                        const index_t *indptr, const double *y, const double *scale,
                        const double *tau, const double *wt, const double *W,
                        const double *b, double s_b, int loss, double *buf,
                        Py_ssize_t stride) noexcept nogil:
    """CSR twin of _dense_gradient."""
    cdef Py_ssize_t c
    if p == 1:
        _csr_range(0, 1, K, order, lo, hi, d, data, indices, indptr, y, scale, tau,
                   wt, W, b, s_b, loss, buf, stride)
        return
    for c in prange(p, num_threads=p, schedule="static", chunksize=1):
        _csr_range(c, p, K, order, lo, hi, d, data, indices, indptr, y, scale, tau,
                   wt, W, b, s_b, loss, buf, stride)
    _sum_buffers(buf, stride, p, K * (d + 1))


def _check_threads(Py_ssize_t n_threads, Py_ssize_t min_rows):
    if n_threads < 1:
        raise ValueError("n_threads must be at least 1")
    if min_rows < 0:
        raise ValueError("min_rows must be nonnegative")


def _check_range(Py_ssize_t n, order, Py_ssize_t lo, Py_ssize_t hi):
    # Positions lo..hi of order (or of the rows); every index is checked, since
    # the loops trust them.
    cdef Py_ssize_t m = order.shape[0] if order.shape[0] else n
    if hi < 0:
        hi = m
    if not 0 <= lo <= hi <= m:
        raise ValueError(f"lo={lo}, hi={hi} must satisfy 0 <= lo <= hi <= {m}")
    if order.shape[0] and hi > lo:
        part = np.asarray(order[lo:hi])
        if part.min() < 0 or part.max() >= n:
            raise ValueError("order holds a row index out of range")
    return lo, hi


cdef double *_alloc_buffers(Py_ssize_t p, Py_ssize_t stride) except NULL:
    cdef double *buf = <double *> calloc(p * stride, sizeof(double))
    if buf == NULL:
        raise MemoryError("could not allocate the kernel's gradient buffers")
    return buf


def clipped_gradient_dense(const floating[:, ::1] X, const double[::1] y,
                           const double[::1] scale, const double[::1] tau,
                           const double[:, ::1] W, const double[::1] b, double s_b,
                           int loss, double[:, ::1] G, double[::1] Gb,
                           const double[::1] weight=np.zeros(0),
                           Py_ssize_t n_threads=1, Py_ssize_t min_rows=0,
                           const long long[::1] order=np.zeros(0, np.int64),
                           Py_ssize_t lo=0, Py_ssize_t hi=-1):
    """Sum over rows of the clipped gradient, for dense C-contiguous ``X``.

    Fills ``G`` (K, n_features) with the coefficient part and ``Gb`` (K,) with the
    intercept part (``s_b`` times the summed clipped derivatives). For the
    multinomial and one-vs-rest losses ``y`` holds class codes in ``[0, K)``.
    ``weight`` (one entry per row, or empty for none) multiplies each row's
    clipped derivative. ``n_threads`` ranges of at least ``min_rows`` rows each
    are summed in parallel (see the Design notes). With ``order`` (row indices)
    only the rows ``order[lo:hi]`` are summed; without it, rows ``lo:hi``
    (``hi=-1``: to the end).
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = W.shape[0], j
    _check_shapes(n, d, y, scale, tau, weight, W, b, loss)
    _check_threads(n_threads, min_rows)
    lo, hi = _check_range(n, order, lo, hi)
    if G.shape[0] != K or G.shape[1] != d or Gb.shape[0] != K:
        raise ValueError("G and Gb must have the shapes of W and b")
    cdef Py_ssize_t p = _threads_for(hi - lo, n_threads, min_rows)
    cdef Py_ssize_t stride = _stride(K, d)
    cdef const long long *op = _opt_order(order)
    cdef double *buf = _alloc_buffers(p, stride)
    cdef const floating *Xp = &X[0, 0] if n and d else NULL
    cdef const double *Wp = &W[0, 0] if d else NULL
    cdef double *Gp = &G[0, 0] if d else NULL
    with nogil:
        if hi > lo:
            _dense_gradient(p, Xp, d, K, op, lo, hi, &y[0], &scale[0], &tau[0],
                            _opt(weight), Wp, &b[0], s_b, loss, buf, stride)
        for j in range(K * d):
            Gp[j] = buf[j]
        for j in range(K):
            Gb[j] = buf[K * d + j]
    free(buf)


def clipped_gradient_csr(const floating[::1] data, const index_t[::1] indices,
                         const index_t[::1] indptr, const double[::1] y,
                         const double[::1] scale, const double[::1] tau,
                         const double[:, ::1] W, const double[::1] b, double s_b,
                         int loss, double[:, ::1] G, double[::1] Gb,
                         const double[::1] weight=np.zeros(0),
                         Py_ssize_t n_threads=1, Py_ssize_t min_rows=0,
                         const long long[::1] order=np.zeros(0, np.int64),
                         Py_ssize_t lo=0, Py_ssize_t hi=-1):
    """CSR twin of :func:`clipped_gradient_dense` (canonical CSR expected)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, d = G.shape[1], K = W.shape[0], j
    _check_shapes(n, d, y, scale, tau, weight, W, b, loss)
    _check_threads(n_threads, min_rows)
    lo, hi = _check_range(n, order, lo, hi)
    if G.shape[0] != K or Gb.shape[0] != K:
        raise ValueError("G and Gb must have the shapes of W and b")
    cdef Py_ssize_t p = _threads_for(hi - lo, n_threads, min_rows)
    cdef Py_ssize_t stride = _stride(K, d)
    cdef const long long *op = _opt_order(order)
    cdef double *buf = _alloc_buffers(p, stride)
    cdef const floating *dp = &data[0] if data.shape[0] else NULL
    cdef const index_t *ip = &indices[0] if indices.shape[0] else NULL
    cdef const double *Wp = &W[0, 0] if d else NULL
    cdef double *Gp = &G[0, 0] if d else NULL
    with nogil:
        if hi > lo:
            _csr_gradient(p, K, op, lo, hi, d, dp, ip, &indptr[0], &y[0], &scale[0],
                          &tau[0], _opt(weight), Wp, &b[0], s_b, loss, buf, stride)
        for j in range(K * d):
            Gp[j] = buf[j]
        for j in range(K):
            Gb[j] = buf[K * d + j]
    free(buf)


def run_steps_dense(const floating[:, ::1] X, const double[::1] y,
                    const double[::1] scale, const double[::1] tau,
                    const double[::1] weight, const long long[::1] order,
                    const long long[::1] bounds, Py_ssize_t first_batch,
                    const double[::1] etas, const double[:, :, ::1] noise,
                    double sigma, double lam, double inv_B, double s_b, int loss,
                    bint fit_intercept, double[:, ::1] W, double[::1] b,
                    Py_ssize_t n_threads=1, Py_ssize_t min_rows=0):
    """Run ``len(etas)`` noisy steps in place on ``(W, b)``, without the GIL.

    Step ``t`` uses batch ``(first_batch + t) % E`` (``E = len(bounds) - 1``),
    whose rows are ``order[bounds[j]:bounds[j + 1]]`` (or the rows themselves
    when ``order`` is empty), at step size ``etas[t]`` with the standard normals
    ``noise[t]`` (shape ``(K, n_features + 1)``): the whole step loop of a
    segment's chunk in one call, so no Python runs between steps. Each batch is
    summed over up to ``n_threads`` ranges of at least ``min_rows`` rows.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = W.shape[0]
    cdef Py_ssize_t T = etas.shape[0], E = bounds.shape[0] - 1, t, j, p
    _check_shapes(n, d, y, scale, tau, weight, W, b, loss)
    _check_steps(n, order, bounds, etas, noise, K, d)
    _check_threads(n_threads, min_rows)
    if T == 0:
        return
    cdef Py_ssize_t stride = _stride(K, d)
    cdef Py_ssize_t p_max = min(n_threads, max(1, n))
    cdef double *buf = _alloc_buffers(p_max, stride)
    cdef const floating *Xp = &X[0, 0] if n and d else NULL
    cdef double *Wp = &W[0, 0] if d else NULL
    cdef const long long *op = _opt_order(order)
    cdef const double *wp = _opt(weight)
    cdef const double *yp = &y[0] if n else NULL
    cdef const double *sp = &scale[0] if n else NULL
    cdef const double *tp = &tau[0] if n else NULL
    with nogil:
        for t in range(T):
            j = (first_batch + t) % E
            p = _threads_for(bounds[j + 1] - bounds[j], p_max, min_rows)
            _dense_gradient(p, Xp, d, K, op, bounds[j], bounds[j + 1], yp, sp, tp,
                            wp, Wp, &b[0], s_b, loss, buf, stride)
            _noisy_update(Wp, &b[0], buf, buf + K * d, &noise[t, 0, 0], K, d,
                          etas[t], lam, inv_B, sigma, fit_intercept)
    free(buf)


def run_steps_csr(const floating[::1] data, const index_t[::1] indices,
                  const index_t[::1] indptr, const double[::1] y,
                  const double[::1] scale, const double[::1] tau,
                  const double[::1] weight, const long long[::1] order,
                  const long long[::1] bounds, Py_ssize_t first_batch,
                  const double[::1] etas, const double[:, :, ::1] noise,
                  double sigma, double lam, double inv_B, double s_b, int loss,
                  bint fit_intercept, double[:, ::1] W, double[::1] b,
                  Py_ssize_t n_threads=1, Py_ssize_t min_rows=0):
    """CSR twin of :func:`run_steps_dense` (canonical CSR expected)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, d = W.shape[1], K = W.shape[0]
    cdef Py_ssize_t T = etas.shape[0], E = bounds.shape[0] - 1, t, j, p
    _check_shapes(n, d, y, scale, tau, weight, W, b, loss)
    _check_steps(n, order, bounds, etas, noise, K, d)
    _check_threads(n_threads, min_rows)
    if T == 0:
        return
    cdef Py_ssize_t stride = _stride(K, d)
    cdef Py_ssize_t p_max = min(n_threads, max(1, n))
    cdef double *buf = _alloc_buffers(p_max, stride)
    cdef const floating *dp = &data[0] if data.shape[0] else NULL
    cdef const index_t *ip = &indices[0] if indices.shape[0] else NULL
    cdef double *Wp = &W[0, 0] if d else NULL
    cdef const long long *op = _opt_order(order)
    cdef const double *wp = _opt(weight)
    cdef const double *yp = &y[0] if n else NULL
    cdef const double *sp = &scale[0] if n else NULL
    cdef const double *tp = &tau[0] if n else NULL
    with nogil:
        for t in range(T):
            j = (first_batch + t) % E
            p = _threads_for(bounds[j + 1] - bounds[j], p_max, min_rows)
            _csr_gradient(p, K, op, bounds[j], bounds[j + 1], d, dp, ip, &indptr[0],
                          yp, sp, tp, wp, Wp, &b[0], s_b, loss, buf, stride)
            _noisy_update(Wp, &b[0], buf, buf + K * d, &noise[t, 0, 0], K, d,
                          etas[t], lam, inv_B, sigma, fit_intercept)
    free(buf)


cdef inline double _scaled_norm(const floating *x, Py_ssize_t lo,
                                Py_ssize_t hi) noexcept nogil:
    # Two-pass norm with scaling by the largest magnitude (what BLAS nrm2 guards
    # against): finite for every finite row whose true norm is below DBL_MAX, and
    # accurate to a few ulps for rows whose squares overflow or underflow. A NaN
    # entry makes the norm NaN: fmax would skip it, and a row [nan, 0, ...] would
    # then pass as a zero row, which the finiteness check never reads again.
    cdef double m = 0.0, acc = 0.0, v, a
    cdef Py_ssize_t jj
    for jj in range(lo, hi):
        a = fabs(<double> x[jj])
        if a != a:
            return a
        m = fmax(m, a)
    if m == 0.0:
        return 0.0
    for jj in range(lo, hi):
        v = (<double> x[jj]) / m
        acc = acc + v * v
    return m * sqrt(acc)


cdef inline double _row_norm(const floating *x, Py_ssize_t lo,
                             Py_ssize_t hi) noexcept nogil:
    # Fast path: one pass of float64 squares. It is exact to rounding whenever the
    # sum lies in [1e-280, 1e280]: no square can have overflowed (the sum would be
    # inf) and squares lost to underflow are below 1e-300, negligible next to it.
    # Otherwise (huge or tiny rows, which an adversary may submit) recompute with
    # scaling, so no finite row ever gets a norm of inf or 0 it does not have.
    cdef double acc = 0.0, v
    cdef Py_ssize_t jj
    for jj in range(lo, hi):
        v = x[jj]
        acc = acc + v * v
    if 1e-280 <= acc <= 1e280:
        return sqrt(acc)
    return _scaled_norm(x, lo, hi)


def row_norms_dense(const floating[:, ::1] X):
    """L2 norm of every row in float64, robust to overflow and underflow.

    Returns ``inf`` only for rows whose true norm exceeds the largest double.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    if d == 0:
        out[:] = 0.0
        return out
    with nogil:
        for i in range(n):
            o[i] = _row_norm(&X[i, 0], 0, d)
    return out


def row_norms_csr(const floating[::1] data, const index_t[::1] indptr):
    """CSR twin of :func:`row_norms_dense` (duplicates must already be summed)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, i
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    if data.shape[0] == 0:
        out[:] = 0.0
        return out
    with nogil:
        for i in range(n):
            o[i] = _row_norm(&data[0], indptr[i], indptr[i + 1])
    return out


def csr_structure_error(const index_t[::1] indices, const index_t[::1] indptr,
                        Py_ssize_t n_cols):
    """Check a CSR structure in one pass over the indices, trusting no cached flag.

    Returns ``(code, row)``: code 0 if canonical (indptr starts at 0 and never
    decreases, indices in range and strictly increasing within each row);
    1 if a row has unsorted or duplicate column indices (fixable by summing
    duplicates into a copy); 2 if the structure is invalid (an index out of
    range or a malformed indptr), with the first row at fault.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1, nnz = indices.shape[0], i, jj
    cdef Py_ssize_t code = 0, row = -1
    cdef index_t lo, hi
    if n < 0 or indptr[0] != 0 or indptr[n] > nnz:
        return 2, 0
    with nogil:
        for i in range(n):
            lo = indptr[i]
            hi = indptr[i + 1]
            if hi < lo or hi > nnz:
                code = 2
                row = i
                break
            for jj in range(lo, hi):
                if indices[jj] < 0 or indices[jj] >= n_cols:
                    code = 2
                    row = i
                    break
                if jj > lo and indices[jj] <= indices[jj - 1] and code == 0:
                    code = 1
                    row = i
            if code == 2:
                break
    return int(code), int(row)
