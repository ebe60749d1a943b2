"""The sweep on every core (compare/processes.py): runs in worker processes, longest first, nothing lost.

Fake runs (no model) replace :func:`shared.harness.runner.run_once` before the workers fork,
so the workers run them; the end-to-end check runs ``python -m compare`` both ways (worker
processes, and one thread) and compares what users read: the verdicts and the runs.
"""
from __future__ import annotations

import json
import os
import signal
import time

import pytest

import compare.sweep as sweep
from compare.__main__ import main
from compare.processes import ModelProcess, ProcessSweep, Shape, longest_first
from compare.suite import load_suite
from compare.sweep import ResultsFile, plan_jobs, record_key
from shared.harness.config import load_settings
from shared.harness.implementation import About, Implementation
from shared.harness.run_record import RunRecord, Status
from tests.support.cli import run_cli
from tests.support.forked import DEVNULL, start_forked

HEADER = {"model": "offline"}
SETTINGS = load_settings(env={}, dotenv=None)


def _never_run(*args, **kwargs):
    raise AssertionError("these tests replace run_once; run_agent is never called")


A, B = (Implementation(About(name=n, tier="test", command="-", step_limit="-"), _never_run) for n in "ab")


def fake_run(impl, prompt, endpoint, options) -> RunRecord:
    if prompt == "boom":
        raise RuntimeError("the runner itself broke")
    time.sleep(0.05)                     # 让几个运行在不同的 worker 里重叠
    return RunRecord(impl=impl.name, prompt=prompt, temperature=options.temperature, run=options.run,
                     answer=f"pid={os.getpid()}")


@pytest.fixture
def fake_runs(monkeypatch):
    monkeypatch.setattr(sweep, "run_once", fake_run)


def sweep_on(shape: Shape, jobs, results: ResultsFile, **kwargs) -> list[RunRecord]:
    with ProcessSweep("http://127.0.0.1:9/v1", SETTINGS, shape, [A, B]) as pool:    # 假运行不连端点
        return pool.run(jobs, results=results, **kwargs)


def test_the_shape_spreads_the_concurrency_over_the_cores():
    assert Shape.for_concurrency(16, available=2) == Shape(2, 8)
    assert Shape.for_concurrency(3, available=2) == Shape(2, 2)
    assert Shape.for_concurrency(1, available=2) == Shape(1, 1)
    assert Shape.for_concurrency(4, available=8) == Shape(4, 1)


def test_longest_first_is_stable():
    jobs = plan_jobs([A, B], ["short", "long", "middle"], [0.0], 1)
    cost = {"short": 1, "long": 3, "middle": 2}
    ordered = longest_first(jobs, lambda job: cost[job.prompt])
    assert [(j.prompt, j.impl.name) for j in ordered] == [
        ("long", "a"), ("long", "b"), ("middle", "a"), ("middle", "b"), ("short", "a"), ("short", "b")]


def test_every_run_comes_back_once_in_plan_order_and_a_crash_is_an_error_record(fake_runs, tmp_path):
    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    jobs = plan_jobs([A, B], ["p", "q", "boom", "r"], [0.0, 0.7], 2)
    seen = []
    records = sweep_on(Shape(2, 3), jobs, results, on_done=seen.append)
    assert [record_key(r) for r in records] == [j.key for j in jobs]
    assert len(seen) == len(jobs), "on_done is called in the parent for every run"
    errors = [r for r in records if r.status == Status.ERROR]
    assert len(errors) == 8 and all("the runner itself broke" in r.error for r in errors)
    pids = {r.answer for r in records if r.answer}
    assert len(pids) == 2 and f"pid={os.getpid()}" not in pids, "the runs happen in the two workers"
    rows = [json.loads(line) for line in results.path.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {"sweep": HEADER} and sorted(tuple(r[k] for k in ("impl", "prompt", "temperature", "run"))
                                                   for r in rows[1:]) == sorted(j.key for j in jobs)


def test_the_longest_expected_jobs_start_first(fake_runs, tmp_path):
    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    jobs = plan_jobs([A], ["one", "three", "two"], [0.0], 1)
    calls = {"one": 1, "two": 2, "three": 3}
    sweep_on(Shape(1, 1), jobs, results, expected=lambda job: calls[job.prompt])     # 一个槽：完成顺序就是开始顺序
    rows = [json.loads(line) for line in results.path.read_text(encoding="utf-8").splitlines()[1:]]
    assert [r["prompt"] for r in rows] == ["three", "two", "one"]


def test_an_interrupt_stops_handing_out_jobs_and_keeps_the_runs_in_flight(fake_runs, tmp_path):
    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    jobs = plan_jobs([A, B], [f"p{i}" for i in range(10)], [0.0], 1)

    def interrupt(record):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep_on(Shape(1, 2), jobs, results, on_done=interrupt)
    written = results.path.read_text(encoding="utf-8").splitlines()[1:]
    assert 1 <= len(written) <= 2, "the run that finished and the one in flight, nothing handed out after"


def test_the_offline_model_serves_from_its_own_process():
    import httpx

    with ModelProcess(SETTINGS) as base_url:
        reply = httpx.get(f"{base_url}/models", timeout=10)
    assert reply.status_code == 200 and reply.json()["data"][0]["id"] == "offline"


@pytest.mark.parametrize("temperature", ["0", "0.7"])
def test_compare_on_every_core_reads_the_same_as_in_one_thread(tmp_path, capsys, temperature):
    argv = ["--impl", "prebuilt", "pure_loop", "json_loop", "--prompt", "北京和上海的天气怎么样？",
            "--prompt", "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？", "--runs", "2",
            "--temperature", temperature, "--json"]
    reports = []
    for concurrency in ("4", "1"):
        main([*argv, "--concurrency", concurrency, "--out", str(tmp_path / concurrency)])
        data = json.loads(capsys.readouterr().out)
        reports.append(([(p["prompt"], p["temperature"], p["verdict"]) for p in data["prompts"]],
                        [(r["impl"], r["prompt"], r["run"], r["status"], r["rounds"], r["answer"])
                         for r in data["results"]]))
    assert reports[0] == reports[1]


@pytest.mark.slow
def test_ctrl_c_on_every_core_keeps_what_finished_and_resume_runs_the_rest_once(tmp_path):
    """A real SIGINT to the whole process group (what a terminal's Ctrl-C sends): exit 130, no process left."""
    out = tmp_path / "out"
    # 3 个实现 × 题库（45 个运行，两个 worker 进程各两个槽，每次模型调用慢 50 ms）：跑完 4 个就中断时
    # 还有运行在途、四十来个没开始，续跑要把它们各跑一次；多跑几遍（--runs）只会让续跑更久，查的还是这些
    args = ["--impl", "pure_loop", "json_loop", "fc_loop", "--temperature", "0.7", "--concurrency", "4",
            "--out", str(out)]
    env = {"OFFLINE_LLM_LATENCY_MS": "50"}
    path = out / "runs.jsonl"
    process = start_forked("-m", "compare", *args, env=env, cwd=tmp_path, stdout=DEVNULL, new_session=True)
    deadline = time.monotonic() + 120
    while not (path.is_file() and len(path.read_text(encoding="utf-8").splitlines()) > 3):
        assert time.monotonic() < deadline and process.poll() is None, "the sweep never got going"
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130 and "--resume" in err
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)                     # 进程组里一个不剩：worker 和离线模型都走了
    kept = len(path.read_text(encoding="utf-8").splitlines()) - 1
    # 续跑读的是中断留下的文件，在 worker 进程里跑剩下的（python -m compare 在本进程里跑）
    done = run_cli("compare", *args, "--resume", env=env, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    keys = [(r["impl"], r["prompt"], r["temperature"], r["run"]) for r in rows]
    assert len(keys) == len(set(keys)) > kept
    assert len(keys) == 3 * len(load_suite())
