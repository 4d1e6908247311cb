# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Command line: ``python -m skforget demo`` and the record store's commands
(``submit``, ``process``, ``status``, ``show``, ``audit``, ``forget``, ``serve``)."""

import argparse
import copy
import os
import sys
import time

import numpy as np


def _timed(func):
    start = time.perf_counter()
    out = func()
    return out, time.perf_counter() - start


def demo(seed=None):
    """Train a private model on real data, then serve a deletion request."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    from skforget import Database, EditRequest, NoisyGDClassifier
    from skforget.datasets import load_dataset

    data = load_dataset("breast_cancer")
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target, test_size=0.25, random_state=0, stratify=data.target)
    print(f"skforget demo: breast cancer, {len(X_train)} training rows, "
          f"{len(X_test)} held out, {X_train.shape[1]} features")
    print(f"preprocessing: {data.preprocessing}\n")

    # The label set (benign, malignant) is public: passing it keeps the model's
    # shape independent of the rows.
    params = dict(C=0.1, clip_norm=0.5, epsilon=1.0, delta=1e-5, random_state=seed,
                  classes=[0, 1])
    baseline, t_base = _timed(lambda: LogisticRegression(max_iter=1000).fit(X_train,
                                                                           y_train))
    # A Database carries a version, so the model can check that every deletion
    # request is built on the records it serves.
    database = Database(X_train, y_train)
    model, t_fit = _timed(lambda: NoisyGDClassifier(**params).fit(database))
    print(f"{'model':<44}{'test accuracy':>14}{'fit time':>11}")
    print(f"{'sklearn LogisticRegression (not private)':<44}"
          f"{baseline.score(X_test, y_test):>14.3f}{t_base:>10.3f}s")
    print(f"{'skforget NoisyGDClassifier (epsilon=1)':<44}"
          f"{model.score(X_test, y_test):>14.3f}{t_fit:>10.3f}s\n")
    print("Privacy guarantee of the trained model:")
    print("  " + str(model.privacy_guarantee_).replace("\n", "\n  ") + "\n")

    rng = np.random.default_rng(seed)
    forget = rng.choice(len(X_train), size=3, replace=False)
    request = EditRequest(database, delete=forget)
    X_left, y_left = request.apply()
    # Medians of five runs each (copies of the fitted model): on a few hundred
    # rows a single timing is mostly noise.
    copies = [copy.deepcopy(model) for _ in range(4)]
    t_unlearn = np.median([_timed(lambda m=m: m.partial_unlearn(request))[1]
                           for m in copies + [model]])
    runs = [_timed(lambda: NoisyGDClassifier(**params).fit(X_left, y_left))
            for _ in range(5)]
    retrained, t_retrain = runs[-1][0], np.median([t for _, t in runs])
    cert = model.privacy_guarantee_.deletion
    rows = sorted(forget.tolist())
    print(f"Deletion request: forget {len(forget)} records (rows {rows})")
    print(f"  partial_unlearn: {cert.passes} passes in {t_unlearn * 1e3:.1f} ms; "
          f"retraining from scratch: {retrained.n_iter_[0]} passes in "
          f"{t_retrain * 1e3:.1f} ms (medians of 5 runs)")
    print(f"  test accuracy after unlearning {model.score(X_test, y_test):.3f}, "
          f"after retraining {retrained.score(X_test, y_test):.3f}")
    print("  Updated guarantee:")
    print("    " + str(model.privacy_guarantee_).replace("\n", "\n    "))
    # A request may ask for a stronger deletion than the model's default
    # (deletion_epsilon = epsilon); its cost is shown before any pass.
    strong = EditRequest(request.apply(), delete=[0], by="position")
    print("\nA request asking for deletion_epsilon=0.1, planned before any pass:")
    print("  " + str(model.plan_unlearn(strong, deletion_epsilon=0.1)).replace(
        "\n", "\n  "))
    print("\nThe model kept no training row: only its coefficients and public "
          "metadata (sizes, step counts, noise scale).")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skforget")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("demo", help="private training and a deletion request on "
                                      "real data")
    run.add_argument("--seed", type=int, default=None,
                     help="integer seed for a reproducible run (default: fresh "
                          "entropy, as privacy requires)")
    from skforget.store import _cli

    _cli.add_commands(sub)
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            demo(seed=args.seed)
            code = 0
        else:
            code = _cli.run_command(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``... | head -1``): not an error. Point stdout
        # at /dev/null so that the interpreter's final flush does not fail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
