"""The engine process's helper imports what its jobs need before it says it is ready: the first
edit after it started does not wait for its imports (scipy.optimize and the optimal core, ~0.2 s of
CPU)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dpplanner import engine
from dpplanner.compute import engine_process, jobs, split
from dpplanner.engine import offload
from dpplanner.engine.mechanisms import spectral
from dpplanner.model import files
from dpplanner.model.examples import example_paths
from dpplanner.model.requests import CurveView
from engine_jobs import helper_up, in_helper, loaded_modules

#: It talks to spawned child processes (seconds to start on a busy machine).
pytestmark = pytest.mark.slow


def _ignore(_fraction: float) -> None:
    pass


def test_the_helpers_jobs_import_nothing_it_has_not_imported_at_its_start():
    process = engine_process.EngineProcess()
    token = engine.CancelToken()

    def in_the_helper(fn, arg):
        return process.run(in_helper, (fn, arg), token, _ignore)

    try:
        helper_up(process)
        ready = in_the_helper(loaded_modules, None)
        for path in example_paths().values():
            request = files.load_plan(path).evaluation_request(CurveView())
            for total_known in (True, False):     # (after an allocation under pld, and without)
                there = split.halves(request.theorems, total_known)[1]
                either = tuple(t for t in request.theorems if engine.theorem(t).evaluated == "either")
                in_the_helper(jobs._helper_half, jobs._HelperJob(replace(request, theorems=there), either))
        assert sorted(in_the_helper(loaded_modules, None) - ready) == []
        # the work engine/offload.py hands it (a pld rung's lower end) comes from a module it has
        assert offload.both.__module__ in ready and spectral.lower_end.__module__ in ready
    finally:
        process.close()
