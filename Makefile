# 两条命令：make demo（离线跑通三个实现并对比）与 make test；make check-browser 在无头 Chromium 里检查 report.html。
# Both create .venv on first use and install the project's dependencies into it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test sweep install clean check-browser

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

# 测试分到几个进程里同时跑（pytest-xdist）：每核一个，最多 4 个（很多测试自己还会起子进程）；
# make test WORKERS=0：不分进程，在一个进程里一个接一个跑
WORKERS ?= $(shell $(PYTHON) -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count(); print(max(1, min(4, n or 1)))" 2>/dev/null || echo 2)

test: $(STAMP)
	$(PY) -m pytest -m "not sweep" -p xdist.plugin -n $(WORKERS) --dist worksteal

# 跑得久的：几千次带种子的运行（例如 rogue 模型 × 每个实现 200 次、审批拒绝时一笔订单也不写），
# 以及 compare.bench 整条命令连同每个实现的冷启动：几分钟
sweep: $(STAMP)
	$(PY) -m pytest -m sweep

# report.html 在真的浏览器里打开（无头 Chromium，经 DevTools 协议检查控制台与网络请求）。
# 需要 root 装 Debian 的 chromium 与中文字体；截图留在 pytest 的临时目录里。
check-browser: $(STAMP)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium fonts-noto-cjk)
	$(PY) -m pytest -v tests/test_report_browser.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis reports .data
