"""请求层对比与 cassette 的键：什么被规整掉，什么必须一字不差，第一个差异报在哪个字段。"""
from __future__ import annotations

import json

import pytest

from compare.cassette import Cassette, CassetteError, CassetteMiss, request_key
from compare.wire import compare_requests, first_difference, wire_view
from shared.harness.run_record import RunRecord

TOOLS = [{"type": "function", "function": {"name": "get_stock_price", "parameters": {"type": "object"}}}]


def request(call_id: str, *, result: str = "腾讯（0700.HK）当前股价：385.6 港元", stream: bool = False,
            content=None, temperature=0.0, arguments='{"symbol": "腾讯"}') -> dict:
    return {
        "model": "offline", "stream": stream, "n": 1, "temperature": temperature, "tools": TOOLS,
        "messages": [
            {"role": "system", "content": "你是一个能干的个人助手"},
            {"role": "user", "content": "腾讯股票多少钱？"},
            {"role": "assistant", "content": content,
             "tool_calls": [{"id": call_id, "type": "function",
                             "function": {"name": "get_stock_price", "arguments": arguments}}]},
            {"role": "tool", "content": result, "tool_call_id": call_id},
        ],
    }


def completion(text: str) -> dict:
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}


def test_wire_view_renames_ids_drops_volatile_fields_and_compares_numbers_by_value():
    a = wire_view(request("call_abc", stream=False, temperature=0.0))
    b = wire_view(request("call_XYZ", stream=True, temperature=0))
    assert a == b
    assert a["messages"][2]["tool_calls"][0]["id"] == "call_1" == a["messages"][3]["tool_call_id"]
    assert "stream" not in a and "n" not in a


def test_first_difference_is_a_json_path():
    a, b = wire_view(request("1")), wire_view(request("2", result="工具执行出错: boom"))
    path, left, right = first_difference(a, b)
    assert path == ".messages[3].content"
    assert right == "工具执行出错: boom"
    assert first_difference({"a": [1, 2]}, {"a": [1]})[0] == ".a[1]"
    assert first_difference({"a": 1}, {"a": 1, "b": 2})[0] == ".b"


def _record(impl: str, bodies: list[dict], run: int = 0) -> RunRecord:
    record = RunRecord(impl=impl, prompt="p", temperature=0.0, run=run)
    record.exchanges = [{"request": b, "response": completion("ok"), "status": 200} for b in bodies]
    return record


def test_compare_requests_reports_the_first_differing_field_within_a_protocol():
    records = [_record("prebuilt", [request("a")]), _record("pure_loop", [request("b")]),
               _record("variant", [request("c", result="Error: boom")]),
               _record("json_loop", [{"messages": [{"role": "system", "content": "JSON 协议"}]}])]
    protocols = {"prebuilt": "function_calling", "pure_loop": "function_calling",
                 "variant": "function_calling", "json_loop": "json"}
    function_calling, json_group = compare_requests(records, protocols)
    assert function_calling.impls == ["prebuilt", "pure_loop", "variant"]
    assert not function_calling.identical
    assert function_calling.difference.right == "variant"
    assert function_calling.difference.path == "turn[0].messages[3].content"
    assert json_group.impls == ["json_loop"] and json_group.identical
    assert any("JSON 协议" in note for note in function_calling.notes)      # 为什么分组比较，要说出来


def test_a_missing_request_is_a_difference_in_turn_count():
    records = [_record("a", [request("1"), request("1")]), _record("b", [request("2")])]
    (group,) = compare_requests(records, {"a": "function_calling", "b": "function_calling"})
    assert group.difference.path == "turn[1]"


def test_cassette_key_matches_the_same_conversation_from_different_frameworks():
    # 同一段对话：id 不同、content 是 None 还是 ""、arguments 的键序与空白不同、stream 与否
    a = request("call_1", content=None, arguments='{"symbol": "腾讯"}')
    b = request("run-42", content="", arguments='{ "symbol":"腾讯" }', stream=True)
    assert request_key(a) == request_key(b)
    assert request_key(a) != request_key(request("call_1", temperature=0.7))
    assert "model" not in request_key(a)          # 录自 DeepSeek 的 cassette 在任何 LLM_MODEL 下都能回放


def test_cassette_round_trip_and_a_miss_names_the_first_unmatched_message(tmp_path):
    cassette = Cassette()
    cassette.add_exchanges([{"request": request("a"), "response": completion("38,560 港元"), "status": 200},
                            {"request": request("b", result="x"), "response": {"error": "boom"}, "status": 500}])
    path = tmp_path / "c.json"
    cassette.save(path, secret="sk-secret")
    loaded = Cassette.load(path)
    assert loaded.brain(request("zzz"))["choices"][0]["message"]["content"] == "38,560 港元"
    with pytest.raises(CassetteMiss) as caught:
        loaded.brain(request("a", result="工具执行出错: 除数不能为零"))
    message = str(caught.value)
    assert "第 4 条消息" in message and "除数不能为零" in message and "\n" not in message
    with pytest.raises(CassetteMiss, match="temperature"):
        loaded.brain(request("a", temperature=0.7))


def test_saved_cassette_is_readable_json_without_the_key(tmp_path):
    cassette = Cassette()
    leaked = completion("the key is sk-secret-123")        # 即使 body 里意外出现了 key
    cassette.add(request("a"), leaked)
    path = tmp_path / "c.json"
    cassette.save(path, secret="sk-secret-123")
    text = path.read_text(encoding="utf-8")
    assert "sk-secret-123" not in text
    data = json.loads(text)
    assert data["interactions"][0]["request"]["messages"][1]["content"] == "腾讯股票多少钱？"


@pytest.mark.parametrize("content", ["not json", json.dumps({"interactions": []}), json.dumps([1])])
def test_a_bad_cassette_file_is_one_line(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        Cassette.load(path)
    assert "\n" not in str(caught.value)
