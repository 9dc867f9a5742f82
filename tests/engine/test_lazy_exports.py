"""The engine's packages import a name's module when the name is first read (engine/lazy.py): a
caller that needs CancelToken, the errors or the registry's words (the window's GUI process before
its first paint) does not import scipy, the optimal core or the noise-aware machinery; every public
name still reads as before."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from dpplanner import engine
from dpplanner.engine import mechanisms, optimal

HEAVY = ("numpy", "scipy", "scipy.special", "scipy.fft", "dpplanner.engine.compose",
         "dpplanner.engine.optimal.bracket", "dpplanner.engine.mechanisms.composition")


def _loaded_after(code: str) -> set[str]:
    probe = code + f"\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_light_names_import_neither_numpy_nor_scipy():
    assert _loaded_after("import dpplanner.engine\n"
                         "from dpplanner.engine import BudgetError, Cancelled, CancelToken, NotApplicable\n"
                         "import dpplanner.compute.engine_process") == set()


def test_the_registry_the_model_and_the_window_s_jobs_import_neither_numpy_nor_scipy():
    assert _loaded_after("import dpplanner.engine.theorems, dpplanner.model, dpplanner.compute.jobs\n"
                         "import dpplanner.compute.profile_job\n"
                         "from dpplanner import engine\n"
                         "assert engine.theorem('pld').label and engine.REGISTRY") == set()


def test_the_registry_and_the_model_leave_the_optimal_core_and_the_fft_unimported():
    loaded = _loaded_after("import dpplanner.engine.theorems, dpplanner.model\n"
                           "from dpplanner.engine.mechanisms import gaussian_multiplier\n"
                           "import dpplanner.engine.optimal.deadline\n"
                           "from dpplanner import engine\n"
                           "assert engine.theorem('pld').label and engine.REGISTRY")
    assert loaded.isdisjoint({"scipy.fft", "dpplanner.engine.compose", "dpplanner.engine.optimal.bracket",
                              "dpplanner.engine.mechanisms.composition"}), loaded


def test_the_check_sees_the_heavy_modules_when_a_computation_needs_them():
    # (pld's lattices: "optimal" of these three groups is exact, its roots found without
    # scipy.optimize, which imported scipy.fft)
    loaded = _loaded_after("from dpplanner.engine import compose\ncompose([0.1, 0.2, 0.3] * 40, [0] * 120, "
                           "1e-6, 'pld', mechanisms=['laplace'] * 120)")
    assert {"scipy.fft", "dpplanner.engine.compose", "dpplanner.engine.optimal.bracket"} <= loaded


@pytest.mark.parametrize("package", [engine, mechanisms, optimal], ids=lambda p: p.__name__)
def test_every_public_name_reads_as_its_module_defines_it(package):
    for name in package.__all__:
        value = getattr(package, name)
        assert not inspect.ismodule(value), name
        assert name in dir(package)
    with pytest.raises(AttributeError):
        package.no_such_name  # noqa: B018


def test_the_functions_named_like_their_modules_stay_functions_after_those_modules_are_imported():
    code = ("import dpplanner.engine.allocate, dpplanner.engine.compose, dpplanner.engine.curve\n"
            "import inspect\n"
            "from dpplanner import engine\n"
            "from dpplanner.engine import allocate, compose, curve\n"
            "print(all(inspect.isfunction(f) for f in (allocate, compose, curve, engine.allocate,\n"
            "          engine.compose, engine.curve)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
