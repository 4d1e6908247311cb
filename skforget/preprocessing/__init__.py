# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Preprocessing inside a deletion pipeline: public constants or private releases.

A preprocessing step inside a deletion pipeline must keep nothing learned from
the training rows beyond what the guarantee covers, or a deleted record would
survive in it. Two kinds of step qualify:

* public steps, whose state is fixed before the rows are seen:
  :class:`PublicScaler` (the constant-parameter counterpart of
  ``StandardScaler``) and the configurations :func:`check_public` accepts;
* private steps, whose state is a differentially private release from the
  rows (privacy-accounting.md, Section 19): :class:`PrivateStandardScaler`,
  :class:`PrivateSimpleImputer`, :class:`PrivateOneHotEncoder` and
  :class:`PrivateTableEncoder`, which picks one of them per column by dtype.
  A :class:`~skforget.pipeline.ForgetPipeline` adds their cost to its
  guarantee and re-estimates them with fresh noise at every edit;
  :func:`~skforget.pipeline.make_private_pipeline` builds one from a total
  epsilon.

See :ref:`pipelines` in the user guide.
"""

from skforget._public import check_public
from skforget.preprocessing._private import (
    PrivateOneHotEncoder,
    PrivateSimpleImputer,
    PrivateStandardScaler,
)
from skforget.preprocessing._scaler import PublicScaler
from skforget.preprocessing._table import PrivateTableEncoder

__all__ = [
    "PrivateOneHotEncoder",
    "PrivateSimpleImputer",
    "PrivateStandardScaler",
    "PrivateTableEncoder",
    "PublicScaler",
    "check_public",
]
