# Two commands matter: `make demo` and `make test`. Both work from a fresh clone: they
# create .venv and install the project from the lock (constraints.txt); `make test` (and
# `make demo-live`) build (or reuse) the control-plane binaries. `make unit` is the fast lane:
# every test that needs no lab and no binaries.

PYTHON ?= $(shell scripts/find-python)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
LOCK   := constraints.txt

.PHONY: demo demo-live test suite unit lint dist binaries api-source jaeger kubectl chromium bench recordings snapshots release lock clean

# The walkthrough of the bundled recording, in the TUI: no cluster, no binaries needed.
demo: $(STAMP)
	$(BIN)/k8s-wiretap demo

# The same story on a real lab of its own: kubectl apply twice, then who said what.
demo-live: $(STAMP) binaries kubectl
	$(BIN)/k8s-wiretap demo --live

# The whole suite in TEST_WORKERS processes (pytest-xdist): tests/conftest.py groups the
# tests so that each shared lab starts once, and hands the labs out first; the tests that
# need no lab fill the cores while the labs' tests wait on them. Prints how long it took,
# builds and lint included, whether it passed or not, after the 25 slowest steps (the budget).
TEST_WORKERS ?= 4

test:
	@start=$$(date +%s); $(MAKE) --no-print-directory suite; status=$$?; \
	  echo "make test: $$(( $$(date +%s) - start )) s"; exit $$status

suite: $(STAMP) binaries api-source jaeger kubectl chromium lint
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=25

# Every test not marked `lab` (the lab, its binaries, kubectl, Go, Chromium): no builds, no
# cluster; in UNIT_WORKERS processes (one a core: these tests compute, they do not wait),
# each module's tests in one of them. Prints how long it took.
UNIT_WORKERS ?= 2

unit: $(STAMP)
	@start=$$(date +%s); \
	  $(BIN)/pytest -m "not lab" -p no:cacheprovider -n $(UNIT_WORKERS) --dist loadgroup; status=$$?; \
	  echo "make unit: $$(( $$(date +%s) - start )) s"; exit $$status

lint: $(STAMP)
	$(BIN)/ruff check k8s_wiretap tests bench scripts
	$(BIN)/ruff format --check k8s_wiretap tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

# The wheel and the sdist, in dist/: what `pipx install` or `pip install` takes. The wheel is
# built from the sdist, so both carry the recordings, walkthroughs and mitmproxy scripts
# (tests/test_package.py installs it in a fresh virtualenv and runs it from elsewhere).
dist: $(STAMP)
	$(BIN)/python -m build --outdir dist .

# Both releases the lab runs: the default one (on which the whole suite runs; its Go modules
# and the machine's Go), whose minor Python says from its one constant
# (k8s_wiretap/kube/release.py CURRENT), and 1.20 (a smaller set; Debian's source package
# and Debian's Go 1.19).
# Each is reused from the cache when built before, else built once.
KUBE_VERSIONS ?= 1.20 $(shell $(PYTHON) -c 'from k8s_wiretap.kube.release import CURRENT; print(CURRENT.minor_version)')

binaries: $(STAMP)
	$(BIN)/k8s-wiretap lab build $(foreach v,$(KUBE_VERSIONS),--kube-version $(v))

# The Kubernetes 1.20 API sources the schema and the upstream fixtures are made from
# (tests/test_upstream_fixtures.py, tests/decode/test_schema.py): fetched once from Debian's
# source package into the cache (k8s_wiretap/lab/apisource.py), else reused.
api-source: $(STAMP)
	$(BIN)/python -m k8s_wiretap.lab.apisource

# Jaeger v2, which the OTLP export is tested against (tests/test_jaeger.py): built once from
# its Go module into the cache (k8s_wiretap/lab/jaeger.py), else reused.
jaeger: $(STAMP)
	$(BIN)/python -m k8s_wiretap.lab.jaeger

# The tests and the demo drive the real kubectl. Debian's kubernetes-client is the fallback.
kubectl:
	@command -v kubectl >/dev/null || { \
	  echo "kubectl not on PATH: installing Debian's kubernetes-client"; \
	  $(if $(filter 0,$(shell id -u)),,sudo -n) apt-get install -y -q kubernetes-client; }

# `serve` is tested in a real headless browser: Debian's chromium, driven by Playwright
# (never `playwright install`: no browser download).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo -n)
chromium:
	@test -x /usr/bin/chromium || { \
	  echo "/usr/bin/chromium missing: installing Debian's chromium"; \
	  $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium; }

# The project on Kubernetes release V in one command (scripts/release.py says every step):
# `make release V=1.38.0-beta.0` adds a pre-release beside the default, a final release
# becomes the default; `make release V=<the default>` changes nothing.
release: $(STAMP) kubectl
	@test -n "$(V)" || { echo "make release: say which, e.g. V=1.38.0-beta.0" >&2; exit 2; }
	$(BIN)/python scripts/release.py $(V)

bench: $(STAMP) binaries
	$(BIN)/python -m bench

# Every committed recording made again, each against a fresh lab of its own, by the scripts
# that made it (the walkthroughs beside them find their steps by what they are, never by
# id). About ten minutes. Then what is made from them (`make snapshots`). Review `git diff
# --stat recordings/ docs/ tests/views/tui/snapshots/`, then run `make test`.
recordings: $(STAMP) binaries kubectl
	$(BIN)/python scripts/record_fixtures.py
	$(BIN)/python scripts/record_fixtures.py --kube-version 1.20
	$(BIN)/python scripts/record_wide.py --story wide
	$(BIN)/python scripts/record_wide.py --story history
	$(BIN)/python scripts/record_wide.py --story kubelet
	$(BIN)/python scripts/record_audit.py
	$(MAKE) snapshots

# Everything made from the committed recordings, made again from them: recordings/facts.json,
# docs/pictures/*.svg, the docs' example outputs (scripts/make_derived.py) and the TUI's
# snapshots (tests/views/tui/snapshots/, written by their tests). The tests compare each.
SNAPSHOT_TESTS := tests/views/tui/test_snapshots.py tests/views/tui/test_object_timeline.py::test_the_timeline_screens
snapshots: $(STAMP)
	$(BIN)/python scripts/make_derived.py
	K8S_WIRETAP_UPDATE_SNAPSHOTS=1 $(BIN)/pytest -q -p no:cacheprovider $(SNAPSHOT_TESTS)

# A whole control plane through the wiretap beside a direct one, for SOAK_SECONDS (600 by
# default): logs, node readiness and lease renewals compared (bench/soak.py).
soak: $(STAMP) binaries kubectl
	$(BIN)/python -m bench soak

# A virtualenv made by an older Python is made again.
$(STAMP): pyproject.toml $(LOCK)
	@test -n "$(PYTHON)" || { echo "make: no Python >= 3.12 found; set PYTHON=/path/to/python3.13" >&2; exit 2; }
	$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null \
	  || { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install -q -c $(LOCK) -e '.[dev]'  # no setuptools banner; errors still show
	touch $@

# Refresh the lock: the newest versions pyproject.toml allows, resolved in a scratch
# virtualenv, written to constraints.txt (commit it with the change that needs it).
lock:
	rm -rf build/lock-venv && $(PYTHON) -m venv build/lock-venv
	build/lock-venv/bin/python -m pip install -q --upgrade pip
	build/lock-venv/bin/python -m pip install -q -e '.[dev]'
	{ echo "# The lock: what \`make\` installs (pip -c). Refresh with \`make lock\`."; \
	  build/lock-venv/bin/python -m pip freeze --exclude-editable --exclude pip; } > $(LOCK)
	rm -rf build/lock-venv

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
