# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The README's demo (``python -m skforget demo``) runs and tells the truth."""

import re
import warnings

from skforget.__main__ import main
from skforget.exceptions import PrivacyLeakWarning


def test_demo_runs_without_privacy_warnings_and_reports_passes(capsys):
    with warnings.catch_warnings():
        # The demo passes the public label set: no PrivacyLeakWarning may fire.
        # (Other libraries' deprecation warnings vary with their versions.)
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert main(["demo", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "DP for every record present" in out
    unlearn, retrain = map(int, re.search(
        r"partial_unlearn: (\d+) passes .* retraining from scratch: (\d+) passes",
        out).groups())
    # The default deletion target (epsilon) is met by the model itself: no pass
    # (privacy-accounting.md, 12.9-12.10); a stronger target costs passes,
    # shown before any pass.
    assert unlearn == 0 < retrain
    assert "served without computation: the coefficients are identical" in out
    strong = int(re.search(r"partial_unlearn: (\d+) unlearning pass", out).group(1))
    assert 0 < strong
    assert "label set was read" not in out
