"""文章里的 ``tools.py``：四个 LangChain 工具，就是仓库的 :mod:`shared.tools`。

The articles' files import ``from tools import get_weather, get_current_time, calculate,
get_stock_price``; these are the repository's tools, re-exported, so an article file sees
the very schemas the stages send.
"""
import config  # noqa: F401  （先让 config 把仓库根目录放进 sys.path）

from shared.tools import calculate, get_current_time, get_stock_price, get_weather

__all__ = ["calculate", "get_current_time", "get_stock_price", "get_weather"]
