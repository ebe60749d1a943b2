"""题库：读入并校验 ``compare/suite.json``（或 ``--suite`` 给的文件、``--prompt`` 给的临时题）。

A suite is a JSON object ``{"prompts": [...]}``; each prompt is

- ``prompt`` (required): the user's question;
- ``id``, ``note``: a short name and a line of explanation, for the report;
- ``expect`` (optional): the calls a correct agent makes, so the suite checks correctness and
  not only agreement between implementations: ``{"match": "strict" | "unordered" | "subset"
  | "superset", "args": "exact" | "by_value" | "ignore", "rounds": [[call, ...], ...]}`` or,
  when the grouping does not matter, ``"calls": [call, ...]`` (not with ``strict``);
  a call is ``{"name": str, "args": object}``;
- ``answer_contains`` (optional): strings the final answer must contain.

Every problem in the file is one line naming the file and the place (``prompts[3].expect.match``),
raised as :class:`SuiteError`; the command line turns it into exit status 2.

Left out: how traces are compared (``compare.matching``), and running anything.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from compare.matching import ARG_MODES, MATCH_MODES

DEFAULT_SUITE = Path(__file__).with_name("suite.json")

ERR_READ = "无法读取题库 {path}: {reason}"
ERR_JSON = "题库 {path} 不是合法 JSON: {reason}"
ERR_AT = "题库 {path}: {where}: {problem}"
ERR_TOP = "应是对象 {\"prompts\": [...]}"
ERR_EMPTY = "至少要有一道题"
ERR_OBJECT = "应是 JSON 对象"
ERR_LIST = "应是列表"
ERR_TEXT = "应是非空字符串"
ERR_MODE = "未知取值 {value!r}（可用: {known}）"
ERR_ROUNDS_OR_CALLS = "要给 rounds（按轮分组）或 calls（平铺）之一"
ERR_STRICT_FLAT = "strict 比对需要 rounds（轮次分组），平铺的 calls 只能配 unordered / subset / superset"
ERR_DUPLICATE = "与 prompts[{other}] 重复（同一题只需出现一次）"
ERR_UNKNOWN_KEY = "未知字段 {key!r}（可用: {known}）"

PROMPT_KEYS = ("id", "prompt", "note", "expect", "answer_contains")
EXPECT_KEYS = ("match", "args", "rounds", "calls")


class SuiteError(ValueError):
    """The suite file cannot be used; ``str(error)`` is one line."""


@dataclass(frozen=True)
class Expectation:
    """What a correct run does: the calls (grouped into rounds, or flat) and how to compare them."""

    match: str                          # strict | unordered | subset | superset
    args: str                           # exact | by_value | ignore
    rounds: tuple[tuple[dict, ...], ...]   # flat ``calls`` 存成一轮一个调用（分组对非 strict 无意义）
    flat: bool = False

    def to_dict(self) -> dict:
        calls = [dict(c) for r in self.rounds for c in r]
        body = {"calls": calls} if self.flat else {"rounds": [[dict(c) for c in r] for r in self.rounds]}
        return {"match": self.match, "args": self.args, **body}


@dataclass(frozen=True)
class SuitePrompt:
    prompt: str
    id: str = ""
    note: str = ""
    expect: Expectation | None = None
    answer_contains: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.id or self.prompt


def ad_hoc(prompts: list[str], known: list[SuitePrompt] = ()) -> list[SuitePrompt]:
    """``--prompt TEXT`` 给的临时题。题库里有同一题时沿用它的期望，否则只比较实现之间是否一致。"""
    by_text = {p.prompt: p for p in known}
    return [by_text.get(text) or SuitePrompt(prompt=text, id=f"prompt{i + 1}") for i, text in enumerate(prompts)]


def load_suite(path: Path = DEFAULT_SUITE) -> list[SuitePrompt]:
    """Read and validate a suite file; any problem is a :class:`SuiteError` of one line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SuiteError(ERR_READ.format(path=path, reason=_reason(error))) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SuiteError(ERR_JSON.format(path=path, reason=error)) from None
    return parse_suite(data, path=str(path))


def parse_suite(data: object, *, path: str = "<suite>") -> list[SuitePrompt]:
    """Validate already-parsed suite data (the tests build suites in memory)."""
    def fail(where: str, problem: str) -> SuiteError:
        return SuiteError(ERR_AT.format(path=path, where=where, problem=problem))

    if not isinstance(data, dict) or not isinstance(data.get("prompts"), list):
        raise fail("$", ERR_TOP)
    if not data["prompts"]:
        raise fail("prompts", ERR_EMPTY)
    prompts: list[SuitePrompt] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data["prompts"]):
        where = f"prompts[{i}]"
        prompt = _prompt(item, where, fail)
        if prompt.prompt in seen:
            raise fail(where, ERR_DUPLICATE.format(other=seen[prompt.prompt]))
        seen[prompt.prompt] = i
        prompts.append(prompt)
    return prompts


def _prompt(item: object, where: str, fail) -> SuitePrompt:
    if not isinstance(item, dict):
        raise fail(where, ERR_OBJECT)
    _known_keys(item, PROMPT_KEYS, where, fail)
    text = item.get("prompt")
    if not isinstance(text, str) or not text.strip():
        raise fail(f"{where}.prompt", ERR_TEXT)
    for key in ("id", "note"):
        if key in item and not isinstance(item[key], str):
            raise fail(f"{where}.{key}", ERR_TEXT)
    contains = item.get("answer_contains", [])
    if not isinstance(contains, list) or not all(isinstance(s, str) and s for s in contains):
        raise fail(f"{where}.answer_contains", ERR_LIST + "（非空字符串）")
    expect = _expectation(item["expect"], f"{where}.expect", fail) if "expect" in item else None
    return SuitePrompt(prompt=text, id=item.get("id", ""), note=item.get("note", ""),
                       expect=expect, answer_contains=tuple(contains))


def _expectation(item: object, where: str, fail) -> Expectation:
    if not isinstance(item, dict):
        raise fail(where, ERR_OBJECT)
    _known_keys(item, EXPECT_KEYS, where, fail)
    match, args = item.get("match", "strict"), item.get("args", "by_value")
    for key, value, known in (("match", match, MATCH_MODES), ("args", args, ARG_MODES)):
        if value not in known:
            raise fail(f"{where}.{key}", ERR_MODE.format(value=value, known=", ".join(known)))
    if ("rounds" in item) == ("calls" in item):
        raise fail(where, ERR_ROUNDS_OR_CALLS)
    if "calls" in item:
        if match == "strict":
            raise fail(f"{where}.calls", ERR_STRICT_FLAT)
        calls = _calls(item["calls"], f"{where}.calls", fail)
        return Expectation(match, args, tuple((c,) for c in calls), flat=True)
    rounds = item["rounds"]
    if not isinstance(rounds, list):
        raise fail(f"{where}.rounds", ERR_LIST)
    return Expectation(match, args,
                       tuple(tuple(_calls(r, f"{where}.rounds[{i}]", fail)) for i, r in enumerate(rounds)))


def _calls(items: object, where: str, fail) -> list[dict]:
    if not isinstance(items, list):
        raise fail(where, ERR_LIST)
    calls = []
    for i, call in enumerate(items):
        at = f"{where}[{i}]"
        if not isinstance(call, dict):
            raise fail(at, ERR_OBJECT)
        _known_keys(call, ("name", "args"), at, fail)
        if not isinstance(call.get("name"), str) or not call["name"]:
            raise fail(f"{at}.name", ERR_TEXT)
        if not isinstance(call.get("args", {}), dict):
            raise fail(f"{at}.args", ERR_OBJECT)
        calls.append({"name": call["name"], "args": call.get("args", {})})
    return calls


def _known_keys(item: dict, known: tuple[str, ...], where: str, fail) -> None:
    # 拼错的字段（"expected"、"answer_contain"）静默忽略最伤人：题库看似在检查，其实没有
    for key in item:
        if key not in known:
            raise fail(where, ERR_UNKNOWN_KEY.format(key=key, known=", ".join(known)))


def _reason(error: Exception) -> str:
    return getattr(error, "strerror", None) or str(error)
