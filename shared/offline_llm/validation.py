"""请求校验：坏请求得到 OpenAI 风格的 JSON 错误和正确的状态码，而不是一个 traceback。

OpenAI-compatible clients (the ``openai`` SDK, LangChain) turn an error response into a
typed exception (``BadRequestError``, ``NotFoundError``...) by its status code, and show
its ``error.message``. So every problem gets the same shape::

    {"error": {"message": "...", "type": "invalid_request_error", "param": "messages", "code": "..."}}

Checked: the body is a JSON object; ``messages`` is a non-empty list of objects with a
valid ``role``; ``temperature`` is a number in [0, 2]; the types of ``model``, ``tools``,
``seed``, ``stream``, ``stream_options`` and ``parallel_tool_calls``. Everything else is
accepted as it comes (any ``model`` name, unknown fields), as lenient servers do.

Left out: routing errors (404/405) and server errors (500) are raised by ``server.py`` with
the same :class:`ApiError`.
"""
from __future__ import annotations

import json
import math

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"

VALID_ROLES = ("system", "developer", "user", "assistant", "tool", "function")

ERR_BAD_JSON = "We could not parse the JSON body of your request (请求体不是合法的 JSON 对象)."
ERR_MISSING = "Missing required parameter: '{param}' (缺少必填参数)."
ERR_TYPE = "Invalid type for '{param}': expected {expected} (参数类型错误)."
ERR_EMPTY = "Invalid '{param}': empty array, expected at least one message (messages 不能为空)."
ERR_ROLE = "Invalid value for '{param}': expected one of {roles} (角色无效)."
ERR_TEMPERATURE = "Invalid 'temperature': {value!r}, expected a number between 0 and 2 (temperature 应在 0 到 2 之间)."

# 可选参数的类型要求：(参数名, 允许的 Python 类型, 给人看的说明)
_OPTIONAL_TYPES = (
    ("model", (str,), "a string"),
    ("tools", (list,), "an array"),
    ("seed", (int,), "an integer"),
    ("stream", (bool,), "a boolean"),
    ("stream_options", (dict,), "an object"),
    ("parallel_tool_calls", (bool,), "a boolean"),
)


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


def parse_chat_request(raw: bytes) -> dict:
    """Parse and check a ``POST /v1/chat/completions`` body; raise :class:`ApiError` (400)."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, ERR_BAD_JSON) from None
    if not isinstance(body, dict):
        raise ApiError(400, ERR_BAD_JSON)
    _check_messages(body)
    _check_temperature(body.get("temperature"))
    for param, types, expected in _OPTIONAL_TYPES:
        value = body.get(param)
        if value is not None and (not isinstance(value, types) or _is_bool_for_int(value, types)):
            raise ApiError(400, ERR_TYPE.format(param=param, expected=expected), param=param, code="invalid_type")
    return body


def _check_messages(body: dict) -> None:
    if "messages" not in body or body["messages"] is None:
        raise ApiError(400, ERR_MISSING.format(param="messages"), param="messages",
                       code="missing_required_parameter")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise ApiError(400, ERR_TYPE.format(param="messages", expected="an array"), param="messages",
                       code="invalid_type")
    if not messages:
        raise ApiError(400, ERR_EMPTY.format(param="messages"), param="messages", code="empty_array")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            param = f"messages[{index}]"
            raise ApiError(400, ERR_TYPE.format(param=param, expected="an object"), param=param,
                           code="invalid_type")
        if message.get("role") not in VALID_ROLES:
            param = f"messages[{index}].role"
            raise ApiError(400, ERR_ROLE.format(param=param, roles=", ".join(VALID_ROLES)), param=param,
                           code="invalid_value")


def _check_temperature(value: object) -> None:
    if value is None:
        return
    if (not isinstance(value, (int, float)) or isinstance(value, bool)
            or not math.isfinite(value) or not 0 <= value <= 2):
        raise ApiError(400, ERR_TEMPERATURE.format(value=value), param="temperature", code="invalid_value")


def _is_bool_for_int(value: object, types: tuple[type, ...]) -> bool:
    # JSON 的 true 在 Python 里是 int 的子类：seed=true 不是整数
    return isinstance(value, bool) and bool not in types
