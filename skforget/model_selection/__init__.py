# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Model selection with a guarantee that covers the search.

:class:`PrivateSearchCV` tunes a private estimator by repeat-and-select
(Papernot and Steinke 2022): a random number of candidate runs, only the best
released, and the whole search's (epsilon, delta) reported
(privacy-accounting.md, Section 17).
"""

from skforget.model_selection._search import PrivateSearchCV

__all__ = ["PrivateSearchCV"]
