# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""``C_`` / ``alpha_``: the regularisation a fitted model trained with.

As ``LogisticRegressionCV.C_`` and ``RidgeCV.alpha_`` do, the fitted attribute
says which value ``C="auto"`` / ``alpha="auto"`` resolved to, in the
estimator's own parameterisation (privacy-accounting.md, Section 8.5): the
rule reads public numbers only, and the value is ``1 / (N lambda W)`` (or ``N
lambda W``) of the public plan, whose ``lambda`` and ``N`` the guarantee
already reports.
"""

import math
import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from skforget import (
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    OutputPerturbationClassifier,
    OutputPerturbationRegressor,
)
from skforget import accounting as acc
from skforget.accounting._calibration import curvature_trace

LEGACY = Path(__file__).parent / "data" / "legacy_models_main.pkl"

#: (estimator, data fixture, attribute, fixed keywords). The binary
#: classifiers spend no share on class statistics: under "auto" they would,
#: with an explicit C they do not (prevalence_share="auto"), so the two fits
#: would differ by more than the penalty.
CASES = [
    (NoisyGDClassifier, "binary_data", "C_",
     {"prevalence_share": 0.0, "classes": [0, 1]}),
    (NoisyGDClassifier, "multiclass_data", "C_", {"classes": [0, 1, 2]}),
    (NoisyGDRegressor, "regression_data", "alpha_", {"target_scale": 2.0}),
    (OutputPerturbationClassifier, "binary_data", "C_",
     {"prevalence_share": 0.0, "classes": [0, 1]}),
    (OutputPerturbationRegressor, "regression_data", "alpha_",
     {"target_scale": 2.0}),
]
IDS = ["ngd-binary", "ngd-softmax", "ngd-regressor", "op-binary", "op-regressor"]


#: An explicit value per parameter, strong enough for a model above the noise.
GIVEN = {"C_": 0.37, "alpha_": 37.0}


def _name(attr):
    return attr[:-1]


def _strength(model, attr):
    """The value from the public plan: ``1 / (N lambda W)`` or ``N lambda W``."""
    plan = model._plan
    n_lambda = plan.normaliser * plan.lam * plan.weight_bound
    return 1.0 / n_lambda if attr == "C_" else n_lambda


@pytest.mark.parametrize("Est,data,attr,kw", CASES, ids=IDS)
def test_explicit_value_is_reported_as_given(Est, data, attr, kw, request):
    X, y = request.getfixturevalue(data)
    given = GIVEN[attr]
    model = Est(**{_name(attr): given}, random_state=0, **kw).fit(X, y)
    value = getattr(model, attr)
    assert type(value) is float and value == given
    # The plan was built from it: lambda = 1 / (C N), alpha / N.
    assert _strength(model, attr) == pytest.approx(given, rel=1e-14)
    # Another attribute than the parameter: set_params since the fit leaves
    # it the fit's, as every frozen hyper-parameter (Section 16.1).
    model.set_params(**{_name(attr): 5.0})
    assert getattr(model, attr) == given


@pytest.mark.parametrize("Est,data,attr,kw", CASES, ids=IDS)
def test_refit_with_the_reported_value_is_the_same_model(Est, data, attr, kw,
                                                         request):
    X, y = request.getfixturevalue(data)
    auto = Est(random_state=3, **kw).fit(X, y)
    value = getattr(auto, attr)
    assert type(value) is float and value > 0
    assert value == pytest.approx(_strength(auto, attr), rel=1e-15)
    given = Est(**{_name(attr): value}, random_state=3, **kw).fit(X, y)
    # The same penalty, hence the same plan and, under the same seed, the
    # same model (up to the rounding of 1 / (1 / x)).
    assert given._plan.lam == pytest.approx(auto._plan.lam, rel=1e-14)
    assert given.privacy_guarantee_.rho == pytest.approx(
        auto.privacy_guarantee_.rho, rel=1e-12)
    np.testing.assert_allclose(given.coef_, auto.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(given.intercept_, auto.intercept_, rtol=1e-9,
                               atol=1e-12)
    assert getattr(given, attr) == value


@pytest.mark.parametrize("Est", [NoisyGDClassifier, OutputPerturbationClassifier])
def test_weights_keep_the_scikit_learn_meaning(Est, binary_data):
    """Section 4.4: the plan's lambda is divided by the public weight bound W;
    the reported C is the one scikit-learn's objective ``C sum_i w_i loss_i +
    ||w||^2 / 2`` has with the weights as given, so a refit with it (and the
    same weights) runs the same plan."""
    X, y = binary_data
    sw = np.random.default_rng(0).uniform(0.0, 2.0, len(y))
    for kw, fit_kw in (({"max_sample_weight": 2.0}, {"sample_weight": sw}),
                       ({"class_weight": {0: 1.0, 1: 3.0}}, {})):
        common = dict(prevalence_share=0.0, random_state=0, **kw)
        auto = Est(**common).fit(X, y, **fit_kw)
        assert auto._plan.weight_bound in (2.0, 3.0)
        assert auto.C_ == pytest.approx(_strength(auto, "C_"), rel=1e-15)
        given = Est(C=auto.C_, **common).fit(X, y, **fit_kw)
        assert given._plan.lam == pytest.approx(auto._plan.lam, rel=1e-14)
        np.testing.assert_allclose(given.coef_, auto.coef_, rtol=1e-9, atol=1e-12)
        # Given, it is reported as given, whatever W.
        assert Est(C=0.2, **common).fit(X, y, **fit_kw).C_ == 0.2
        if Est is NoisyGDClassifier and "class_weight" in kw:
            # Noisy GD's "auto" with public class weights: lambda_auto times
            # the classes' mean weight over the largest (Section 18.5, rule
            # b2), so C_ is the unweighted default's over the mean weight, 2.
            plain = Est(prevalence_share=0.0, random_state=0).fit(X, y)
            assert auto.C_ == pytest.approx(plain.C_ / 2.0, rel=1e-12)


def test_auto_is_the_documented_rule_of_public_numbers(binary_data,
                                                       regression_data):
    """Section 8.5 at epsilon = 1 (no growth), N >= d: lambda is the smaller
    of S sqrt(p / (2 rho)) / (Theta N) and (S^2 T / (rho N^2 Theta^2))^(1/3),
    from epsilon, delta, the sensitivity, p, N, data_norm and the curvature
    bound, all public; C_ = 1 / (N lambda), alpha_ = N lambda."""
    def rule(S, p, n, T, theta, delta):
        rho = acc.epsilon_to_rho(epsilon=1.0, delta=delta, method="gaussian")
        every = S * math.sqrt(p / (2 * rho)) / (theta * n)
        root = (S * S * T / (rho * n * n * theta * theta)) ** (1 / 3)
        return min(every, root)

    X, y = binary_data
    n, d = X.shape
    clf = NoisyGDClassifier(prevalence_share=0.0, random_state=0).fit(X, y)
    R = math.sqrt(1.0 + 1.0)                    # data_norm 1, s_b = data_norm
    G = acc.gradient_bound(loss="logistic", row_norm=R, clip_norm=0.5)
    S = acc.sensitivity(gradient_bound=G, relation="replace")
    lam = rule(S, d + 1, n, curvature_trace(loss="logistic", row_norm=R),
               acc.DEFAULT_COEF_NORM, min(1e-5, n ** -1.1))
    assert clf.C_ == pytest.approx(1.0 / (n * lam), rel=1e-12)
    # The same whatever the rows hold: other rows and labels of the same shape.
    rng = np.random.default_rng(5)
    Z = rng.normal(size=X.shape)
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    other = NoisyGDClassifier(prevalence_share=0.0, classes=[0, 1],
                              random_state=1).fit(Z, rng.integers(0, 2, n))
    assert other.C_ == clf.C_

    X, y = regression_data
    n, d = X.shape
    reg = NoisyGDRegressor(target_scale=2.0, random_state=0).fit(X, y)
    R = math.sqrt(1.0 + 1.0)
    S = acc.sensitivity(gradient_bound=acc.gradient_bound(
        loss="squared", row_norm=R, clip_norm=1.0), relation="replace")
    lam = rule(S, d + 1, n, R * R, acc.SQUARED_COEF_NORM, min(1e-5, n ** -1.1))
    assert reg.alpha_ == pytest.approx(n * lam, rel=1e-12)
    assert NoisyGDRegressor(target_scale=2.0, random_state=1).fit(
        X[::-1], -3 * y).alpha_ == reg.alpha_
    # Already released: the guarantee reports lambda and N.
    for model, attr in ((clf, "C_"), (reg, "alpha_")):
        g = model.privacy_guarantee_
        n_lambda = g.normaliser * g.regularization
        assert getattr(model, attr) == pytest.approx(
            1 / n_lambda if attr == "C_" else n_lambda, rel=1e-15)


@pytest.mark.parametrize("Est,data,attr,kw", CASES, ids=IDS)
def test_edits_keep_it(Est, data, attr, kw, request):
    """Noisy GD's edits run under the fit's plan (fixed normaliser N and
    lambda, Section 10.1): the objective stays ``C sum_i loss_i + ||w||^2 / 2``
    over the records present, whatever their number. Output perturbation's
    refits keep N lambda (Section 8.5, 15.5), at "auto" as given."""
    X, y = request.getfixturevalue(data)
    for value in ("auto", GIVEN[attr]):
        model = Est(**{_name(attr): value}, random_state=0, **kw).fit(X, y)
        before = getattr(model, attr)
        model.partial_unlearn(EditRequest(X, y, delete=list(range(8))))
        model.partial_unlearn(EditRequest(X[8:], y[8:], delete=[0, 1],
                                          X_insert=X[:3], y_insert=y[:3]))
        assert len(model.privacy_guarantee_.edits) == 2
        after = getattr(model, attr)
        assert after == pytest.approx(before, rel=1e-12)
        assert after == pytest.approx(_strength(model, attr), rel=1e-12)
        if value != "auto":
            assert after == value


@pytest.mark.parametrize("Est,data,attr,kw", CASES, ids=IDS)
def test_pickled_and_unfitted(Est, data, attr, kw, request):
    X, y = request.getfixturevalue(data)
    est = Est(**kw)
    assert not hasattr(est, attr)
    with pytest.raises(NotFittedError, match=attr):
        getattr(est, attr)
    model = est.fit(X, y)
    copy = pickle.loads(pickle.dumps(model))
    assert getattr(copy, attr) == getattr(model, attr)
    # A property over the plan, not a second copy of it: nothing new in the
    # fitted state, so nothing for an old pickle to lack.
    assert attr not in vars(model)


def test_models_pickled_before_the_attribute_answer_from_their_plan():
    legacy = pickle.loads(LEGACY.read_bytes())["models"]
    for name, attr in (("NoisyGDClassifier", "C_"), ("NoisyGDRegressor", "alpha_"),
                       ("OutputPerturbationClassifier", "C_"),
                       ("OutputPerturbationRegressor", "alpha_")):
        model = legacy[name]
        plan = model._plan
        expected = (1.0 / (plan.normaliser * plan.lam) if attr == "C_"
                    else plan.normaliser * plan.lam)
        assert getattr(model, attr) == pytest.approx(expected, rel=1e-14)
    # Their regressors were fitted with alpha=10.
    assert legacy["NoisyGDRegressor"].alpha_ == 10.0
    assert legacy["OutputPerturbationRegressor"].alpha_ == 10.0
