"""`make bench`'s page: what a bench declares reaches docs/performance.md with its verdict, its
peer and the run's load; the committed page is the generated one. (Nothing is timed here.)"""

from __future__ import annotations

import datetime as dt
import os
import sys

import pytest

from doc_pages import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import page  # noqa: E402
import rows  # noqa: E402
import run  # noqa: E402

TOY = '''"""Toy figures (printed, never asserted).

Details nobody reads.
"""
from rows import row, target

print("toy | table ```")
target("toy <= 1 s", "0.5 s", True, peer="peer: 2 s")
target("other\\nthing <= 1 ms", "3 ms | wall", False)
row("a figure", "7 ms")
'''


@pytest.fixture
def fresh_rows(monkeypatch):
    monkeypatch.setattr(rows, "ROWS", [])
    monkeypatch.setattr(rows, "SECTION", "benchmarks")
    return rows.ROWS


def _run(sections, loads, all_files=()):
    return page.Run(dt.datetime(2030, 1, 2, 3, 4, tzinfo=dt.timezone.utc), 90.0, sections, list(rows.ROWS),
                    loads, 0.5, 0.25, list(all_files), cores=2)


def test_a_bench_file_becomes_a_section_with_its_rows_and_output(tmp_path, fresh_rows, capsys):
    bench = tmp_path / "bench_toy.py"
    bench.write_text(TOY)
    section = run.run_bench(bench, page.LoadSampler())
    assert section.title == "Toy figures" and section.file == "bench_toy" and not section.failed
    assert "toy | table" in section.output and "toy | table" in capsys.readouterr().out
    assert [(r.section, r.met) for r in fresh_rows] == [("bench_toy", True), ("bench_toy", False),
                                                         ("bench_toy", None)]
    text = page.render(_run([section], [7.0, 8.0], ["bench_toy", "bench_other"]))
    assert page.MARK in text and "**Targets met: 1 of 2.**" in text
    assert "| [toy](#toy-figures) | toy <= 1 s | 0.5 s | peer: 2 s | met |" in text
    assert "| other thing <= 1 ms | 3 ms / wall | - | **NOT met** |" in text      # one line, one cell
    assert "| a figure | 7 ms | - | - |" in text
    assert "loaded: 1-minute load average 7.5 on average (7.0 to 8.0) on 2 cores" in text
    assert "shared with other jobs and was loaded" in text
    assert "measured only bench_toy of 2 benches" in text
    assert "toy | table '''" in text                        # its output cannot close the code block
    assert "| share of a core | 50% at the start, 25% at the end" in text


def test_a_failing_bench_says_so_and_the_others_still_run(tmp_path, fresh_rows, capsys):
    bench = tmp_path / "bench_broken.py"
    bench.write_text('"""Broken."""\nraise RuntimeError("no peer installed")\n')
    section = run.run_bench(bench, page.LoadSampler())
    assert section.failed and "no peer installed" in section.output
    assert "**The bench failed**" in page.render(_run([section], [1.0]))


def test_each_bench_runs_in_a_process_of_its_own(tmp_path, fresh_rows, capsys):
    # One bench's imports, caches and heap must not slow the next one's figures.
    for name in ("bench_one", "bench_two"):
        (tmp_path / f"{name}.py").write_text('"""Pid."""\nimport os\nfrom rows import row\n'
                                           'row("pid", str(os.getpid()))\n')
        run.run_bench(tmp_path / f"{name}.py", page.LoadSampler())
    pids = {r.measured for r in fresh_rows}
    assert [r.section for r in fresh_rows] == ["bench_one", "bench_two"]
    assert len(pids) == 2 and str(os.getpid()) not in pids


def test_a_bench_that_crashes_its_process_is_a_failed_section(tmp_path, fresh_rows, capsys):
    bench = tmp_path / "bench_crash.py"
    bench.write_text('"""Crash."""\nimport os, signal\nprint("before", flush=True)\n'
                     'os.kill(os.getpid(), signal.SIGKILL)\n')
    section = run.run_bench(bench, page.LoadSampler())
    assert section.failed and "before" in section.output and "killed by signal 9" in section.output


def test_a_quiet_run_is_called_quiet():
    assert page.load_words([1.1, 1.3], 2).startswith("quiet")
    assert page.load_words([3.0], 2).startswith("loaded")
    assert "not measured" in page.load_words([], 2)



def test_the_committed_page_is_a_whole_generated_run():
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert text.startswith("# Performance\n") and page.MARK in text
    assert "measured only" not in text, "commit the page of a whole `make bench` run"
    assert "| date |" in text and "| load |" in text and "**Targets met:" in text
