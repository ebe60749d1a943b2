"""The run record: the guessed_argument finding, round trips, and the trace printer's format."""
import io

from tests.support.agents import ARTICLE_QUESTION, ARTICLE_ROUNDS
from shared.harness.run_record import RunRecord, Status, guessed_argument_flags
from shared.harness.trace import print_trace

(TIME,), (PRICE,), _ = ARTICLE_ROUNDS


def calc(expression, result):
    return {"name": "calculate", "args": {"expression": expression}, "result": result}


def test_the_serial_chain_guesses_nothing():
    assert guessed_argument_flags(ARTICLE_QUESTION, ARTICLE_ROUNDS) == []


def test_the_parallel_300_is_flagged():
    # 文章第 5 节：三个调用一轮发出，calculate 等不到 385.6，只能猜 300
    rounds = [[TIME, PRICE, calc("300 * 100", "30000")]]
    flags = guessed_argument_flags(ARTICLE_QUESTION, rounds)
    assert flags == [{"kind": "guessed_argument", "round": 1, "tool": "calculate",
                      "detail": "300 既不在问题里，也不在此前返回的工具结果里"}]


def test_a_result_of_the_same_round_does_not_count_as_known():
    rounds = [[PRICE, calc("385.6 * 100", "38560.0")]]
    assert [f["detail"][:5] for f in guessed_argument_flags(ARTICLE_QUESTION, rounds)] == ["385.6"]


def test_record_round_trips_and_hides_exchanges():
    record = RunRecord(impl="pure_loop", prompt=ARTICLE_QUESTION, temperature=0.0, rounds=[[TIME]],
                       answer="ok", exchanges=[{"request": {}, "response": {}}])
    data = record.to_dict()
    assert "exchanges" not in data
    assert set(data) >= {"impl", "prompt", "temperature", "run", "status", "rounds", "answer", "error",
                         "flags", "usage", "llm_calls", "seconds"}
    assert RunRecord.from_dict(data).rounds == record.rounds


def test_trace_uses_the_articles_numbering():
    record = RunRecord(impl="x", prompt=ARTICLE_QUESTION, temperature=0.7,
                       rounds=[[TIME, PRICE, calc("300 * 100", "30000")]], answer="38,560 港元")
    out = io.StringIO()
    print_trace(record, file=out)
    lines = out.getvalue().splitlines()
    # 文章第 5 节：同一轮的三个调用都标 [3]，第三个结果是 [6]，终答是 [7]
    assert "[2] 👤 用户: " + ARTICLE_QUESTION in lines
    assert lines.count("[3] 🤖 AI 调用工具: calculate({'expression': '300 * 100'})") == 1
    assert "[6] 🔧 工具返回: 30000" in lines and "[7] 🤖 AI 回答: 38,560 港元" in lines


def test_trace_says_why_a_run_did_not_answer():
    record = RunRecord(impl="x", prompt="q", temperature=0, status=Status.MAX_STEPS, answer=None,
                       stopped_at="for step in range(max_steps) 循环结束（max_steps=3）")
    out = io.StringIO()
    print_trace(record, file=out)
    assert "⚠️ 达到最大步数，强制结束：for step in range(max_steps)" in out.getvalue()
