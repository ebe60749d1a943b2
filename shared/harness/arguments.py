"""命令行参数的两个小工具，所有命令（stage、compare、离线模型服务器）共用。

A usage mistake must be one line on stderr and exit status 2. argparse
prints the usage block *and* the error; :class:`OneLineParser` prints only the error.
"""
from __future__ import annotations

import argparse
import math

# 采样温度的合法范围：OpenAI Chat Completions 的约定，命令行、环境变量和离线服务器都用这一个
TEMPERATURE_RANGE = (0.0, 2.0)
ERR_LINE = "{prog}: 错误: {message}（--help 查看用法）\n"
ERR_POSITIVE = "应是正整数，收到 {value!r}"


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage mistake in one line (exit 2) instead of usage + error."""

    def error(self, message: str):
        self.exit(2, ERR_LINE.format(prog=self.prog, message=message))


def positive_int(text: str) -> int:
    """``type=`` for flags like ``--max-steps``: 1, 2, 3, ..."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(ERR_POSITIVE.format(value=text)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(ERR_POSITIVE.format(value=text))
    return value


def is_temperature(value: float) -> bool:
    """A finite number within :data:`TEMPERATURE_RANGE`."""
    low, high = TEMPERATURE_RANGE
    return math.isfinite(value) and low <= value <= high
