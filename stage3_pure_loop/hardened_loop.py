"""零框架 agent 加固版：文章第五节"5 个翻车现场"的修复，每个都能单独关掉。

json_loop.py 是文章的 50 行原样；这个文件在它上面加五道保险（工具注册表、prompt、
LLM 调用都从 json_loop 直接拿来，没有复制），再加上文章第七节的生产方向：

    修复名         翻车现场                     做法
    ---------------------------------------------------------------------------------
    extract        1 非法 JSON / 带前缀的回复   平衡括号扫描器从任意文本里找调用（json_extract.py）
    repeat         2 死循环                     结果后的温和提醒 + 同一调用连续 3 次就硬停
    window         3 上下文爆炸                 历史只存读懂的调用 JSON（不存长篇思考）+ 滑动窗口：
                                                钉住问题，调用与结果不拆开（context_window.py）
    unknown_tool   4 幻觉工具                   错误 + 真实工具清单，模型看得到自己的错，最多重试 3 次
    validate       5 非确定性输出               temperature 默认 0，校验最终答案，连续 3 次不合格就降级
    （方向 2）     eval 的安全隐患              AST 计算器（shared/calculator.py，两个 loop 都用）
    （方向 3）     高风险操作                   DANGEROUS_TOOLS 先问人：approve(name, args) -> bool

``--no-fix NAME``（可重复）关掉一个修复：README 的表格就是用它跑出"修复前/修复后"。

守卫触发时不抛到外面：每个守卫是一个小异常（RepeatedCall、UnknownToolLimit、
BadAnswerLimit），在 run_agent 里变成运行记录的 status "stopped" 和 error 里的原因
——模型的错误是数据，不是崩溃。

Left out: function calling (stages 1-3), summarising what the window drops, retries on
transport errors (the reliability issue), the real ``place_order`` tool (the
controllability issue adds it to DANGEROUS_TOOLS).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shared.run_record import ANSWERED, MAX_STEPS, STOPPED, LoopResult
from shared.tool_functions import run_tool
from stage3_pure_loop.context_window import MAX_CONTEXT_MESSAGES, slide_window
from stage3_pure_loop.json_extract import ToolCall, as_tool_call, extract_tool_call
from stage3_pure_loop.json_loop import (
    MAX_ITER, MAX_ITER_MESSAGE, RESULT_MESSAGE, TOOLS, UNKNOWN_TOOL_MESSAGE, ask_llm, build_messages,
)

if TYPE_CHECKING:
    from openai import OpenAI

FIXES = ("extract", "repeat", "window", "unknown_tool", "validate")

MAX_SAME_CALLS = 3          # 同一工具 + 同一参数连续出现 3 次 → 硬停（文章策略 B）
MAX_UNKNOWN_TOOL_RETRIES = 3  # 幻觉工具最多重试 3 次（文章："最多重试 2-3 次"）
MAX_BAD_ANSWERS = 3         # 连续 3 次不合格的最终答案 → 降级回答（文章保险 3）
# 文章的 validate_final_answer 用 5：少于 5 个字不算答案。但"好的。""北京晴。"这样的短句是
# 合法回答，5 会误杀它们；真正的"抽风"（空串、一个标点、英文、JSON）由其余几条检查抓住。
MIN_ANSWER_CHARS = 2
WINDOW_MAX_TOKENS = 3000    # 窗口的 token 上限（与离线模型同一个计数器，见 context_window）

# 高风险工具：执行前先问人（文章方向 3）。现在还没有——place_order 随下单的 issue 加入
DANGEROUS_TOOLS: frozenset[str] = frozenset()

# ---- 回给模型 / 用户的文字 ----
# 文章策略 A 的原话是"请基于此结果给出最终答案，不要再调用工具"。它会禁止多步任务的
# 下一步：文章那道题要 时间 → 股价 → 计算 三步，第一步之后就"不许再调工具"，模型只能
# 带着一半信息作答。所以这里只禁止"重复"，不禁止"下一步"；真正的死循环交给硬停。
NUDGE_RESULT_MESSAGE = ("工具 {tool_name} 的执行结果：{result}\n\n"
                        "请根据这个结果继续完成任务。如果信息已足够，请直接给出最终答案；不要重复调用同一个工具。")
RETRY_UNKNOWN_TOOL = "错误：{tool_name} 不是可用工具。可用工具有：{available}。请重新选择。"
BAD_ANSWER_MESSAGE = ("你的上一条回复不能作为最终答案：{problem}。"
                      "如果还需要工具，只输出一个工具调用 JSON；否则请用用户的语言给出完整的最终答案。")
REFUSED_MESSAGE = "用户拒绝了 {tool_name} 操作。请尝试替代方案。"
FALLBACK_ANSWER = "抱歉，当前服务暂时不可用，请稍后重试。"
APPROVE_PROMPT = "Agent 请求执行高风险操作 {tool_name}，参数: {args}\n确认执行？(y/n): "

STOP_REPEATED = "检测到重复工具调用：{call} 连续 {times} 次，已自动终止"
STOP_UNKNOWN = "模型调用不存在的工具（{names}），重试 {retries} 次后仍未改正，已终止"
STOP_BAD_ANSWERS = "连续 {times} 次不合格的最终答案（最后一次：{problem}），已降级回答"
ERR_UNKNOWN_FIX = "未知修复 {names}；可用: {known}"

_CHINESE = re.compile(r"[\u4e00-\u9fff]")

PROBLEM_EMPTY = "回复是空的"
PROBLEM_JSON = "回复看起来是 JSON（或一个没写对的工具调用），不是给人看的答案"
PROBLEM_SHORT = f"回复太短（少于 {MIN_ANSWER_CHARS} 个字）"
PROBLEM_LANGUAGE = "用户用中文提问，回复里却没有一个中文字"


# ============ 守卫：每个是一个小异常，run_agent 把它变成 status "stopped" ============
class GuardStop(Exception):
    """A guard ended the run; ``str(self)`` is the reason, ``answer`` what the user gets."""

    answer: str | None = None


class RepeatedCall(GuardStop):
    """The same tool with the same arguments, MAX_SAME_CALLS times in a row."""


class UnknownToolLimit(GuardStop):
    """More than MAX_UNKNOWN_TOOL_RETRIES calls to tools that do not exist."""


class BadAnswerLimit(GuardStop):
    """MAX_BAD_ANSWERS final answers in a row failed validation: the fallback answer."""

    answer = FALLBACK_ANSWER


@dataclass
class Guards:
    """The counters behind the guards: one per run, never shared."""

    recent_calls: list[str] = field(default_factory=list)
    unknown_tools: list[str] = field(default_factory=list)
    bad_answers: int = 0

    def check_repeat(self, call: ToolCall) -> None:
        # 调用的"指纹"：工具名 + 排好序的参数 JSON（文章的 call_key）
        key = f"{call.name}:{json.dumps(call.args, sort_keys=True, ensure_ascii=False)}"
        self.recent_calls.append(key)
        last = self.recent_calls[-MAX_SAME_CALLS:]
        if len(last) == MAX_SAME_CALLS and len(set(last)) == 1:
            raise RepeatedCall(STOP_REPEATED.format(call=f"{call.name}({call.args})", times=MAX_SAME_CALLS))

    def check_unknown_tool(self, name: str) -> None:
        self.unknown_tools.append(name)
        if len(self.unknown_tools) > MAX_UNKNOWN_TOOL_RETRIES:
            raise UnknownToolLimit(STOP_UNKNOWN.format(names=", ".join(dict.fromkeys(self.unknown_tools)),
                                                       retries=MAX_UNKNOWN_TOOL_RETRIES))

    def check_bad_answer(self, problem: str) -> None:
        self.bad_answers += 1
        if self.bad_answers >= MAX_BAD_ANSWERS:
            raise BadAnswerLimit(STOP_BAD_ANSWERS.format(times=MAX_BAD_ANSWERS, problem=problem))


def refuse(tool_name: str, args: dict) -> bool:
    """The default approver: refuse every dangerous call (a run without a human says no)."""
    return False


def ask_on_terminal(tool_name: str, args: dict) -> bool:
    """文章方向 3 的 input() 确认，作为可注入的 approver。"""
    return input(APPROVE_PROMPT.format(tool_name=tool_name, args=args)).strip().lower() == "y"


# ============ 加固后的核心循环 ============
def run_agent(user_input: str, max_steps: int = MAX_ITER, *, client: OpenAI, model: str,
              temperature: float = 0.0, seed: int | None = None,
              disabled_fixes: frozenset[str] = frozenset(),
              approve: Callable[[str, dict], bool] = refuse) -> LoopResult:
    """json_loop 的循环 + 五道保险。``disabled_fixes`` 里的修复退回文章的天真写法。"""
    on = enabled_fixes(disabled_fixes)
    messages = build_messages(user_input)
    rounds: list[list[dict]] = []
    guards = Guards()
    try:
        for iteration in range(max_steps):
            # 修复 3：发出去的是窗口，不是全部历史（完整历史留在 messages 里做记录）
            context = (slide_window(messages, max_messages=MAX_CONTEXT_MESSAGES, max_tokens=WINDOW_MAX_TOKENS)
                       if "window" in on else messages)
            reply = ask_llm(client, model, context, temperature, seed)          # 第 1 步：LLM 推理

            # 修复 1：从任意文本里找调用；关掉时用文章的"整段必须是 JSON"
            call = extract_tool_call(reply) if "extract" in on else parse_whole_reply(reply)

            if call is None:                                                    # 没有调用 → 候选答案
                problem = answer_problem(reply, user_input) if "validate" in on else None
                if problem is None:
                    messages.append({"role": "assistant", "content": reply})
                    return LoopResult(messages=messages, rounds=rounds, status=ANSWERED, answer=reply)
                guards.check_bad_answer(problem)                                # 修复 5
                messages.append({"role": "assistant", "content": reply})
                messages.append({"role": "user", "content": BAD_ANSWER_MESSAGE.format(problem=problem)})
                continue
            guards.bad_answers = 0                                              # "连续"才算

            # 修复 3 的另一半：历史里存"我们读懂的调用"，不存模型的原话（长篇思考、寒暄）
            said = canonical_call(call) if "window" in on else reply
            record = {"name": call.name, "args": call.args, "result": None}   # 没执行的调用 result 为 None
            rounds.append([record])
            if call.name not in TOOLS:                                          # 修复 4
                record["result"] = handle_unknown_tool(call, said, messages, guards, fix="unknown_tool" in on)
                continue
            if "repeat" in on:                                                  # 修复 2（策略 B：硬停）
                guards.check_repeat(call)
            record["result"] = execute(call, approve)                          # 第 2 步：工具执行
            template = NUDGE_RESULT_MESSAGE if "repeat" in on else RESULT_MESSAGE  # 修复 2（策略 A）
            messages.append({"role": "assistant", "content": said})
            messages.append({"role": "user", "content": template.format(tool_name=call.name,
                                                                        result=record["result"])})
        return LoopResult(messages=messages, rounds=rounds, status=MAX_STEPS, answer=None,
                          stopped_at=MAX_ITER_MESSAGE)
    except GuardStop as stop:
        return LoopResult(messages=messages, rounds=rounds, status=STOPPED, answer=stop.answer,
                          error=str(stop), stopped_at=f"{type(stop).__name__}: {stop}")


def enabled_fixes(disabled: frozenset[str]) -> frozenset[str]:
    """All fixes but the disabled ones; an unknown name is a ``ValueError``."""
    unknown = sorted(set(disabled) - set(FIXES))
    if unknown:
        raise ValueError(ERR_UNKNOWN_FIX.format(names=", ".join(unknown), known=", ".join(FIXES)))
    return frozenset(FIXES) - frozenset(disabled)


def parse_whole_reply(reply: str) -> ToolCall | None:
    """文章的解析：整段回复以 { 开头、以 } 结尾、能 json.loads，才算调用。"""
    if not (reply.startswith("{") and reply.endswith("}")):
        return None
    try:
        return as_tool_call(json.loads(reply))
    except json.JSONDecodeError:
        return None


def canonical_call(call: ToolCall) -> str:
    """The call exactly as the system prompt asks for it: ``{"tool": ..., "args": {...}}``.

    Why the window needs this: a sliding window alone cannot save a task whose every
    result is still needed. When the model thinks aloud at length inside its calls, the
    window has to drop the *oldest* call and its result, the model no longer sees that
    result, asks for it again, which pushes out the next one... (the article's "LLM 开始
    遗忘最早的工具调用结果"). Keeping only the call we understood keeps every result in a
    small context; the window remains the hard bound for long runs.
    """
    return json.dumps({"tool": call.name, "args": call.args}, ensure_ascii=False)


def answer_problem(answer: str, question: str) -> str | None:
    """修复 5 的答案校验（文章 validate_final_answer 的扩充）：有问题返回原因，否则 None。"""
    text = answer.strip()
    if not text:
        return PROBLEM_EMPTY
    # 文章的检查：以 { 开头的是（写坏了的）JSON，不是给人看的答案。故意不查"文中含调用"：
    # 那是修复 1（extract）的事；两道保险各管一件，关掉一个才看得出它管的是什么
    if text.startswith("{"):
        return PROBLEM_JSON
    if len(text) < MIN_ANSWER_CHARS:
        return PROBLEM_SHORT
    # 文章的"凌晨突然开始用英文回复"：中文问题的答案里至少要有中文
    if _CHINESE.search(question) and not _CHINESE.search(text):
        return PROBLEM_LANGUAGE
    return None


def handle_unknown_tool(call: ToolCall, said: str, messages: list[dict], guards: Guards, *, fix: bool) -> str:
    """修复 4。文章原写法只追加一条错误、不追加模型自己的那条调用：模型看不到自己错在哪，
    下一轮很可能原样再来一次，直到 MAX_ITER。修复后：调用和错误成对进上下文，错误里列出
    真实工具，且最多重试 MAX_UNKNOWN_TOOL_RETRIES 次（再多多半是 prompt 本身有问题）。"""
    available = ", ".join(TOOLS)
    if not fix:
        error = UNKNOWN_TOOL_MESSAGE.format(tool_name=call.name, available=available)
        messages.append({"role": "user", "content": error})
        return error
    guards.check_unknown_tool(call.name)
    error = RETRY_UNKNOWN_TOOL.format(tool_name=call.name, available=available)
    messages.append({"role": "assistant", "content": said})
    messages.append({"role": "user", "content": error})
    return error


def execute(call: ToolCall, approve: Callable[[str, dict], bool]) -> str:
    """执行一个已知工具；高风险工具先经人确认（文章方向 3），拒绝的话告诉模型换个办法。"""
    if call.name in DANGEROUS_TOOLS and not approve(call.name, call.args):
        return REFUSED_MESSAGE.format(tool_name=call.name)
    return run_tool(call.name, call.args)


if __name__ == "__main__":
    from shared.cli import main   # 放在这里：import 本模块不加载 LangChain（cli 会）

    raise SystemExit(main("hardened_loop"))
