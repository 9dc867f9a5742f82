"""The pld lower end when the lower twins' root lies further below the upper end than the hybrid
charge's gap (spectral._lower): census-tables (households of 4, a discrete Laplace release beside
the Gaussians) read a certified lower end of 0.0861 (the largest single epsilon) at eta 1e-3
while the root of the lower twins was 0.249993: its x_min search stayed above that root."""

from __future__ import annotations

import pytest

from dpplanner import engine
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan


def _inputs():
    return load_plan(example_path("census-tables")).composition_inputs()


@pytest.mark.parametrize("eta", [1e-3, 1e-4])
def test_census_tables_pld_bracket_meets_eta(eta):
    inp = _inputs()
    c = engine.compose(list(inp.epsilons), list(inp.deltas), inp.delta_g, theorem="pld", eta=eta,
                       multiplicities=list(inp.multiplicities), mechanisms=list(inp.mechanisms))
    assert c.epsilon_lower <= c.epsilon
    assert c.epsilon - c.epsilon_lower <= eta, c.detail
    # the lower end is the composition's, not the largest single release's epsilon
    assert c.epsilon_lower > 2 * max(inp.epsilons)
    assert "largest single release" not in c.detail


def test_census_tables_lower_end_is_below_a_finer_upper_end():
    inp = _inputs()
    args = (list(inp.epsilons), list(inp.deltas), inp.delta_g)
    kw = dict(theorem="pld", multiplicities=list(inp.multiplicities), mechanisms=list(inp.mechanisms))
    coarse = engine.compose(*args, eta=1e-3, **kw)
    fine = engine.compose(*args, eta=1e-6, **kw)
    # both brackets are certified: each lower end is below the other's upper end
    assert coarse.epsilon_lower <= fine.epsilon and fine.epsilon_lower <= coarse.epsilon
