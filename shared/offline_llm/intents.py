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
from bisect import bisect_left, bisect_right
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
# 股数的写法：一串数字（可带千分位逗号），后面跟着单位。先找数字串、再在串尾看单位：
# 从数字串中间开始的匹配不可能成功（单位只能接在串尾），这样每个字符只读一次
_NUMBER_RUN = re.compile(r"\d[\d,]*")
# "100 股"（但不是"股价""股票""股份"）、"100 shares"
_QUANTITY_UNIT = re.compile(r"\s*股(?![价票份])|\s*shares?\b", re.IGNORECASE)
# "100 股特斯拉值多少"：股数后面直接跟着的名字
_NAME_AFTER_SHARES = re.compile(
    r"\s*股\s*(?!市值|值|要|需要|多少|一共|总共|花|是|的|卖|买|抛)([\u4e00-\u9fff]{2,6}?)"
    r"(?=的|市值|值|要|需要|多少|一共|总共|花|是|$|[,.?!;。，？！；\s])")

# 下单：买/卖的说法（在股数之前，同一句里），以及"问了价格"的说法（下单时只在问了价格才先查价）
_ORDER_CUE = re.compile(r"买入|购买|买|卖出|卖掉|抛售|卖|\bbuy\b|\bpurchase\b|\bsell\b", re.IGNORECASE)
_SELL_WORDS = ("卖", "sell", "抛售")
# "买 200 股要花多少港元？"问的是钱，不是下单（那是持仓计算）
_COST_QUESTION = re.compile(r"花|多少|值|市值|如果|假如|要是|how much|cost|worth|would", re.IGNORECASE)
_PRICE_ASKED = re.compile(r"股价|价格|多少钱|行情|报价|price|quote|cost|how much", re.IGNORECASE)

# 算式：数字与运算符交替，允许括号（NFKC 之后全角符号已是半角，× ÷ 保留原样）
# 占有量词（*+ ++ ?+）不回溯：回溯在这里从来找不到别的匹配，却会让长串空白的代价变成平方
_NUMBER = r"\d++(?:\.\d++)?+"
_OPERAND = rf"[(\s]*+-?\s*+{_NUMBER}[)\s]*+"
_OPERATOR = r"(?:\*\*|//|[-+*/×÷%^])"
_EXPRESSION = re.compile(rf"{_OPERAND}(?:{_OPERATOR}{_OPERAND})+")
# 前一个字符是 ( 或空白、或数字接数字时，从这里开始的匹配和从前一个位置开始的一样（后者已经试过）
_EXPRESSION_NOT_REDUNDANT = re.compile(rf"(?!(?<=[(\s])|(?<=\d)\d){_EXPRESSION.pattern}")
_DATE_LIKE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")

# 中文名字的字符、名字之间的连接词、名字前后的"废话"
_CJK = "\u3400-\u9fff"
_NAME_RUN = re.compile(rf"[{_CJK}A-Za-z0-9.&-]+")
MAX_NAME_CHARS = 10
_CONNECTOR = re.compile(r"以及|还有|和|与|跟|及|或|、")
# 注意用 pattern.match(text, pos)：它在 pos 处锚定，所以模式里不写 ^
_LEADING_FILLER = re.compile(
    r"(?:请问|请|麻烦你?|帮我|帮忙|给我|替我|你|我想|我要|想要|想|能不能|可以|查询|查查|查一查|查|"
    r"看看|看一看|看|问问|问|告诉我|说说|知道|了解|一下|现在|今天|明天|目前|当前|今日|最新|那么|然后|"
    r"再|并且|顺便|另外)")
_TRAILING_FILLERS = ("的", "市", "现在", "今天", "明天", "目前", "当前", "今日", "最新")   # 互不为后缀：一次只会有一个吻合
_SENTENCE_END = re.compile(r"[。?!？！;；\n]")
_NOT_A_NAME = {"它", "这", "那", "这个", "那个", "这只", "那只", "股市", "大盘", "A股", "港股", "美股"}

# 英文名字：首字母大写的词（可多个，如 New York）；句首的虚词不算名字。
# 最多 8 个词、每词最多 40 个字母：不设上限时，一长串大写词让每个起点都读到串尾（平方的代价）
_EN_WORD = r"[A-Z][A-Za-z.&-]{0,39}"
_EN_NAME = rf"{_EN_WORD}(?:\s+{_EN_WORD}){{0,7}}"
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
    ordered_at = {position for position, *_ in orders}
    holdings = [h for h in _holdings(text, stocks) if h[0] not in ordered_at]
    needed = {stock.key for _, stock, _ in holdings}
    price_cue = _PRICE_ASKED if orders else _STOCK_CUE     # 下单的"股"不等于问股价
    if price_cue.search(text) or needed:
        for stock in _unique(stocks):
            placed.append((stock.start, Step(PRICE, TOOL_FOR[PRICE], {"symbol": stock.spelled},
                                             subject=stock.spelled, key=stock.key)))
    for position, expression in _expressions(text, stocks):
        placed.append((position, Step(ARITHMETIC, TOOL_FOR[ARITHMETIC], {"expression": expression},
                                      subject=expression, key=expression)))
    first_mentions: dict[str, int] = {}
    for stock in stocks:
        first_mentions.setdefault(stock.key, stock.start)      # stocks 按位置排好了
    for position, stock, quantity in holdings:
        first_mention = first_mentions[stock.key]
        # 持仓的 calculate 必须排在它依赖的查价之后
        placed.append((max(position, first_mention) + 0.5,
                       Step(HOLDING, TOOL_FOR[HOLDING], None, subject=stock.spelled, key=stock.key,
                            quantity=quantity)))
    for position, stock, quantity, side in orders:
        # 下单排在同一只股票的查价之后（问了价格的话，先看价格再下单）
        placed.append((max(position, first_mentions[stock.key]) + 0.6,
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
    prices: dict[str, int] = {}
    for index, step in enumerate(steps):
        if step.kind == PRICE:
            prices.setdefault(step.key, index)
    linked = []
    for step in steps:
        if step.kind == HOLDING:
            step = replace(step, depends_on=prices[step.key])
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
    taken = _Taken(text, known + unknown)
    unknown += [m for m in _names_after_shares(text) if not taken.overlaps(m.start, m.end)]
    return sorted(known + unknown, key=lambda m: m.start)


def _city_mentions(text: str) -> list[_Mention]:
    known = [_Mention(s, e, text[s:e], market_data.find_city(text[s:e]).name)
             for s, e in _scan_names(text, market_data.city_names())]
    unknown = _names_in_patterns(text, _WEATHER_WORD, _EN_WEATHER, known)
    return sorted(known + unknown, key=lambda m: m.start)


class _Taken:
    """Which characters some span already covers: an overlap check that costs the span's length,
    not the number of spans already found (a long question can hold many thousands)."""

    def __init__(self, text: str, mentions: list[_Mention] = ()):
        self._covered = bytearray(len(text) + 1)
        for mention in mentions:
            self.take(mention.start, mention.end)

    def overlaps(self, start: int, end: int) -> bool:
        return self._covered.find(1, start, end) != -1

    def take(self, start: int, end: int) -> None:
        self._covered[start:end] = b"\x01" * (end - start)


def _scan_names(text: str, names: list[str]) -> list[tuple[int, int]]:
    """Spans of known names, longest first, never overlapping; ASCII names on word bounds."""
    spans: list[tuple[int, int]] = []
    folded = text.casefold()
    taken = _Taken(folded)
    for name in names:           # 已按长度从长到短排好：贵州茅台先于茅台
        for found in re.finditer(re.escape(name.casefold()), folded):
            start, end = found.span()
            if name.isascii() and not _on_word_bounds(text, start, end):
                continue
            if not taken.overlaps(start, end):
                taken.take(start, end)
                spans.append((start, end))
    return sorted(spans)


def _on_word_bounds(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())


def _names_in_patterns(text: str, chinese_word: re.Pattern, english: tuple[re.Pattern, ...],
                       known: list[_Mention]) -> list[_Mention]:
    found = _chinese_names(text, chinese_word)
    for pattern in english:
        for match in pattern.finditer(text):
            found += _english_names(text, match)
    unique: list[_Mention] = []
    taken = _Taken(text, known)
    for mention in found:
        if not taken.overlaps(mention.start, mention.end):
            taken.take(mention.start, mention.end)
            unique.append(mention)
    return unique


def _chinese_names(text: str, word: re.Pattern) -> list[_Mention]:
    """``帮我查一下纽约和东京的天气`` -> 纽约, 东京: for each keyword, the names in the run before it.

    The run of name characters before a keyword is cut into pieces at the connectors (和, 以及...).
    Keywords in the same run share its pieces: each piece is read once, and a piece already too long
    to be a name is not read again when the next keyword makes it longer ("股价股价股价…" stays linear).
    """
    runs = [found.span() for found in _NAME_RUN.finditer(text)]
    run_ends = [end for _, end in runs]
    mentions: list[_Mention] = []
    previous: tuple[int, int, int, bool] | None = None    # (run 起点, 最后一段的起点, 上一个关键词处的终点, 那段太长)
    for keyword in word.finditer(text):
        end = keyword.start()
        while end > 0 and text[end - 1] in " 的":
            end -= 1
        index = bisect_right(run_ends, end - 1)
        start = runs[index][0] if end > 0 and index < len(runs) and runs[index][0] <= end - 1 else end
        piece_start, scan_from, resumed = start, start, previous is not None and previous[0] == start
        if resumed:
            piece_start, scan_from = previous[1], max(previous[1], previous[2] - 1)
        too_long = False
        for connector in [*_CONNECTOR.finditer(text, scan_from, end), None]:
            piece_end = connector.start() if connector else end
            if (resumed and piece_start == previous[1] and previous[3] and piece_end > previous[2]):
                too_long = True          # 上一次已经太长的那段，只会更长
            else:
                mention, too_long = _piece_name(text, piece_start, piece_end)
                if mention is not None:
                    mentions.append(mention)
            if connector is not None:
                piece_start = connector.end()
        previous = (start, piece_start, end, too_long)
    return mentions


def _names_after_shares(text: str) -> list[_Mention]:
    names = []
    for number in _NUMBER_RUN.finditer(text):
        found = _NAME_AFTER_SHARES.match(text, number.end())
        if found is not None and (mention := _clean_name(text, *found.span(1))) is not None:
            names.append(mention)
    return names


def _clean_name(text: str, start: int, end: int) -> _Mention | None:
    """Strip filler words around a candidate name; None when nothing name-like is left."""
    return _piece_name(text, start, end)[0]


def _piece_name(text: str, start: int, end: int) -> tuple[_Mention | None, bool]:
    """:func:`_clean_name`, and whether the piece was refused for being too long to be a name."""
    while (filler := _LEADING_FILLER.match(text, start, end)) and filler.end() > start:
        start = filler.end()
    while start < end and (tail := next((f for f in _TRAILING_FILLERS if text.endswith(f, start, end)), None)):
        end -= len(tail)
    if end - start > MAX_NAME_CHARS and not (text[start].isspace() or text[end - 1].isspace()):
        return None, True            # 不切片：一段很长的文字不用复制一遍才知道它太长
    name = text[start:end].strip()
    if not name or len(name) > MAX_NAME_CHARS or name in _NOT_A_NAME or name.replace(".", "").isdigit():
        return None, len(name) > MAX_NAME_CHARS
    return _Mention(start, end, name, name.casefold()), False


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


# ---- 持仓与算式 ----

def _holdings(text: str, stocks: list[_Mention]) -> list[tuple[int, _Mention, str]]:
    """``(position, stock, quantity)`` for every "N 股" / "N shares" that has a stock to go with."""
    holdings, seen = [], set()
    in_a_stock = _Taken(text, stocks)
    starts = [s.start for s in stocks]
    sentence_ends = [found.start() for found in _SENTENCE_END.finditer(text)]
    for number in _NUMBER_RUN.finditer(text):
        if _QUANTITY_UNIT.match(text, number.end()) is None:
            continue
        position = number.start()
        if in_a_stock.overlaps(position, position + 1):           # 600519 是代码，不是股数
            continue
        quantity = number.group().replace(",", "")
        stock = _stock_for_quantity(position, stocks, starts, sentence_ends, len(text))
        if stock is not None and (stock.key, quantity) not in seen:
            seen.add((stock.key, quantity))
            holdings.append((position, stock, quantity))
    return holdings


def _orders(text: str, stocks: list[_Mention]) -> list[tuple[int, _Mention, str, str]]:
    """``(position, stock, quantity, side)`` for every "买 N 股" / "sell N shares" / "把 N 股卖掉" with a stock.

    Linear in the question's length: cue words, cost words and sentence ends are found once
    and looked up by bisection for each share count.
    """
    orders = []
    in_a_stock = _Taken(text, stocks)
    starts = [s.start for s in stocks]
    sentence_ends = [found.start() for found in _SENTENCE_END.finditer(text)]
    cues = list(_ORDER_CUE.finditer(text))
    cue_starts = [c.start() for c in cues]
    costs = [found.start() for found in _COST_QUESTION.finditer(text)]
    for number in _NUMBER_RUN.finditer(text):
        unit = _QUANTITY_UNIT.match(text, number.end())
        position = number.start()
        if unit is None or in_a_stock.overlaps(position, position + 1):
            continue
        end_index = bisect_left(sentence_ends, position)
        sentence_start = sentence_ends[end_index - 1] + 1 if end_index > 0 else 0
        sentence_end = sentence_ends[end_index] if end_index < len(sentence_ends) else len(text)
        before = bisect_left(cue_starts, position) - 1            # 同一句里、股数之前最近的买卖词
        cue = cues[before] if before >= 0 and cue_starts[before] >= sentence_start else None
        after = bisect_left(cue_starts, unit.end())               # "把 10 股卖掉"：买卖词紧跟在股数后面
        if cue is None and after < len(cues) and cue_starts[after] - unit.end() <= 3 \
                and not text[unit.end():cue_starts[after]].strip() and cue_starts[after] < sentence_end:
            cue = cues[after]
        cost = bisect_left(costs, sentence_start)
        asks_cost = cost < len(costs) and costs[cost] < sentence_end
        stock = _stock_for_quantity(position, stocks, starts, sentence_ends, len(text))
        if cue is not None and stock is not None and not asks_cost:
            side = "sell" if cue.group().casefold().startswith(_SELL_WORDS) else "buy"
            orders.append((position, stock, number.group().replace(",", ""), side))
    return orders


def _stock_for_quantity(position: int, stocks: list[_Mention], starts: list[int], sentence_ends: list[int],
                        length: int) -> _Mention | None:
    # 同一句里、股数之后最近的股票（"100 股腾讯"、"100 shares of Tencent"），
    # 否则之前最近的股票（文章里"腾讯股票多少钱？持有 100 股市值多少"）。
    # 股数不在任何股票名里，所以起点在它之前的股票也都在它之前结束
    end_index = bisect_left(sentence_ends, position)
    sentence_end = sentence_ends[end_index] if end_index < len(sentence_ends) else length
    after = bisect_right(starts, position)
    if after < len(stocks) and stocks[after].start < sentence_end:
        return stocks[after]
    before = bisect_left(starts, position)
    return stocks[before - 1] if before > 0 else None


def _expressions(text: str, stocks: list[_Mention]) -> list[tuple[int, str]]:
    expressions = []
    in_a_stock = _Taken(text, stocks)
    for found in _finditer_once(_EXPRESSION, _EXPRESSION_NOT_REDUNDANT, text):
        if in_a_stock.overlaps(found.start(), found.end()):
            continue
        expression = _balance_parentheses(found.group().strip())
        if expression and not _DATE_LIKE.fullmatch(expression):
            position = found.start() + (len(found.group()) - len(found.group().lstrip()))
            expressions.append((position, _python_operators(expression)))
    return expressions


def _finditer_once(pattern: re.Pattern, not_redundant: re.Pattern, text: str):
    """``pattern.finditer(text)``, without trying start positions ``not_redundant`` rules out.

    ``not_redundant`` is ``pattern`` behind a look-behind that refuses a start whose match would be
    the same as the one from the position before it. That position was already tried, unless it is
    where the search resumes after a match: there ``pattern`` itself is tried first.
    """
    position = 0
    while (found := pattern.match(text, position) or not_redundant.search(text, position + 1)) is not None:
        yield found
        position = found.end()


def _balance_parentheses(expression: str) -> str:
    # 正则可能多吞一个句子里的括号："(算一下 3+5)" -> "3+5)"，把多余的去掉
    # （计数只做一次：一串很长的括号，每去掉一个都重数一遍就是平方的代价）
    opened, closed = expression.count("("), expression.count(")")
    start, end = 0, len(expression)
    while opened > closed and expression.startswith("(", start, end):
        start, opened = start + 1, opened - 1
        while start < end and expression[start].isspace():
            start += 1
    while closed > opened and expression.endswith(")", start, end):
        end, closed = end - 1, closed - 1
        while end > start and expression[end - 1].isspace():
            end -= 1
    return expression[start:end]


def _python_operators(expression: str) -> str:
    """``×`` ``÷`` ``^`` -> ``*`` ``/`` ``**``: the calculator reads Python arithmetic."""
    return expression.replace("×", "*").replace("÷", "/").replace("^", "**")


# ---- 算术的常见写法 -> 计算器认得的表达式 ----
# 计算器只认数字和 + - * / // % ** 括号（shared/calculator.py）；"15% of 2400"、"144 的平方根"
# 这些写法先改写成它认得的式子，再交给上面的算式识别。改写后的式子就是 calculate 的参数
_NUM = r"(\d+(?:\.\d+)?)"
# 以数字开头的写法从数字串的第一位开始匹配（?<!\d）：从串中间开始的尝试和从第一位开始的结果一样，
# 却要把后面的数字再读一遍，一长串数字就成了平方的代价
_FIRST_NUM = rf"(?<!\d){_NUM}"
_WRITTEN_FORMS = (
    (re.compile(rf"{_FIRST_NUM}\s*%\s*of\s*{_NUM}", re.IGNORECASE), r"\2 * \1 / 100"),
    (re.compile(rf"{_FIRST_NUM}\s*的\s*{_NUM}\s*%"), r"\1 * \2 / 100"),
    (re.compile(rf"(?:sqrt|√)\s*+\(?\s*+{_NUM}\s*\)?", re.IGNORECASE), r"\1 ** 0.5"),
    (re.compile(rf"square root of\s*{_NUM}", re.IGNORECASE), r"\1 ** 0.5"),
    (re.compile(rf"{_FIRST_NUM}\s*的\s*(?:算术)?平方根"), r"\1 ** 0.5"),
    (re.compile(rf"{_FIRST_NUM}\s*的\s*{_NUM}\s*次方"), r"\1 ** \2"),
    (re.compile(rf"{_FIRST_NUM}\s*的\s*平方(?!根)"), r"\1 ** 2"),
    (re.compile(rf"{_FIRST_NUM}\s*的\s*立方(?!根)"), r"\1 ** 3"),
    (re.compile(rf"{_FIRST_NUM}\s*to the power of\s*{_NUM}", re.IGNORECASE), r"\1 ** \2"),
    (re.compile(rf"{_FIRST_NUM}\s*(?:乘以|乘)\s*(?=\d)"), r"\1 * "),
    (re.compile(rf"{_FIRST_NUM}\s*除以\s*(?=\d)"), r"\1 / "),
    (re.compile(rf"{_FIRST_NUM}\s*(?:加上|加)\s*(?=\d)"), r"\1 + "),
    (re.compile(rf"{_FIRST_NUM}\s*(?:减去|减)\s*(?=\d)"), r"\1 - "),
)


_FORM_WORDS = ("%", "乘", "除以", "加", "减", "的")       # 写法里必有的字（不分大小写的英文写法不在此列）


def written_arithmetic(text: str) -> str:
    """``15% of 2400`` -> ``2400 * 15 / 100``, ``144 的平方根`` -> ``144 ** 0.5``, ``2的10次方`` -> ``2 ** 10``."""
    for pattern, replacement in _WRITTEN_FORMS:
        # 先用 in 看写法里的那个字在不在（很快）：一段长文字不必让十几个正则逐个位置都试一遍
        needed = next((word for word in _FORM_WORDS if word in pattern.pattern), None)
        if needed is None or needed in text:
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
