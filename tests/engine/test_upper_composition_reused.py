"""rung reads the composition upper_end just read for the same inputs (an allocation's forward
check: its search's last upper end, then the bracket there) instead of composing it again, with
the same bits as composing it."""

from __future__ import annotations

import pytest

from dpplanner.engine import DiscreteLaplace, Gaussian, compose_mechanisms
from dpplanner.engine.mechanisms import spectral
from dpplanner.engine.memo import forget


@pytest.fixture
def first_rung(monkeypatch):
    """(releases, step, guess, enough) of the first rung of discrete Laplace releases and a small
    Gaussian (the lower end shifted in epsilon, read from the upper end's composition)."""
    seen = []
    real = spectral.rung
    monkeypatch.setattr(spectral, "rung", lambda r, step, guess, cancel=None, upper=None, enough=0.0:
                        seen.append((r, step, guess, enough)) or real(r, step, guess, cancel, upper, enough))
    forget()
    compose_mechanisms([DiscreteLaplace(10.0, 20), Gaussian(4.0), DiscreteLaplace(2.0, 1)], 1e-6, eta=0.1)
    monkeypatch.setattr(spectral, "rung", real)
    return seen[0]


def _composing(monkeypatch) -> list:
    calls = []
    real = spectral.compose
    monkeypatch.setattr(spectral, "compose", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@pytest.mark.parametrize("shifted", [True, False])
def test_rung_reuses_upper_ends_composition(monkeypatch, first_rung, shifted):
    r, step, guess, enough = first_rung
    enough = enough if shifted else 0.0      # (without: the lower end's own composition too)
    forget()
    calls = _composing(monkeypatch)
    cold = spectral.rung(r, step, guess, enough=enough)
    cold_calls = len(calls)
    forget()
    up = spectral.upper_end(r, step, guess)
    calls.clear()
    warm = spectral.rung(r, step, guess, upper=up, enough=enough)
    assert warm == cold and up == cold[0]
    assert len(calls) == cold_calls - 1


def test_another_guess_is_composed_again(monkeypatch, first_rung):
    r, step, guess, enough = first_rung
    forget()
    calls = _composing(monkeypatch)
    cold = spectral.rung(r, step, guess, enough=enough)
    cold_calls = len(calls)
    forget()
    spectral.upper_end(r, step, guess * 2)
    calls.clear()
    assert spectral.rung(r, step, guess, enough=enough) == cold
    assert len(calls) == cold_calls
