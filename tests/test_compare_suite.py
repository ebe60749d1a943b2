"""compare 的题库：默认题库覆盖各种题型，坏题库给出一行、指明位置的错误。"""
from __future__ import annotations

import json
import re

import pytest

from compare.suite import DEFAULT_SUITE, SuiteError, load_suite, parse_suite
from tests.support.agents import ARTICLE_QUESTION


def test_default_suite_has_the_required_kinds_of_prompt():
    prompts = load_suite(DEFAULT_SUITE)
    texts = [p.prompt for p in prompts]
    assert len(prompts) >= 12
    assert ARTICLE_QUESTION in texts
    assert any(re.search(r"[\u4e00-\u9fff]", t) for t in texts)
    english = [t for t in texts if re.fullmatch(r"[\x00-\x7f]+", t)]
    assert len(english) >= 3
    assert "北京和上海的天气怎么样？" in texts                       # 两个独立调用
    assert any("/ 0" in t for t in texts)                           # 工具出错
    by_id = {p.id: p for p in prompts}
    assert by_id["no_tool"].expect.expected_rounds == []            # 不调工具
    assert [c["name"] for r in by_id["article"].expect.expected_rounds for c in r] == [
        "get_current_time", "get_stock_price", "calculate"]
    assert by_id["two_independent"].expect.calls and by_id["two_independent"].expect.match == "unordered"


def _suite(prompt_item) -> dict:
    return {"prompts": [prompt_item]}


@pytest.mark.parametrize(("data", "where"), [
    ({"prompt": []}, "prompts"),                                        # 缺了 prompts
    ([1, 2], "$"),
    ({"prompts": []}, "prompts"),
    (_suite("hello"), "prompts[0]"),
    (_suite({"prompt": "  "}), "prompts[0].prompt"),
    (_suite({"prompt": "hi", "expected": []}), "prompts[0].expected"),   # 拼错的字段
    (_suite({"prompt": "hi", "expect": {"match": "fuzzy", "rounds": []}}), "prompts[0].expect.match"),
    (_suite({"prompt": "hi", "expect": {"args": "loose", "rounds": []}}), "prompts[0].expect.args"),
    (_suite({"prompt": "hi", "expect": {"match": "strict", "calls": []}}), "prompts[0].expect"),
    (_suite({"prompt": "hi", "expect": {"rounds": [], "calls": []}}), "prompts[0].expect"),
    (_suite({"prompt": "hi", "expect": {"rounds": [[{"args": {}}]]}}), "prompts[0].expect.rounds[0][0].name"),
    (_suite({"prompt": "hi", "expect": {"rounds": [[{"name": "calculate", "args": "1+1"}]]}}),
     "prompts[0].expect.rounds[0][0].args"),
    (_suite({"prompt": "hi", "answer_contains": "x"}), "prompts[0].answer_contains"),
    ({"prompts": [{"prompt": "hi"}, {"prompt": "hi"}]}, "prompts[1]"),
])
def test_a_bad_suite_is_one_line_naming_the_place(data, where):
    with pytest.raises(SuiteError) as caught:
        parse_suite(data, path="my.json")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"题库 my.json: {where}: ")


def test_unreadable_and_malformed_files_are_one_line(tmp_path):
    with pytest.raises(SuiteError, match="无法读取题库"):
        load_suite(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{\"prompts\": [", encoding="utf-8")
    with pytest.raises(SuiteError, match="不是合法 JSON") as caught:
        load_suite(broken)
    assert "\n" not in str(caught.value)


def test_flat_calls_and_rounds_both_load(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"prompts": [
        {"prompt": "a", "expect": {"match": "superset", "calls": [{"name": "get_weather", "args": {"city": "北京"}}]}},
        {"prompt": "b", "expect": {"rounds": [[{"name": "get_current_time"}]]}},
    ]}, ensure_ascii=False), encoding="utf-8")
    first, second = load_suite(path)
    assert first.expect.model_dump(exclude_none=True) == {
        "match": "superset", "args": "by_value", "calls": [{"name": "get_weather", "args": {"city": "北京"}}]}
    assert first.expect.expected_rounds == [[{"name": "get_weather", "args": {"city": "北京"}}]]
    assert second.expect.match == "strict" and second.expect.expected_rounds == [[{"name": "get_current_time", "args": {}}]]
