"""``python -m compare.bench``：形状与公式，不测快慢。

Benchmarks are not timed tests: nothing here asserts that anything is fast or slow (that
depends on the machine). What is checked, with the smallest settings (``--quick``, a 20 ms
latency, a few jobs):

- the cost of each layer, ``--quick --json`` in process: every figure of every table is
  present and positive (the fresh-process cold start is stubbed here and run for real for
  one implementation; the whole command with every implementation's cold start, in a fresh
  process, is marked ``sweep``: it costs tens of seconds of CPU);
- ``--harness --quick --json`` through the real command line, in process and once in a fresh
  process: the bounds recomputed from the records are the ones reported, and the CPU split
  by process adds up;
- the README carries both blocks, in the shape the command writes them, naming every
  implementation and every lesson file;
- the pieces on hand-made input: the bounds, the lines of code, the dependency closure;
- bad flags: exit 2, one line on stderr, nothing on stdout.
"""
from __future__ import annotations

import json
import re
from contextlib import redirect_stdout
from io import StringIO

import pytest

from compare import bench, layers
from compare.bench import critical_path_bound, schedule_bound
from compare.failure_modes import current_block
from compare.implementations import IMPLEMENTATIONS
from tests.support.agents import ROOT
from tests.support.cli import run_cli, run_command

LATENCY_MS = 20
CONCURRENCY = 4
LAYERS_KEYS = {"mode", "repeat", "prompts", "cold_samples", "cold_at_once", "calls", "floors", "cold_start", "footprint", "lines"}
CALL_KEYS = {"impl", "protocol", "runs", "answered", "llm_calls", "in_process_us", "http_us", "ratio_to_sdk",
             "prompt_tokens_per_run", "completion_tokens_per_run"}
FLOOR_KEYS = {"sdk_in_process_us", "sdk_http_us", "raw_http_us", "model_alone_us"}
HARNESS_KEYS = {"mode", "ratio_to_bound", "bound_seconds", "measured_seconds", "sequential_seconds",
                "schedule_bound_seconds", "ratio_to_schedule", "speedup", "latency_ms", "concurrency",
                "workers", "threads", "prompts", "jobs", "answered", "llm_calls", "runs",
                "cores", "cpu_seconds", "cpu_bound_seconds", "ratio_to_cpu_bound", "binding",
                "workers_cpu_seconds", "model_cpu_seconds", "parent_cpu_seconds", "ratio_floor_from_workers"}
FAKE_COLD = (0.5, 0.25, ["openai", "langchain_core"])


def check_layers(data: dict) -> None:
    """Every figure the cost-of-each-layer tables show is there and positive."""
    assert set(data) == LAYERS_KEYS and data["mode"] == "layers"
    assert [row["impl"] for row in data["calls"]] == list(IMPLEMENTATIONS)
    for row in data["calls"]:
        assert set(row) == CALL_KEYS
        assert row["runs"] == row["answered"] == 2 * data["prompts"] * data["repeat"], "in-process and HTTP"
        for key in ("llm_calls", "in_process_us", "http_us", "ratio_to_sdk", "prompt_tokens_per_run",
                    "completion_tokens_per_run"):
            assert row[key] > 0, (row["impl"], key)
    assert set(data["floors"]) == FLOOR_KEYS and all(v > 0 for v in data["floors"].values())
    assert [row["impl"] for row in data["cold_start"]] == list(IMPLEMENTATIONS)
    assert all(row["import_ms"] > 0 and row["first_answer_ms"] > 0 for row in data["cold_start"])
    assert [f["tier"] for f in data["footprint"]] == [tier for tier, _, _ in layers.TIERS]
    sizes = [f["bytes"] for f in data["footprint"]]
    assert sizes == sorted(sizes) and sizes[0] > 0, "each tier holds the one below it"
    assert [f["path"] for f in data["lines"]] == [str(p.relative_to(ROOT)) for p in bench.lesson_files()]
    assert all(0 < f["code"] <= f["total"] for f in data["lines"])


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> dict:
    """``--quick --json`` in process; the fresh-process cold start stubbed (tested on its own below)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(layers, "cold_start", lambda impl, base_url, prompt, samples: FAKE_COLD)
    patch.chdir(tmp_path_factory.mktemp("bench"))       # 离线模型本来就不读 .env；再保险一点
    try:
        out = StringIO()
        with redirect_stdout(out):
            status = bench.main(["--quick", "--json"])
    finally:
        patch.undo()
    return {"status": status, "stdout": out.getvalue()}


def test_the_cost_of_each_layer_has_every_figure(quick):
    assert quick["status"] == 0
    lines = quick["stdout"].splitlines()
    assert len(lines) == 1, "exactly one JSON object, on one line"
    data = json.loads(lines[0])
    assert data["repeat"] == bench.QUICK_REPEAT and data["prompts"] == bench.QUICK_PROMPTS
    check_layers(data)
    assert {row["tier"] for row in data["cold_start"]} == {layers.TIERS[1][0]}, "the stub's packages name the tier"
    # --quick 让几个实现同时冷启动（每核一个）：表格的标题要说出来，它的数字只作冒烟
    assert data["cold_samples"] == 1 and data["cold_at_once"] == min(bench.cores(), len(IMPLEMENTATIONS))
    result = bench.LayersResult(**{**{k: v for k, v in data.items() if k != "mode"}, "cold_at_once": 2,
                                   "calls": [bench.CallRow(**row) for row in data["calls"]],
                                   "cold_start": [bench.ColdRow(**row) for row in data["cold_start"]]})
    assert "2 个实现同时冷启动" in bench.render_layers(result, "python -m compare.bench --quick")
    assert "同时" not in bench.cold_title(bench.LayersResult(**{**vars(result), "cold_at_once": 1}))


def test_a_cold_start_is_timed_in_a_fresh_interpreter_and_names_its_tier():
    settings = bench.offline_settings()
    with bench.ModelProcess(settings) as base_url:
        imported, answered, loaded = layers.cold_start(IMPLEMENTATIONS["json_loop"], base_url, "你好！", samples=1)
    assert imported > 0 and answered > 0
    assert layers.tier_of(loaded) == "openai SDK", "the JSON loop runs without LangChain"
    assert layers.tier_of(["openai", "langchain_core", "langgraph"]) == "+ langgraph"
    assert layers.tier_of(["openai", "langchain_core", "langgraph", "langchain"]) == "+ langchain"


@pytest.mark.sweep
def test_the_whole_command_in_a_fresh_process(tmp_path):
    # 七个实现各冷启动一个新解释器（每个都要 import openai、多半还有 LangChain）：几十秒 CPU，所以放在 make sweep；
    # make test 里冷启动真跑一个实现（上面），整条命令在新进程里跑 --harness（下面）
    done = run_command("compare.bench", "--quick", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    check_layers(json.loads(done.stdout))


def test_the_harness_reports_the_bounds_its_records_give():
    done = run_cli("compare.bench", "--harness", "--quick", "--json",
                   "--latency-ms", str(LATENCY_MS), "--concurrency", str(CONCURRENCY))
    assert done.returncode == 0, done.stderr
    check_harness(done.stdout)


@pytest.mark.slow
def test_the_harness_command_in_a_fresh_process(tmp_path):
    # 新解释器里起 worker 和离线模型的进程（上面的测试是从 pytest 的进程 fork 出来的）
    done = run_command("compare.bench", "--harness", "--quick", "--json",
                       "--latency-ms", str(LATENCY_MS), "--concurrency", str(CONCURRENCY), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    check_harness(done.stdout)


def check_harness(stdout: str) -> None:
    """Every figure of the harness table, recomputed from the records where a formula gives it."""
    lines = stdout.splitlines()
    assert len(lines) == 1, "exactly one JSON object, on one line"
    data = json.loads(lines[0])
    assert set(data) == HARNESS_KEYS and data["mode"] == "harness"
    assert data["latency_ms"] == LATENCY_MS and data["concurrency"] == CONCURRENCY
    assert data["workers"] >= 1 and data["workers"] * data["threads"] >= CONCURRENCY
    runs = data["runs"]
    assert data["jobs"] == len(runs) == len(IMPLEMENTATIONS) * bench.QUICK_HARNESS_PROMPTS
    assert data["answered"] == len(runs) and all(r["status"] == "answered" for r in runs)
    assert data["llm_calls"] == sum(r["llm_calls"] for r in runs)
    # 下界一由每个 job 的 llm_calls × latency 算出，下界二由每个 job 实测的 seconds：在这里从记录重算
    bounds = [r["llm_calls"] * LATENCY_MS / 1000 for r in runs]
    assert [r["bound_seconds"] for r in runs] == pytest.approx(bounds)
    assert data["bound_seconds"] == pytest.approx(max(max(bounds), sum(bounds) / CONCURRENCY), abs=1e-4)
    seconds = [r["seconds"] for r in runs]
    assert data["schedule_bound_seconds"] == pytest.approx(max(max(seconds), sum(seconds) / CONCURRENCY), abs=1e-4)
    for ratio, bound in (("ratio_to_bound", "bound_seconds"), ("ratio_to_schedule", "schedule_bound_seconds")):
        assert data[ratio] > 0
        assert data[ratio] == pytest.approx(data["measured_seconds"] / data[bound], rel=1e-3)
    assert data["sequential_seconds"] == pytest.approx(sum(seconds), abs=1e-3)
    # 下界三：窗口里用掉的 CPU 摊到每个核；哪个下界更高，就是它卡住了 sweep
    assert data["cores"] >= 1 and data["cpu_seconds"] > 0
    assert data["cpu_bound_seconds"] == pytest.approx(data["cpu_seconds"] / data["cores"], abs=1e-3)
    assert data["ratio_to_cpu_bound"] == pytest.approx(data["measured_seconds"] / data["cpu_bound_seconds"], rel=1e-2)
    assert data["binding"] == ("cpu" if data["cpu_bound_seconds"] > data["bound_seconds"] else "latency")
    # 下界三拆成三份：worker（agent）、离线模型、本进程，各自都真的干了活，合起来就是下界三的 CPU
    parts = [data["workers_cpu_seconds"], data["model_cpu_seconds"], data["parent_cpu_seconds"]]
    assert parts[0] > 0 and parts[1] > 0 and parts[2] >= 0, parts     # 本进程只收几十条记录：可能不到一个时钟滴答
    assert sum(parts) == pytest.approx(data["cpu_seconds"], abs=1e-3)
    assert data["ratio_floor_from_workers"] == pytest.approx(
        data["workers_cpu_seconds"] / data["cores"] / data["bound_seconds"], rel=1e-2)


def test_the_readme_carries_both_blocks_as_the_command_writes_them():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = current_block(readme, markers=bench.LAYERS_MARKERS)
    assert block.startswith("`python -m compare.bench`，"), "the command that produced it, first"
    for header in (bench.CALLS_HEADER, bench.COLD_HEADER, bench.FOOTPRINT_HEADER,
                   bench.TOKENS_HEADER.format(floor=bench.FLOOR_IMPL), bench.LINES_HEADER):
        assert header in block
    number = r"[\d,.]+"
    for name in IMPLEMENTATIONS:
        assert re.search(rf"^\| {name} \| {number} \| {number} \| {number}× \| \d+ \| \d+/\d+ \|$", block, re.M), name
        assert re.search(rf"^\| {name} \| {number} \| {number} \| {number} \|$", block, re.M), name
    for floor in bench.FLOOR_ROWS:
        assert f"| {floor} |" in block
    for tier, _, _ in layers.TIERS:
        assert re.search(rf"^\| {re.escape(tier)} \| \d+ \| \d+ \| {number} \|", block, re.M), tier
    for path in bench.lesson_files():
        assert f"| `{path.relative_to(ROOT)}` |" in block
    for concurrency in bench.README_CONCURRENCY:
        harness = current_block(readme, markers=bench.harness_markers(concurrency))
        assert harness.startswith(f"`python -m compare.bench --harness --concurrency {concurrency}`，")
        assert f"{concurrency} 路并发" in harness
        assert re.search(rf"^\| 实测 / 下界一（ratio_to_bound） \| {number} \|$", harness, re.M)
        assert re.search(rf"^\| 实测 / 下界二（ratio_to_schedule） \| {number} \|$", harness, re.M)
        assert re.search(rf"^\| 实测 / 下界三（ratio_to_cpu_bound） \| {number} \|$", harness, re.M)
        assert re.search(r"^\| 卡住它的是 \| (模型延迟|CPU)（", harness, re.M)


def test_the_lower_bounds():
    # 一个长 job 占满一个 worker：下界是它自己
    assert critical_path_bound([4.0, 1.0, 1.0], 4) == 4.0
    # 许多短 job：下界是总等待时间平摊到 C 个 worker
    assert critical_path_bound([1.0] * 8, 4) == 2.0
    assert critical_path_bound([], 4) == 0.0
    assert schedule_bound([3.0, 1.0, 1.0, 1.0], 2) == 3.0 and schedule_bound([1.0] * 6, 2) == 3.0


def test_lines_of_code_leave_out_blanks_comments_and_docstrings(tmp_path, monkeypatch):
    monkeypatch.setattr(layers, "ROOT", tmp_path)
    path = tmp_path / "lesson.py"
    path.write_text('"""模块说明。\n\n第二行。"""\n\n# 注释\nx = 1  # 行尾注释\n\n\ndef f():\n    """说明。"""\n'
                    '    return (x +\n            1)\n', encoding="utf-8")
    assert layers.lines_of(path) == layers.Lines("lesson.py", total=12, code=4)


def test_the_dependency_closure_follows_requires():
    closure = layers.dependency_closure(["langchain-openai"])
    assert {"langchain-openai", "langchain-core", "openai", "httpx", "pydantic"} <= set(closure)
    assert "langgraph" not in closure


@pytest.mark.parametrize("argv", [
    ["--bogus"],
    ["--latency-ms", "0", "--harness"],
    ["--concurrency", "2"],                      # 只对 --harness 有意义
    ["--latency-ms", "50"],
    ["--harness", "--repeat", "2"],              # --repeat 只对成本表有意义
    ["--quick", "--repeat", "2"],
    ["--repeat", "zero"],
    ["--write", "no-such-file.md"],
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
