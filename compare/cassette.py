"""录制与回放：把一次 sweep 里模型的每个回答存成 cassette，再原样回放给任何实现。

``--record FILE`` keeps every model response of a sweep (real endpoint or offline), keyed by
the request that asked for it; ``--replay FILE`` serves those responses through the embedded
server (``open_endpoint(settings, brain=cassette.brain)``), so every implementation still
talks HTTP through its own ``ChatOpenAI`` / ``openai`` client and receives the very same
model decisions. That removes sampling from the comparison: what is left to differ is the
mechanism.

The key is the request in a framework-independent shape (:func:`request_key`): the messages
through :func:`compare.wire.canonical_message` with tool-call ids renamed in order, plus the
fields that change the model's answer (:data:`KEY_FIELDS`). The model name is not part of
it, so a cassette recorded from DeepSeek replays under any ``LLM_MODEL``. The same request
seen twice keeps its first answer (at temperature 0 a real endpoint may answer a repeat
differently; a cassette fixes one answer, which is the point).

A request the cassette cannot answer is an error naming the first message that matches no
recording, never a silent fallback to another answer: the server turns it into HTTP 500 and
the run is recorded with status ``error`` and that message.

The file is plain JSON for people to read: request bodies and response bodies only, no
headers, so the API key (a header) is never in it; :meth:`Cassette.save` checks that too.

A cassette also names the questions and temperatures it answers (``prompts``,
``temperatures``): replayed without ``--prompt`` / ``--temperature``, compare asks exactly
those. An optional ``note`` says where the answers come from (the article's transcribed
traces in ``compare/cassettes/`` say so there). Several cassettes can be replayed at once,
one per run (``--replay A B``: A answers run 0, B run 1): at temperature 0 two runs send
the same requests, so one cassette could hold only one answer for them.

Left out: streamed responses (a stream's body is server-sent events, not a completion
object; such exchanges are not recorded), matching "nearby" requests.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from compare.atomic_file import write_atomically
from compare.wire import canonical_message, canonical_number, rename_ids
from shared.harness.text import shorten

CASSETTE_FORMAT = "react-agent-from-scratch/cassette/1"
CASSETTE_ABOUT = ("compare 录制的模型回答：request 是规整后的请求（工具调用 id 已按出现顺序重命名），"
                  "response 是模型当时的完整回答。只有请求体和响应体，没有请求头，所以没有 API key。")
# 会改变模型回答的请求字段（messages 单独处理）；model 故意不在其中
KEY_FIELDS = ("tools", "tool_choice", "parallel_tool_calls", "temperature", "seed", "response_format")
PREVIEW_CHARS = 80
REDACTED = "***"

ERR_READ = "无法读取 cassette {path}: {reason}"
ERR_FORMAT = "{path} 不是 compare 录制的 cassette（缺少 format={format!r} 或 interactions 列表）"
ERR_EMPTY = "cassette 里没有任何录制，无法回答请求"
ERR_MISS = "cassette 里没有这个请求的回答：第 {index} 条消息对不上任何录制（{preview}）"
ERR_MISS_FIELD = "cassette 里没有这个请求的回答：消息都对得上，但 {field} 不同（录制时 {recorded}，现在 {asked}）"
ERR_MISS_EXTRA = "cassette 里没有这个请求的回答：录制的对话在第 {index} 条消息之前就结束了"


class CassetteError(ValueError):
    """A cassette file cannot be used; one line."""


class CassetteMiss(LookupError):
    """The cassette has no answer for a request; ``str()`` names the first unmatched message."""


def request_key(body: dict) -> dict:
    """The request as the cassette matches it: canonical messages + the answer-changing fields."""
    messages = [canonical_message(m) for m in rename_ids(body.get("messages") or [])]
    key = {"messages": messages}
    key.update({name: body[name] for name in KEY_FIELDS if body.get(name) is not None})
    return canonical_number(key)


def key_hash(key: dict) -> str:
    text = json.dumps(key, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class Cassette:
    """Recorded answers by request key; :meth:`brain` is the embedded server's brain."""

    interactions: dict[str, dict] = field(default_factory=dict)   # hash -> {"request", "response"}
    # 录制时用到的协议（function_calling / json）：回放时默认只跑这些协议的实现，
    # 因为另一种协议的请求从第一条消息起就不同，注定对不上
    protocols: set[str] = field(default_factory=set)
    # 录制时问过的问题和温度：回放时命令行没点名，就用这些（见 compare 的 --replay）
    prompts: list[str] = field(default_factory=list)
    temperatures: list[float] = field(default_factory=list)
    note: str | None = None               # 人写的说明，例如"转录自文章的 trace"

    def add(self, request: dict, response: dict) -> None:
        """Record one answer; the first answer to a request wins."""
        key = request_key(request)
        self.interactions.setdefault(key_hash(key), {"request": key, "response": response})

    def add_exchanges(self, exchanges: list[dict]) -> int:
        """Record a run's successful exchanges (its :class:`~shared.harness.meter.ExchangeLog`); returns how many."""
        added = 0
        for exchange in exchanges:
            request, response = exchange.get("request"), exchange.get("response")
            if exchange.get("status", 200) == 200 and isinstance(request, dict) \
                    and isinstance(response, dict) and "choices" in response:
                self.add(request, response)
                added += 1
        return added

    def brain(self, body: dict) -> dict:
        """Answer a request from the recording, or raise :class:`CassetteMiss` saying why not."""
        key = request_key(body)
        found = self.interactions.get(key_hash(key))
        if found is None:
            raise CassetteMiss(self.explain_miss(key))
        return json.loads(json.dumps(found["response"]))      # 深拷贝：服务器线程可能改它

    def explain_miss(self, key: dict) -> str:
        """Name the first message that no recording shares (longest recorded prefix wins)."""
        if not self.interactions:
            return ERR_EMPTY
        asked = key["messages"]
        best, best_request = -1, None
        for entry in self.interactions.values():
            recorded = entry["request"]["messages"]
            shared = _common_prefix(asked, recorded)
            if shared > best:
                best, best_request = shared, entry["request"]
        if best < len(asked):
            return ERR_MISS.format(index=best + 1, preview=_preview(asked[best]))
        for name in KEY_FIELDS:            # 消息全对上了：差在采样参数或工具定义上
            if key.get(name) != best_request.get(name):
                return ERR_MISS_FIELD.format(field=name, recorded=_short(best_request.get(name)),
                                             asked=_short(key.get(name)))
        return ERR_MISS_EXTRA.format(index=best + 1)

    def to_dict(self) -> dict:
        head = {"format": CASSETTE_FORMAT, "about": CASSETTE_ABOUT}
        if self.note:
            head["note"] = self.note
        return {**head, "protocols": sorted(self.protocols), "prompts": self.prompts,
                "temperatures": self.temperatures,
                "interactions": [{"key": h, **entry} for h, entry in self.interactions.items()]}

    def save(self, path: Path, *, secret: str | None = None) -> None:
        """Write the cassette as readable JSON; a secret that slipped into a body is masked."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1)
        if secret:
            text = text.replace(secret, REDACTED)   # 只有 body，本不该有 key；多一道保险
        write_atomically(Path(path), text + "\n")

    @classmethod
    def load(cls, path: Path) -> "Cassette":
        """Read a cassette; anything unusable is a :class:`CassetteError` of one line."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise CassetteError(ERR_READ.format(path=path, reason=getattr(error, "strerror", None) or error)) from None
        if not isinstance(data, dict) or data.get("format") != CASSETTE_FORMAT \
                or not isinstance(data.get("interactions"), list):
            raise CassetteError(ERR_FORMAT.format(path=path, format=CASSETTE_FORMAT))
        cassette = cls(protocols={p for p in data.get("protocols", []) if isinstance(p, str)},
                       prompts=[p for p in data.get("prompts", []) if isinstance(p, str) and p.strip()],
                       temperatures=[t for t in data.get("temperatures", [])
                                     if isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t <= 2],
                       note=data.get("note") if isinstance(data.get("note"), str) else None)
        for entry in data["interactions"]:
            if isinstance(entry, dict) and isinstance(entry.get("request"), dict) and "response" in entry:
                # 用文件里的 request 重新算 hash：手改过的 cassette 也能用
                cassette.interactions[key_hash(entry["request"])] = {
                    "request": entry["request"], "response": entry["response"]}
        return cassette


def _common_prefix(a: list, b: list) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def _preview(message: dict) -> str:
    if message.get("tool_calls"):
        body = ", ".join(f"{c['name']}({c['arguments']})" for c in message["tool_calls"])
    else:
        body = message.get("content") or ""
    return f"{message.get('role')}: {_short(body)}"


def _short(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return shorten(text, PREVIEW_CHARS)
