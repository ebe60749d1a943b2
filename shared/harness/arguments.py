"""命令行参数的两个小工具，所有命令（stage、compare、离线模型服务器）共用。

A usage mistake must be one line on stderr and exit status 2. argparse
prints the usage block *and* the error; :class:`OneLineParser` prints only the error.
"""
from __future__ import annotations

import argparse

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
