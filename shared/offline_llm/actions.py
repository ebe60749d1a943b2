"""问题里要办、但这次提供的工具办不了的事：说清楚做不到，绝不拿别的工具凑数。

"北京天气怎么样？顺便订一张去上海的机票": the demo tools can look up the weather, nothing
here books a flight. A careless pattern matcher sees 上海 next to a weather word and looks up
the weather twice; a careless model pretends. The offline model does neither: each *action*
below is recognised in its own clause, that clause is taken out of what the plan reads
(``intents.make_plan``), and the answer says plainly that this request offers no tool for it,
while the rest of the question is answered as usual.

==============  =========================================  ===============  ======================
action          recognised by                              tool that would  what the answer says
                                                           serve it
==============  =========================================  ===============  ======================
``travel``      订/预订…机票/酒店, book a flight/hotel        book_travel      我不能帮你订票或订酒店
``trade``       帮我买 N 股, 卖掉/卖出/下单, buy/sell N       place_order      我不能替你买卖股票
                shares (not "要多少钱": that is a price)
``message``     发邮件/短信/消息, send an email/message      send_message     我不能替你发邮件或消息
``reminder``    提醒我, 设闹钟, remind me, set an alarm      set_reminder     我不能设提醒或闹钟
``search``      新闻, 搜索/上网查, news, search the web       search_web       我不能搜索网页或新闻
``exchange``    汇率, 换成美元, exchange rate, convert to     get_exchange_    我不能查汇率
                                                           rate
==============  =========================================  ===============  ======================

When the tool that would serve an action *is* offered in the request (``place_order`` for a
trade, say), the action is not masked and not apologised for: serving it is the plan's job
(``intents.py``), exactly like any other step with an offered tool.

Caveats are the other half of honesty: a question the tools serve only in part. A weather
question about 明天 / tomorrow still gets ``get_weather`` (it is the nearest thing offered),
and the answer says that the tool only knows the weather *now*; the same for a stock price
of 去年 / yesterday.

Left out: language tasks (poems, translation) get the capability sentence (``answer.py``);
whether an offered tool really can do the action (its name is trusted).
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

_CLAUSE_END = re.compile(r"[。？！?!，,;；\n]|顺便|另外|然后|再帮|并且|同时|\band\b|\balso\b|\bthen\b", re.IGNORECASE)
# 问"要多少钱"的是价格问题，不是下单（"买 10 股英伟达要多少钱"）
_COST_QUESTION = re.compile(r"多少钱|要多少|花多少|需要多少|值多少|市值|how much|cost|worth|value", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """Something a question may ask for that only a tool with side effects (or other data) can do."""

    kind: str
    cue: re.Pattern
    task: str                 # "我不能{task}"
    tool: str                 # 能办这件事的工具名（请求里提供了它，就交给计划去调用）
    unless: re.Pattern | None = None   # 子句里有它就不算这个动作


ACTIONS: tuple[Action, ...] = (
    Action("travel", re.compile(r"(?:订|预订|预定|订购|买)[^。？！?!，,]{0,12}?(?:机票|火车票|车票|高铁票|船票|航班|酒店|宾馆|民宿|房间)|"
                                r"\b(?:book|reserve)\b[^.?!]{0,30}?\b(?:flights?|tickets?|hotels?|rooms?|trains?)\b",
                                re.IGNORECASE),
           "帮你订票或订酒店", "book_travel"),
    Action("trade", re.compile(r"(?:帮我|给我|替我|我要|我想|请)(?:把[^。？！?!，,]{0,12}?)?(?:买入?|卖出?|卖掉|抛)|"
                               r"买入|买进|卖出|卖掉|抛掉|抛售|清仓|下单|加仓|减仓|"
                               r"\b(?:buy|sell|purchase|short)\b", re.IGNORECASE),
           "替你买卖股票", "place_order", unless=_COST_QUESTION),
    Action("message", re.compile(r"发(?:一封|封|个|一条|条)?(?:邮件|电子邮件|短信|消息|微信)|"
                                 r"\bsend\b[^.?!]{0,20}?\b(?:e-?mails?|messages?|texts?|sms)\b|\b(?:e-?mail|text)\s+(?:my|him|her|them|the)\b",
                                 re.IGNORECASE),
           "替你发邮件或消息", "send_message"),
    Action("reminder", re.compile(r"提醒我|[设定][^。？！?!，,]{0,8}?闹钟|加到日程|日历里|"
                                  r"\bremind me\b|\bset (?:an? )?(?:alarm|reminder|timer)\b", re.IGNORECASE),
           "设提醒或闹钟", "set_reminder"),
    Action("search", re.compile(r"新闻|头条|搜索|搜一下|搜搜|上网查|百度一下|\bnews\b|\bheadlines?\b|"
                                r"\bsearch\b|\bgoogle\b|\blook up online\b", re.IGNORECASE),
           "搜索网页或新闻", "search_web"),
    Action("exchange", re.compile(r"汇率|换成(?:美元|人民币|港元|欧元|日元)|能换多少|兑换|"
                                  r"\bexchange rate\b|\bconvert\b[^.?!]{0,30}\b(?:to|into)\b", re.IGNORECASE),
           "查汇率或换算货币", "get_exchange_rate"),
)


@dataclass(frozen=True)
class Caveat:
    """A step the tools serve only in part: the call is made, the answer says what it lacks."""

    kind: str                 # 受影响的步骤类型（intents 的 WEATHER / PRICE）
    cue: re.Pattern
    sentence: str


CAVEATS: tuple[Caveat, ...] = (
    Caveat("weather", re.compile(r"明天|后天|下周|下个?星期|未来|周末|这几天|预报|\btomorrow\b|\bnext week\b|"
                                 r"\bforecast\b|\bweekend\b", re.IGNORECASE),
           "注意：get_weather 只能查现在的天气，查不到预报；上面是现在的天气。"),
    Caveat("price", re.compile(r"昨天|去年|上周|上个月|历史|以前|当时|\byesterday\b|\blast (?:year|week|month)\b|"
                               r"\bhistor(?:y|ical)\b|\bin \d{4}\b", re.IGNORECASE),
           "注意：get_stock_price 只能查现在的股价，查不到历史价格；上面是现在的股价。"),
)


@dataclass(frozen=True)
class ActionMention:
    action: Action
    start: int
    end: int                  # 被这个动作占据的子句 [start, end)


def find_actions(text: str) -> list[ActionMention]:
    """The actions asked for, each with the clause it occupies (in order, never overlapping)."""
    clauses = _Clauses(text)
    mentions: list[ActionMention] = []
    taken: list[tuple[int, int]] = []           # 已占的子句，按起点排好：重叠检查是一次二分查找
    unless_found: dict[tuple[re.Pattern, int, int], bool] = {}
    for action in ACTIONS:
        for found in action.cue.finditer(text):
            start, end = clauses.around(found.start(), found.end())
            if action.unless is not None:
                key = (action.unless, start, end)   # 同一子句里的多个提示词只查一次
                if key not in unless_found:
                    unless_found[key] = action.unless.search(text, start, end) is not None
                if unless_found[key]:
                    continue
            index = bisect_right(taken, (start, end))
            if (index == 0 or taken[index - 1][1] <= start) and (index == len(taken) or end <= taken[index][0]):
                taken.insert(index, (start, end))
                mentions.append(ActionMention(action, start, end))
    return sorted(mentions, key=lambda m: m.start)


def without_clauses(text: str, mentions: list[ActionMention]) -> str:
    """``text`` with the mentioned clauses blanked out (same length: positions stay valid)."""
    pieces, position = [], 0
    for mention in sorted(mentions, key=lambda m: m.start):
        pieces += [text[position:mention.start], " " * (mention.end - mention.start)]
        position = mention.end
    return "".join(pieces) + text[position:]


def caveats_for(text: str, kinds: set[str]) -> list[str]:
    """The caveat sentences for the step kinds in the plan whose cue the question has."""
    return [c.sentence for c in CAVEATS if c.kind in kinds and c.cue.search(text)]


class _Clauses:
    """The clause around a span: from the previous clause break to the next one.

    The breaks are found once, for the whole question; each lookup is a binary search plus a
    rescan of the last few characters (a break word right before the span, like ``and`` glued to
    it, counts as a break there even where the whole-text scan saw a longer word).
    """

    _RESCAN = 10            # 比最长的分句词（also、then 加上词界）长，够重扫

    def __init__(self, text: str):
        self.text = text
        self.breaks = [found.span() for found in _CLAUSE_END.finditer(text)]
        self.ends = [end for _, end in self.breaks]
        self.starts = [start for start, _ in self.breaks]

    def around(self, start: int, end: int) -> tuple[int, int]:
        return self._clause_start(start), self._clause_end(end)

    def _clause_start(self, start: int) -> int:
        # 和 _CLAUSE_END.finditer(text, 0, start) 的最后一个结尾一样：离 start 足够远的分句处两种扫法相同
        safe = bisect_right(self.ends, start - self._RESCAN)
        resume = max(self.ends[safe - 1] if safe else 0, start - self._RESCAN - 4, 0)
        last = self.ends[safe - 1] if safe else 0
        for found in _CLAUSE_END.finditer(self.text, resume, start):
            last = found.end()
        return last

    def _clause_end(self, end: int) -> int:
        # 和 _CLAUSE_END.search(text, end) 一样，除非整段扫描的某个分句词跨在 end 上：那时照原样搜
        index = bisect_left(self.starts, end)
        if index > 0 and self.ends[index - 1] > end:
            after = _CLAUSE_END.search(self.text, end)
            return after.start() if after else len(self.text)
        return self.starts[index] if index < len(self.starts) else len(self.text)
