"""请求层对比：各个框架发给模型的 HTTP 请求体，是否一模一样。

"Same mechanism" in its strongest form: not only the same trace, but the frameworks send
the model the same bytes. Every run record carries ``exchanges`` (the request and response
bodies its HTTP client saw, :mod:`shared.harness.meter`); for the same prompt, temperature and run,
this module lines up the requests of each implementation turn by turn and reports the first
field that differs, as a JSON path (``turn[2].messages[3].content``).

What is normalised before comparing, and why (everything else must be equal):

- tool-call ids (``call_abc123``) are renamed ``call_1``, ``call_2``... in order of first
  appearance, in the assistant's ``tool_calls`` and in the tool messages' ``tool_call_id``:
  the model (or the offline server) invents them, they say nothing about the framework;
- the transport-only fields in :data:`VOLATILE_FIELDS` are dropped: ``stream`` /
  ``stream_options`` (how the answer travels, not what is asked), ``n`` (the SDK's default
  sometimes spelled out), ``user`` / ``metadata`` / ``store`` (bookkeeping); headers never
  get here at all (the log keeps bodies only, so the API key is never compared or stored);
- numbers equal by value (``0`` and ``0.0``, which SDKs print differently).

Implementations of different protocols are compared only among themselves: the JSON
loops (``json_loop``, ``hardened_loop``) describe the tools in the system prompt and send no
``tools`` field, so against function calling they differ by design at ``turn[0].messages[0]``.

The canonical message shape (:func:`canonical_message`) is shared with the cassettes
(:mod:`compare.cassette`), which must find "the same conversation" whichever framework
asks.

Left out: response bodies (what the model said is the trace's business), HTTP headers.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from shared.harness.text import content_text, shorten

VOLATILE_FIELDS = frozenset({"stream", "stream_options", "n", "user", "metadata", "store"})
VALUE_LIMIT = 160        # 报告里展示的差异值最多这么长

NOTE_PROTOCOLS = ("不同协议的实现只在组内比较：JSON 协议的 loop 把工具写进系统提示词、"
                  "不发 tools 字段，和 function calling 的请求从第一条消息起就不同，这是设计使然。")
NOTE_NO_EXCHANGES = "没有请求记录（运行出错或未发出请求）"
TURN_COUNT = "共 {n} 次请求"


@dataclass
class WireDifference:
    """The first field where two implementations' requests differ."""

    left: str                 # 参照实现
    right: str                # 与之不同的实现
    run: int
    path: str                 # JSON path, e.g. "turn[1].messages[3].content"
    left_value: str
    right_value: str


@dataclass
class WireComparison:
    """One protocol group of one prompt and temperature: identical requests, or the first difference."""

    protocol: str
    impls: list[str]
    identical: bool
    turns: int = 0                                  # 参照实现第 0 次运行发出的请求数
    difference: WireDifference | None = None
    notes: list[str] = field(default_factory=list)


# ---- 规范化 ----

def canonical_number(value):
    """``0.0`` -> ``0``: SDKs spell the same number differently; JSON compares by value."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: canonical_number(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical_number(v) for v in value]
    return value


def rename_ids(messages: list[dict], ids: dict[str, str] | None = None) -> list[dict]:
    """Tool-call ids renamed ``call_1``, ``call_2``... in order of first appearance."""
    ids = {} if ids is None else ids

    def new(old: str) -> str:
        return ids.setdefault(old, f"call_{len(ids) + 1}")

    renamed = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [{**call, "id": new(call.get("id", ""))} for call in message["tool_calls"]]
        if "tool_call_id" in message:
            message["tool_call_id"] = new(message["tool_call_id"])
        renamed.append(message)
    return renamed


def wire_view(body: dict) -> dict:
    """A request body as compared across frameworks: ids renamed, volatile fields dropped."""
    view = {k: v for k, v in body.items() if k not in VOLATILE_FIELDS}
    if isinstance(view.get("messages"), list):
        view["messages"] = rename_ids(view["messages"])
    return canonical_number(view)


def canonical_message(message: dict) -> dict:
    """One message in a framework-independent shape (for cassette keys).

    Beyond :func:`wire_view`: ``content`` ``None`` and ``""`` are the same, a list of text
    parts is joined, tool-call arguments are re-serialised with sorted keys, and only the
    fields that carry meaning (role, content, tool calls, tool_call_id) are kept.
    """
    shaped: dict = {"role": message.get("role"), "content": content_text(message.get("content"))}
    if message.get("tool_calls"):
        shaped["tool_calls"] = [
            {"id": call.get("id", ""), "name": (call.get("function") or {}).get("name", ""),
             "arguments": _canonical_arguments((call.get("function") or {}).get("arguments"))}
            for call in message["tool_calls"]
        ]
    if message.get("tool_call_id") is not None:
        shaped["tool_call_id"] = message["tool_call_id"]
    return shaped


def _canonical_arguments(arguments) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments          # 模型给了坏 JSON：原样保留，它本身就是对话的一部分
    return json.dumps(canonical_number(arguments), ensure_ascii=False, sort_keys=True)


# ---- JSON 路径上的第一个差异 ----

def first_difference(left, right, path: str = "") -> tuple[str, object, object] | None:
    """The first JSON path at which two values differ, with both values; ``None`` if equal.

    Objects are walked in the left value's key order, then keys only the right one has;
    a missing key shows as ``<missing>``.
    """
    if isinstance(left, dict) and isinstance(right, dict):
        for key in [*left, *(k for k in right if k not in left)]:
            found = first_difference(left.get(key, MISSING), right.get(key, MISSING), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list):
        for i in range(max(len(left), len(right))):
            found = first_difference(left[i] if i < len(left) else MISSING,
                                     right[i] if i < len(right) else MISSING, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if left == right else (path or "$", left, right)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


def show_value(value) -> str:
    """A difference's value for a report line: JSON, cut to :data:`VALUE_LIMIT` characters."""
    text = repr(value) if value is MISSING else json.dumps(value, ensure_ascii=False)
    return shorten(text, VALUE_LIMIT)


# ---- 跨实现对比 ----

def requests_of(record) -> list[dict]:
    """The request bodies one run sent, in order, as :func:`wire_view` shows them."""
    return [wire_view(e["request"]) for e in record.exchanges if isinstance(e.get("request"), dict)]


def compare_requests(records: list, protocols: dict[str, str]) -> list[WireComparison]:
    """Compare the requests of every implementation, within each protocol group.

    ``records`` are the runs of one prompt and temperature; ``protocols`` maps an
    implementation name to its protocol. Run ``r`` of each implementation is compared with
    run ``r`` of the group's first implementation (same seed, so the same model decisions).
    """
    groups: dict[str, list[str]] = {}
    for record in records:
        impls = groups.setdefault(protocols.get(record.impl, "?"), [])
        if record.impl not in impls:
            impls.append(record.impl)
    notes = [NOTE_PROTOCOLS] if len(groups) > 1 else []
    return [_compare_group(protocol, impls, records, notes) for protocol, impls in groups.items()]


def _compare_group(protocol: str, impls: list[str], records: list, notes: list[str]) -> WireComparison:
    by_key = {(r.impl, r.run): requests_of(r) for r in records}
    reference = impls[0]
    comparison = WireComparison(protocol=protocol, impls=impls, identical=True, notes=list(notes),
                                turns=len(by_key.get((reference, 0), [])))
    if not any(by_key.values()):
        comparison.notes.append(NOTE_NO_EXCHANGES)
    for run in sorted({r.run for r in records}):
        for other in impls[1:]:
            difference = _first_wire_difference(reference, other, run, by_key)
            if difference:
                comparison.identical, comparison.difference = False, difference
                return comparison
    return comparison


def _first_wire_difference(left: str, right: str, run: int, by_key: dict) -> WireDifference | None:
    if (left, run) not in by_key or (right, run) not in by_key:
        return None
    left_turns, right_turns = by_key[(left, run)], by_key[(right, run)]
    for turn, (a, b) in enumerate(zip(left_turns, right_turns)):
        found = first_difference(a, b)
        if found:
            path, a_value, b_value = found
            return WireDifference(left, right, run, f"turn[{turn}]{path}", show_value(a_value), show_value(b_value))
    if len(left_turns) != len(right_turns):     # 前面都一样，只是一方多发了请求
        return WireDifference(left, right, run, f"turn[{min(len(left_turns), len(right_turns))}]",
                              TURN_COUNT.format(n=len(left_turns)), TURN_COUNT.format(n=len(right_turns)))
    return None
