# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a search replaces on the estimator it tunes, said before any run."""

import inspect

from skforget._marks import is_selected
from skforget._validation import warn
from skforget.pipeline._private import stated_budget


def check_stated_budget(search, pipeline, estimator, delta):
    """Say what the search replaces: an ``epsilon`` or ``delta`` written on
    the estimator (on the pipeline, for one with private statistics) is
    replaced by the search's figures, the search's total being what it
    spends; one below the search's would be spent past what its author
    wrote, and is refused. A ``random_state`` there does not seed the
    candidates (the search's does)."""
    owner = pipeline if pipeline is not None else estimator
    if "tuned_by_search_" in owner.__dict__ or is_selected(owner):
        # An earlier search's best_estimator_: its figures are that search's
        # refit's, not its author's.
        return
    params = owner.get_params(deep=False)
    defaults = inspect.signature(type(owner).__init__).parameters
    name = type(owner).__name__
    total = {"epsilon": float(search.epsilon), "delta": float(delta)}
    for key in ("epsilon", "delta"):
        value = params.get(key)
        if key not in defaults or isinstance(value, str) or \
                value == defaults[key].default or float(value) == total[key] or \
                (pipeline is None and key not in stated_budget(estimator)):
            continue
        if float(value) < total[key]:
            raise ValueError(
                f"{name} has {key}={value!r}, below the search's {key}="
                f"{total[key]:.6g}, which is what the search spends in all "
                f"(it sets its candidates' and refit's {key} from it): pass "
                f"{key}={value!r} to PrivateSearchCV. (A clone of an earlier "
                f"search's best_estimator_ carries that search's refit {key}: "
                "tune the estimator you gave it, or set_params it.)")
        warn(
            f"PrivateSearchCV: {name}'s {key}={value!r} is replaced by the "
            f"search's figures; the search spends its own {key}="
            f"{total[key]:.6g} in all. Give the total to PrivateSearchCV.",
            UserWarning, stacklevel=4)
    inner = stated_budget(estimator) if pipeline is not None else {}
    if inner:
        # Set on the pipeline's estimator: its split replaces it as well (a
        # second reader found it replaced without a word).
        text = ", ".join(f"{key}={value!r}" for key, value in inner.items())
        warn(f"PrivateSearchCV: the estimator's {text} in {name} is replaced by "
             "its part of each candidate's total; the search spends its own "
             f"epsilon={total['epsilon']:.6g} in all. Give the total to "
             "PrivateSearchCV.", UserWarning, stacklevel=4)
    seed = estimator.get_params().get("random_state")
    if seed is not None and search.random_state is None:
        warn(
            f"PrivateSearchCV: the estimator's random_state={seed!r} does not "
            "seed the search: its candidates' noise is drawn from the search's "
            "random_state (None: a fresh draw), and the returned model keeps "
            "yours for its later edits. Set PrivateSearchCV(random_state=...) "
            "to reproduce a search.", UserWarning, stacklevel=4)


#: scikit-learn's search parameters PrivateSearchCV does not take, and what
#: it has in their place (a new-user trial met bare TypeErrors).
SKLEARN_SEARCH_NAMES = {
    "param_grid": "param_distributions (a dict; a list of values is drawn "
                  "from uniformly, a scipy distribution sampled)",
    "n_iter": "n_candidates, the mean of a random number of candidate runs "
              "(the number itself stays secret, Papernot and Steinke 2022)",
    "cv": "no folds: each candidate is scored privately on its own rows, or "
          "on a held-out validation_fraction",
    "scoring": "no scorer: classifiers score accuracy, regressors 1 - min(|y - "
               "y_hat| / target_bound, 1), each with noise",
    "n_jobs": "no parallel candidates (the estimator's own n_jobs threads each "
              "fit)",
    "error_score": "no error score: a failed run fails the search, which "
                   "records nothing",
    "return_train_score": "no scores but the released run's",
    "pre_dispatch": "no dispatch: candidates run one after the other",
}


def refuse_sklearn_names(kwargs):
    """A TypeError naming what PrivateSearchCV has instead of a scikit-learn
    search's parameter, before Python's bare "unexpected keyword"."""
    for name in kwargs:
        if name in SKLEARN_SEARCH_NAMES:
            raise TypeError(
                f"PrivateSearchCV has no {name}= (a scikit-learn search's): "
                f"{SKLEARN_SEARCH_NAMES[name]}.")
