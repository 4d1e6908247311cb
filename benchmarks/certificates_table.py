# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Certified fractions of test predictions, as reported in doc/certificates.md.

Standalone (not part of run.py; about 10 seconds)::

    python benchmarks/certificates_table.py

Breast cancer and digits 3-vs-8 from :func:`skforget.datasets.load_dataset`,
80/20 stratified split (``random_state=0``), ``NoisyGDClassifier(C=0.1,
epsilon=1)`` with the planned steps, averaged over ten noise seeds. Prints
markdown tables: certified fractions (public / data-dependent radius) at
k = 1, 5, 20; the forgetting certificate after ``partial_unlearn``; the
interval box at full length; the cost of the data-dependent bookkeeping.
"""

import time

import numpy as np
from sklearn.model_selection import train_test_split

from skforget import EditRequest, NoisyGDClassifier
from skforget.certify import interval_certify
from skforget.datasets import load_dataset

SEEDS = range(10)
KS = (1, 5, 20)


def split(name):
    d = load_dataset("digits" if name.startswith("digits") else name)
    X, y = d.data, d.target
    if name == "digits 3-vs-8":
        keep = np.isin(y, [3, 8])
        X, y = X[keep], (y[keep] == 8).astype(int)
    return train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)


def certified_fractions(name, clip):
    X, X_test, y, y_test = split(name)
    acc, pub, dd = [], {k: [] for k in KS}, {k: [] for k in KS}
    for seed in SEEDS:
        clf = NoisyGDClassifier(C=0.1, clip_norm=clip, epsilon=1.0, random_state=seed,
                                certify_k_max=max(KS)).fit(X, y)
        acc.append(clf.score(X_test, y_test))
        for k in KS:
            pub[k].append(clf.certify(X_test, k).mean())
            dd[k].append(clf.certify(X_test, k, data_dependent=True).mean())
    cells = " | ".join(f"{np.mean(pub[k]):.3f} / {np.mean(dd[k]):.3f}" for k in KS)
    return (f"| {name} ({len(X)}, {X.shape[1] + 1}) | {clip} | {clf.n_iter_[0]} | "
            f"{np.mean(acc):.3f} | {cells} |")


def forgetting(name, n_deleted, attack):
    X, X_test, y, _ = split(name)
    fractions, steps = [], []
    for seed in SEEDS:
        clf = NoisyGDClassifier(C=0.1, clip_norm=0.5, epsilon=1.0, random_state=seed,
                                max_edit_size=20).fit(X, y)
        if attack == "top":
            z = clf.decision_function(X)
            # Misclassified and low-margin rows carry the largest gradients.
            rows = np.argsort(np.where(y == 1, z, -z))[:n_deleted]
        else:
            rows = np.random.default_rng(seed).choice(len(X), n_deleted, replace=False)
        before = clf.certify(X_test, n_deleted).mean()
        clf.partial_unlearn(EditRequest(X, y, delete=rows))
        steps.append(clf.n_unlearn_iter_)
        fractions.append((before, clf.certify(X_test, 0).mean()))
    before, after = np.mean(fractions, axis=0)
    return (f"| {name} | {n_deleted} ({attack}) | {int(np.mean(steps))} | "
            f"{before:.3f} | {after:.3f} |")


def box_versus_ball(name):
    X, X_test, y, _ = split(name)
    clf = NoisyGDClassifier(C=0.1, clip_norm=0.5, epsilon=1.0, random_state=0)
    clf.fit(X, y)
    box = interval_certify(clf, X, y, X_test, k=1).mean()
    ball = clf.certify(X_test, 1).mean()
    return f"| {name} | {clf.n_iter_[0]} | {box:.3f} | {ball:.3f} |"


def tracking_cost(name):
    X, _, y, _ = split(name)

    def best(k_max):
        times = []
        for _ in range(7):
            t = time.perf_counter()
            NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0,
                              certify_k_max=k_max).fit(X, y)
            times.append(time.perf_counter() - t)
        return min(times)

    plain = best(0)
    return f"| {name} | {plain * 1e3:.1f} ms | {best(20) / plain:.1f}x |"


def main():
    print("| dataset (n_train, p) | clip_norm | passes | test acc. | "
          "k=1 | k=5 | k=20 |")
    print("|---|---|---|---|---|---|---|")
    for name in ("breast_cancer", "digits 3-vs-8"):
        for clip in (0.5, None):
            print(certified_fractions(name, clip))
    print()
    print("| dataset | deleted | K_R | certified at k = deleted, before | "
          "forgetting certificate (k = 0) after |")
    print("|---|---|---|---|---|")
    for name in ("breast_cancer", "digits 3-vs-8"):
        for n_deleted in (5, 20):
            for attack in ("top", "random"):
                print(forgetting(name, n_deleted, attack))
    print()
    print("| dataset | passes | box, k=1 | ball, k=1 |")
    print("|---|---|---|---|")
    for name in ("breast_cancer", "digits 3-vs-8"):
        print(box_versus_ball(name))
    print()
    print("| dataset | fit | fit with certify_k_max=20 |")
    print("|---|---|---|")
    for name in ("breast_cancer", "digits 3-vs-8"):
        print(tracking_cost(name))


if __name__ == "__main__":
    main()
