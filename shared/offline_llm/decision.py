"""离线模型每一轮的"决定"：要么调工具，要么给最终回答。

The one value that passes from the policy (what to do) to the wire (how an
OpenAI-compatible server says it). Keeping it this small is deliberate: the fault modes
(:mod:`shared.offline_llm.faults`) rewrite decisions, and a plain frozen dataclass is
something they can build and replace without knowing anything about HTTP or JSON.

Left out: ids, usage, streaming chunks, protocol rendering (see ``completion.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class ToolCall(NamedTuple):
    """One tool call, ``(name, args)``.

    ``args`` is normally a dict; a ``str`` is sent *verbatim* as the arguments text, so a
    fault can put broken JSON on the wire (a real model sometimes does exactly that).
    """

    name: str
    args: dict | str


@dataclass(frozen=True)
class Decision:
    """What the model says this turn.

    - ``tool_calls`` non-empty: call these tools (several = one parallel round);
    - otherwise ``text`` is the final answer.

    Both may be set: a chatty model that talks *and* calls a tool. In the JSON protocol the
    text goes before the tool-call JSON, in function calling it becomes ``content``.
    """

    tool_calls: tuple[ToolCall, ...] = ()
    text: str | None = None

    @classmethod
    def answer(cls, text: str) -> "Decision":
        return cls(text=text)

    @classmethod
    def calls(cls, *calls: ToolCall) -> "Decision":
        return cls(tool_calls=tuple(ToolCall(*c) for c in calls))
