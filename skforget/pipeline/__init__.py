# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pipelines that serve deletion requests on raw records.

A :class:`ForgetPipeline` is a scikit-learn :class:`~sklearn.pipeline.Pipeline`
whose preprocessing is public (checked when it is fitted) and whose last step
is a skforget estimator. ``partial_unlearn`` takes a request on the *raw*
records (a DataFrame, by ID), maps the database and the new records through
the preprocessing, and lets the estimator unlearn: the user keeps one
database and builds one request.
"""

from skforget.pipeline._forget import (
    ForgetPipeline,
    make_forget_pipeline,
)
from skforget.pipeline._private import PrivatePipeline, make_private_pipeline

# Pickles and the documentation name the classes by the package.
for _cls in (ForgetPipeline, PrivatePipeline):
    _cls.__module__ = __name__
for _func in (make_forget_pipeline, make_private_pipeline):
    _func.__module__ = __name__

__all__ = ["ForgetPipeline", "PrivatePipeline", "make_forget_pipeline",
           "make_private_pipeline"]
