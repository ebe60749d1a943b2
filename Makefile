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

QUESTION := 现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？

# 文章的问题在三个阶段各跑一遍，然后 compare 把问题集喂给所有实现、逐轮对比。
demo: $(STAMP)
	@echo "== 第 1 阶段（黑盒）: python -m stage1_prebuilt =="
	@$(PY) -m stage1_prebuilt -q "$(QUESTION)"
	@echo "\n== 第 2 阶段（灰盒）: python -m stage2_stategraph =="
	@$(PY) -m stage2_stategraph -q "$(QUESTION)"
	@echo "\n== 第 3 阶段（白盒）: python -m stage3_pure_loop =="
	@$(PY) -m stage3_pure_loop -q "$(QUESTION)"
	@echo "\n== 对比: python -m compare =="
	@$(PY) -m compare

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis reports .data
