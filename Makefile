# dpplanner: the two commands a fresh machine needs are `make run` and `make test`.
# Everything installs into .venv from pyproject.toml; nothing is assumed to be on the machine
# beyond Python 3.11+ (and, for the window under Linux, the Qt runtime libraries named below).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: run test bench venv clean

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

test: $(VENV)/.stamp-test
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

bench: $(VENV)/.stamp-bench
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info
