"""An edit's evaluation (every total, then the plot's curve) composes nothing its totals have
composed already, counted in calls (never time)."""

from __future__ import annotations

import numpy as np

from dpplanner.engine import compose
from dpplanner.engine.curve import curve_inputs, curve_rows
from dpplanner.engine.memo import forget

#: A plan of the grouped bench's kinds (Laplace releases of three cells, Gaussians, eps-delta) at the
#: default eta of a plan's totals (1e-3), finer than the plot's (1e-2).
EPS = [0.05, 0.04, 0.08, 0.05, 0.03, 0.06]
DELTA = [0.0, 1e-8, 0.0, 2e-9, 0.0, 0.0]
MECH = ["laplace*3", "gaussian", "eps-delta", "gaussian", "laplace", "laplace*3"]
DELTA_G, TOTAL_ETA = 1e-6, 1e-3


def test_the_pld_curve_reads_its_lattice_from_the_totals_bracket(monkeypatch):
    """The window's plot is a curve at eta 1e-2 of a plan whose totals are at 1e-3: pld's curve
    takes the whole plan's bracket (its lattice) at the totals' eta, which the pld total has just
    composed, instead of composing one at its own eta (a third of a grouped plan's curve). Its
    points stay certified: at least the total's lower end at the last k, never above its upper."""
    import dpplanner.engine.mechanisms.spectral as spectral

    forget()
    total = compose(EPS, DELTA, DELTA_G, "pld", eta=TOTAL_ETA, mechanisms=MECH)
    rungs = []
    real = spectral.rung
    monkeypatch.setattr(spectral, "rung", lambda *a, **k: rungs.append(a) or real(*a, **k))
    inputs = curve_inputs(EPS, DELTA, DELTA_G, eta=1e-2, mechanisms=MECH, lower=False, total_eta=TOTAL_ETA)
    up = curve_rows(inputs, ("pld",)).upper["pld"]
    assert rungs == []
    assert total.epsilon_lower <= up[-1] <= total.epsilon
    assert np.all(np.diff(up) >= 0)
    # without the totals' eta the curve composes a bracket of its own
    up_own = curve_rows(curve_inputs(EPS, DELTA, DELTA_G, eta=1e-2, mechanisms=MECH, lower=False),
                        ("pld",)).upper["pld"]
    assert rungs and np.all(np.abs(up_own - up) <= 1e-2)


def test_the_windows_evaluation_composes_pld_once(monkeypatch):
    """An evaluation of the window's plot and totals (compute/jobs.py, in this process) composes
    pld's whole-plan bracket once, for its total: its curve reads it at the request's eta."""
    import importlib

    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner.compute import jobs
    from dpplanner.engine.types import CancelToken
    from dpplanner.model.engine_inputs import CompositionInputs
    from dpplanner.model.requests import CurveView, evaluation_request

    engine_curve = importlib.import_module("dpplanner.engine.curve")     # (engine.curve is the function)
    forget()
    plan = CompositionInputs(tuple(EPS), tuple(DELTA), (1,) * len(EPS), DELTA_G, TOTAL_ETA, tuple(MECH))
    request = evaluation_request(plan, CurveView())
    rungs, in_curve = [], []
    real_rung, real_rows = spectral.rung, engine_curve.curve_rows
    monkeypatch.setattr(spectral, "rung", lambda *a, **k: rungs.append(a) or real_rung(*a, **k))

    def curve_rows(*a, **k):
        before = len(rungs)
        out = real_rows(*a, **k)
        in_curve.append(len(rungs) - before)
        return out

    monkeypatch.setattr(engine_curve, "curve_rows", curve_rows)
    result = jobs.evaluate(request, CancelToken(), lambda _f: None)
    assert rungs and in_curve == [0]
    assert result.curve.upper["pld"][-1] <= result.totals["pld"].epsilon


def test_the_pld_and_zcdp_curves_read_the_queries_once(monkeypatch):
    """The plot's pld and zcdp rows of one request are made of the same queries: their cells
    (cells.py) and discrete releases are built once for both, not once per row."""
    import dpplanner.engine.mechanisms.cells as cells

    built, released = [], []
    real_cells, real_disc = cells.cell_rows, cells.discrete_rows
    monkeypatch.setattr(cells, "cell_rows", lambda *a: built.append(1) or real_cells(*a))
    monkeypatch.setattr(cells, "discrete_rows", lambda *a: released.append(1) or real_disc(*a))
    mech = [*MECH[:-1], "discrete-laplace:1"]
    inputs = curve_inputs(EPS, DELTA, DELTA_G, mechanisms=mech, lower=False)
    out = curve_rows(inputs, ("pld", "zcdp"))
    assert built == [1] and released == [1]
    assert np.all(np.isfinite(out.upper["pld"])) and np.all(np.isfinite(out.upper["zcdp"]))


def test_the_two_set_bracket_finds_its_roots_by_newton_steps(monkeypatch):
    """The exact bracket of a few large groups (two enumerated sets) finds its upper end by Newton
    steps on log delta from a normal approximation's root (at most 9 reads of the upper side where
    Brent's search of [0, sum eps] and its checks took 13-15), and its lower end by Newton steps
    from the upper one, which it lies within float error of (two reads of the lower side where a
    search from 0 took six). Both stay certified: the upper read of delta at the upper end is at
    most delta_bar, the lower read at the lower end above delta_bar_hi, within 1e-9 of each other."""
    import dpplanner.engine.optimal.two_sets as two_sets

    reads = []
    real = two_sets._delta
    monkeypatch.setattr(two_sets, "_delta",
                        lambda a, r, x, upper, *s: reads.append((upper, x)) or real(a, r, x, upper, *s))
    for e, m in (([0.01, 0.02, 0.05], [300, 200, 100]), ([0.003, 0.1, 0.02, 0.04], [1000, 10, 150, 40])):
        reads.clear()
        e, m = np.array(e), np.array(m)
        b = two_sets.two_set_bracket(e, m, 1e-6, delta_bar_hi=1e-6 * (1 + 1e-12))
        upper_reads = [x for upper, x in reads if upper]
        lower_reads = [x for upper, x in reads if not upper]
        assert len(upper_reads) <= 9
        assert len(lower_reads) <= 2 and b.lower < lower_reads[0] <= b.upper     # (from the upper root)
        mask = two_sets.split_sets(m)
        a = two_sets.grouped_atoms(e[mask], m[mask], True)
        reader = two_sets._Reader(two_sets.grouped_atoms(e[~mask], m[~mask], True))
        assert real(a, reader, b.upper, True) <= 1e-6
        assert real(a, reader, b.lower, False) > 1e-6 * (1 + 1e-12)
        assert 0 < b.upper - b.lower <= 1e-9


def test_a_plan_coarser_than_the_plot_keeps_the_plots_eta():
    """A plan whose totals are at eta 0.5, coarser than the plot's 1e-2: the window's pld curve
    (the evaluation as the window asks for it) is read on a lattice meeting the plot's eta, the
    same bits as engine.curve's at 1e-2 (the report's and the CLI's), not on the totals' coarse one."""
    from dpplanner.compute import jobs
    from dpplanner.engine import curve
    from dpplanner.engine.types import CancelToken
    from dpplanner.model.engine_inputs import CompositionInputs
    from dpplanner.model.requests import CurveView, evaluation_request

    forget()
    plan = CompositionInputs(tuple(EPS), tuple(DELTA), (1,) * len(EPS), DELTA_G, 0.5, tuple(MECH))
    request = evaluation_request(plan, CurveView())
    window = jobs.evaluate(request, CancelToken(), lambda _f: None).curve
    own = curve(EPS, DELTA, DELTA_G, eta=1e-2, mechanisms=MECH, k_max=request.curve_k_max,
                points=request.curve_points, lower=False)
    assert np.array_equal(window.upper["pld"], own.upper["pld"])
    assert np.any(window.upper["pld"] < window.upper["optimal"])
