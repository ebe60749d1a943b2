"""compare loses nothing and counts nothing twice: kills, Ctrl-C, resumes, retries, closed pipes.

The unit tests drive :class:`compare.sweep.ResultsFile` and :func:`compare.sweep.run_sweep`
with fake runs; the slow ones run ``python -m compare`` in a process of its own (forked from
the test: ``tests/support/forked.py``) and interrupt it with real signals (SIGINT, SIGKILL)
and a reader that goes away.
"""
from __future__ import annotations

import json
import random
import signal
import threading
import time
from pathlib import Path

import pytest

import compare.atomic_file as atomic_file
import compare.sweep as sweep
from compare.__main__ import main
from compare.sweep import ResultsFile, plan_jobs, run_sweep
from shared.harness.implementation import About, Implementation
from shared.harness.process import BROKEN_PIPE_STATUS, TERMINATED, TERMINATED_STATUS
from shared.harness.run_record import RunRecord, Status
from tests.support.cli import run_cli
from tests.support.forked import DEVNULL, PIPE, Forked, start_forked

A, B = (Implementation(About(name=n, tier="test", command="-", step_limit="-"), lambda *a: None) for n in "ab")
HEADER = {"model": "offline", "serial": False}
INTERRUPTED = 130


def fake_run(impl, prompt, endpoint, options) -> RunRecord:
    failed = prompt == "fails"
    return RunRecord(impl=impl.name, prompt=prompt, temperature=options.temperature, run=options.run,
                     status=Status.ERROR if failed else Status.ANSWERED,
                     answer=None if failed else "ok", error="HTTP 500" if failed else None)


def keys_in(path: Path) -> list[tuple]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert "sweep" in rows[0]
    return [(r["impl"], r["prompt"], r["temperature"], r["run"]) for r in rows[1:]]


def test_resume_appends_to_the_file_as_it_is(tmp_path):
    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    jobs = plan_jobs([A, B], ["p"], [0.7], 3)
    run_sweep(jobs[:3], None, results=results, run=fake_run)
    before = results.path.read_bytes()
    inode = results.path.stat().st_ino
    saved = ResultsFile(results.path).start(HEADER, resume=True)
    assert len(saved) == 3 and results.path.read_bytes() == before and results.path.stat().st_ino == inode
    resumed = ResultsFile(results.path)
    resumed.start(HEADER, resume=True)
    run_sweep(jobs[3:], None, results=resumed, run=fake_run)
    assert results.path.read_bytes().startswith(before)            # 只追加
    assert sorted(keys_in(results.path)) == sorted(j.key for j in jobs)


def test_a_kill_during_the_rewrite_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "runs.jsonl"
    results = ResultsFile(path)
    results.start(HEADER, resume=False)
    run_sweep(plan_jobs([A, B], ["p"], [0.7], 2), None, results=results, run=fake_run)
    with path.open("a", encoding="utf-8") as out:
        out.write('{"impl": "a", "prom')                    # 被打断时写了一半的最后一行：要重写
    before = path.read_bytes()

    def killed(*args):
        raise KeyboardInterrupt                              # 新文件写好了，替换之前被打断

    monkeypatch.setattr(atomic_file.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        ResultsFile(path).start(HEADER, resume=True)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["runs.jsonl"]    # 没有留下半截的临时文件
    monkeypatch.undo()
    assert len(ResultsFile(path).start(HEADER, resume=True)) == 4
    assert path.read_text(encoding="utf-8").endswith("}\n") and len(keys_in(path)) == 4


def test_an_interrupt_abandons_the_runs_in_flight_and_counts_what_was_saved(tmp_path):
    release, interrupted = threading.Event(), threading.Event()

    def slow_or_interrupting(impl, prompt, endpoint, options):
        if impl.name == "b":
            interrupted.wait(5)
            raise KeyboardInterrupt
        if options.run == 0:
            return fake_run(impl, prompt, endpoint, options)
        for _ in range(500):                                 # 先等第一个运行落盘
            if results.saved:
                break
            time.sleep(0.01)
        interrupted.set()
        release.wait(5)                                      # 中断之后才跑完：不该落盘
        return fake_run(impl, prompt, endpoint, options)

    results = ResultsFile(tmp_path / "runs.jsonl")
    results.start(HEADER, resume=False)
    jobs = [j for j in plan_jobs([A], ["p"], [0.7], 2)] + plan_jobs([B], ["p"], [0.7], 1)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(jobs, None, results=results, concurrency=3, run=slow_or_interrupting)
    release.set()
    time.sleep(0.2)                                          # 给被放弃的运行机会（错误地）写文件
    assert keys_in(results.path) == [("a", "p", 0.7, 0)] and results.saved == 1


def test_retry_errors_reruns_exactly_the_runs_that_ended_in_error(offline, monkeypatch, capsys):
    calls = []

    def fails_first_time(impl, prompt, endpoint, options):
        calls.append((impl.name, options.run))
        record = fake_run(impl, prompt, endpoint, options)
        if options.run == 1 and len(calls) <= 4:
            record.status, record.answer, record.error = Status.ERROR, None, "HTTP 500"
        return record

    monkeypatch.setattr(sweep, "run_once", fails_first_time)
    argv = ["--impl", "pure_loop", "json_loop", "--prompt", "你好！", "--temperature", "0.7", "--runs", "2",
            "--concurrency", "1", "--out", str(offline), "--json"]
    main(argv)
    assert main([*argv, "--resume"]) in (0, 1) and len(calls) == 4            # 没有 --retry-errors：什么也不重跑
    assert main([*argv, "--resume", "--retry-errors"]) in (0, 1)
    assert sorted(calls[4:]) == [("json_loop", 1), ("pure_loop", 1)]
    rows = [json.loads(line) for line in (offline / "runs.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    assert sorted((r["impl"], r["run"]) for r in rows) == sorted(
        (i, r) for i in ("pure_loop", "json_loop") for r in (0, 1))            # 每个运行恰好一次
    assert all(r["status"] == "answered" for r in rows)
    capsys.readouterr()
    assert main(argv[:-1] + ["--retry-errors"]) == 2
    assert "--retry-errors" in capsys.readouterr().err


HOSTILE_PROMPT = "北京天气\x1b[2J\x1b]0;pwned\x07<script>alert(1)</script>\u202egpj.exe\x00"
HOSTILE_ANSWER = "答：\x1b[31m红\x1b[0m\u202eolleh\x00\x9b"
RAW = ("\x1b", "\x00", "\u202e", "\x07", "\x9b")


def hostile_brain(request: dict) -> dict:
    from shared.offline_llm.completion import build_completion
    from shared.offline_llm.conversation import read_conversation
    from tests.support.scripted import answer

    return build_completion(request, read_conversation(request), answer(HOSTILE_ANSWER))


def hostile_error(request: dict) -> dict:
    from shared.offline_llm import ApiError

    raise ApiError(400, "坏请求\x1b[2J\u202e" + HOSTILE_ANSWER, error_type="invalid_request_error")


@pytest.mark.parametrize("as_json", [False, True])
def test_hostile_text_reaches_the_terminal_and_markdown_only_as_escapes(tmp_path, as_json):
    from shared.offline_llm import OfflineServer

    # 终端上那几行只在出错时引用端点的原话：文字模式用一个回错误的端点，JSON 模式用一个回答的
    with OfflineServer(brain=hostile_brain if as_json else hostile_error) as server:
        env = {"LLM_BASE_URL": server.base_url, "LLM_API_KEY": "sk-test", "LLM_MODEL": "offline"}
        done = run_cli("compare", "--impl", "pure_loop", "json_loop", "--prompt", HOSTILE_PROMPT,
                       "--out", "d", *(["--json"] if as_json else []), env=env, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    markdown = (tmp_path / "d/report.md").read_text(encoding="utf-8")
    for text in (done.stdout, done.stderr, markdown):
        assert not any(c in text for c in RAW), [c for c in RAW if c in text]
    assert "\\x1b[2J" in markdown and "\\u202e" in markdown
    if as_json:
        data = json.loads(done.stdout)                       # 仍是合法 JSON，值不变
        assert {r["prompt"] for r in data["results"]} == {HOSTILE_PROMPT}
        assert {r["answer"] for r in data["results"]} == {HOSTILE_ANSWER}
    else:
        assert "\\x1b[2J" in done.stdout                     # 「全部以 error 结束（例如：…）」：转义后可见
    html = (tmp_path / "d/report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# ---- 真实的进程与信号 ----

QUESTIONS = ("北京今天天气怎么样？", "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？")
SWEEP = ("--impl", "pure_loop", "json_loop", "fc_loop", *(a for q in QUESTIONS for a in ("--prompt", q)),
         "--temperature", "0.7", "--runs", "8", "--concurrency", "2", "--json")
PLANNED = 3 * len(QUESTIONS) * 8


def start_compare(out: Path, *extra: str, env: dict | None = None, stdout=DEVNULL) -> Forked:
    return start_forked("-m", "compare", *SWEEP, "--out", str(out), *extra, cwd=out.parent, env=env, stdout=stdout)


def wait_for_runs(path: Path, process: Forked, *, at_least: int, seconds: float = 90) -> None:
    """Until ``path`` holds ``at_least`` runs (or the process ended); bounded."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if path.is_file() and path.read_bytes().count(b"\n") - 1 >= at_least:
            return
        time.sleep(0.05)


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_run_and_counts_none_twice(tmp_path):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    out, env = tmp_path / "out", {"OFFLINE_LLM_LATENCY_MS": "30"}
    results = out / "runs.jsonl"
    # 五次 SIGKILL：一次在新开的扫描里，其余在续跑里（续跑也会被杀、再续跑），每次的时刻都随机，
    # 失败时 seed 能重现那几个
    for attempt in range(5):
        saved = results.read_bytes().count(b"\n") - 1 if results.is_file() else 0
        process = start_compare(out, *(["--resume"] if attempt else []), env=env)
        # 有时一启动就杀（续跑时：读、重写结果文件的那一刻附近），有时跑了几次之后
        wait_for_runs(results, process, at_least=saved + rng.randrange(0, 12))
        time.sleep(rng.uniform(0, 0.3))
        process.kill()
        process.communicate(timeout=30)
    # 最后的续跑不会被杀：它读的是被杀留下的文件，续跑的逻辑在进程内外都一样（python -m compare 在本进程里跑）
    finished = run_cli("compare", *SWEEP, "--out", str(out), "--resume", env=env, cwd=out.parent)
    assert finished.returncode in (0, 1), f"seed={seed}: {finished.stderr}"
    keys = keys_in(results)
    assert len(keys) == len(set(keys)) == PLANNED, f"seed={seed}"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert len(report["results"]) == PLANNED
    assert (out / "report.html").read_text(encoding="utf-8").endswith("</html>\n")
    assert (out / "report.md").read_text(encoding="utf-8").startswith("# compare")


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_stops_at_once_and_counts_what_the_file_holds(tmp_path, presses):
    out = tmp_path / "out"
    # 每次模型调用的第一次尝试都不回话：中断时一定有运行在途，要等 LLM_TIMEOUT 才会结束
    process = start_compare(out, "--faults", "timeout", env={"LLM_TIMEOUT": "30"})
    wait_for_runs(out / "runs.jsonl", process, at_least=0)
    time.sleep(1)
    for _ in range(presses):
        process.send_signal(signal.SIGINT)
        time.sleep(0.05)
    _, err = process.communicate(timeout=20)               # 远短于在途运行要等的 30 秒
    assert process.returncode == INTERRUPTED and "Traceback" not in err, err
    saved = len(keys_in(out / "runs.jsonl"))
    assert f"保存了 {saved} 次运行" in err


@pytest.mark.slow
def test_json_into_a_pipe_closed_early_ends_quietly_with_141(tmp_path):
    out = tmp_path / "out"
    # 每个组合跑一次就够（后给的 --runs 覆盖 SWEEP 里的）：JSON 只在跑完之后写一次，写进没人读的管道，多大都一样
    process = start_compare(out, "--runs", "1", stdout=PIPE)
    process.stdout.close()            # 读的一方已经走了（像 "| head -c 100" 读够了）：JSON 写到已关闭的管道
    err = process.stderr.read()
    process.wait(timeout=120)
    # 安静地以 141 结束，而不是怪罪 --out 目录
    assert process.returncode == BROKEN_PIPE_STATUS, err
    assert err == "" and (out / "report.json").is_file()


@pytest.mark.slow
def test_sigterm_stops_the_standalone_offline_server_with_one_line_and_143():
    process = start_forked("-m", "shared.offline_llm", "--port", "0")
    assert "http://127.0.0.1:" in process.stdout.readline()          # 起来了：信号处理已经装好
    process.terminate()
    _, err = process.communicate(timeout=30)
    assert process.returncode == TERMINATED_STATUS and err.strip() == TERMINATED


@pytest.mark.slow
def test_the_failure_modes_table_into_a_closed_pipe_ends_quietly_with_141():
    process = start_forked("-m", "compare.failure_modes")
    process.stdout.close()
    err = process.stderr.read()
    process.wait(timeout=120)
    assert process.returncode == BROKEN_PIPE_STATUS and err == ""
