"""演示数据：工具查询的"世界"（虚构的固定数据，不是实时行情）。

The demo world the tools look things up in. Fixed, fictional figures (the Tencent price
is the articles' 385.6 港元), so every trace is reproducible. Both the tools and the
offline model read these tables: the model needs the names to understand a question,
the tools need the values to answer it. What the model *remembers* (an outdated price it
guesses with) is not lesson data: it lives with the model, in ``shared/offline_llm/memory.py``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stock:
    name: str               # 中文名，工具结果里显示的名字
    ticker: str             # 行情代码
    price: float            # 演示价格
    currency: str           # 计价货币
    aliases: tuple[str, ...]  # 能被识别的其他叫法（英文名、简称、代码）


@dataclass(frozen=True)
class City:
    name: str
    english: str
    weather: str


STOCKS: tuple[Stock, ...] = (
    Stock("腾讯", "0700.HK", 385.6, "港元", ("腾讯控股", "Tencent", "0700.HK", "0700", "700.HK")),
    Stock("阿里巴巴", "9988.HK", 88.45, "港元", ("阿里", "Alibaba", "9988.HK", "9988", "BABA")),
    Stock("贵州茅台", "600519.SS", 1528.0, "元", ("茅台", "Kweichow Moutai", "Moutai", "600519.SS", "600519")),
    Stock("苹果", "AAPL", 189.3, "美元", ("Apple", "AAPL")),
    Stock("英伟达", "NVDA", 131.8, "美元", ("NVIDIA", "Nvidia", "NVDA")),
)

CITIES: tuple[City, ...] = (
    City("北京", "Beijing", "晴天，25°C，湿度 45%"),
    City("上海", "Shanghai", "多云，28°C，湿度 60%"),
    City("深圳", "Shenzhen", "阵雨，30°C，湿度 75%"),
    City("广州", "Guangzhou", "雷阵雨，31°C，湿度 80%"),
    City("杭州", "Hangzhou", "小雨，22°C，湿度 70%"),
)


def _key(text: str) -> str:
    return text.strip().casefold()


_STOCK_INDEX = {_key(k): s for s in STOCKS for k in (s.name, s.ticker, *s.aliases)}
_CITY_INDEX = {_key(k): c for c in CITIES for k in (c.name, c.english, c.name + "市")}


def find_stock(symbol: str) -> Stock | None:
    """按中文名、英文名或代码（不区分大小写）找股票；找不到返回 None。"""
    return _STOCK_INDEX.get(_key(symbol))


def find_city(city: str) -> City | None:
    """按中文名或英文名（不区分大小写）找城市；找不到返回 None。"""
    return _CITY_INDEX.get(_key(city))


def stock_names() -> list[str]:
    """Every name a stock answers to, longest first (so 贵州茅台 wins over 茅台 in a scan)."""
    return sorted({k for s in STOCKS for k in (s.name, s.ticker, *s.aliases)}, key=len, reverse=True)


def city_names() -> list[str]:
    """Every name a city answers to, longest first."""
    return sorted({k for c in CITIES for k in (c.name, c.english)}, key=len, reverse=True)
