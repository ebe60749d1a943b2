"""离线模型说的话：最终回答、寒暄、以及"我做不到"的那句说明。

Every sentence the offline model produces, as module constants, and the composition of
the final answer from what the tools actually returned, step by step in the order asked:

- time, weather, price: the tool's result relayed as it is (a "not found" included);
- arithmetic: ``计算结果：365 * 24 = 8760`` (a trailing ``.0`` dropped; always some Chinese in the answer); a tool error is relayed
  honestly, e.g. ``工具执行出错: 除数不能为零``;
- holding: ``385.6 × 100 = 38,560 港元`` (thousands separators, as the article writes it).
  If the ``calculate`` that was observed is not the one the real price calls for (the
  parallel round guessed ``300 * 100`` before the price came back), the value is
  recomputed from the observed price and the answer says the earlier number was a wrong
  guess: the article's section-5 self-correction;
- a step whose tool was not offered (or ``tool_choice: none``): said so, never faked;
- an action no offered tool can do (``actions.py``), a follow-up that needs an earlier
  turn, a JSON protocol with other keys: said so, with what to do instead;
- order: the tool's result relayed (``已下单：…`` or its error); refused: said so, no order;
  ``place_order`` not offered: declined by the actions table (``actions.py``) like any action.

Left out: deciding when to answer (``policy.py``).
"""
from __future__ import annotations

from shared import market_data
from shared.calculator import CalculationError, evaluate, format_number
from shared.offline_llm.intents import (ARITHMETIC, FAREWELL, GREETING, HOLDING, IDENTITY, ORDER, PRICE, THANKS,
                                        TIME, WEATHER, Step)
from shared.offline_llm.progress import Progress
from shared.offline_llm.lesson_wording import REFUSED_MESSAGE, TOOL_ERROR_PREFIX
from shared.tool_functions import SIDES

_CITIES = "、".join(c.name for c in market_data.CITIES)
_STOCKS = "、".join(s.name for s in market_data.STOCKS)

# 听不懂时的那一句：说清离线能做什么、怎么接真实模型；绝不瞎猜一个工具调用
CAPABILITY_SENTENCE = (
    "抱歉，这个问题超出了离线演示模型的能力（它是一个确定性的规则策略，不是语言模型）："
    f"离线时只能查时间、查{_CITIES}的天气、查{_STOCKS}的股价、做算术，以及（请求提供了 place_order 时）下单；"
    "要接入真实模型，请在 .env 里设置 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL。"
)

SMALL_TALK_REPLIES = {
    GREETING: "你好！我是离线演示模型，可以帮你查时间、天气、股价，也能做算术。",
    THANKS: "不客气！还有什么需要查的吗？",
    FAREWELL: "再见！",
    IDENTITY: ("我是本仓库内置的离线演示模型：一个确定性的规则策略，不是语言模型。"
               "我能查时间、天气、股价和做算术；要用真实模型，请设置 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL。"),
}

TIME_ANSWER = "现在是 {result}。"
ARITHMETIC_ANSWER = "计算结果：{expression} = {result}。"
ARITHMETIC_FAILED = "计算 {expression} 没有成功：{result}。"
HOLDING_ANSWER = "{quantity} 股{stock}的市值：{price} × {quantity} = {value} {currency}。"
HOLDING_FAILED = "计算 {quantity} 股{stock}的市值没有成功：{result}。"
HOLDING_NO_PRICE = "没有查到{stock}的股价，无法计算 {quantity} 股的市值。"
HOLDING_CORRECTION = ("注意：并行调用时股价还没查到，calculate({expression}) 里的 {guess} 是猜的，"
                      "算出的 {guess_value} 是错的；上面已按查到的实际股价 {price} 重新计算。")
TOOL_NOT_OFFERED = "这次请求没有提供 {tool} 工具，无法{task}。"
TOOLS_FORBIDDEN = "这次请求不允许调用工具（tool_choice 是 none），无法{task}。"
# 问题要办的事，这次提供的工具里没有一个能办（actions.py）
ACTION_NOT_OFFERED = "我不能{task}：这次请求提供的工具（{offered}）里没有能做这件事的，它需要一个像 {tool} 这样的工具。"
ACTION_NO_TOOLS = "我不能{task}：这次请求没有提供任何工具，它需要一个像 {tool} 这样的工具。"
# 依赖上一轮的追问："那上海呢？"
NO_MEMORY = ("每个问题都从零开始：我（和这个 agent）不记得之前问过什么，看不出「{question}」接的是哪个问题。"
             "请把问题问完整，比如{examples}。")
FOLLOW_UP_EXAMPLES = {"city": "「{name}天气怎么样？」", "stock": "「{name}股价多少？」"}
FOLLOW_UP_GENERIC = "「上海天气怎么样？」或「腾讯股价多少？」"
# 改了键名的 JSON 协议（{"action": ..., "input": ...}）
ONLY_ARTICLE_PROTOCOL = ("我只读得懂文章的 JSON 协议 {{\"tool\": ..., \"args\": ...}}；这段 system prompt 要的是 "
                         "{{\"{call_key}\": ..., \"{args_key}\": ...}}。离线模型是一张规则表，不会照新格式输出，"
                         "这不是 agent 的错。要试新格式，请接入真实模型：设置 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL。")
_TASKS = {
    TIME: "查询时间",
    WEATHER: "查询{subject}的天气",
    PRICE: "查询{subject}的股价",
    ARITHMETIC: "计算 {subject}",
    HOLDING: "计算 {quantity} 股{subject}的市值",
    ORDER: "下单（{quantity} 股{subject}）",
}

ORDER_REFUSED = "没有下单：你拒绝了{side} {quantity} 股{stock}的操作。"

_SENTENCE_END = "。！？.!?"


def final_answer(progress: Progress, *, tools_forbidden: bool = False, extra: tuple[str, ...] = ()) -> str:
    """The answer, in Chinese, built only from the observed results (``extra``: sentences appended)."""
    parts = [_sentence(_describe(progress, i, tools_forbidden)) for i in range(len(progress.plan))]
    return "".join(parts + [_sentence(text) for text in extra])


def action_sentence(task: str, tool: str, offered: tuple[str, ...]) -> str:
    """"我不能帮你订票或订酒店：…": an action no offered tool can do."""
    if not offered:
        return ACTION_NO_TOOLS.format(task=task, tool=tool)
    return ACTION_NOT_OFFERED.format(task=task, tool=tool, offered="、".join(offered))


UNCLEAR_ACTION = ("我能用 {tool} {task}，但没听懂具体要做什么：请说清楚买还是卖、多少股、哪只股票"
                  "（比如「帮我买 100 股腾讯」「卖出 10 股苹果」）。我不会替你猜数量。")


def unclear_action_sentence(task: str, tool: str) -> str:
    """An action an offered tool could do, asked for without what the tool needs (清仓: how many?)."""
    return UNCLEAR_ACTION.format(task=task, tool=tool)


def no_memory_sentence(question: str, name: str) -> str:
    """The answer to a follow-up that needs an earlier turn ("那上海呢？")."""
    name = _spaced(name).strip() + (" " if name.isascii() else "")      # "Tencent 股价多少？"
    if market_data.find_city(name) is not None:
        examples = FOLLOW_UP_EXAMPLES["city"].format(name=name)
    elif market_data.find_stock(name) is not None:
        examples = FOLLOW_UP_EXAMPLES["stock"].format(name=name)
    else:
        examples = FOLLOW_UP_GENERIC
    return NO_MEMORY.format(question=question.strip(), examples=examples)


def money(value: float) -> str:
    """``38560.0`` -> ``38,560``; ``8845.000000000002`` -> ``8,845``; ``1234.5`` -> ``1,234.5``."""
    text = f"{value:,.2f}"
    return text[:-3] if text.endswith(".00") else text.rstrip("0") if "." in text else text


def plain_number(text: str) -> str:
    """The calculator's ``8760`` / ``16.0`` as a reader writes it: ``8760`` / ``16``."""
    return text[:-2] if text.endswith(".0") and text[:-2].lstrip("-").isdigit() else text


def _describe(progress: Progress, index: int, tools_forbidden: bool = False) -> str:
    step, observation = progress.plan[index], progress.observed[index]
    if observation is None and tools_forbidden:
        return TOOLS_FORBIDDEN.format(task=_TASKS[step.kind].format(subject=step.subject, quantity=step.quantity))
    if step.kind == HOLDING:
        return _holding(progress, index)
    if step.kind == ORDER:
        return _order(progress, index)
    if observation is None:
        return _not_done(step)
    result = observation.result.strip()
    if step.kind == TIME and not result.startswith(TOOL_ERROR_PREFIX):
        return TIME_ANSWER.format(result=result)
    if step.kind == ARITHMETIC:
        failed = result.startswith(TOOL_ERROR_PREFIX)
        template = ARITHMETIC_FAILED if failed else ARITHMETIC_ANSWER
        return template.format(expression=step.subject, result=result if failed else plain_number(result))
    return result          # 天气、股价（含"未找到"）：工具怎么说就怎么转述


def _holding(progress: Progress, index: int) -> str:
    step, observation = progress.plan[index], progress.observed[index]
    stock = _spaced(step.subject)
    price, expected = progress.price_for(index), progress.holding_expression(index)
    if price is None or expected is None:
        if not progress.is_callable(index):      # 缺的可能是 calculate，也可能是查股价的工具
            missing = step if progress.offered_name(step) is None else progress.plan[step.depends_on]
            return _not_done(step, missing.tool)
        return HOLDING_NO_PRICE.format(stock=stock, quantity=step.quantity)
    if observation is None:
        return _not_done(step)
    asked = str(observation.args.get("expression", "")) if isinstance(observation.args, dict) else ""
    result = observation.result.strip()
    if _same_expression(asked, expected):
        if result.startswith(TOOL_ERROR_PREFIX):
            return HOLDING_FAILED.format(quantity=step.quantity, stock=stock, result=result)
        return _holding_value(step, stock, price.text, price.currency, result)
    # 观察到的 calculate 不是按真实股价算的（并行时猜的 300）：用查到的股价重算，并说明纠正
    recomputed = _holding_value(step, stock, price.text, price.currency, _evaluate(expected))
    guess = asked.split("*")[0].strip() if "*" in asked else asked
    correction = HOLDING_CORRECTION.format(expression=asked, guess=guess, price=price.text,
                                           guess_value=_money_or_text(result))
    return _sentence(recomputed) + correction


def _order(progress: Progress, index: int) -> str:
    step, observation = progress.plan[index], progress.observed[index]
    words = {"side": SIDES.get((step.args or {}).get("side"), ""), "quantity": step.quantity,
             "stock": _spaced(step.subject)}
    if observation is None:
        return _not_done(step)      # 没有 place_order 的请求到不了这里：actions.py 先把那句话如实拒绝了
    result = observation.result.strip()
    if result == REFUSED_MESSAGE.format(tool_name=observation.name):
        return ORDER_REFUSED.format(**words)
    return result              # 已下单：…，或工具的错误（未知股票、股数不对……）：如实转述


def _holding_value(step: Step, stock: str, price: str, currency: str, value: str) -> str:
    return HOLDING_ANSWER.format(quantity=step.quantity, stock=stock, price=price,
                                 value=_money_or_text(value), currency=currency).replace(" 。", "。")


def _not_done(step: Step, tool: str | None = None) -> str:
    task = _TASKS[step.kind].format(subject=step.subject, quantity=step.quantity)
    return TOOL_NOT_OFFERED.format(tool=tool or step.tool, task=task)


def _same_expression(a: str, b: str) -> bool:
    return "".join(a.split()) == "".join(b.split())


def _evaluate(expression: str) -> str:
    try:
        return format_number(evaluate(expression))
    except CalculationError as error:
        return str(error)


def _money_or_text(text: str) -> str:
    try:
        return money(float(text))
    except ValueError:
        return text


def _spaced(name: str) -> str:
    # "100 股腾讯" 但 "100 股 Tencent "：中英文之间留空格
    return f" {name} " if name.isascii() else name


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in _SENTENCE_END else text + "。"
