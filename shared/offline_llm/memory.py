"""离线模型的"记忆"：它以为自己记得的旧股价（过时的，和工具查到的不一样）。

A real model carries outdated facts from its training data. At temperature > 0 the offline
model may fire every call in one parallel round (``policy.py``, rule 5): the holding's
``calculate`` has to be written before any price came back, so the model fills in what it
*remembers*. That is the article's section-5 ``calculate("300 * 100")`` for 腾讯, whose
real demo price is 385.6.

This is the model's memory, not lesson data: the tools never read it, and
:mod:`shared.market_data` (what the tools look up) does not carry it.

Left out: memory of anything else (cities, earlier questions: every request starts from
zero, see ``answer.py``'s follow-up sentence).
"""
from __future__ import annotations

from shared import market_data

# 行情代码 -> 模型"记得"的旧价格
STALE_PRICES: dict[str, float] = {
    "0700.HK": 300,
    "9988.HK": 75,
    "600519.SS": 1800,
    "AAPL": 150,
    "NVDA": 100,
}


def remembered_price(name: str) -> float | None:
    """The outdated price the model remembers for a stock name; None: never heard of it."""
    stock = market_data.find_stock(name)
    return STALE_PRICES.get(stock.ticker) if stock is not None else None
