# dpplanner: the two commands a fresh machine needs are `make run` and `make test`.
# Everything installs into .venv from pyproject.toml; nothing is assumed to be on the machine
# beyond Python 3.11+ (and, for the window under Linux, the Qt runtime libraries named below).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: run test test-stress bench venv clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip setuptools wheel

# One stamp per extra, redone whenever pyproject.toml changes.
$(VENV)/.stamp-%: pyproject.toml | $(PY)
	$(PIP) install -e ".[$*]"
	touch $@

$(VENV)/.stamp-base: pyproject.toml | $(PY)
	$(PIP) install -e .
	touch $@

venv: $(VENV)/.stamp-base

# Opens the window with the small PSI-style example plan. The preflight checks the Qt runtime
# libraries first: as root with apt it installs the missing ones, otherwise it names the command.
run: $(VENV)/.stamp-base
	@$(PY) -m dpplanner.preflight --install
	$(VENV)/bin/dpplanner resources/examples/psi-survey.dpplan

test: $(VENV)/.stamp-test
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

# The suite 5x as it is, 5x beside two busy loops and once on one core (taskset -c 0), one line
# per run: a test that depends on the machine's speed or load fails here. Slow: 11 whole runs.
# STRESS="--loaded-runs 2 -- tests/gui" changes the runs or the tests (tools/test_stress.py -h).
test-stress: $(VENV)/.stamp-test
	$(PY) tools/test_stress.py $(STRESS)

bench: $(VENV)/.stamp-bench
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info

# --- packaging (packaging/, docs/development/packaging.md) ----------------------------------
.PHONY: package package-test package-deb deps-linux

# dist/dpplanner/ + dist/dpplanner-<version>-<os>-<arch>.tar.gz (.zip on Windows, .dmg on macOS)
package: $(VENV)/.stamp-package
	$(PY) packaging/build.py

# Builds, then runs the frozen app's --smoke-test offscreen and prints its start-up time.
package-test: $(VENV)/.stamp-package
	$(PY) packaging/package_test.py

# Also dist/dpplanner_<version>_<arch>.deb (menu entry, icons, .dpplan file type). Linux only.
package-deb: $(VENV)/.stamp-package
	$(PY) packaging/build.py --deb

# Debian packages Qt loads at run time, offscreen (libegl1 ... libglib2.0-0) and on an X11/Wayland
# desktop (the xcb and wayland ones). Installed on the build machine, the second group is copied
# into the bundle by PyInstaller; without them the package still builds and passes package-test.
QT_DEBIAN_PACKAGES := libegl1 libgl1 libxkbcommon0 libfontconfig1 libfreetype6 libdbus-1-3 \
	libglib2.0-0 libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 \
	libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 \
	libxkbcommon-x11-0 libx11-xcb1 libwayland-client0 libwayland-cursor0 libwayland-egl1
deps-linux:
	apt-get update
	apt-get install -y --no-install-recommends $(QT_DEBIAN_PACKAGES)
