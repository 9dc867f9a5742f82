"""Accuracy formulas: the formulas.md section 8 vectors, inverses, and a noise simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpplanner.model import Kind, Mechanism, Neighbouring, Statistic
from dpplanner.model import accuracy as acc

ADD, REPLACE = Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE
L, G = Mechanism.LAPLACE, Mechanism.GAUSSIAN


def _err(stat, eps, delta=0.0, beta=0.05, nb=ADD, n=None, amp=1.0):
    return acc.accuracy(stat, eps, delta, confidence=1 - beta, neighbouring=nb, dataset_size=n,
                        amplification=amp)


# --- formulas.md section 9, rows "8" -------------------------------------------------------------

def test_laplace_count_vector():
    assert _err(Statistic("c"), 0.5).error == pytest.approx(5.991464547, rel=1e-9)


def test_laplace_histogram_vector_union_bound_over_bins():
    h = Statistic("h", kind=Kind.HISTOGRAM, bins=10)
    assert _err(h, 0.5).error == pytest.approx(10.59663473, rel=1e-9)
    # replace-one doubles the L1 sensitivity of a histogram
    assert _err(h, 0.5, nb=REPLACE).error == pytest.approx(2 * 10.59663473, rel=1e-9)


def test_laplace_mean_vector_replace_one():
    m = Statistic("m", kind=Kind.MEAN, lower=0, upper=100, n=1000)
    assert _err(m, 1.0, nb=REPLACE).error == pytest.approx(0.2995732274, rel=1e-9)


@pytest.mark.parametrize("eps, delta, sigma", [(0.5, 1e-5, 7.031826676), (2.0, 1e-6, 2.230476271),
                                               (10.0, 1e-6, 0.5410868318)])
def test_analytic_gaussian_sigma_vectors(eps, delta, sigma):
    got = acc.gaussian_sigma(1.0, eps, delta)
    assert got == pytest.approx(sigma, rel=1e-8)
    assert got >= sigma * (1 - 1e-9)          # rounded up: never less noise than needed
    assert acc.gaussian_delta(got, 1.0, eps) <= delta


def test_analytic_gaussian_delta_vector_and_classic_formula_pitfall():
    assert acc.gaussian_delta(1 / 3, 1.0, 1.0) == pytest.approx(0.7876007414, rel=1e-8)
    # the classic sigma at eps = 10 really violates delta = 1e-6 (formulas.md section 8 pitfall)
    assert acc.gaussian_delta(0.5298802527, 1.0, 10.0) == pytest.approx(1.902163809e-6, rel=1e-6)


def test_gaussian_abs_noise_quantile_vector():
    # the vector row prints sigma = 9.690; it is the classic sigma 9.689610525 of the row above
    assert acc.gaussian_error(9.689610525, 0.05) == pytest.approx(18.99128765, rel=1e-8)


# --- sensitivities -------------------------------------------------------------------------------

@pytest.mark.parametrize("stat, nb, l1, l2", [
    (Statistic("c"), ADD, 1, 1),
    (Statistic("s", kind=Kind.SUM, lower=-5, upper=20), ADD, 20, 20),
    (Statistic("s", kind=Kind.SUM, lower=-5, upper=20), REPLACE, 25, 25),
    (Statistic("m", kind=Kind.MEAN, lower=0, upper=50, n=100), ADD, 0.5, 0.5),
    (Statistic("m", kind=Kind.MEAN, lower=20, upper=50, n=100), ADD, 0.5, 0.5),
    (Statistic("m", kind=Kind.MEAN, lower=20, upper=50, n=100), REPLACE, 0.3, 0.3),
    (Statistic("p", kind=Kind.PROPORTION, n=400), REPLACE, 0.0025, 0.0025),
    (Statistic("h", kind=Kind.HISTOGRAM, bins=7), REPLACE, 2, math.sqrt(2)),
    (Statistic("q", kind=Kind.QUANTILE, lower=0, upper=10, granularity=0.5), ADD, 1, 1),
])
def test_sensitivities(stat, nb, l1, l2):
    s = acc.sensitivity(stat, nb)
    assert (s.l1, s.l2) == pytest.approx((l1, l2))


def test_quantile_grid_size_and_mean_needs_n():
    assert acc.quantile_bins(0, 10, 0.5) == 20
    assert acc.quantile_bins(0, 10, 3) == 4
    with pytest.raises(ValueError, match="needs the dataset size n"):
        acc.sensitivity(Statistic("m", kind=Kind.MEAN, lower=0, upper=1), ADD)
    # the plan's dataset size is used when the statistic has none
    assert acc.sensitivity(Statistic("m", kind=Kind.MEAN, lower=0, upper=1), ADD, 10).l1 == 0.1


def test_gaussian_needs_delta():
    with pytest.raises(ValueError, match="needs delta > 0"):
        acc.gaussian_sigma(1.0, 1.0, 0.0)


# --- inverses ------------------------------------------------------------------------------------

INVERSE_CASES = [
    Statistic("c"),
    Statistic("h", kind=Kind.HISTOGRAM, bins=12),
    Statistic("m", kind=Kind.MEAN, lower=0, upper=100, n=500, mechanism=G),
    Statistic("q", kind=Kind.QUANTILE, lower=0, upper=100, granularity=5),
    Statistic("q", kind=Kind.QUANTILE, lower=0, upper=100, granularity=5, mechanism=G),
    Statistic("hg", kind=Kind.HISTOGRAM, bins=5, mechanism=G),
]


@pytest.mark.parametrize("stat", INVERSE_CASES, ids=lambda s: f"{s.kind.value}-{s.mechanism.value}")
@pytest.mark.parametrize("amp", [1.0, 4.0])
def test_epsilon_for_error_inverts_the_error(stat, amp):
    delta = 1e-7
    for eps in (0.01, 0.3, 2.5):
        target = _err(stat, eps, delta, amp=amp).error
        back = acc.epsilon_for_error(stat, target, delta, confidence=0.95, neighbouring=ADD,
                                     amplification=amp)
        assert back == pytest.approx(eps, rel=1e-7)
        # rounded so that the epsilon found really achieves the target
        assert _err(stat, back, delta, amp=amp).error <= target * (1 + 1e-12)


def test_epsilon_for_error_rejects_nonpositive_target():
    with pytest.raises(ValueError, match="target error"):
        acc.epsilon_for_error(Statistic("c"), 0.0, 0.0, confidence=0.95, neighbouring=ADD)


def test_amplification_formula_and_inverse():
    eps, ratio = 0.2, 10.0
    f = acc.functioning_epsilon(eps, ratio)
    assert f == pytest.approx(math.log(1 + ratio * (math.exp(eps) - 1)), rel=1e-14)
    assert f > eps
    back = acc.nominal_epsilon(f, ratio)
    assert back == pytest.approx(eps, rel=1e-12) and acc.functioning_epsilon(back, ratio) >= f
    # the noise is calibrated to the functioning epsilon: more epsilon, smaller error
    assert _err(Statistic("c"), eps, amp=ratio).error == pytest.approx(math.log(20) / f, rel=1e-12)


def test_prefix_factor_is_a_valid_chernoff_bound():
    # P[max_J |S_J| >= s b] is bounded by 2 m exp(-u s)(1-u^2)^{-m}; check the returned s meets beta
    for m, beta in ((1, 0.05), (20, 0.05), (200, 0.01)):
        s = acc.laplace_prefix_factor(m, beta)
        u = s / (m + math.sqrt(m * m + s * s))
        assert 2 * m * math.exp(-u * s) * (1 - u * u) ** (-m) <= beta * (1 + 1e-9)


def test_explanation_is_plain_language():
    text = _err(Statistic("mean income", "income", Kind.MEAN, lower=0, upper=1000, n=100), 1.0).explanation
    assert text.startswith("The released mean of income will differ from the true mean by at most")
    assert "95%" in text


# --- simulation ------------------------------------------------------------------------------------

DRAWS = 100_000


def _failures_bounds(beta: float):
    """Binomial acceptance region for the number of misses at level 1e-6 each side."""
    return binom.ppf(1e-6, DRAWS, beta), binom.isf(1e-6, DRAWS, beta)


def _simulate(stat, eps, delta, beta, rng):
    a = _err(stat, eps, delta, beta=beta)
    m = a.coordinates
    if stat.mechanism is L:
        noise = rng.laplace(0.0, a.scale, size=(DRAWS, m))
    else:
        noise = rng.normal(0.0, a.scale, size=(DRAWS, m))
    if stat.kind is Kind.QUANTILE:
        noise = np.cumsum(noise, axis=1)      # CDF points are running sums of cell noises
    worst = np.abs(noise).max(axis=1)
    return int((worst > a.error).sum())


@pytest.mark.parametrize("stat, exact", [
    (Statistic("c"), True),
    (Statistic("m", kind=Kind.MEAN, lower=0, upper=10, n=50, mechanism=G), True),
    (Statistic("h", kind=Kind.HISTOGRAM, bins=8), False),
    (Statistic("h", kind=Kind.HISTOGRAM, bins=8, mechanism=G), False),
    (Statistic("q", kind=Kind.QUANTILE, lower=0, upper=20, granularity=1), False),
    (Statistic("q", kind=Kind.QUANTILE, lower=0, upper=20, granularity=1, mechanism=G), False),
], ids=lambda x: f"{x.kind.value}-{x.mechanism.value}" if isinstance(x, Statistic) else str(x))
@pytest.mark.parametrize("beta", [0.05, 0.2])
def test_simulated_coverage(stat, exact, beta):
    rng = np.random.default_rng(20240521)
    misses = _simulate(stat, 0.7, 1e-6, beta, rng)
    low, high = _failures_bounds(beta)
    assert misses <= high, f"coverage {1 - misses / DRAWS:.4f} below 1 - beta = {1 - beta}"
    if exact:   # single-coordinate bounds are exact, so not too conservative either
        assert misses >= low


def test_batched_privacy_equals_one_statistic_at_a_time():
    """plan.privacy_all calibrates its Gaussians in one batch; every number is what one call per
    statistic gives, bit for bit (the batch only fills the engine's calibration memo)."""
    from dpplanner.engine.mechanisms import gaussian as g
    from dpplanner.model import examples, files
    from dpplanner.model.privacy import statistic_privacy

    for name in ("synthetic-100", "census"):
        plan = files.load_plan(examples.example_path(name))
        g._KNOWN.clear()
        batched = plan.privacy_all()
        g._KNOWN.clear()
        single = [statistic_privacy(plan.budget, s, d) for s, d in zip(plan.statistics, plan.deltas())]
        assert batched == single
