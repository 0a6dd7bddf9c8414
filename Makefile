# Everything installs from the lock file with uv; uv itself is bootstrapped into .tools/
# when it is not on PATH, so these targets work on a fresh machine with only python3.
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
# Every extra (both clouds' SDKs, the report, the local trainer's TensorFlow): the tests use them all.
RUN := $(UV) run --frozen --all-extras

.PHONY: install dev run prereqs test test-fresh test-fast bench bench-smoke schema docs lint mutate clean

# `make install`: the CLI for a user, with only the extras named (EXTRAS="vertex sagemaker report local";
# none: the CLI alone), at uv.lock's versions (uv's cache serves them without the network once fetched), in
# an environment of its own (CLI_ENV), `cloudtrain` linked into $(PREFIX)/bin. Running it again with other
# EXTRAS leaves exactly those installed. The developer environment with everything is `make dev`.
EXTRAS ?=
PREFIX ?= $(HOME)/.local
CLI_ENV ?= $(PREFIX)/share/cloudtrain/venv
install: $(UV)  ## the CLI alone in ~/.local/bin; make install EXTRAS="vertex" adds that cloud's SDKs (docs/how-to/install.md)
	UV_PROJECT_ENVIRONMENT=$(CLI_ENV) UV_COMPILE_BYTECODE=0 $(UV) sync --frozen --no-dev --no-editable --quiet $(foreach e,$(EXTRAS),--extra $(e))
	$(CLI_ENV)/bin/python tools/startup_bytecode.py
	mkdir -p $(PREFIX)/bin && ln -sf $(CLI_ENV)/bin/cloudtrain $(PREFIX)/bin/cloudtrain
	@echo "cloudtrain$(if $(strip $(EXTRAS)), with $(strip $(EXTRAS)),) is $(PREFIX)/bin/cloudtrain (its environment: $(CLI_ENV))"

dev: .venv/.synced  ## the locked environment with every extra and the test tools in .venv/; then `source .venv/bin/activate`
	@echo "cloudtrain is in .venv/bin: run 'source .venv/bin/activate' (or .venv/bin/cloudtrain)"

run: .venv/.synced  ## the main job on this machine
	$(RUN) cloudtrain submit --config job_configs/gpu4.yaml --local

# The system programs the tests drive for real (Slurm's daemons, munge, sshd, Chromium): checked first, in
# well under a second; as root they are installed, else one line names the packages and the command.
test: prereqs .venv/.synced .venv-sm-toolkit/.synced  ## lint, then the whole test suite, slow tests included (what CI runs)
	$(MAKE) --no-print-directory lint
	$(RUN) pytest -q -n 3 --dist loadfile --durations=15

# Its line is make's own error (one line, no "Error 1" after it); as root, what it installed is said after.
prereqs:  ## check what make test needs (tools/system_prereqs.sh, the Kubernetes test cluster's build); as root, install it
	@$(eval said := $$(shell tools/k8s/setup.sh 2>&1))$(if $(filter-out 0,$(.SHELLSTATUS)),$(error $(said)),$(if $(said),$(info $(said))))true

test-fresh:  ## make test in a fresh clone of HEAD with an empty HOME, TMPDIR and caches (PYTEST_ARGS="-k x": just those)
	tools/fresh_clone_test.sh $(PYTEST_ARGS)

test-fast: .venv/.synced  ## skip the slow (TensorFlow / server) tests
	$(RUN) pytest -q -m "not slow"

bench: .venv/.synced  ## full benchmarks → docs/benchmarks.md
	$(RUN) python -m bench

bench-smoke: .venv/.synced
	$(RUN) python -m bench --quick --allow-dirty --out /tmp/cloudtrain-bench-smoke

schema: .venv/.synced  ## refresh the JSON Schema editors use
	$(RUN) cloudtrain schema > docs/cloudtrain.schema.json

# ruff (lint, format, import order) and mypy over every Python tree; all three run, and any finding fails.
# `make test` runs it first, so CI fails on a finding.
LINT_TREES := cloudtrain trainer bench tests tools
lint: .venv/.synced  ## ruff check, ruff format --check and mypy: zero findings to pass
	@status=0; \
	$(RUN) ruff check $(LINT_TREES) || status=1; \
	$(RUN) ruff format --check $(LINT_TREES) || status=1; \
	$(RUN) mypy || status=1; \
	exit $$status

docs: schema  ## regenerate what the docs take from the code: the JSON Schema, the config keys, the environment variables, the Python API reference, the import diagram
	$(RUN) python tools/config_reference.py
	$(RUN) python tools/environment_reference.py
	$(RUN) python tools/api_reference.py
	$(RUN) python tools/import_diagram.py

# Mutation testing of one module against named fast tests (docs/how-to/mutation-testing.md); not part of
# `make test`. mutmut reads its settings from pyproject.toml and writes mutants/ where it runs, so it
# runs in a scratch copy of the working tree (.mutmut/, git-ignored) whose pyproject.toml names
# MODULE and TESTS: the worktree's own files stay as they are. WORKERS=1 by default (a shared machine).
WORKERS ?= 1
MUTMUT := $(CURDIR)/.venv/bin/mutmut
# Everything else at the top of the tree (job_configs/, README.md, …): tests read them beside the code.
MUTATE_ALSO = $(filter-out cloudtrain bench trainer tests,$(shell git ls-files --cached --others --exclude-standard | cut -d/ -f1 | sort -u))
mutate: .venv/.synced  ## make mutate MODULE=cloudtrain/statefiles.py TESTS="tests/test_state_damage.py" [WORKERS=1]
	@test -n "$(MODULE)" -a -n "$(TESTS)" || { echo "usage: make mutate MODULE=path/to/module.py TESTS=\"tests/test_a.py tests/test_b.py::test_c\""; exit 2; }
	@test -f "$(MODULE)" || { echo "make mutate: MODULE=$(MODULE) is not a file"; exit 2; }
	rm -rf .mutmut && mkdir .mutmut
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t .mutmut
	printf '\n[tool.mutmut]\nsource_paths = ["cloudtrain", "bench", "trainer"]\nonly_mutate = ["$(MODULE)"]\npytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]\npytest_add_cli_args_test_selection = [$(foreach t,$(TESTS),"$(t)",)]\nalso_copy = [$(foreach f,$(MUTATE_ALSO),"$(f)",)]\n' >> .mutmut/pyproject.toml
	cd .mutmut && $(MUTMUT) run --max-children $(WORKERS); status=$$?; $(MUTMUT) results --all true > results.txt; \
	  grep -v ': killed' results.txt; awk -F': ' '{n[$$2]++} END {for (k in n) printf "%s: %d\n", k, n[k]}' results.txt; exit $$status

# Bytecode at install only for what the CLI imports when it starts (about 2 s), so the first `cloudtrain`
# run is as fast as later ones; TensorFlow's and the SDKs' ~19,000 files (50 s) compile when first imported.
.venv/.synced: uv.lock pyproject.toml $(UV)
	UV_COMPILE_BYTECODE=0 $(UV) sync --frozen --all-extras
	.venv/bin/python tools/startup_bytecode.py
	@touch $@

# AWS's own SageMaker TensorFlow container entry (sagemaker-tensorflow-training + sagemaker-training
# as the TF training images ship them), which the local contract is tested against. Its own
# environment: it pins numpy<1.24, which the project's cannot share.
.venv-sm-toolkit/.synced: tests/sm_toolkit/requirements.txt $(UV)
	$(UV) venv --quiet --allow-existing --python 3.11 .venv-sm-toolkit
	$(UV) pip install --quiet --python .venv-sm-toolkit/bin/python --require-hashes -r tests/sm_toolkit/requirements.txt
	@touch $@

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet uv==0.13.8

clean:
	rm -rf .venv .venv-sm-toolkit .tools dist cloudtrain-runs
