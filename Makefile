# 两条命令：make demo（离线跑通三个实现并对比）与 make test。
# Both create .venv on first use and install the project's dependencies into it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m stage1_prebuilt -q "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"
	$(PY) -m stage2_stategraph -q "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"
	$(PY) -m stage3_pure_loop -q "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis reports .data
