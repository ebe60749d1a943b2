"""compare 的 sweep：并发、失败的运行不拖累别的、逐次落盘、中断后 --resume 每个运行恰好一次。

The unit tests here drive :func:`compare.sweep.run_sweep` with a fake run function (no
model, no endpoint); the end-to-end resume through ``python -m compare`` is at the bottom.
"""
from __future__ import annotations

import json
import multiprocessing
import threading

import pytest

import compare.__main__ as compare_main
import compare.sweep as sweep
from compare.__main__ import main
from shared.harness.runner import RunOptions
from compare.sweep import Job, ResultsFile, ResumeError, plan_jobs, record_key, run_sweep, seed_for
from shared.harness.implementation import About, Implementation
from shared.harness.run_record import RunRecord, Status

def _never_run(*args, **kwargs):
    raise AssertionError("the sweep tests replace run_once; run_agent is never called")


A, B = (Implementation(About(name=n, tier="test", command="-", step_limit="-"), _never_run) for n in "ab")
HEADER = {"model": "offline", "serial": False}


def fake_run(impl, prompt, endpoint, options) -> RunRecord:
    if prompt == "boom":
        raise RuntimeError("the runner itself broke")
    return RunRecord(impl=impl.name, prompt=prompt, temperature=options.temperature, run=options.run,
                     answer=f"seed={options.seed}")


def lines(path) -> list[dict]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def test_plan_puts_the_implementations_innermost_and_seeds_runs_above_zero():
    jobs = plan_jobs([A, B], ["p"], [0, 0.7], 2)
    assert [j.key for j in jobs[:4]] == [("a", "p", 0.0, 0), ("b", "p", 0.0, 0), ("a", "p", 0.0, 1), ("b", "p", 0.0, 1)]
    assert seed_for(0.0, 3) is None and seed_for(0.7, 3) == 3
    options = Job(A, "p", 0.7, 2).options(RunOptions(serial=True, max_steps=5, clock="2026-01-01T00:00:00"))
    assert (options.seed, options.serial, options.max_steps, options.temperature) == (2, True, 5, 0.7)
    assert options.clock == "2026-01-01T00:00:00"


def test_every_run_is_appended_and_a_crash_is_one_error_record(tmp_path):
    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    jobs = plan_jobs([A, B], ["p", "boom"], [0.7], 2)
    records = run_sweep(jobs, None, results=results, concurrency=3, run=fake_run)
    assert [record_key(r) for r in records] == [j.key for j in jobs]
    errors = [r for r in records if r.status == Status.ERROR]
    assert len(errors) == 4 and "the runner itself broke" in errors[0].error
    assert records[0].answer == "seed=0" and records[2].answer == "seed=1"
    rows = lines(results.path)
    assert rows[0] == {"sweep": HEADER} and len(rows) == 1 + len(jobs)


def test_concurrent_runs_are_in_flight_together(tmp_path):
    # 每个运行都要等"另一个也开始了"才肯结束：串行的 sweep 会在这里等到 barrier 超时
    barrier = threading.Barrier(2, timeout=5)

    def waits_for_the_other(impl, prompt, endpoint, options):
        barrier.wait()
        return fake_run(impl, prompt, endpoint, options)

    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    records = run_sweep(plan_jobs([A, B], ["p"], [0.0], 1), None, results=results, concurrency=2,
                        run=waits_for_the_other)
    assert [r.error for r in records] == [None, None]          # 串行时：BrokenBarrierError 的 error 记录
    assert [r.impl for r in records] == ["a", "b"]


def test_the_concurrency_flag_reaches_the_sweep(offline, monkeypatch, capsys):
    # 并发的 sweep 在 worker 进程里跑（compare/processes.py）：屏障要跨进程，用 multiprocessing 的
    barrier, asked = multiprocessing.get_context("fork").Barrier(2, timeout=5), []
    real_run_once, real_on_cores = sweep.run_once, compare_main.on_cores

    def waits_for_the_other(*args):
        barrier.wait()
        return real_run_once(*args)

    def spy(settings, concurrency, impls, **kwargs):
        asked.append(concurrency)
        return real_on_cores(settings, concurrency, impls, **kwargs)

    monkeypatch.setattr(sweep, "run_once", waits_for_the_other)
    monkeypatch.setattr(compare_main, "on_cores", spy)
    assert main(["--impl", "pure_loop", "json_loop", "--prompt", "你好！", "--concurrency", "3",
                 "--out", str(offline), "--json"]) == 0
    assert asked == [3]                                        # 不是默认的 4
    data = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in data["results"]] == ["answered", "answered"]     # 两个运行确实同时在跑


def test_an_interrupted_sweep_keeps_what_finished_and_resume_runs_the_rest_once(tmp_path):
    jobs = plan_jobs([A, B], ["p", "q"], [0.0], 3)          # 12 个运行
    calls, lock = [], threading.Lock()

    def interrupted_after_5(impl, prompt, endpoint, options):
        with lock:
            calls.append((impl.name, prompt, options.run))
            if len(calls) == 6:
                raise KeyboardInterrupt
        return fake_run(impl, prompt, endpoint, options)

    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(jobs, None, results=results, concurrency=2, run=interrupted_after_5)
    # 续跑是一个新进程、一个新的 ResultsFile：旧 sweep 被放弃的线程写不进它
    results = ResultsFile(tmp_path / "runs.jsonl")
    saved = results.start(HEADER, resume=True)
    # 第 6 个运行被中断。那一刻另一个线程可能正跑着前面的某一个（也可能刚取了第 7 个）：
    # sweep 停下之后才跑完的不记录（--resume 会重跑它）。所以前 5 个里至多缺一个，被中断的那个一定不在。
    saved_runs = {(r.impl, r.prompt, r.run) for r in saved}
    assert calls[5] not in saved_runs and saved_runs <= set(calls)
    assert len(set(calls[:5]) - saved_runs) <= 1
    assert len(saved) < len(jobs)
    todo = [j for j in jobs if j.key not in {record_key(r) for r in saved}]
    run_sweep(todo, None, results=results, concurrency=2, run=fake_run)
    keys = [(r["impl"], r["prompt"], r["temperature"], r["run"]) for r in lines(results.path)[1:]]
    assert sorted(keys) == sorted(j.key for j in jobs)           # 每个运行恰好一次


def test_resume_drops_a_half_written_line_and_refuses_other_settings(tmp_path):
    path = tmp_path / "runs.jsonl"
    good = json.dumps({**RunRecord(impl="a", prompt="p", temperature=0.0).to_dict(), "exchanges": [{"x": 1}]})
    path.write_text(json.dumps({"sweep": HEADER}) + "\n" + good + "\n" + good[:20], encoding="utf-8")
    (record,) = ResultsFile(path).start(HEADER, resume=True)
    assert record.exchanges == [{"x": 1}]                          # 续跑后仍能比请求、录 cassette
    assert len(lines(path)) == 2
    with pytest.raises(ResumeError, match="serial"):
        ResultsFile(path).start({**HEADER, "serial": True}, resume=True)
    path.write_text("not a results file\n", encoding="utf-8")
    with pytest.raises(ResumeError):
        ResultsFile(path).start(HEADER, resume=True)


def test_compare_resume_after_interruption_ends_with_every_run_exactly_once(offline, monkeypatch, capsys):
    real_run_once = sweep.run_once
    started = []

    def stop_at_the_fourth(impl, prompt, endpoint, options):
        started.append(impl.name)
        if len(started) == 4:
            raise KeyboardInterrupt
        return real_run_once(impl, prompt, endpoint, options)

    argv = ["--impl", "pure_loop", "stategraph", "--prompt", "北京今天天气怎么样？", "--prompt", "你好！",
            "--temperature", "0", "0.7", "--concurrency", "1", "--out", str(offline), "--json"]
    monkeypatch.setattr(sweep, "run_once", stop_at_the_fourth)
    assert main(argv) == 130
    assert "--resume" in capsys.readouterr().err
    saved = len(lines(offline / "runs.jsonl")) - 1
    assert 3 <= saved < 8              # 中断前完成的 3 个都在（中断时已在途的那个也会跑完、落盘）

    resumed = []
    monkeypatch.setattr(sweep, "run_once", lambda *a: resumed.append(a[0].name) or real_run_once(*a))
    assert main([*argv, "--resume"]) == 0
    assert len(resumed) == 8 - saved                                # 已完成的不重跑
    data = json.loads(capsys.readouterr().out)
    keys = [(r["impl"], r["prompt"], r["temperature"], r["run"]) for r in data["results"]]
    assert len(keys) == len(set(keys)) == 8
    assert len(lines(offline / "runs.jsonl")) == 1 + 8
