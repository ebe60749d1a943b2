"""离线模型对课程文字的全部"了解"：这一个文件就是它和 lesson 代码之间的耦合。

A real model reads any wording; the offline model is a rule table, so it has to know,
word for word, how the lessons talk to it. Everything it knows about that is here, so the
coupling is visible and a change of wording in a lesson has one place to be followed:

- the second article's JSON protocol: the keys ``"tool"`` / ``"args"`` its system prompt
  asks for, and the ``- name: description`` lines that list the tools
  (``stage3_pure_loop/json_loop.py`` SYSTEM_PROMPT);
- how the JSON loops hand a tool result back: ``工具 X 的执行结果：R``, followed by a nudge
  that starts with 请 (``RESULT_MESSAGE`` and the hardened loop's ``NUDGE_RESULT_MESSAGE``);
- the loops' feedback on a reply they did not accept: the hardened loop's bad-answer message
  and the unknown-tool errors of both loops;
- the tool-error prefix every tier uses (``shared.tool_functions.TOOL_ERROR``), and the message
  every tier sends back when the user refuses a dangerous call (``REFUSED_MESSAGE``);
- how a JSON-protocol prompt with *other* keys is recognised, so the model can say it only
  reads the article's protocol instead of guessing.

Left out: the protocol logic itself (``conversation.py``), the model's own sentences
(``answer.py``).
"""
from __future__ import annotations

import re

from shared.tool_functions import REFUSED_MESSAGE, TOOL_ERROR

# ---- 第二篇文章的 JSON 协议 ----
# 识别：system prompt 里同时出现 "tool" 和 "args"（带引号，是 JSON 键名）
JSON_PROTOCOL_MARKERS = ('"tool"', '"args"')
JSON_CALL_KEY, JSON_ARGS_KEY = "tool", "args"
# system prompt 里的工具清单行："- get_weather: 查询指定城市的天气..."
# （行首只跳过本行的空白：\s* 跨行的话，每个空行都要把后面所有空行再读一遍；找到的名字一样）
TOOL_LINE = re.compile(r"^[^\S\n]*-\s*([A-Za-z_][\w.-]*)\s*[:：]", re.MULTILINE)
# system prompt 里要求的 JSON 格式：第一个带引号的键，如 {"tool": ...} 或改名后的 {"action": ...}
JSON_FORMAT_KEYS = re.compile(r'\{\s*"([A-Za-z_]\w*)"\s*:\s*"[^"]*"\s*,\s*"([A-Za-z_]\w*)"\s*:')

# ---- 工具结果怎么回填 ----
# 回填结果的用户消息："工具 get_weather 的执行结果：北京：晴天…" / "工具结果：…"
RESULT_PREFIX = re.compile(r"^\s*工具\s*(?:[\w.-]+\s*的执行)?结果\s*[:：]?\s*")
# 结果后面追加的催促语："\n\n请根据这个结果继续完成任务。…" / "\n请基于此结果给出最终答案…"
# （写成"本行空白、换行、任意空白"且不回溯，只从一段空白的开头试：一长串空白也只读一遍）
FOLLOW_UP_NUDGE = re.compile(r"(?<!\s)[^\S\n]*+\n\s*+请[^\n]*+$")

# ---- 循环对模型回复的反馈（不是新问题）----
# 加固版的 BAD_ANSWER_MESSAGE、两个循环的未知工具错误。conversation.py 先按位置判断
# （紧跟在模型回复之后、又听不出新请求），这些开头只是为了让"它是反馈"一眼可查
FEEDBACK_OPENINGS = ("你的上一条回复不能作为最终答案", "错误：")

# ---- 工具出错时的前缀；用户拒绝危险操作时回给模型的话 ----
TOOL_ERROR_PREFIX = TOOL_ERROR.format(reason="")          # "工具执行出错: "
__all__ = ["REFUSED_MESSAGE"]                              # 各层原样回填的拒绝语（shared/tool_functions.py）


def is_feedback_wording(text: str) -> bool:
    """Does ``text`` open like one of the loops' feedback messages?"""
    return text.lstrip().startswith(FEEDBACK_OPENINGS)


def renamed_protocol_keys(system_text: str) -> tuple[str, str] | None:
    """The two keys of a JSON call format that is *not* the article's ``{"tool", "args"}``.

    ``{"action": "工具名", "input": {...}}`` -> ``("action", "input")``; the article's own
    format, or no JSON format at all -> None.
    """
    found = JSON_FORMAT_KEYS.search(system_text)
    if found is None or (found.group(1), found.group(2)) == (JSON_CALL_KEY, JSON_ARGS_KEY):
        return None
    if all(marker in system_text for marker in JSON_PROTOCOL_MARKERS):
        return None
    return found.group(1), found.group(2)
