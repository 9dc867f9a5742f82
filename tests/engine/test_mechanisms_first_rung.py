"""The pld ladder's first rung is fine enough for its upper end (bracket.finer_for_ctd).

Where the first rung of ~2048 points meets eta, its upper end is what the plan spends. It is
checked against dp_accounting's pessimistic connect-the-dots PLD at d = 1e-4 (one distribution per
release, as the mechanisms bench composes it): on 200 distinct multipliers and on the psi-survey
example the first rung's upper end was above it (by 1.1e-5 and 3.6e-7) with a width far below eta.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine import Gaussian, Laplace, compose_mechanisms
from dpplanner.engine.memo import forget


def _dp_accounting_epsilon(releases, mult, delta_g: float) -> float:
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    dists = []
    for r, k in zip(releases, mult):
        one = pld.from_laplace_mechanism(r.m, value_discretization_interval=1e-4) if isinstance(r, Laplace) \
            else pld.from_gaussian_mechanism(r.m, value_discretization_interval=1e-4)
        dists.append(one.self_compose(k) if k > 1 else one)
    while len(dists) > 1:
        dists = [dists[i].compose(dists[i + 1]) if i + 1 < len(dists) else dists[i]
                 for i in range(0, len(dists), 2)]
    return dists[0].get_epsilon_for_delta(delta_g)


def _distinct(n: int):
    rng = np.random.default_rng(2)
    return ([Laplace(float(m)) for m in rng.uniform(200, 2000, n // 2)]
            + [Gaussian(float(m)) for m in rng.uniform(100, 1000, n // 2)], [1] * n, 1e-6)


def _psi_survey():
    """psi-survey's releases with continuous noise, their multipliers from the model."""
    from dpplanner.model import Kind, accuracy, examples, files
    from dpplanner.model.statistic import Mechanism

    plan = files.load_plan(examples.example_path("psi-survey"))
    b, out = plan.budget, []
    for stat, priv in zip(plan.statistics, plan.privacy_all()):
        assert stat.kind is not Kind.CUSTOM
        sens = accuracy.sensitivity(stat, b.neighbouring, b.dataset_size)
        out.append(Laplace(priv.scale / sens.l1) if stat.mechanism is Mechanism.LAPLACE
                   else Gaussian(priv.scale / sens.l2))
    return out, list(plan.composition_inputs().multiplicities), plan.composition_inputs().delta_g


@pytest.mark.parametrize("make", [lambda: _distinct(200), _psi_survey], ids=["200 distinct", "psi-survey"])
def test_the_first_rungs_upper_end_is_at_most_dp_accountings(make):
    releases, mult, delta_g = make()
    forget()
    r = compose_mechanisms(releases, delta_g, eta=1e-3, multiplicities=mult)
    assert r.extra["rung"] == 0 and r.extra["met_eta"]
    assert r.epsilon <= _dp_accounting_epsilon(releases, mult, delta_g)
    # still a certified upper end: above the lower end of a bracket 1000 times narrower
    fine = compose_mechanisms(releases, delta_g, eta=1e-6, multiplicities=mult)
    assert fine.epsilon_lower <= r.epsilon and fine.epsilon <= r.epsilon


def test_a_share_out_of_reach_keeps_the_first_rung(monkeypatch):
    """A few releases off the lattice's alignment (an edit) leave an estimated error between
    CTD_SHARE and CTD_LARGE that no lattice within FINER_POINTS brings down: the first rung stays
    (every composition of an allocation's search would cost several times more for millionths)."""
    import dpplanner.engine.mechanisms.bracket as bracket
    import dpplanner.engine.mechanisms.ladder as ladder
    import dpplanner.engine.mechanisms.spectral as spectral

    releases = [Laplace(500.0)] * 97 + [Laplace(523.1), Laplace(487.3), Laplace(511.9), Gaussian(300.0)]
    steps = []
    real = spectral.rung
    monkeypatch.setattr(spectral, "rung",
                        lambda r, step, *a, **k: steps.append((r, step)) or real(r, step, *a, **k))
    forget()
    compose_mechanisms(releases, 1e-6, eta=1e-2)
    (r, step), = steps
    share = bracket.ctd_share(r, step)
    assert bracket.CTD_SHARE < share < bracket.CTD_LARGE
    assert bracket.lattice_points(r, step) < 2 * ladder.FIRST_POINTS


def test_a_finer_first_rung_is_a_rung_of_the_ladder(monkeypatch):
    """Where the first rung is made finer because its error is large (many distinct releases), it
    is one of the ladder's own rungs: a plan that climbs on reaches the same lattices, and the
    same bracket to the bit, two rungs fewer."""
    import dpplanner.engine.mechanisms.ladder as ladder

    rng = np.random.default_rng(5)
    releases = [Laplace(float(m)) for m in rng.uniform(200, 2000, 300)] + \
               [Gaussian(float(m)) for m in rng.uniform(100, 1000, 300)]
    forget()
    finer = compose_mechanisms(releases, 1e-6, eta=1e-5)
    monkeypatch.setattr(ladder, "finer_for_ctd", lambda r, step, next_rung: step)
    forget()
    plain = compose_mechanisms(releases, 1e-6, eta=1e-5)
    assert (finer.epsilon, finer.epsilon_lower, finer.extra["step"]) == \
        (plain.epsilon, plain.epsilon_lower, plain.extra["step"])
    assert finer.extra["rung"] == 1 and plain.extra["rung"] == 3


def test_a_curve_with_both_sides_reads_on_the_first_rung_before_it_was_made_finer(monkeypatch):
    """The total of synthetic-100 with ideal noise is on a first rung made finer for its upper end
    (~7800 points); the prefix curve with both sides is read on one of about FIRST_POINTS, as
    before: still a bracket of every prefix's total, the whole plan's within the total's."""
    import dpplanner.engine.mechanisms.curves as pld_curves
    from dpplanner.engine import compose, curve
    from dpplanner.model import Kind, examples, files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.statistic import Noise

    plan = files.load_plan(examples.example_path("synthetic-100"))
    plan.replace_all([s.replace(noise=Noise.CONTINUOUS) if s.kind is not Kind.CUSTOM else s
                      for s in plan.statistics])
    i = composition_inputs(plan.budget, plan.statistics)
    args = (list(i.epsilons), list(i.deltas), i.delta_g)
    kw = dict(multiplicities=list(i.multiplicities), mechanisms=list(i.mechanisms), eta=i.eta)
    forget()
    total = compose(*args, "pld", **kw)
    steps = []
    real = pld_curves.LatticePMF
    monkeypatch.setattr(pld_curves, "LatticePMF",
                        lambda step, *a, **k: steps.append(step) or real(step, *a, **k))
    c = curve(*args, theorems=("pld",), points=20, **kw)
    assert total.extra["rung"] == 0 and len(set(steps)) == 1
    assert steps[0] >= 2 * total.extra["step"]
    up, lo = c.upper["pld"], c.lower["pld"]
    assert np.all(lo <= up) and up[-1] <= total.epsilon and lo[-1] >= total.epsilon_lower
    eps, deltas, mechs = (np.repeat(np.asarray(x, dtype=object), i.multiplicities).tolist()
                          for x in (i.epsilons, i.deltas, i.mechanisms))      # (ks count releases)
    for k, u, low in zip(c.ks[::5], up[::5], lo[::5]):
        prefix = compose(eps[:k], deltas[:k], i.delta_g, "pld", eta=1e-6, mechanisms=mechs[:k])
        assert low <= prefix.epsilon and prefix.epsilon_lower <= u
