# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Order of the examples in the gallery: a reading path, not the alphabet."""

ORDER = [
    "plot_quick_start.py",
    "plot_gdpr_stream.py",
    "plot_adult_pipeline.py",
    "plot_privacy_utility.py",
    "plot_regression.py",
    "plot_grid_search.py",
    "plot_certificates.py",
    "plot_unsound_adaptive.py",
    "plot_unsound_stateful.py",
]


class ExampleOrder:
    """Sort key for sphinx-gallery's ``within_subsection_order``.

    Listed files come first in the order above; any other example follows,
    alphabetically, so a new file never breaks the build.
    """

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        rank = ORDER.index(filename) if filename in ORDER else len(ORDER)
        return f"{rank:03d}{filename}"
