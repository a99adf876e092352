# Two commands matter: `make demo` and `make test`. Both work from a fresh clone:
# they create .venv, install the project, and build (or reuse) the control-plane binaries.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test lint binaries kubectl bench clean

demo: $(STAMP) binaries kubectl
	$(BIN)/k8s-wiretap demo

test: $(STAMP) binaries kubectl lint
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check k8s_wiretap addons tests bench
	$(BIN)/ruff format --check k8s_wiretap addons tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# Reuses binaries found via --bin-dir/K8S_WIRETAP_BIN_DIR, KUBEBUILDER_ASSETS, PATH or the
# cache; otherwise builds them once from Debian's kubernetes source package.
binaries: $(STAMP)
	$(BIN)/k8s-wiretap lab build

# The tests and the demo drive the real kubectl. Debian's kubernetes-client is the fallback.
kubectl:
	@command -v kubectl >/dev/null || { \
	  echo "kubectl not on PATH: installing Debian's kubernetes-client"; \
	  $(if $(filter 0,$(shell id -u)),,sudo -n) apt-get install -y -q kubernetes-client; }

bench: $(STAMP) binaries
	$(BIN)/python -m bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
