"""``python -m compare`` 端到端（离线模型，不联网）：文章的结论、故意做错的实现、猜参、回放、退出码。

- the default suite is ``equivalent`` across the three stages at temperature 0, and the
  frameworks send the model the same requests;
- deliberately different implementations (tests/variants/) are caught with the right
  verdict and the right first difference;
- the article's 300-guess is flagged at temperature > 0, the serial chain is not;
- a cassette recorded from one implementation replays to the identical trace through all;
  a request it has no answer for is an error naming the message;
- ``--json`` is exactly one JSON object on stdout; exit codes 0 / 1 / 2.
"""
from __future__ import annotations

import json

import pytest

from compare.__main__ import DEFAULT_CLOCK, main
from compare.suite import load_suite
from tests.support.agents import ARTICLE_QUESTION, ARTICLE_ROUNDS
from compare.implementations import IMPLEMENTATIONS, Protocol
from tests.support.cli import run_cli
from tests.support.compare import STAGES, run_compare

TWO_CITIES = "北京和上海的天气怎么样？"
DIVIDE_BY_ZERO = "帮我算一下 100 / 0"
JSON_LOOPS = [name for name, impl in IMPLEMENTATIONS.items() if impl.protocol is Protocol.JSON]


def test_the_default_suite_is_equivalent_across_the_stages_at_temperature_0(offline, capsys):
    code, data = run_compare(capsys, offline, "--impl", *STAGES)
    suite = load_suite()
    assert code == 0
    assert len(data["results"]) == len(suite) * len(STAGES)
    assert [p["prompt"] for p in data["prompts"]] == [p.prompt for p in suite]
    for prompt in data["prompts"]:
        assert prompt["verdict"] == "equivalent", prompt["details"]["first_difference"]
        assert prompt["temperature"] == 0
        if prompt["expectation"]:                            # 题库的期望：不只一致，还要对
            assert prompt["expectation"]["failures"] == [], prompt["id"]
        (wire,) = prompt["wire"]                             # 最强的"同一机制"：发给模型的请求一样
        assert wire["identical"] and wire["turns"] >= 1, wire["difference"]
    for name in ("report.json", "report.md", "report.html", "runs.jsonl"):
        assert (offline / name).is_file()
    # 用户没设 AGENT_CLOCK：compare 固定一个时刻，并在报告里说明
    times = {c["result"] for r in data["results"] for round_ in r["rounds"] for c in round_
             if c["name"] == "get_current_time"}
    assert times == {"2026-11-30 18:04:51"}
    assert DEFAULT_CLOCK in data["meta"]["clock"]


@pytest.mark.parametrize("json_loop", JSON_LOOPS)
def test_a_json_protocol_loop_joins_the_comparison(offline, capsys, json_loop):
    code, data = run_compare(capsys, offline, "--impl", "pure_loop", json_loop)
    different = {p["id"]: p["details"]["first_difference"] for p in data["prompts"] if p["verdict"] != "equivalent"}
    assert different == {}
    assert code == 0
    wire = data["prompts"][0]["wire"]
    assert [w["protocol"] for w in wire] == ["function_calling", "json"]   # 不同协议不互相比较请求


@pytest.mark.parametrize(("variant", "argv", "verdict", "first"), [
    ("reversed_calls", ["--prompt", TWO_CITIES, "--temperature", "0.7"], "strategy_differs",
     {"round": 1, "call": 1, "field": "args.city", "expected": "北京", "actual": "上海"}),
    ("english_errors", ["--prompt", DIVIDE_BY_ZERO], "diverged",
     {"round": 1, "call": 1, "field": "result", "expected": "工具执行出错: 除数不能为零"}),
    ("early_stop", ["--prompt", ARTICLE_QUESTION, "--max-steps", "4"], "diverged",
     # 第 3 次模型调用是它的最后一次：要的 calculate 不执行（步数上限的统一含义）
     {"round": 3, "call": 1, "field": "result", "expected": "38560.0", "actual": None}),
])
def test_a_deliberately_different_implementation_is_caught(offline, capsys, variants, variant, argv, verdict, first):
    code, data = run_compare(capsys, offline, "--impl", "pure_loop", variant, *argv)
    (prompt,) = data["prompts"]
    assert prompt["verdict"] == verdict
    found = prompt["details"]["first_difference"]
    assert found["impl"] == variant
    assert {key: found[key] for key in first} == first
    temperature_0 = "--temperature" not in argv
    assert code == (1 if temperature_0 else 0)          # 只有温度 0 的判定决定退出码


def test_a_different_tool_error_text_shows_in_the_requests_too(offline, capsys, variants):
    _, data = run_compare(capsys, offline, "--impl", "pure_loop", "english_errors", "--prompt", DIVIDE_BY_ZERO)
    (wire,) = data["prompts"][0]["wire"]
    assert not wire["identical"]
    assert wire["difference"]["path"] == "turn[1].messages[3].content"
    assert wire["difference"]["right"] == "english_errors"


def test_each_implementation_names_where_its_step_budget_stopped_it(offline, capsys):
    _, data = run_compare(capsys, offline, "--impl", *STAGES, "--prompt", ARTICLE_QUESTION, "--max-steps", "2")
    stops = {r["impl"]: r["stopped_at"] for r in data["results"]}
    assert {r["status"] for r in data["results"]} == {"max_steps"}
    assert all(stops.values()) and len(set(stops.values())) == len(STAGES)   # 三种停法，各自写明
    assert {s["impl"] for s in data["prompts"][0]["details"]["stopped_at"]} == set(STAGES)


def test_the_300_guess_is_flagged_above_temperature_0_and_the_serial_chain_is_not(offline, capsys):
    _, data = run_compare(capsys, offline, "--impl", "prebuilt", "pure_loop", "--prompt", ARTICLE_QUESTION,
                          "--temperature", "0", "0.7", "--runs", "3")
    flagged = [r for r in data["results"] if r["flags"]]
    assert flagged, "no seed chose the parallel strategy"
    assert all(r["temperature"] == 0.7 and len(r["rounds"]) == 1 for r in flagged)    # 只有并行那一轮会猜
    assert any(f["kind"] == "guessed_argument" and f["tool"] == "calculate" and "300" in f["detail"]
               for r in flagged for f in r["flags"])
    serial = [r for r in data["results"] if all(len(round_) == 1 for round_ in r["rounds"])]
    assert serial and not any(r["flags"] for r in serial)
    hot = next(p for p in data["prompts"] if p["temperature"] == 0.7)
    assert hot["details"]["flags"] and hot["drift"]["*"]["flagged_runs"] == len(flagged)
    # 同一 seed 下各实现的 trace 相同（seed 网格每行一个字母）：差异来自采样，不是机制
    assert all(len(set(row.values())) == 1 for row in hot["grid"].values())
    assert hot["verdict"] == "equivalent" and [g["verdict"] for g in hot["details"]["groups"]] == ["equivalent"]
    guessed = [t for t in hot["traces"] if "猜参 300" in t["name"]]
    assert guessed and all(t["passes"] is False for t in guessed)      # 猜参的那种 trace 不算通过


def test_protocols_are_judged_apart_and_the_baseline_is_the_expected_trace(offline, capsys):
    _, data = run_compare(capsys, offline, "--prompt", ARTICLE_QUESTION, "--temperature", "0.7", "--runs", "6")
    (hot,) = data["prompts"]
    assert [g["protocol"] for g in hot["details"]["groups"]] == ["function_calling", "json"]
    assert hot["verdict"] == "equivalent" and hot["details"]["why"]
    first = hot["traces"][0]
    assert first["passes"] and first["name"] == "串行链 3 轮"           # 对的 trace 在最左边
    stats = hot["drift"]["*"]
    passed = sum(t["passes"] is True and len(t["members"]) for t in hot["traces"])
    assert stats["passes"] == passed == hot["expectation"]["passed"] < stats["runs"]
    assert stats["pass_hat_k"][str(stats["runs"])] == 0.0          # 有没通过的运行：k = n 时不可能全过


def test_serial_keeps_every_round_to_one_call_above_temperature_0(offline, capsys, tmp_path):
    argv = ["--impl", *STAGES, "--prompt", ARTICLE_QUESTION, "--temperature", "0.7", "--runs", "3"]
    _, free = run_compare(capsys, tmp_path / "free", *argv)
    assert any(len(round_) > 1 for r in free["results"] for round_ in r["rounds"]), \
        "without --serial no run went parallel: raise --runs"
    code, data = run_compare(capsys, offline, *argv, "--serial")
    assert len(data["results"]) == 3 * len(STAGES)
    assert all(len(round_) == 1 for r in data["results"] for round_ in r["rounds"])
    assert all(r["rounds"] == ARTICLE_ROUNDS and not r["flags"] for r in data["results"])
    assert code == 0


def test_a_recorded_cassette_replays_identically_through_every_stage(offline, capsys, tmp_path):
    cassette = tmp_path / "cassette.json"
    prompts = ["--prompt", ARTICLE_QUESTION, "--prompt", DIVIDE_BY_ZERO, "--temperature", "0", "0.7"]
    _, recorded = run_compare(capsys, offline, "--impl", "pure_loop", *prompts, "--record", str(cassette))
    assert "interactions" in json.loads(cassette.read_text(encoding="utf-8"))
    code, replayed = run_compare(capsys, tmp_path / "replay", "--impl", *STAGES, *prompts, "--replay", str(cassette))
    assert code == 0
    assert all(p["verdict"] == "equivalent" for p in replayed["prompts"])
    original = {(r["prompt"], r["temperature"]): (r["rounds"], r["answer"]) for r in recorded["results"]}
    for record in replayed["results"]:
        assert (record["rounds"], record["answer"]) == original[(record["prompt"], record["temperature"])]


def test_a_request_the_cassette_cannot_answer_is_a_clear_error(offline, capsys, tmp_path):
    cassette = tmp_path / "cassette.json"
    run_compare(capsys, offline, "--impl", "pure_loop", "--prompt", "你好！", "--record", str(cassette))
    _, data = run_compare(capsys, tmp_path / "replay", "--impl", "pure_loop", "--prompt", "北京今天天气怎么样？",
                          "--replay", str(cassette))
    (record,) = data["results"]
    assert record["status"] == "error"
    assert "第 2 条消息" in record["error"] and "北京今天天气怎么样？" in record["error"]


def test_json_output_is_one_object_and_the_html_report_escapes_the_prompt(offline):
    evil = "<script>alert('x')</script>北京今天天气怎么样？"
    # 进程内跑命令行（run_cli，和 python -m 一样）；新进程里 stdout 也只有一个 JSON 对象由 tests/test_smoke.py 检查
    done = run_cli("compare", "--impl", "pure_loop", "--prompt", evil, "--json", "--out", str(offline))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)                     # stdout 里只有这一个 JSON 对象
    assert set(data) >= {"results", "prompts"}
    assert data["prompts"][0]["verdict"] == "equivalent"
    assert {"prompt", "temperature", "verdict", "details"} <= set(data["prompts"][0])
    page = (offline / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "&lt;script&gt;" in page
    assert "<script>" not in (offline / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", [
    ["--impl", "nonesuch"],
    ["--temperature", "hot"],
    ["--temperature", "3"],
    ["--suite", "missing.json"],
    ["--prompt", "x", "--suite", "compare/suite.json"],
    ["--record", "a.json", "--replay", "b.json"],
    ["--replay", "missing.json"],
])
def test_bad_usage_is_one_line_and_exit_2(offline, capsys, argv):
    assert main([*argv, "--out", str(offline)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("argv", [["--runs", "0"], ["--concurrency", "x"], ["--faults", "nonesuch"], ["--bogus"]])
def test_bad_numbers_flags_and_settings_exit_2(offline, capsys, argv):
    with pytest.raises(SystemExit) as caught:
        main([*argv, "--prompt", "你好！", "--out", str(offline)])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_suite_file_is_named_in_one_line(offline, capsys, tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"prompts": [{"prompt": "hi", "expect": {"match": "fuzzy", "rounds": []}}]}),
                     encoding="utf-8")
    assert main(["--suite", str(suite), "--out", str(offline)]) == 2
    assert "prompts[0].expect.match" in capsys.readouterr().err


def test_an_unwritable_out_dir_is_one_line_and_exit_2(offline, capsys):
    blocker = offline.parent / "not_a_dir"
    blocker.write_text("", encoding="utf-8")
    assert main(["--impl", "pure_loop", "--prompt", "你好！", "--out", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not_a_dir" in err
