# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""EditRequest: validation that names the offending field, and apply() semantics."""

import numpy as np
import pytest
import scipy.sparse as sp

from skforget import EditRequest, UnlearningError

X = np.arange(20.0).reshape(10, 2)
Y = np.arange(10) % 2


def test_apply_deletes_replaces_in_place_and_appends_inserts():
    edit = EditRequest(X, Y, delete=[0, 5], replace=[3], X_replace=[[-1.0, -1.0]],
                       y_replace=[1], X_insert=[[7.0, 7.0], [8.0, 8.0]],
                       y_insert=[0, 1])
    X_new, y_new = edit.apply()
    expected_rows = [1, 2, 3, 4, 6, 7, 8, 9]
    expected = X[expected_rows].copy()
    expected[2] = [-1.0, -1.0]  # row 3 replaced in place
    np.testing.assert_array_equal(X_new[:8], expected)
    np.testing.assert_array_equal(X_new[8:], [[7.0, 7.0], [8.0, 8.0]])
    np.testing.assert_array_equal(y_new, list(Y[expected_rows[:2]]) + [1]
                                  + list(Y[expected_rows[3:]]) + [0, 1])
    assert (edit.n_deleted, edit.n_replaced, edit.n_inserted, edit.size) == (2, 1, 2, 5)
    assert (edit.n_samples_before, edit.n_samples_after) == (10, 10)
    assert edit.apply()[0] is X_new  # computed once
    # The caller's database is untouched.
    np.testing.assert_array_equal(X, np.arange(20.0).reshape(10, 2))


def test_sparse_and_dataframe_databases():
    edit = EditRequest(sp.csr_matrix(X), Y, delete=[1], replace=[2],
                       X_replace=[[5.0, 0.0]], y_replace=[0],
                       X_insert=[[1.0, 1.0]], y_insert=[1])
    X_new, y_new = edit.apply()
    assert sp.issparse(X_new) and X_new.shape == (10, 2)
    dense = EditRequest(X, Y, delete=[1], replace=[2], X_replace=[[5.0, 0.0]],
                        y_replace=[0], X_insert=[[1.0, 1.0]], y_insert=[1]).apply()
    np.testing.assert_array_equal(X_new.toarray(), dense[0])
    np.testing.assert_array_equal(y_new, dense[1])
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["a", "b"])
    X_df, y_s = EditRequest(df, pd.Series(Y), delete=[1], replace=[2],
                            X_replace=[[5.0, 0.0]], y_replace=[0],
                            X_insert=[[1.0, 1.0]], y_insert=[1]).apply()
    assert list(X_df.columns) == ["a", "b"]
    np.testing.assert_array_equal(X_df.to_numpy(), dense[0])
    np.testing.assert_array_equal(y_s.to_numpy(), dense[1])


def test_new_rows_in_the_other_layout_and_dtype():
    # Rows given sparse join a dense table densely, and integer tables are
    # promoted instead of truncating the new values (audit 13a).
    X = np.arange(12).reshape(4, 3)
    req = EditRequest(X, np.arange(4), replace=[1],
                      X_replace=sp.csr_matrix([[0.5, 0.0, 0.0]]), y_replace=[0.5],
                      X_insert=sp.csr_matrix([[0.0, 2.5, 0.0]]), y_insert=[1.5])
    X_new, y_new = req.apply()
    assert isinstance(X_new, np.ndarray)
    np.testing.assert_array_equal(X_new[[1, -1]], [[0.5, 0, 0], [0, 2.5, 0]])
    np.testing.assert_array_equal(y_new[[1, -1]], [0.5, 1.5])
    X_new, _ = EditRequest(sp.csr_matrix(X), np.arange(4), replace=[1],
                           X_replace=[[0.5, 0.0, 0.0]], y_replace=[0],
                           X_insert=[[0.0, 2.5, 0.0]], y_insert=[1]).apply()
    assert sp.issparse(X_new)
    np.testing.assert_array_equal(X_new.toarray()[[1, -1]],
                                  [[0.5, 0, 0], [0, 2.5, 0]])


@pytest.mark.parametrize("kwargs,message", [
    (dict(delete=[10]), r"delete\[0\]=10 is out of range for a database of 10 rows"),
    (dict(delete=[-1]), r"delete\[0\]=-1 is out of range"),
    (dict(delete=[2, 4, 2]), r"delete\[2\]=2 names a row that delete already names"),
    (dict(delete=[1.5]), r"delete\[0\]=1.5 is not an integer"),
    (dict(delete=[[1, 2]]), "delete must be a 1-D sequence"),
    (dict(delete=[3], replace=[3], X_replace=[[0.0, 0.0]], y_replace=[0]),
     "row 3 appears in both delete and replace"),
    (dict(replace=[1]), "X_replace and y_replace are required"),
    (dict(replace=[1], X_replace=[[0.0, 0.0]]), "y_replace is missing"),
    (dict(replace=[1, 2], X_replace=[[0.0, 0.0]], y_replace=[0]),
     r"X_replace has 1 row\(s\) but 2 record\(s\) are named"),
    (dict(X_insert=[[1.0, 2.0, 3.0]], y_insert=[0]), r"X_insert has 3 feature\(s\)"),
    (dict(X_insert=[[1.0, 2.0]], y_insert=[0, 1]), "y_insert must be 1-D with one"),
    (dict(X_insert=[[1.0, np.nan]], y_insert=[0]), "X_insert row 0 contains NaN"),
    (dict(X_insert=[["a", "b"]], y_insert=[0]), "X_insert must be numeric"),
    (dict(), "the edit request is empty"),
])
def test_invalid_requests_name_the_field(kwargs, message):
    with pytest.raises(UnlearningError, match=message):
        EditRequest(X, Y, **kwargs)


def test_database_shape_is_checked():
    with pytest.raises(UnlearningError, match="y must be 1-D with one entry per row"):
        EditRequest(X, Y[:-1], delete=[0])
    with pytest.raises(UnlearningError, match="X must be 2-D"):
        EditRequest(X[:, 0], Y, delete=[0])


def test_indices_are_returned_as_copies():
    edit = EditRequest(X, Y, delete=np.array([4, 1]))
    d = edit.delete
    d[0] = 99
    np.testing.assert_array_equal(edit.delete, [4, 1])
    assert "delete=2" in repr(edit)
