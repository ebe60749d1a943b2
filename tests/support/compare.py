"""compare 端到端测试共用的东西：离线要清掉的变量、测试用变体，以及"跑一次 compare 拿 JSON"。

The ``offline`` and ``variants`` fixtures that use these are in ``tests/conftest.py``.
"""
from __future__ import annotations

import json

from compare.__main__ import main
from tests.variants import early_stop, english_errors, reversed_calls

# 这些变量一旦从开发者的环境漏进测试，就可能连到真实端点、改变 trace，或把订单写到测试目录之外
CONFIG_VARIABLES = ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL", "LLM_TEMPERATURE", "OFFLINE_LLM_FAULTS",
                    "OFFLINE_LLM_SEED", "OFFLINE_LLM_LATENCY_MS", "LLM_TIMEOUT", "AGENT_CLOCK", "AGENT_DATA_DIR")
STAGES = ("prebuilt", "stategraph", "pure_loop")
VARIANTS = {"reversed_calls": reversed_calls, "english_errors": english_errors, "early_stop": early_stop}


def run_compare(capsys, out, *argv: str) -> tuple[int, dict]:
    """``python -m compare ... --json --out OUT`` in-process: (exit status, the JSON object)."""
    code = main([*argv, "--json", "--out", str(out)])
    return code, json.loads(capsys.readouterr().out)
