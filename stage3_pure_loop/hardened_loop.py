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
    （方向 3）     高风险操作                   DANGEROUS_TOOLS 先问人：approve(name, args) -> bool；
                                                被拒绝的调用和拒绝成对进上下文（修复 4 的道理）

``--no-fix NAME``（可重复）关掉一个修复：README 的表格就是用它跑出"修复前/修复后"。

``run_agent`` 和 json_loop 的 ``run_agent`` 一行对一行：同样的三步，每个修复是 ``Fixes``
的一个具名方法，在循环里只出现在一处（行尾注释写着"修复 N"）。把两个文件 diff 一下，
多出来的那几行就是修复清单（README 里贴了这份 diff）。

守卫触发时不抛到外面：每个守卫是一个小异常（RepeatedCall、UnknownToolLimit、
BadAnswerLimit），在 run_agent 里变成运行记录的 status "stopped" 和 error 里的原因
——模型的错误是数据，不是崩溃。

Left out: function calling (stages 1-3), summarising what the window drops, retries on
transport errors.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shared import llm
from shared.approval import Approver, default_approver, needs_approval
from shared.harness.implementation import About, Protocol
from shared.harness.run_record import LoopResult, Status
from shared.tool_functions import REFUSED_MESSAGE, run_tool
from stage3_pure_loop.context_window import MAX_CONTEXT_MESSAGES, slide_window
from stage3_pure_loop.json_extract import extract_tool_call
from stage3_pure_loop.json_loop import (
    MAX_ITER, MAX_ITER_MESSAGE, RESULT_MESSAGE, TOOLS, UNKNOWN_TOOL_MESSAGE, ask_llm, build_messages, parse_reply,
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

# ---- 回给模型 / 用户的文字 ----
# 文章策略 A 的原话是"请基于此结果给出最终答案，不要再调用工具"。它会禁止多步任务的
# 下一步：文章那道题要 时间 → 股价 → 计算 三步，第一步之后就"不许再调工具"，模型只能
# 带着一半信息作答。所以这里只禁止"重复"，不禁止"下一步"；真正的死循环交给硬停。
NUDGE_RESULT_MESSAGE = ("工具 {tool_name} 的执行结果：{result}\n\n"
                        "请根据这个结果继续完成任务。如果信息已足够，请直接给出最终答案；不要重复调用同一个工具。")
RETRY_UNKNOWN_TOOL = "错误：{tool_name} 不是可用工具。可用工具有：{available}。请重新选择。"
BAD_ANSWER_MESSAGE = ("你的上一条回复不能作为最终答案：{problem}。"
                      "如果还需要工具，只输出一个工具调用 JSON；否则请用用户的语言给出完整的最终答案。")
FALLBACK_ANSWER = "抱歉，当前服务暂时不可用，请稍后重试。"

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
    """A guard ended the run; ``str(self)`` is the reason, ``answer`` what the user gets.

    ``call`` is the tool call the guard stopped (recorded in the trace, never executed).
    """

    answer: str | None = None

    def __init__(self, reason: str, call: tuple[str, dict] | None = None):
        super().__init__(reason)
        self.call = call


class RepeatedCall(GuardStop):
    """The same tool with the same arguments, MAX_SAME_CALLS times in a row."""


class UnknownToolLimit(GuardStop):
    """More than MAX_UNKNOWN_TOOL_RETRIES calls to tools that do not exist."""


class BadAnswerLimit(GuardStop):
    """MAX_BAD_ANSWERS final answers in a row failed validation: the fallback answer."""

    answer = FALLBACK_ANSWER


# ============ 加固后的核心循环：json_loop.run_agent 的三步，每个修复是一处具名调用 ============
def run_agent(user_input: str, max_steps: int = MAX_ITER, *, client: OpenAI | None = None,
              model: str | None = None, temperature: float = 0.0, seed: int | None = None,
              approve: Approver | None = None, disabled_fixes: frozenset[str] = frozenset()) -> LoopResult:
    """json_loop 的循环 + 五道保险。``disabled_fixes`` 里的修复退回文章的天真写法。"""
    client, model = client or llm.openai_client(), model or llm.model_name()   # 没给：用配置的端点
    approve = approve or default_approver()          # 文章的 input()：终端上问人，没有终端就拒绝
    fixes = Fixes(user_input, enabled=enabled_fixes(disabled_fixes))
    messages = build_messages(user_input)
    rounds: list[list[dict]] = []          # 每轮的调用与结果：运行记录要的，文章里没有
    try:
        for iteration in range(max_steps):
            # ---- 第 1 步：LLM 推理 ----
            reply = ask_llm(client, model, fixes.window(messages), temperature, seed)         # 修复 3

            # ---- 第 2 步：判断是否需要调用工具 ----
            call = fixes.parse_reply(reply)                                                    # 修复 1
            if call is None:                    # 没有工具调用 → 返回最终答案
                if problem := fixes.answer_problem(reply):                                     # 修复 5
                    messages += fixes.ask_for_another_answer(reply, problem)                   # 修复 5
                    continue
                messages.append({"role": "assistant", "content": reply})
                return LoopResult(messages=messages, rounds=rounds, status=Status.ANSWERED, answer=reply)
            tool_name, tool_args = call
            if iteration == max_steps - 1:      # 最后一次循环：工具的结果已经没有模型会读，不执行
                rounds.append([{"name": tool_name, "args": tool_args, "result": None}])
                break
            if tool_name not in TOOLS:
                error = fixes.unknown_tool_error(call)                                         # 修复 4
                rounds.append([{"name": tool_name, "args": tool_args, "result": error}])
                messages += fixes.unknown_tool_turn(fixes.remembered(reply, call), error)      # 修复 4
                continue

            # ---- 第 3 步：执行工具，调用和结果追加到上下文（Agent 的"记忆"），循环迭代 ----
            fixes.check_repeat(call)                                                           # 修复 2
            result = execute(tool_name, tool_args, approve)                                    # 方向 3
            rounds.append([{"name": tool_name, "args": tool_args, "result": result}])
            messages.append({"role": "assistant", "content": fixes.remembered(reply, call)})  # 修复 3
            messages.append({"role": "user", "content": fixes.result_message(tool_name, result)})  # 修复 2

        return LoopResult(messages=messages, rounds=rounds, status=Status.MAX_STEPS, answer=None,
                          stopped_at=MAX_ITER_MESSAGE)
    except GuardStop as stop:
        if stop.call is not None:           # 被守卫拦下的调用也进 trace，但没有执行（result 为 None）
            rounds.append([{"name": stop.call[0], "args": stop.call[1], "result": None}])
        return LoopResult(messages=messages, rounds=rounds, status=Status.STOPPED, answer=stop.answer,
                          error=str(stop), stopped_at=f"{type(stop).__name__}: {stop}")


def enabled_fixes(disabled: frozenset[str]) -> frozenset[str]:
    """All fixes but the disabled ones; an unknown name is a ``ValueError``."""
    unknown = sorted(set(disabled) - set(FIXES))
    if unknown:
        raise ValueError(ERR_UNKNOWN_FIX.format(names=", ".join(unknown), known=", ".join(FIXES)))
    return frozenset(FIXES) - frozenset(disabled)


# ============ 五个修复：每个方法是 run_agent 里的一处调用；关掉时退回文章的写法 ============
@dataclass
class Fixes:
    """The fixes of one run, and the counters behind their guards (one per run, never shared)."""

    question: str
    enabled: frozenset[str]
    recent_calls: list[str] = field(default_factory=list)
    unknown_tools: list[str] = field(default_factory=list)
    bad_answers: int = 0

    # ---- 修复 1 extract：从任意文本里找调用（关掉：文章的"整段必须是 JSON"） ----
    def parse_reply(self, reply: str) -> tuple[str, dict] | None:
        call = extract_tool_call(reply) if "extract" in self.enabled else parse_reply(reply)
        if call is not None:
            self.bad_answers = 0            # 修复 5 数的是"连续"不合格的答案：一次调用就清零
        return call

    # ---- 修复 2 repeat：策略 A 结果后温和提醒，策略 B 同一调用连续 3 次就硬停 ----
    def result_message(self, tool_name: str, result: str) -> str:
        template = NUDGE_RESULT_MESSAGE if "repeat" in self.enabled else RESULT_MESSAGE
        return template.format(tool_name=tool_name, result=result)

    def check_repeat(self, call: tuple[str, dict]) -> None:
        if "repeat" not in self.enabled:
            return
        # 调用的"指纹"：工具名 + 排好序的参数 JSON（文章的 call_key）
        name, args = call
        self.recent_calls.append(f"{name}:{json.dumps(args, sort_keys=True, ensure_ascii=False)}")
        last = self.recent_calls[-MAX_SAME_CALLS:]
        if len(last) == MAX_SAME_CALLS and len(set(last)) == 1:
            raise RepeatedCall(STOP_REPEATED.format(call=f"{name}({args})", times=MAX_SAME_CALLS), call)

    # ---- 修复 3 window：发出去的是窗口；历史里存读懂的调用，不存模型的原话 ----
    def window(self, messages: list[dict]) -> list[dict]:
        if "window" not in self.enabled:
            return messages
        return slide_window(messages, max_messages=MAX_CONTEXT_MESSAGES, max_tokens=WINDOW_MAX_TOKENS)

    def remembered(self, reply: str, call: tuple[str, dict]) -> str:
        return canonical_call(*call) if "window" in self.enabled else reply

    # ---- 修复 4 unknown_tool：错误里列出真实工具，模型看得到自己的错，最多重试 3 次 ----
    def unknown_tool_error(self, call: tuple[str, dict]) -> str:
        name, _ = call
        available = ", ".join(TOOLS)
        if "unknown_tool" not in self.enabled:
            return UNKNOWN_TOOL_MESSAGE.format(tool_name=name, available=available)
        self.unknown_tools.append(name)
        if len(self.unknown_tools) > MAX_UNKNOWN_TOOL_RETRIES:
            raise UnknownToolLimit(STOP_UNKNOWN.format(names=", ".join(dict.fromkeys(self.unknown_tools)),
                                                       retries=MAX_UNKNOWN_TOOL_RETRIES), call)
        return RETRY_UNKNOWN_TOOL.format(tool_name=name, available=available)

    def unknown_tool_turn(self, said: str, error: str) -> list[dict]:
        """文章原写法只追加一条错误、不追加模型自己的那条调用：模型看不到自己错在哪，
        下一轮很可能原样再来一次。修复后调用和错误成对进上下文。"""
        turn = [{"role": "user", "content": error}]
        if "unknown_tool" in self.enabled:
            turn.insert(0, {"role": "assistant", "content": said})
        return turn

    # ---- 修复 5 validate：校验最终答案，连续 3 次不合格就降级 ----
    def answer_problem(self, reply: str) -> str | None:
        return answer_problem(reply, self.question) if "validate" in self.enabled else None

    def ask_for_another_answer(self, reply: str, problem: str) -> list[dict]:
        self.bad_answers += 1
        if self.bad_answers >= MAX_BAD_ANSWERS:
            raise BadAnswerLimit(STOP_BAD_ANSWERS.format(times=MAX_BAD_ANSWERS, problem=problem))
        return [{"role": "assistant", "content": reply},
                {"role": "user", "content": BAD_ANSWER_MESSAGE.format(problem=problem)}]


def canonical_call(name: str, args: dict) -> str:
    """The call exactly as the system prompt asks for it: ``{"tool": ..., "args": {...}}``.

    Why the window needs this: a sliding window alone cannot save a task whose every
    result is still needed. When the model thinks aloud at length inside its calls, the
    window has to drop the *oldest* call and its result, the model no longer sees that
    result, asks for it again, which pushes out the next one... (the article's "LLM 开始
    遗忘最早的工具调用结果"). Keeping only the call we understood keeps every result in a
    small context; the window remains the hard bound for long runs.
    """
    return json.dumps({"tool": name, "args": args}, ensure_ascii=False)


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


def execute(tool_name: str, tool_args: dict, approve: Approver) -> str:
    """执行一个已知工具；高风险工具先经人确认（文章方向 3），拒绝的话告诉模型换个办法。

    和 json_loop 不同：拒绝像任何结果一样，和模型自己的那条调用成对进上下文（修复 4 的道理：
    模型得看得见自己哪一步被拒绝了）。
    """
    if needs_approval(tool_name) and not approve(tool_name, tool_args):
        return REFUSED_MESSAGE.format(tool_name=tool_name)
    return run_tool(tool_name, tool_args)


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(name="hardened_loop", tier="零框架 + 五个翻车现场的修复",
              command="python -m stage3_pure_loop.hardened_loop", protocol=Protocol.JSON,
              step_limit="for iteration in range(MAX_ITER) 的最后一轮：模型要的工具不执行", fixes=FIXES)


if __name__ == "__main__":
    from shared.harness.cli import main   # 放在这里：import 本模块不加载 LangChain（cli 会）

    raise SystemExit(main(run_agent, ABOUT))
