# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The lower convex hulls of Theorem 12.1, compiled (privacy-accounting.md, 12.2).

Planning a batched fit builds a hull over every position of a batch, hundreds
of points each, for several histories: in Python that was most of a small
table's first fit (issue 23, item 5). This module is compiled without
floating-point contraction or reassociation (setup.py), so each operation is
the IEEE double operation the Python expression performs, in its order.
"""

import numpy as np


def hull_pieces(const double[:, ::1] xs, const double[:, ::1] ys):
    """Pieces ``(dy)^2 / (2 dx)`` of each row's lower convex hull.

    ``xs``, ``ys``: (P, L) points with strictly increasing ``xs`` in each row
    (the origin first and the end last). Andrew's monotone chain, one pass:
    the last vertex is popped while it lies on or above the chord from the one
    before it to the new point. Returns (P, L - 1) pieces, zeros past the
    hull's end, for numpy to sum row by row.
    """
    cdef Py_ssize_t P = xs.shape[0], L = xs.shape[1], r, t, i, size
    if ys.shape[0] != P or ys.shape[1] != L or L < 2:
        raise ValueError("xs and ys must have the same shape (P, L), L >= 2.")
    out = np.zeros((P, L - 1))
    hull = np.empty((2, L))
    cdef double[:, ::1] o = out
    cdef double[:, ::1] h = hull
    cdef double px, py, ax, ay, bx, by, dx, dy
    with nogil:
        for r in range(P):
            size = 0
            for t in range(L):
                px = xs[r, t]
                py = ys[r, t]
                while size >= 2:
                    ax = h[0, size - 2]
                    ay = h[1, size - 2]
                    bx = h[0, size - 1]
                    by = h[1, size - 1]
                    if (bx - ax) * (py - ay) - (by - ay) * (px - ax) <= 0.0:
                        size -= 1
                    else:
                        break
                h[0, size] = px
                h[1, size] = py
                size += 1
            for i in range(size - 1):
                dx = h[0, i + 1] - h[0, i]
                dy = h[1, i + 1] - h[1, i]
                o[r, i] = dy * dy / (2.0 * dx)
    return out
