"""请求校验：坏请求得到 OpenAI 风格的 JSON 错误和正确的状态码，和真实端点一样严格。

OpenAI-compatible clients (the ``openai`` SDK, LangChain) turn an error response into a
typed exception (``BadRequestError``, ``NotFoundError``...) by its status code, and show
its ``error.message``. So every problem gets the same shape, naming the parameter::

    {"error": {"message": "...", "type": "invalid_request_error", "param": "messages[2].content", "code": "..."}}

What works here must work against DeepSeek, vLLM or OpenAI, and what fails there must fail
here. So a body is checked against the official request schema (the pinned copy in
``openai_chat_schema.json``; ``tests/test_offline_llm_conformance.py`` checks that this
module rejects what the schema rejects): JSON with no ``NaN``; ``model`` and ``messages``
required; each message's fields by role; tools, ``tool_choice``, ``response_format``, ``n``,
``max_tokens``, ``stop``... their types and ranges. Then the rules a real endpoint adds on
top of the schema (``tool_choice`` or ``parallel_tool_calls`` without ``tools``, a named
function that is not offered, ``stream_options`` without ``stream``, ``json_object`` without
the word JSON in the messages) and the tool-call pairing of the history (``history.py``).

Every parameter is either honoured (see ``policy.py`` and ``completion.py``) or refused here
with a 400 that names it (:data:`REFUSED`): logprobs, audio, predicted outputs, web search,
custom tools and the deprecated ``functions``. Parameters that only tune sampling
(``top_p``, penalties, ``logit_bias``, ``user``, ``metadata``...) are accepted: a rule
table has nothing to tune, like a real model at temperature 0. Unknown fields are accepted,
as the schema does.

Left out: routing errors (404/405) and server errors (500) are raised by ``server.py`` with
the same :class:`ApiError`.
"""
from __future__ import annotations

import json
import math
import re
from itertools import accumulate

from shared.harness.arguments import TEMPERATURE_RANGE
from shared.offline_llm.history import history_problem

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"

VALID_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
TOOL_CHOICE_MODES = ("none", "auto", "required")
RESPONSE_FORMATS = ("text", "json_object", "json_schema")
MAX_STOP_SEQUENCES = 4
MAX_N = 128
# JSON 最多嵌套几层：真实请求里最深的是工具的 JSON Schema，十来层；再深就是坏请求，
# 解析、复制、序列化它都要递归，几万层会让处理它的线程崩溃而不回答
MAX_NESTING = 100
_FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

ERR_BAD_JSON = "We could not parse the JSON body of your request (请求体不是合法的 JSON 对象)."
ERR_NESTING = ("We could not parse the JSON body of your request: it is nested more than {limit} levels deep "
               "(请求体的 JSON 嵌套超过 {limit} 层).")
ERR_NAN = ("We could not parse the JSON body of your request: {constant} is not valid JSON "
           "(JSON 里没有 {constant}，请求体不是合法的 JSON).")
ERR_MISSING = "Missing required parameter: '{param}' (缺少必填参数)."
ERR_TYPE = "Invalid type for '{param}': expected {expected} (参数类型错误)."
ERR_EMPTY = "Invalid '{param}': empty array, expected at least one message (messages 不能为空)."
ERR_ROLE = "Invalid value for '{param}': expected one of {roles} (角色无效)."
ERR_RANGE = "Invalid '{param}': {value!r}, expected {expected} (取值超出范围)."
ERR_TEMPERATURE = "Invalid 'temperature': {value!r}, expected a number between 0 and 2 (temperature 应在 0 到 2 之间)."
ERR_VALUE = "Invalid value for '{param}': {value!r}, expected {expected} (取值无效)."
ERR_ONLY_WITH_TOOLS = ("Invalid value for '{param}': '{param}' is only allowed when 'tools' are specified "
                       "(没有提供 tools 时不能设置 {param}).")
ERR_CHOICE_NOT_OFFERED = ("Invalid value for 'tool_choice': function '{name}' is not in 'tools' "
                          "(tool_choice 指定的函数 {name} 不在这次提供的 tools 里).")
ERR_STREAM_OPTIONS = ("The 'stream_options' parameter is only allowed when 'stream' is enabled "
                      "(没有 stream: true 时不能设置 stream_options).")
ERR_JSON_WORD = ("'messages' must contain the word 'json' in some form, to use 'response_format' of type "
                 "'json_object' (用 json_object 时，消息里必须提到 JSON).")
ERR_TOP_LOGPROBS = "'top_logprobs' requires 'logprobs' to be true (设置 top_logprobs 需要 logprobs: true)."
ERR_REFUSED = ("'{param}' is not supported by the offline model: {why} (离线模型不支持这个参数；"
               "要用它，请设置 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL 接入真实模型).")

# 真实端点支持、但一张规则表给不出来的参数：明确拒绝（400 + param），绝不假装做到了
REFUSED = {
    "logprobs": "a rule table has no token probabilities",
    "top_logprobs": "a rule table has no token probabilities",
    "audio": "it writes text only",
    "prediction": "it has no predicted outputs",
    "web_search_options": "it cannot search the web",
    "functions": "use 'tools' instead (the deprecated 'functions' is not served)",
    "function_call": "use 'tool_choice' instead (the deprecated 'function_call' is not served)",
}


class ApiError(Exception):
    """An error the server answers with ``status`` and an OpenAI-style JSON body.

    A brain may raise it too (e.g. a cassette with no recorded answer), to choose the status.
    """

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None,
                 error_type: str = INVALID_REQUEST, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.error_type = status, message, param, code, error_type
        self.headers = dict(headers or {})      # 额外的响应头，如 405 的 Allow

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.error_type, "param": self.param,
                          "code": self.code}}


def bad_request(message: str, param: str | None, code: str) -> ApiError:
    return ApiError(400, message, param=param, code=code)


def parse_chat_request(raw: bytes) -> dict:
    """Parse and check a ``POST /v1/chat/completions`` body; raise :class:`ApiError` (400)."""
    body = _parse_json(raw)
    if not isinstance(body, dict):
        raise ApiError(400, ERR_BAD_JSON)
    _check_messages(body)
    _check_types(body)
    _check_tools(body)
    _check_response_format(body)
    _check_refused(body)
    _check_combinations(body)
    if (problem := history_problem(body["messages"])) is not None:
        raise bad_request(problem[0], problem[1], "invalid_value")
    return body


def _parse_json(raw: bytes) -> object:
    def no_constant(constant: str) -> None:
        # Python 的 json 默认接受 NaN / Infinity，但它们不是 JSON：真实端点会拒绝
        raise bad_request(ERR_NAN.format(constant=constant), None, "invalid_json")

    if json_nesting(raw) > MAX_NESTING:
        raise bad_request(ERR_NESTING.format(limit=MAX_NESTING), None, "invalid_json")
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ApiError(400, ERR_BAD_JSON) from None


_JSON_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_NOT_A_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_BRACKET_STEP = [0] * 256
for _opening in b"[{":
    _BRACKET_STEP[_opening] = 1
for _closing in b"]}":
    _BRACKET_STEP[_closing] = -1


def json_nesting(raw: bytes) -> int:
    """How deep the brackets of a JSON text nest (strings skipped), counted without parsing it.

    Linear and without recursion, so it can run before ``json.loads`` on any body.
    """
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_A_BRACKET)
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


# ---- messages ----

def _check_messages(body: dict) -> None:
    if "messages" not in body or body["messages"] is None:
        raise bad_request(ERR_MISSING.format(param="messages"), "messages", "missing_required_parameter")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise _type_error("messages", "an array")
    if not messages:
        raise bad_request(ERR_EMPTY.format(param="messages"), "messages", "empty_array")
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise _type_error(where, "an object")
        role = message.get("role")
        if role not in VALID_ROLES:
            raise bad_request(ERR_ROLE.format(param=f"{where}.role", roles=", ".join(VALID_ROLES)),
                              f"{where}.role", "invalid_value")
        _check_message(message, role, where)


def _check_message(message: dict, role: str, where: str) -> None:
    content = message.get("content")
    if role in ("system", "developer", "user", "tool") and "content" not in message:
        raise bad_request(ERR_MISSING.format(param=f"{where}.content"), f"{where}.content",
                          "missing_required_parameter")
    nullable = role in ("assistant", "function")
    if not (isinstance(content, str) or (content is None and (nullable or "content" not in message))
            or (isinstance(content, list) and content and all(_is_content_part(p) for p in content))):
        raise _type_error(f"{where}.content", "a string or an array of content parts"
                          + (" or null" if nullable else ""))
    for key in ("name", "refusal") if role != "tool" else ():
        if message.get(key) is not None and not isinstance(message[key], str):
            raise _type_error(f"{where}.{key}", "a string")
    if role == "tool":
        if "tool_call_id" not in message:
            raise bad_request(ERR_MISSING.format(param=f"{where}.tool_call_id")
                              .replace("(缺少必填参数)", "(tool 消息必须带 tool_call_id，说明它回答的是哪一个调用)"),
                              f"{where}.tool_call_id", "missing_required_parameter")
        if not isinstance(message["tool_call_id"], str):
            raise _type_error(f"{where}.tool_call_id", "a string")
    if role == "function" and not isinstance(message.get("name"), str):
        raise _type_error(f"{where}.name", "a string")
    if role == "assistant" and message.get("tool_calls") is not None:
        _check_tool_calls(message["tool_calls"], f"{where}.tool_calls")


def _is_content_part(part: object) -> bool:
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return False
    if part["type"] == "text":
        return isinstance(part.get("text"), str)
    return part["type"] in ("image_url", "input_audio", "file", "refusal") and part["type"] in part


def _check_tool_calls(calls: object, where: str) -> None:
    if not isinstance(calls, list):
        raise _type_error(where, "an array")
    for index, call in enumerate(calls):
        at = f"{where}[{index}]"
        if not isinstance(call, dict):
            raise _type_error(at, "an object")
        if not isinstance(call.get("id"), str):
            raise _type_error(f"{at}.id", "a string")
        function = _function_of(call, at)
        if not isinstance(function.get("arguments"), str):
            # 线上的 arguments 是 JSON *字符串*：把 dict 原样塞回去，真实端点一样 400
            raise _type_error(f"{at}.function.arguments", "a string (the arguments as JSON text)")


# ---- 标量参数：类型与范围 ----

def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(low: float, high: float):
    return lambda v: _is_number(v) and low <= v <= high, f"a number between {low:g} and {high:g}"


def _integer(low: int, high: int | None = None):
    expected = f"an integer >= {low}" if high is None else f"an integer between {low} and {high}"
    return lambda v: _is_int(v) and v >= low and (high is None or v <= high), expected


_SCALARS = {
    "model": (lambda v: isinstance(v, str), "a string"),
    "temperature": _number(*TEMPERATURE_RANGE),
    "top_p": _number(0, 1),
    "frequency_penalty": _number(-2, 2),
    "presence_penalty": _number(-2, 2),
    "n": _integer(1, MAX_N),
    "max_tokens": _integer(1),
    "max_completion_tokens": _integer(1),
    "seed": (lambda v: _is_int(v), "an integer"),
    "stream": (lambda v: isinstance(v, bool), "a boolean"),
    "parallel_tool_calls": (lambda v: isinstance(v, bool), "a boolean"),
    "logprobs": (lambda v: isinstance(v, bool), "a boolean"),
    "store": (lambda v: isinstance(v, bool), "a boolean"),
    "top_logprobs": _integer(0, 20),
    "user": (lambda v: isinstance(v, str), "a string"),
    "stop": (lambda v: isinstance(v, str) or (isinstance(v, list) and 1 <= len(v) <= MAX_STOP_SEQUENCES
                                                and all(isinstance(s, str) for s in v)),
             f"a string or an array of 1 to {MAX_STOP_SEQUENCES} strings"),
    "stream_options": (lambda v: isinstance(v, dict) and all(isinstance(v.get(k, False), bool)
                                                            for k in ("include_usage", "include_obfuscation")),
                       "an object like {\"include_usage\": true}"),
    "metadata": (lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
                 "an object of strings"),
    "logit_bias": (lambda v: isinstance(v, dict) and all(_is_int(x) for x in v.values()),
                   "an object of integers"),
    "tools": (lambda v: isinstance(v, list), "an array"),
}


def _check_types(body: dict) -> None:
    if "model" not in body:
        raise bad_request(ERR_MISSING.format(param="model"), "model", "missing_required_parameter")
    for param, (valid, expected) in _SCALARS.items():
        value = body.get(param)
        if value is None and param != "model":
            continue                                  # 可选参数：null 等于没写
        if valid(value):
            continue
        if param == "temperature" and _is_number(value):
            raise bad_request(ERR_TEMPERATURE.format(value=value), param, "invalid_value")
        wrong_type = not _is_number(value) if expected.startswith(("a number", "an integer")) else True
        if wrong_type:
            raise _type_error(param, expected)
        raise bad_request(ERR_RANGE.format(param=param, value=value, expected=expected), param, "invalid_value")
    _check_tool_choice(body.get("tool_choice"))


def _check_tool_choice(choice: object) -> None:
    if choice is None or choice in TOOL_CHOICE_MODES:
        return
    if isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return
        raise _type_error("tool_choice.function.name", "a string")
    if isinstance(choice, dict) and choice.get("type") in ("allowed_tools", "custom"):
        raise bad_request(ERR_REFUSED.format(param="tool_choice", why=f"tool_choice of type '{choice['type']}' "
                                             "is not served; use auto, none, required or a named function"),
                          "tool_choice", "unsupported_parameter")
    raise bad_request(ERR_VALUE.format(param="tool_choice", value=choice,
                                       expected="'none', 'auto', 'required' or "
                                                "{\"type\": \"function\", \"function\": {\"name\": ...}}"),
                      "tool_choice", "invalid_value")


def _check_tools(body: dict) -> None:
    for index, tool in enumerate(body.get("tools") or []):
        at = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise _type_error(at, "an object")
        if tool.get("type") == "custom":
            raise bad_request(ERR_REFUSED.format(param=f"{at}.type", why="custom tools are not served; "
                                                 "offer a function tool"), f"{at}.type", "unsupported_parameter")
        function = _function_of(tool, at)
        name = function["name"]
        if not _FUNCTION_NAME.match(name):
            raise bad_request(ERR_VALUE.format(param=f"{at}.function.name", value=name,
                                               expected="a-z, A-Z, 0-9, underscores and dashes, at most 64"),
                              f"{at}.function.name", "invalid_value")
        if function.get("parameters") is not None and not isinstance(function["parameters"], dict):
            raise _type_error(f"{at}.function.parameters", "an object (a JSON Schema)")


def _check_response_format(body: dict) -> None:
    fmt = body.get("response_format")
    if fmt is None:
        return
    if not isinstance(fmt, dict):
        raise _type_error("response_format", "an object")
    if fmt.get("type") not in RESPONSE_FORMATS:
        raise bad_request(ERR_VALUE.format(param="response_format.type", value=fmt.get("type"),
                                           expected=", ".join(RESPONSE_FORMATS)),
                          "response_format.type", "invalid_value")
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict):
            raise bad_request(ERR_MISSING.format(param="response_format.json_schema"), "response_format.json_schema",
                              "missing_required_parameter")
        if not isinstance(spec.get("name"), str):
            raise bad_request(ERR_MISSING.format(param="response_format.json_schema.name"),
                              "response_format.json_schema.name", "missing_required_parameter")
        if spec.get("schema") is not None and not isinstance(spec["schema"], dict):
            raise _type_error("response_format.json_schema.schema", "an object (a JSON Schema)")


def _check_refused(body: dict) -> None:
    for param, why in REFUSED.items():
        value = body.get(param)
        if value is None or value is False or (param == "top_logprobs" and value == 0):
            continue
        if param == "top_logprobs" and not body.get("logprobs"):
            raise bad_request(ERR_TOP_LOGPROBS, "top_logprobs", "invalid_value")
        raise bad_request(ERR_REFUSED.format(param=param, why=why), param, "unsupported_parameter")
    modalities = body.get("modalities")
    if modalities is not None and modalities != ["text"]:
        raise bad_request(ERR_REFUSED.format(param="modalities", why="it writes text only"), "modalities",
                          "unsupported_parameter")


def _check_combinations(body: dict) -> None:
    """Rules a real endpoint adds on top of the schema."""
    if not body.get("tools"):
        for param in ("tool_choice", "parallel_tool_calls"):
            if body.get(param) is not None:
                raise bad_request(ERR_ONLY_WITH_TOOLS.format(param=param), param, "invalid_value")
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = choice["function"]["name"]
        offered = [t["function"]["name"] for t in body.get("tools") or []]
        if name not in offered:
            raise bad_request(ERR_CHOICE_NOT_OFFERED.format(name=name), "tool_choice", "invalid_value")
    if body.get("stream_options") is not None and not body.get("stream"):
        raise bad_request(ERR_STREAM_OPTIONS, "stream_options", "invalid_value")
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_object" and "json" not in json.dumps(body["messages"], ensure_ascii=False).lower():
        raise bad_request(ERR_JSON_WORD, "messages", "invalid_value")


def _function_of(item: dict, at: str) -> dict:
    """``item["function"]`` of a ``{"type": "function", "function": {"name": ...}}`` (a tool or a tool call)."""
    if item.get("type") != "function":
        raise bad_request(ERR_VALUE.format(param=f"{at}.type", value=item.get("type"), expected="'function'"),
                          f"{at}.type", "invalid_value")
    function = item.get("function")
    if not isinstance(function, dict):
        raise _type_error(f"{at}.function", "an object")
    if not isinstance(function.get("name"), str):
        raise _type_error(f"{at}.function.name", "a string")
    return function


def _type_error(param: str, expected: str) -> ApiError:
    return bad_request(ERR_TYPE.format(param=param, expected=expected), param, "invalid_type")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
