"""听懂问题：从用户的一句话里找出要办的事，排成一份计划（plan）。

The offline model's "understanding", done with plain pattern matching over the question
(Chinese and English) and the names in :mod:`shared.market_data`. It recognises:

==============  ========================================================  =====================================
kind            recognised when the question has...                       step
==============  ========================================================  =====================================
``time``        几点 / 时间 / 日期 / 几号 / 星期几 / what time / current time / date   ``get_current_time({})``
``weather``     a weather word (天气, 气温, weather...) and a city: a known     ``get_weather({"city": <as written>})``
                one (北京, Shanghai...) or a name in a weather pattern
                (纽约的天气, weather in New York)
``price``       a stock word (股价, 股票, 多少钱, price, stock...) and a stock:  ``get_stock_price({"symbol": <as written>})``
                a known name/alias/ticker, or a name in a stock pattern
                (特斯拉股价, Tesla stock)
``holding``     N 股 / N shares (持有 100 股…市值, 买 N 股, value of N          ``calculate({"expression": "<price> * N"})``
                shares of X); its stock: the nearest one after it in the       after the price step of that stock
                same sentence, else the nearest before it
``arithmetic``  digits with operators (+ - * / // % ** ^ × ÷, parentheses)    ``calculate({"expression": <the text>})``
                or in a written form (:func:`written_arithmetic`: 15% of 2400,
                2400 的 15%, sqrt(144), 144 的平方根, 2的10次方, 3 乘以 7)
``order``       a buy/sell word (买, 买入, 卖, 卖出, buy, sell...) before       ``place_order({"symbol": <as written>,
                N 股 / N shares and a stock (帮我买 100 股腾讯, Sell 10          "shares": N, "side": "buy"|"sell"})``
                shares of Apple); that quantity is then an order, not a        after the price step of that stock, if
                holding, and a price is looked up only when asked (股价,        the question asks for the price
                多少钱, price...)
==============  ========================================================  =====================================

Steps are ordered by where they appear in the question (a holding right after its price
step at the earliest); the same city or stock asked twice is one step. A name that is
*not* in the demo data still gets its step when it sits in a recognisable pattern: the
tool answers "not found", and the final answer relays that. Anything else is not a
guess: no step at all.

Also here: :func:`small_talk`, greetings and thanks that need no tool.

Left out: deciding what to do this turn (``policy.py``), the wording of answers
(``answer.py``). This is pattern matching, not language understanding, and says so.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from shared import market_data

TIME, WEATHER, PRICE, HOLDING, ARITHMETIC = "time", "weather", "price", "holding", "arithmetic"
ORDER = "order"

# 每类步骤用哪个工具（函数名与 shared.tool_functions.FUNCTIONS 一致）
TOOL_FOR = {
    TIME: "get_current_time",
    WEATHER: "get_weather",
    PRICE: "get_stock_price",
    HOLDING: "calculate",
    ARITHMETIC: "calculate",
    ORDER: "place_order",
}

GREETING, THANKS, IDENTITY, FAREWELL = "greeting", "thanks", "identity", "farewell"


@dataclass(frozen=True)
class Step:
    """One thing the question asks for, as a tool call to make."""

    kind: str                      # TIME / WEATHER / PRICE / HOLDING / ARITHMETIC
    tool: str                      # 规范工具名，见 TOOL_FOR
    args: dict | None              # 固定参数；HOLDING 为 None（参数要等股价查回来才知道）
    subject: str = ""              # 问题里的说法：城市、股票、算式
    key: str = ""                  # 去重用的身份：同一只股票的"腾讯"和"Tencent"是同一个 key
    quantity: str = ""             # HOLDING：股数，按问题里的写法（去掉千分位）
    depends_on: int | None = None  # HOLDING：它依赖的 PRICE 步骤在计划里的下标


# ---- 关键词（Chinese and English cues）----
_TIME_CUE = re.compile(r"几点|时间|日期|几号|星期几|周几|礼拜几|哪一天|哪天|what time|current time|"
                       r"the time|time is it|time now|\bdate\b|what day", re.IGNORECASE)
_WEATHER_CUE = re.compile(r"天气|气温|温度|下雨|下雪|weather|temperature|forecast|raining", re.IGNORECASE)
_STOCK_CUE = re.compile(r"股|价|多少钱|行情|市值|值多少|price|stock|share|quote|worth|value|trading|cost",
                        re.IGNORECASE)
# 未知名字的"句式"：名字后面跟着这些词，名字就是要查的对象（纽约的天气、特斯拉股价）
_WEATHER_WORD = re.compile(r"天气|气温")
_STOCK_WORD = re.compile(r"股价|股票|股份")
# "100 股"（但不是"股价""股票""股份"）、"100 shares"
_QUANTITY = re.compile(r"(\d[\d,]*)\s*股(?![价票份])|(\d[\d,]*)\s*shares?\b", re.IGNORECASE)
# "100 股特斯拉值多少"：股数后面直接跟着的名字
_NAME_AFTER_SHARES = re.compile(
    r"\d[\d,]*\s*股\s*(?!市值|值|要|需要|多少|一共|总共|花|是|的|卖|买|抛)([\u4e00-\u9fff]{2,6}?)"
    r"(?=的|市值|值|要|需要|多少|一共|总共|花|是|$|[,.?!;。，？！；\s])")

# 下单：买/卖的说法（在股数之前，同一句里），以及"问了价格"的说法（下单时只在问了价格才先查价）
_ORDER_CUE = re.compile(r"买入|购买|买|卖出|卖掉|抛售|卖|\bbuy\b|\bpurchase\b|\bsell\b", re.IGNORECASE)
_SELL_WORDS = ("卖", "sell", "抛售")
# "买 200 股要花多少港元？"问的是钱，不是下单（那是持仓计算）
_COST_QUESTION = re.compile(r"花|多少|值|市值|如果|假如|要是|how much|cost|worth|would", re.IGNORECASE)
_PRICE_ASKED = re.compile(r"股价|价格|多少钱|行情|报价|price|quote|cost|how much", re.IGNORECASE)

# 算式：数字与运算符交替，允许括号（NFKC 之后全角符号已是半角，× ÷ 保留原样）
_NUMBER = r"\d+(?:\.\d+)?"
_OPERAND = rf"[(\s]*-?\s*{_NUMBER}[)\s]*"
_OPERATOR = r"(?:\*\*|//|[-+*/×÷%^])"
_EXPRESSION = re.compile(rf"{_OPERAND}(?:{_OPERATOR}{_OPERAND})+")
_DATE_LIKE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")

# 中文名字的字符、名字之间的连接词、名字前后的"废话"
_CJK = "\u3400-\u9fff"
_NAME_CHAR = re.compile(rf"[{_CJK}A-Za-z0-9.&-]")
_CONNECTOR = re.compile(r"以及|还有|和|与|跟|及|或|、")
# 注意用 pattern.match(text, pos)：它在 pos 处锚定，所以模式里不写 ^
_LEADING_FILLER = re.compile(
    r"(?:请问|请|麻烦你?|帮我|帮忙|给我|替我|你|我想|我要|想要|想|能不能|可以|查询|查查|查一查|查|"
    r"看看|看一看|看|问问|问|告诉我|说说|知道|了解|一下|现在|今天|明天|目前|当前|今日|最新|那么|然后|"
    r"再|并且|顺便|另外)")
_TRAILING_FILLER = re.compile(r"(?:的|市|现在|今天|明天|目前|当前|今日|最新)$")
_NOT_A_NAME = {"它", "这", "那", "这个", "那个", "这只", "那只", "股市", "大盘", "A股", "港股", "美股"}

# 英文名字：首字母大写的词（可多个，如 New York）；句首的虚词不算名字
_EN_NAME = r"[A-Z][A-Za-z.&-]*(?:\s+[A-Z][A-Za-z.&-]*)*"
_EN_WEATHER = (re.compile(rf"\bweather\b(?:\s+like)?(?:\s+today)?\s+(?:in|for|at)\s+({_EN_NAME})"),
               re.compile(rf"\b({_EN_NAME})(?:'s)?\s+weather\b"))
_EN_STOCK = (re.compile(rf"\b(?:price|quote|value|shares?|stock)\s+(?:of|for)\s+({_EN_NAME})"),
             re.compile(rf"\b({_EN_NAME})(?:'s)?\s+(?:stock|share|shares|price)\b"))
_EN_MORE_NAMES = re.compile(rf"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)({_EN_NAME})")
_EN_FILLER = {"what", "whats", "the", "how", "is", "are", "check", "tell", "show", "get", "me", "please",
              "and", "also", "then", "current", "today", "now", "in", "of", "for", "a", "an", "my",
              "its", "give", "find", "look", "up", "i", "do", "does", "can", "you", "could"}

_SMALL_TALK = (
    (IDENTITY, re.compile(r"你是谁|你叫什么|你是什么|介绍一下你自己|who are you|what are you", re.IGNORECASE)),
    (THANKS, re.compile(r"谢谢|多谢|感谢|\bthanks?\b|thank you", re.IGNORECASE)),
    (FAREWELL, re.compile(r"再见|拜拜|\bbye\b|goodbye", re.IGNORECASE)),
    (GREETING, re.compile(r"你好|您好|嗨|哈喽|早上好|上午好|下午好|晚上好|^\s*(?:hi|hello|hey)\b",
                          re.IGNORECASE)),
)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    spelled: str        # 问题里的写法
    key: str            # 身份：已知的用代码/中文名，未知的用 casefold 后的写法


def normalize(question: str) -> str:
    """NFKC: full-width ``？（１００）`` -> ``?(100)``, so one set of patterns fits both."""
    return unicodedata.normalize("NFKC", question)


def make_plan(question: str) -> tuple[Step, ...]:
    """The steps the question asks for, in the order asked (empty: nothing recognised)."""
    text = written_arithmetic(normalize(question))
    stocks = _stock_mentions(text)
    placed: list[tuple[float, Step]] = []
    if (time_cue := _TIME_CUE.search(text)) is not None:
        placed.append((time_cue.start(), Step(TIME, TOOL_FOR[TIME], {})))
    if _WEATHER_CUE.search(text):
        for city in _unique(_city_mentions(text)):
            placed.append((city.start, Step(WEATHER, TOOL_FOR[WEATHER], {"city": city.spelled},
                                            subject=city.spelled, key=city.key)))
    orders = _orders(text, stocks)
    holdings = [h for h in _holdings(text, stocks) if h[0] not in {position for position, *_ in orders}]
    needed = {stock.key for _, stock, _ in holdings}
    price_cue = _PRICE_ASKED if orders else _STOCK_CUE     # 下单的"股"不等于问股价
    if price_cue.search(text) or needed:
        for stock in _unique(stocks):
            placed.append((stock.start, Step(PRICE, TOOL_FOR[PRICE], {"symbol": stock.spelled},
                                             subject=stock.spelled, key=stock.key)))
    for position, expression in _expressions(text, stocks):
        placed.append((position, Step(ARITHMETIC, TOOL_FOR[ARITHMETIC], {"expression": expression},
                                      subject=expression, key=expression)))
    for position, stock, quantity in holdings:
        first_mention = min(s.start for s in stocks if s.key == stock.key)
        # 持仓的 calculate 必须排在它依赖的查价之后
        placed.append((max(position, first_mention) + 0.5,
                       Step(HOLDING, TOOL_FOR[HOLDING], None, subject=stock.spelled, key=stock.key,
                            quantity=quantity)))
    for position, stock, quantity, side in orders:
        first_mention = min(s.start for s in stocks if s.key == stock.key)
        # 下单排在同一只股票的查价之后（问了价格的话，先看价格再下单）
        placed.append((max(position, first_mention) + 0.6,
                       Step(ORDER, TOOL_FOR[ORDER], {"symbol": stock.spelled, "shares": int(quantity), "side": side},
                            subject=stock.spelled, key=stock.key, quantity=quantity)))
    ordered = [step for _, step in sorted(placed, key=lambda pair: pair[0])]
    return tuple(_link_dependencies(ordered))


def small_talk(question: str) -> str | None:
    """``greeting`` / ``thanks`` / ``identity`` / ``farewell`` when the question is one of those."""
    text = normalize(question)
    return next((kind for kind, pattern in _SMALL_TALK if pattern.search(text)), None)


# ---- 计划的拼装 ----

def _link_dependencies(steps: list[Step]) -> list[Step]:
    linked = []
    for step in steps:
        if step.kind == HOLDING:
            price = next(i for i, s in enumerate(steps) if s.kind == PRICE and s.key == step.key)
            step = replace(step, depends_on=price)
        linked.append(step)
    return linked


def _unique(mentions: list[_Mention]) -> list[_Mention]:
    """First mention of each city/stock ("腾讯 … Tencent" is one stock)."""
    seen: dict[str, _Mention] = {}
    for mention in mentions:
        seen.setdefault(mention.key, mention)
    return list(seen.values())


# ---- 城市与股票：已知名字 + 句式里的未知名字 ----

def _stock_mentions(text: str) -> list[_Mention]:
    known = [_Mention(s, e, text[s:e], market_data.find_stock(text[s:e]).ticker)
             for s, e in _scan_names(text, market_data.stock_names())]
    unknown = _names_in_patterns(text, _STOCK_WORD, _EN_STOCK, known)
    unknown += [m for m in _names_after_shares(text) if not _overlaps(m, known + unknown)]
    return sorted(known + unknown, key=lambda m: m.start)


def _city_mentions(text: str) -> list[_Mention]:
    known = [_Mention(s, e, text[s:e], market_data.find_city(text[s:e]).name)
             for s, e in _scan_names(text, market_data.city_names())]
    unknown = _names_in_patterns(text, _WEATHER_WORD, _EN_WEATHER, known)
    return sorted(known + unknown, key=lambda m: m.start)


def _scan_names(text: str, names: list[str]) -> list[tuple[int, int]]:
    """Spans of known names, longest first, never overlapping; ASCII names on word bounds."""
    spans: list[tuple[int, int]] = []
    folded = text.casefold()
    for name in names:           # 已按长度从长到短排好：贵州茅台先于茅台
        for found in re.finditer(re.escape(name.casefold()), folded):
            start, end = found.span()
            if name.isascii() and not _on_word_bounds(text, start, end):
                continue
            if all(end <= s or start >= e for s, e in spans):
                spans.append((start, end))
    return sorted(spans)


def _on_word_bounds(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())


def _names_in_patterns(text: str, chinese_word: re.Pattern, english: tuple[re.Pattern, ...],
                       known: list[_Mention]) -> list[_Mention]:
    found: list[_Mention] = []
    for word in chinese_word.finditer(text):
        found += _chinese_names_before(text, word.start())
    for pattern in english:
        for match in pattern.finditer(text):
            found += _english_names(text, match)
    unique: list[_Mention] = []
    for mention in found:
        if not _overlaps(mention, known + unique):
            unique.append(mention)
    return unique


def _chinese_names_before(text: str, end: int) -> list[_Mention]:
    """``帮我查一下纽约和东京的天气`` -> 纽约, 东京: the names in the run before the keyword."""
    while end > 0 and text[end - 1] in " 的":
        end -= 1
    start = end
    while start > 0 and _NAME_CHAR.match(text[start - 1]):
        start -= 1
    mentions, piece_start = [], start
    for connector in [*_CONNECTOR.finditer(text, start, end), None]:
        piece_end = connector.start() if connector else end
        mention = _clean_name(text, piece_start, piece_end)
        if mention is not None:
            mentions.append(mention)
        piece_start = connector.end() if connector else end
    return mentions


def _names_after_shares(text: str) -> list[_Mention]:
    return [m for m in (_clean_name(text, *found.span(1)) for found in _NAME_AFTER_SHARES.finditer(text))
            if m is not None]


def _clean_name(text: str, start: int, end: int) -> _Mention | None:
    """Strip filler words around a candidate name; None when nothing name-like is left."""
    while (filler := _LEADING_FILLER.match(text, start, end)) and filler.end() > start:
        start = filler.end()
    while (tail := _TRAILING_FILLER.search(text[start:end])) is not None and tail.start() < tail.end():
        end = start + tail.start()
    name = text[start:end].strip()
    if not name or len(name) > 10 or name in _NOT_A_NAME or name.replace(".", "").isdigit():
        return None
    return _Mention(start, end, name, name.casefold())


def _english_names(text: str, match: re.Match) -> list[_Mention]:
    """The name a pattern caught, and any ``, X and Y`` that follow it."""
    mentions: list[_Mention] = []
    span: tuple[int, int] | None = match.span(1)
    while span is not None:
        mention = _strip_english_filler(text, *span)
        if mention is not None:
            mentions.append(mention)
        more = _EN_MORE_NAMES.match(text, span[1])
        span = more.span(1) if more else None
    return mentions


def _strip_english_filler(text: str, start: int, end: int) -> _Mention | None:
    words = list(re.finditer(r"\S+", text[start:end]))
    while words and words[0].group().casefold().strip(".") in _EN_FILLER:
        words.pop(0)
    if not words:
        return None
    name_start, name_end = start + words[0].start(), start + words[-1].end()
    name = text[name_start:name_end]
    return _Mention(name_start, name_end, name, name.casefold())


def _overlaps(mention: _Mention, others: list[_Mention]) -> bool:
    return any(mention.start < o.end and o.start < mention.end for o in others)


# ---- 持仓与算式 ----

def _holdings(text: str, stocks: list[_Mention]) -> list[tuple[int, _Mention, str]]:
    """``(position, stock, quantity)`` for every "N 股" / "N shares" that has a stock to go with."""
    holdings = []
    for found in _QUANTITY.finditer(text):
        if any(s.start <= found.start() < s.end for s in stocks):   # 600519 是代码，不是股数
            continue
        quantity = (found.group(1) or found.group(2)).replace(",", "")
        stock = _stock_for_quantity(text, found.start(), stocks)
        if stock is not None and all((stock.key, quantity) != (s.key, q) for _, s, q in holdings):
            holdings.append((found.start(), stock, quantity))
    return holdings


def _orders(text: str, stocks: list[_Mention]) -> list[tuple[int, _Mention, str, str]]:
    """``(position, stock, quantity, side)`` for every "买 N 股" / "sell N shares" with a stock."""
    orders = []
    for found in _QUANTITY.finditer(text):
        if any(s.start <= found.start() < s.end for s in stocks):
            continue
        sentence_start = max((i + 1 for i in range(found.start()) if text[i] in "。?!？！;；\n"), default=0)
        sentence_end = next((i for i in range(found.end(), len(text)) if text[i] in "。?!？！;；\n"), len(text))
        cues = list(_ORDER_CUE.finditer(text, sentence_start, found.start()))
        # "把 10 股卖掉"：买卖的词紧跟在股数后面
        cues += [c for c in [_ORDER_CUE.match(text, found.end() + len(text[found.end():]) - len(text[found.end():].lstrip()))]
                 if c is not None and c.start() < sentence_end]
        stock = _stock_for_quantity(text, found.start(), stocks)
        if cues and stock is not None and not _COST_QUESTION.search(text, sentence_start, sentence_end):
            side = "sell" if cues[-1].group().casefold().startswith(_SELL_WORDS) else "buy"
            orders.append((found.start(), stock, (found.group(1) or found.group(2)).replace(",", ""), side))
    return orders


def _stock_for_quantity(text: str, position: int, stocks: list[_Mention]) -> _Mention | None:
    # 同一句里、股数之后最近的股票（"100 股腾讯"、"100 shares of Tencent"），
    # 否则之前最近的股票（文章里"腾讯股票多少钱？持有 100 股市值多少"）
    sentence_end = next((i for i in range(position, len(text)) if text[i] in "。?!？！;；\n"), len(text))
    after = [s for s in stocks if position < s.start < sentence_end]
    before = [s for s in stocks if s.end <= position]
    if after:
        return after[0]
    return before[-1] if before else None


def _expressions(text: str, stocks: list[_Mention]) -> list[tuple[int, str]]:
    expressions = []
    for found in _EXPRESSION.finditer(text):
        if any(s.start < found.end() and found.start() < s.end for s in stocks):
            continue
        expression = _balance_parentheses(found.group().strip())
        if expression and not _DATE_LIKE.fullmatch(expression):
            position = found.start() + (len(found.group()) - len(found.group().lstrip()))
            expressions.append((position, _python_operators(expression)))
    return expressions


def _balance_parentheses(expression: str) -> str:
    # 正则可能多吞一个句子里的括号："(算一下 3+5)" -> "3+5)"，把多余的去掉
    while expression.count("(") > expression.count(")") and expression.startswith("("):
        expression = expression[1:].strip()
    while expression.count(")") > expression.count("(") and expression.endswith(")"):
        expression = expression[:-1].strip()
    return expression


def _python_operators(expression: str) -> str:
    """``×`` ``÷`` ``^`` -> ``*`` ``/`` ``**``: the calculator reads Python arithmetic."""
    return expression.replace("×", "*").replace("÷", "/").replace("^", "**")


# ---- 算术的常见写法 -> 计算器认得的表达式 ----
# 计算器只认数字和 + - * / // % ** 括号（shared/calculator.py）；"15% of 2400"、"144 的平方根"
# 这些写法先改写成它认得的式子，再交给上面的算式识别。改写后的式子就是 calculate 的参数
_NUM = r"(\d+(?:\.\d+)?)"
_WRITTEN_FORMS = (
    (re.compile(rf"{_NUM}\s*%\s*of\s*{_NUM}", re.IGNORECASE), r"\2 * \1 / 100"),
    (re.compile(rf"{_NUM}\s*的\s*{_NUM}\s*%"), r"\1 * \2 / 100"),
    (re.compile(rf"(?:sqrt|√)\s*\(?\s*{_NUM}\s*\)?", re.IGNORECASE), r"\1 ** 0.5"),
    (re.compile(rf"square root of\s*{_NUM}", re.IGNORECASE), r"\1 ** 0.5"),
    (re.compile(rf"{_NUM}\s*的\s*(?:算术)?平方根"), r"\1 ** 0.5"),
    (re.compile(rf"{_NUM}\s*的\s*{_NUM}\s*次方"), r"\1 ** \2"),
    (re.compile(rf"{_NUM}\s*的\s*平方(?!根)"), r"\1 ** 2"),
    (re.compile(rf"{_NUM}\s*的\s*立方(?!根)"), r"\1 ** 3"),
    (re.compile(rf"{_NUM}\s*to the power of\s*{_NUM}", re.IGNORECASE), r"\1 ** \2"),
    (re.compile(rf"{_NUM}\s*(?:乘以|乘)\s*(?=\d)"), r"\1 * "),
    (re.compile(rf"{_NUM}\s*除以\s*(?=\d)"), r"\1 / "),
    (re.compile(rf"{_NUM}\s*(?:加上|加)\s*(?=\d)"), r"\1 + "),
    (re.compile(rf"{_NUM}\s*(?:减去|减)\s*(?=\d)"), r"\1 - "),
)


def written_arithmetic(text: str) -> str:
    """``15% of 2400`` -> ``2400 * 15 / 100``, ``144 的平方根`` -> ``144 ** 0.5``, ``2的10次方`` -> ``2 ** 10``."""
    for pattern, replacement in _WRITTEN_FORMS:
        text = pattern.sub(replacement, text)
    return text


# ---- 依赖上一轮的追问 ----
# "那上海呢？"、"What about Tencent?"：单看这一句，不知道问的是天气还是股价
_FOLLOW_UP = re.compile(r"^\s*(?:那么?|那要是|还有|换成|and|what about|how about)\s*(?P<name>[^?？。!！,，]{1,20}?)"
                        r"\s*(?:呢|怎么样|如何)?\s*[?？]?\s*$", re.IGNORECASE)


def follow_up_subject(question: str) -> str | None:
    """``那上海呢？`` -> ``上海``: a follow-up that only makes sense after an earlier question."""
    found = _FOLLOW_UP.match(normalize(question))
    return found.group("name").strip() if found and found.group("name").strip() else None
