"""compare 端到端测试共用的夹具：保证离线、不读开发者的 .env，以及"跑一次 compare 拿 JSON"。"""
from __future__ import annotations

import json

import pytest

from compare.__main__ import main
from shared.implementations import IMPLEMENTATIONS, Implementation

# 这些变量一旦从开发者的环境漏进测试，就可能连到真实端点或改变 trace
CONFIG_VARIABLES = ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL", "LLM_TEMPERATURE", "OFFLINE_LLM_FAULTS",
                    "OFFLINE_LLM_SEED", "OFFLINE_LLM_LATENCY_MS", "LLM_TIMEOUT", "AGENT_CLOCK")
STAGES = ("prebuilt", "stategraph", "pure_loop")
VARIANTS = {
    "reversed_calls": "tests.variants.reversed_calls",
    "english_errors": "tests.variants.english_errors",
    "early_stop": "tests.variants.early_stop",
}


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """The embedded offline model whatever the developer configured; returns an output dir."""
    for name in CONFIG_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)            # 仓库根目录的 .env 不会被读到
    return tmp_path / "out"


@pytest.fixture
def variants(monkeypatch):
    """Register the deliberately different implementations of tests/variants/ for one test."""
    for name, module in VARIANTS.items():
        monkeypatch.setitem(IMPLEMENTATIONS, name, Implementation(
            name, module, "测试用变体", step_limit=f"{name} 的循环结束"))
    return list(VARIANTS)


def run_compare(capsys, out, *argv: str) -> tuple[int, dict]:
    """``python -m compare ... --json --out OUT`` in-process: (exit status, the JSON object)."""
    code = main([*argv, "--json", "--out", str(out)])
    return code, json.loads(capsys.readouterr().out)
