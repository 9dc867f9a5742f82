"""The shell examples of README.md and docs/ run, and print what the text says.

- ```console blocks: every ``$ command`` runs in a fresh folder with the venv's scripts on PATH,
  and prints the lines under it (times such as ``6 ms`` or ``<1 ms`` may differ; runs of spaces
  do not count).
- ```sh blocks and unmarked ones: a ``make TARGET`` is dry-run (``make -n``: the target exists
  and its recipe expands); a pytest command selects tests (``--collect-only``: it runs, and finds
  at least one); the packaged app's desktop-integration snippet runs against a bundle laid out as
  packaging/dpplanner.spec lays it out, in a throw-away home folder.
- ```json blocks of the file format page are plan files that load.
Windows (```bat) commands cannot run here; tests/packaging checks what they rely on.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doc_pages import ROOT, Block, blocks
from dpplanner.model.files import loads_plan

BIN = Path(sys.executable).parent
SHELL_LANGS = ("sh", "shell", "bash", "")
TIME = re.compile(r"(<\s?1|\d+(\.\d+)?) ms\b")


def _env(**extra) -> dict:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", QT_QPA_PLATFORM="offscreen")
    env.update(extra)
    return env


# --- ```console: commands and their output ---------------------------------------------------------

def _sessions(block: Block) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in block.code.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def _normal(text: str) -> str:
    return " ".join(TIME.sub("T ms", text).split())


def _console() -> list[tuple[Block, int, str, list[str]]]:
    return [(b, i, cmd, said) for b in blocks() if b.lang == "console"
            for i, (cmd, said) in enumerate(_sessions(b))]


def test_the_command_line_page_shows_every_command():
    shown = {cmd.split()[1] for b, _, cmd, _ in _console() if cmd.startswith("dpplanner-cli ")}
    assert {"compose", "allocate", "curve", "report", "validate"} <= shown


@pytest.fixture(scope="module")
def console_dir(tmp_path_factory):
    """One folder per page, so a command can read what an earlier one in its block wrote."""
    return tmp_path_factory.mktemp("console")


@pytest.mark.parametrize("block, i, command, said", _console(), ids=lambda x: x.where if isinstance(x, Block)
                         else (x if isinstance(x, str) and x.startswith("dpplanner") else None))
def test_a_console_example_prints_what_it_says(block, i, command, said, console_dir):
    got = subprocess.run(["sh", "-c", "exec 2>&1; " + command], cwd=console_dir, env=_env(),
                         capture_output=True, text=True, timeout=600).stdout
    got_lines, said_lines = got.rstrip("\n").splitlines(), "\n".join(said).rstrip("\n").splitlines()
    assert [_normal(x) for x in got_lines] == [_normal(x) for x in said_lines], \
        f"{block.where}: `{command}` is said to print\n" + "\n".join(said_lines) + "\nit prints\n" + got


# --- ```sh: make targets, pytest selections, the install snippet -----------------------------------

def _commands(block: Block) -> list[str]:
    text = re.sub(r"\\\n\s*", " ", block.code)
    return [re.sub(r"\s+#.*$", "", line).strip() for line in text.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def _is_install_snippet(block: Block) -> bool:
    return block.page == "docs/guide/install.md" and block.lang in SHELL_LANGS


def _shell_blocks() -> list[Block]:
    return [b for b in blocks() if b.lang in SHELL_LANGS and not _is_install_snippet(b)]


def _shell_commands() -> list[tuple[Block, str]]:
    return [(b, c) for b in _shell_blocks() for c in _commands(b)]


def test_every_shell_command_is_one_the_tests_know_how_to_run():
    for block, command in _shell_commands():
        assert command.startswith("make ") or " pytest" in f" {command}", \
            f"{block.where}: no test runs `{command}`: teach tests/test_docs_shell_examples.py how"


@pytest.mark.parametrize("block, command", _shell_commands(), ids=lambda x: x.where if isinstance(x, Block) else x)
def test_a_shell_command_runs(block, command):
    if command.startswith("make "):
        done = subprocess.run(["make", "-n", *shlex.split(command)[1:]], cwd=ROOT, env=_env(),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{block.where}: `{command}`: {done.stderr}"
        return
    words = shlex.split(command)
    env = {}
    while "=" in words[0]:
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    at = words.index("pytest")
    words = [sys.executable, "-m", "pytest", *words[at + 1:], "--collect-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(words, cwd=ROOT, env=_env(**env), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{block.where}: `{command}` collects nothing or fails:\n{done.stdout[-2000:]}"
    assert re.search(r"^[1-9]\d*(/\d+)? tests? collected|: [1-9]\d*$", done.stdout, re.M), \
        f"{block.where}: `{command}` selects no test"


def test_the_desktop_integration_snippet_installs_what_it_says(tmp_path):
    (snippet,) = [b for b in blocks() if _is_install_snippet(b)]
    bundle = tmp_path / "dpplanner-1.2.3"
    resources = bundle / "_internal" / "resources"      # where packaging/dpplanner.spec puts them
    shutil.copytree(ROOT / "resources" / "icons", resources / "icons")
    for name in ("dpplanner.desktop", "dpplanner-mime.xml"):
        shutil.copy(ROOT / "resources" / name, resources / name)
    (bundle / "dpplanner").write_text("#!/bin/sh\n")
    stubs = tmp_path / "stubs"                           # the two cache updaters, if not installed
    stubs.mkdir()
    for tool in ("update-mime-database", "update-desktop-database"):
        if shutil.which(tool) is None:
            (stubs / tool).write_text(f"#!/bin/sh\ntouch '{tmp_path}/ran-{tool}'\n")
            (stubs / tool).chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = _env(HOME=str(home), PATH=f"{stubs}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(["sh", "-e", "-c", snippet.code.replace("<version>", "1.2.3")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{snippet.where}: {done.stderr}"
    local = home / ".local"
    assert (local / "bin" / "dpplanner").resolve() == (bundle / "dpplanner").resolve()
    assert (local / "share" / "applications" / "dpplanner.desktop").is_file()
    assert (local / "share" / "mime" / "packages" / "dpplanner.xml").is_file()
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        assert (local / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "dpplanner.png").is_file()


# --- ```json: the file format's example is a plan --------------------------------------------------

def test_the_file_format_example_is_a_plan_that_loads():
    (example,) = [b for b in blocks() if b.lang == "json" and b.page == "docs/reference/file-format.md"]
    plan = loads_plan(example.code)
    assert plan.budget.epsilon == 0.25 and plan[0].name == "mean income north"
