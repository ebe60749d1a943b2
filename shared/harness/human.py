"""``--model human``: the learner is the model.

Every request an agent sends is shown compactly (the system prompt and the tool schemas
once, then only the messages that are new since the previous request), and the learner
types the reply. :class:`HumanBrain` is a brain for the embedded offline server
(``open_endpoint(settings, brain=HumanBrain())``), so the agent talks HTTP to it exactly as
it talks to DeepSeek or to the rule-based offline model: a tool the learner adds to
``shared/tools.py`` is offered in the request and can be called by typing its name.

The reply syntax (:func:`parse_reply`)::

    get_weather city=北京                          one tool call
    calculate expression="385.6 * 100"             quote a value with spaces
    get_current_time; get_stock_price symbol=腾讯   several calls: one parallel round
    get_weather {"city": "北京"}                   arguments as a JSON object
    !get_wether city=北京                          sent as typed, unchecked (play a hallucination)
    北京今天晴，25°C。                              anything else: the final answer
    > get_weather 是个好工具                        ``>`` forces a final answer

A typo (an unknown tool, an unknown parameter, an unclosed quote) is one line of error and
the question again. End of input stops the game: the request fails (HTTP 500) and the run
ends with status ``error``.

The client may resend the very same request (its retries); the brain then answers from
memory instead of asking again.

Left out: streaming replies to the learner, editing a reply after it is sent, answering
with text *and* tool calls in one turn.
"""
from __future__ import annotations

import json
import re
import shlex
import sys
import threading
from dataclasses import dataclass, replace

from shared.harness.config import Settings
from shared.harness.text import content_text, shorten
from shared.offline_llm.completion import build_completion
from shared.offline_llm.validation import ApiError
from shared.offline_llm.conversation import FUNCTION_CALLING, read_conversation
from shared.offline_llm.decision import Decision, ToolCall

HUMAN = "human"
# 人打字比模型慢得多：客户端的超时放宽到一天，否则 60 秒后 SDK 会超时重发同一个请求
HUMAN_TIMEOUT = 24 * 3600.0
MODEL_LINE = "模型: 你（--model human：agent 的每个请求都由你来回答）"

HELP = ("你来当模型。回答方式：工具调用写 `工具名 参数=值`（值有空格就加引号，如 calculate expression=\"385.6 * 100\"）；"
        "多个调用用 ; 分隔（一轮并行）；参数也可以写成 JSON 对象；前面加 ! 原样发出不检查；"
        "其他文字就是最终回答（以 > 开头强制当作回答）。")
PROMPT = "模型> "
HEADER = "━━ 第 {n} 次请求 · {protocol} ━━"
PROTOCOL_NAMES = {FUNCTION_CALLING: "function calling", "json": "JSON 协议（工具写在系统提示词里）"}
NEW_CONVERSATION = "（新的对话）"
REWRITTEN = "（agent 改写了对话：从第 {index} 条消息起与上次不同，以下是第 {index} 条起的全部消息）"
SAME_AGAIN = "（同一个请求又来了一次——客户端的重试；沿用你刚才的回答）"
PREVIEW_CHARS = 400

ERR_UNKNOWN_TOOL = "未知工具 {name!r}；这次请求提供的工具: {offered}（想故意调用不存在的工具，前面加 !）"
ERR_UNKNOWN_PARAM = "{tool} 没有参数 {param!r}；它的参数: {params}"
ERR_MISSING_PARAM = "{tool} 缺少必填参数: {params}"
ERR_SYNTAX = "看不懂 {text!r}: {reason}；调用写成 `工具名 参数=值`"
ERR_JSON_ARGS = "参数不是 JSON 对象: {reason}"
ERR_EMPTY = "回答不能是空的"
RETRY = "✗ {error}。请重新输入。"
STOPPED = "输入结束：玩家没有给出回答（--model human）"

_CALL_HEAD = re.compile(r"^\s*(!?)([A-Za-z_][A-Za-z0-9_.-]*)(?=\s|$)(.*)$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FORCE_ANSWER = ">"


class ReplyError(ValueError):
    """A reply the learner has to type again; ``str()`` is one line."""


class PlayerStopped(RuntimeError):
    """The input ended while the model (the learner) was expected to answer."""


def play_settings(settings: Settings) -> Settings:
    """The settings for a human player: a patient client and the model named ``human``."""
    return replace(settings, timeout=HUMAN_TIMEOUT, model=HUMAN)


@dataclass(frozen=True)
class ToolSchema:
    name: str
    params: tuple[str, ...]                 # 按 schema 的顺序
    required: tuple[str, ...]
    types: dict                             # 参数名 -> JSON schema 的 type
    description: str = ""

    def signature(self) -> str:
        params = ", ".join(f"{p}: {self.types.get(p, 'any')}{'' if p in self.required else '?'}"
                           for p in self.params)
        return f"{self.name}({params})"


def tool_schemas(request: dict) -> dict[str, ToolSchema]:
    """The function-calling tools a request offers, by name (the JSON protocol has none)."""
    schemas = {}
    for tool in request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        schemas[function["name"]] = ToolSchema(
            name=function["name"], params=tuple(properties),
            required=tuple(parameters.get("required") or ()),
            types={k: (v or {}).get("type", "any") for k, v in properties.items()},
            description=" ".join(str(function.get("description") or "").split()))
    return schemas


def parse_reply(text: str, offered: tuple[str, ...], schemas: dict[str, ToolSchema]) -> Decision:
    """The learner's line as a :class:`Decision`; raises :class:`ReplyError` on a typo."""
    stripped = text.strip()
    if not stripped:
        raise ReplyError(ERR_EMPTY)
    if stripped.startswith(_FORCE_ANSWER):
        answer = stripped[len(_FORCE_ANSWER):].strip()
        if not answer:
            raise ReplyError(ERR_EMPTY)
        return Decision.answer(answer)
    segments = [s for s in stripped.split(";") if s.strip()]
    if not all(_looks_like_call(s, offered) for s in segments):
        return Decision.answer(stripped)            # 不像调用：这就是最终回答
    return Decision(tool_calls=tuple(_parse_call(s, offered, schemas) for s in segments))


def _looks_like_call(segment: str, offered: tuple[str, ...]) -> bool:
    head = _CALL_HEAD.match(segment)
    if head is None:
        return False
    forced, name, rest = head.groups()
    rest = rest.strip()
    return bool(forced) or name in offered or rest.startswith("{") or bool(_ASSIGNMENT.match(rest))


def _parse_call(segment: str, offered: tuple[str, ...], schemas: dict[str, ToolSchema]) -> ToolCall:
    forced, name, rest = _CALL_HEAD.match(segment).groups()
    rest = rest.strip()
    schema = schemas.get(name)
    if rest.startswith("{"):
        try:
            args = json.loads(rest)
        except ValueError as error:
            raise ReplyError(ERR_JSON_ARGS.format(reason=error)) from None
        if not isinstance(args, dict):
            raise ReplyError(ERR_JSON_ARGS.format(reason=type(args).__name__))
    else:
        args = _assignments(rest, schema)
    if forced:
        return ToolCall(name, args)
    if name not in offered:
        raise ReplyError(ERR_UNKNOWN_TOOL.format(name=name, offered=", ".join(offered) or "（无）"))
    if schema is not None:
        if unknown := [p for p in args if p not in schema.params]:
            raise ReplyError(ERR_UNKNOWN_PARAM.format(tool=name, param=unknown[0],
                                                      params=", ".join(schema.params) or "（无）"))
        if missing := [p for p in schema.required if p not in args]:
            raise ReplyError(ERR_MISSING_PARAM.format(tool=name, params=", ".join(missing)))
    return ToolCall(name, args)


def _assignments(text: str, schema: ToolSchema | None) -> dict:
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ReplyError(ERR_SYNTAX.format(text=text, reason=error)) from None
    args = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise ReplyError(ERR_SYNTAX.format(text=word, reason="参数要写成 名字=值"))
        args[key] = _typed(value, schema.types.get(key) if schema else None)
    return args


def _typed(value: str, json_type: str | None):
    # 线上的参数是 JSON：schema 说是数字/布尔，就按数字/布尔发；其余一律是字符串
    if json_type in ("integer", "number", "boolean"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if not isinstance(parsed, (str, list, dict)) else value
    return value


class HumanBrain:
    """A brain for the embedded server: shows each request, reads the learner's reply.

    ``stream``: where the requests are shown ("stdout", or "stderr" when stdout must carry
    only JSON); looked up at each request, so a redirected stream is honoured.
    """

    def __init__(self, *, stream: str = "stdout"):
        self.stream = stream
        self._lock = threading.Lock()      # 一次只演一个请求（compare 也只并发 1）
        self._requests = 0
        self._previous: list[tuple] = []
        self._shown_system: str | None = None
        self._shown_tools: tuple | None = None
        self._last: tuple[str, dict] | None = None
        self._helped = False

    def __call__(self, request: dict) -> dict:
        with self._lock:
            body = json.dumps(request, ensure_ascii=False, sort_keys=True)
            if self._last is not None and self._last[0] == body:    # 客户端重试：同一个请求
                self._say(SAME_AGAIN)
                return json.loads(json.dumps(self._last[1]))
            try:
                completion = self._play(request)
            except PlayerStopped as stopped:
                # 400 而不是 500：客户端不会重试（500 会被 SDK 重试两次，问你两遍），运行以 error 结束，原因就是这句话
                raise ApiError(400, str(stopped), code="player_stopped") from None
            self._last = (body, completion)
            return completion

    # ---- 显示请求 ----

    def _play(self, request: dict) -> dict:
        conversation = read_conversation(request)
        schemas = tool_schemas(request)
        self._requests += 1
        self._say("\n" + HEADER.format(n=self._requests, protocol=PROTOCOL_NAMES.get(conversation.protocol,
                                                                                   conversation.protocol)))
        self._show(request, schemas)
        if not self._helped:
            self._say(HELP)
            self._helped = True
        while True:
            line = self._read()
            try:
                decision = parse_reply(line, conversation.offered_tools, schemas)
            except ReplyError as error:
                self._say(RETRY.format(error=error))
                continue
            return build_completion(request, conversation, decision)

    def _show(self, request: dict, schemas: dict[str, ToolSchema]) -> None:
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        signatures = [_signature(m) for m in messages]
        shared = 0
        while shared < min(len(signatures), len(self._previous)) and signatures[shared] == self._previous[shared]:
            shared += 1
        if shared < len(self._previous):
            questions = [i for i, m in enumerate(messages) if m.get("role") == "user"]
            if questions and shared > questions[0]:
                self._say(REWRITTEN.format(index=shared + 1))
            else:
                self._say(NEW_CONVERSATION)
                shared = 0
        self._previous = signatures
        tools = tuple(sorted(schemas))
        names = {c.get("id"): (c.get("function") or {}).get("name") for m in messages
                 for c in m.get("tool_calls") or [] if isinstance(c, dict)}
        new = messages[shared:]
        system = [content_text(m.get("content")) for m in new if m.get("role") in ("system", "developer")]
        for text in system:                 # 系统提示词与工具清单：只在第一次（或变了）时显示
            if text != self._shown_system:
                self._say(f"[system] {text}")
                self._shown_system = text
        if schemas and tools != self._shown_tools:
            self._say("[tools]")
            for schema in schemas.values():
                self._say(f"  {schema.signature()}  {shorten(schema.description, 80)}")
            self._shown_tools = tools
        for message in new:
            if message.get("role") not in ("system", "developer"):
                self._say(_render(message, names))

    def _read(self) -> str:
        out = getattr(sys, self.stream)
        out.write(PROMPT)
        out.flush()
        line = sys.stdin.readline()
        if not line:                        # EOF：没有人再回答了
            out.write("\n")
            raise PlayerStopped(STOPPED)
        return line.rstrip("\n")

    def _say(self, text: str) -> None:
        print(text, file=getattr(sys, self.stream), flush=True)


def _signature(message: dict) -> tuple:
    calls = tuple((c.get("function") or {}).get("name") for c in message.get("tool_calls") or []
                  if isinstance(c, dict))
    return message.get("role"), content_text(message.get("content")), calls


def _render(message: dict, names: dict) -> str:
    role = message.get("role")
    text = shorten(content_text(message.get("content")), PREVIEW_CHARS)
    if role == "tool":
        return f"[tool {names.get(message.get('tool_call_id')) or message.get('name') or '?'}] {text}"
    if role == "assistant":
        calls = [f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
                 for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        return "[assistant（你）] " + "; ".join([text] * bool(text) + calls)
    return f"[{role}] {text}"
