"""``python -m compare.bench``：形状与公式，不测快慢。

Benchmarks are not timed tests: nothing here asserts that anything is fast or slow (that
depends on the machine). What is checked, with the smallest settings (``--quick``, a 20 ms
latency, a few jobs):

- the cost table's ``--json`` is one JSON object, one row per implementation, every run
  answered, the numbers consistent with each other (p90 ≥ median, tokens counted);
- the import time is measured in a fresh interpreter, apart from the runs;
- ``--harness --quick --json`` through the real command line: ``ratio_to_bound > 0`` and the
  bound recomputed from the records' ``llm_calls × latency`` is the one reported;
- the lower-bound formula and the percentile on hand-made numbers;
- bad flags: exit 2, one line on stderr, nothing on stdout.
"""
from __future__ import annotations

import json
from contextlib import redirect_stdout
from io import StringIO

import pytest

from compare import bench
from compare.bench import critical_path_bound, percentile
from compare.suite import load_suite
from tests.support.cli import run_cli
from compare.implementations import IMPLEMENTATIONS

LATENCY_MS = 20
CONCURRENCY = 4
COST_KEYS = {"mode", "repeat", "prompts", "temperature", "clock", "implementations"}
ROW_KEYS = {"impl", "runs", "answered", "median_seconds", "p90_seconds", "mean_llm_calls",
            "mean_prompt_tokens", "mean_completion_tokens", "import_seconds"}
HARNESS_KEYS = {"mode", "ratio_to_bound", "bound_seconds", "measured_seconds", "sequential_seconds",
                "speedup", "latency_ms", "concurrency", "prompts", "jobs", "answered", "llm_calls", "runs"}
FAKE_IMPORT_SECONDS = 0.5


@pytest.fixture(scope="module")
def cost(tmp_path_factory) -> dict:
    """``--quick --json`` in process; the import subprocesses stubbed (tested on their own below)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(bench, "measure_import", lambda impl, samples: FAKE_IMPORT_SECONDS)
    patch.chdir(tmp_path_factory.mktemp("bench"))       # 离线模型本来就不读 .env；再保险一点
    try:
        out = StringIO()
        with redirect_stdout(out):
            status = bench.main(["--quick", "--json"])
    finally:
        patch.undo()
    return {"status": status, "stdout": out.getvalue()}


def test_cost_json_is_one_object_with_a_row_per_implementation(cost):
    assert cost["status"] == 0
    lines = cost["stdout"].splitlines()
    assert len(lines) == 1, "exactly one JSON object, on one line"
    data = json.loads(lines[0])
    assert set(data) == COST_KEYS and data["mode"] == "cost" and data["repeat"] == bench.QUICK_REPEAT
    assert [row["impl"] for row in data["implementations"]] == list(IMPLEMENTATIONS)
    prompts = len(load_suite())
    assert data["prompts"] == prompts
    for row in data["implementations"]:
        assert set(row) == ROW_KEYS
        assert row["runs"] == row["answered"] == prompts * bench.QUICK_REPEAT
        assert 0 < row["median_seconds"] <= row["p90_seconds"]
        assert row["mean_llm_calls"] >= 1
        assert row["mean_prompt_tokens"] > 0 and row["mean_completion_tokens"] > 0
        assert row["import_seconds"] == FAKE_IMPORT_SECONDS


def test_the_import_is_timed_in_a_fresh_interpreter():
    seconds = bench.measure_import(IMPLEMENTATIONS["json_loop"], samples=1)
    assert seconds > 0
    assert bench.needed_modules(IMPLEMENTATIONS["prebuilt"])[1] == "langchain_openai"
    assert bench.needed_modules(IMPLEMENTATIONS["json_loop"])[1] == "openai"


def test_the_harness_reports_the_bound_its_records_give():
    done = run_cli("compare.bench", "--harness", "--quick", "--json",
                   "--latency-ms", str(LATENCY_MS), "--concurrency", str(CONCURRENCY))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, "exactly one JSON object, on one line"
    data = json.loads(lines[0])
    assert set(data) == HARNESS_KEYS and data["mode"] == "harness"
    assert data["latency_ms"] == LATENCY_MS and data["concurrency"] == CONCURRENCY
    runs = data["runs"]
    assert data["jobs"] == len(runs) == len(IMPLEMENTATIONS) * bench.QUICK_HARNESS_PROMPTS
    assert data["answered"] == len(runs) and all(r["status"] == "answered" for r in runs)
    assert data["llm_calls"] == sum(r["llm_calls"] for r in runs)
    # 下界由每个 job 的 llm_calls × latency 算出：在这里从记录重算一遍
    bounds = [r["llm_calls"] * LATENCY_MS / 1000 for r in runs]
    assert [r["bound_seconds"] for r in runs] == pytest.approx(bounds)
    assert data["bound_seconds"] == pytest.approx(max(max(bounds), sum(bounds) / CONCURRENCY), abs=1e-4)
    assert data["ratio_to_bound"] > 0
    assert data["ratio_to_bound"] == pytest.approx(data["measured_seconds"] / data["bound_seconds"], rel=1e-3)
    assert data["sequential_seconds"] >= 0
    assert data["sequential_seconds"] == pytest.approx(sum(r["seconds"] for r in runs), abs=1e-3)


def test_the_lower_bound_formula():
    # 一个长 job 占满一个 worker：下界是它自己
    assert critical_path_bound([4.0, 1.0, 1.0], 4) == 4.0
    # 许多短 job：下界是总等待时间平摊到 C 个 worker
    assert critical_path_bound([1.0] * 8, 4) == 2.0
    assert critical_path_bound([], 4) == 0.0


def test_the_percentile_is_a_measured_value():
    assert percentile([0.3], 0.9) == 0.3
    assert percentile([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], 0.9) == 9
    assert percentile([1, 2, 3], 0.5) == 2


@pytest.mark.parametrize("argv", [
    ["--bogus"],
    ["--latency-ms", "0", "--harness"],
    ["--concurrency", "2"],                      # 只对 --harness 有意义
    ["--latency-ms", "50"],
    ["--harness", "--repeat", "2"],              # --repeat 只对成本表有意义
    ["--quick", "--repeat", "2"],
    ["--repeat", "zero"],
])
def test_bad_flags_are_one_line_and_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err


def test_bad_flags_from_the_command_line():
    done = run_cli("compare.bench", "--concurrency", "3")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "--harness" in done.stderr
