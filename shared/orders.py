"""订单簿：``place_order`` 真正写下的东西——``$AGENT_DATA_DIR/orders.sqlite`` 里的一张表。

危险工具之所以危险，是因为它有副作用：这里的副作用就是往 SQLite 的 ``orders`` 表里插一行
（id, created_at, symbol, shares, side, price, amount, implementation, run_id）。有了真实的
副作用，"没批准就不执行"才能被检查：批准 → 多一行；拒绝 → 一行也没有。

每次运行写到哪个库、记成哪个实现和哪次运行，由 :func:`orders_recorded_in` 在运行期间固定
（和 ``clock_fixed_at`` 一样用 ContextVar：compare 里并发的几次运行互不干扰）。

命令行::

    python -m shared.orders list     # 列出所有订单
    python -m shared.orders clear    # 清空订单表

库打不开（``AGENT_DATA_DIR`` 指向一个文件、没有写权限……）是一行说明，退出码 2。

本文件不包含：撮合、持仓、资金校验——这是演示用的"下单"，不是交易系统。
"""
from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

DATABASE_FILE = "orders.sqlite"
DEFAULT_DATA_DIR = Path(".data")           # 与 Settings.data_dir 的默认值相同（AGENT_DATA_DIR 未设置时）
COLUMNS = ("id", "created_at", "symbol", "shares", "side", "price", "amount", "implementation", "run_id")
SCHEMA = """CREATE TABLE IF NOT EXISTS orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    symbol TEXT NOT NULL,
    shares INTEGER NOT NULL,
    side TEXT NOT NULL,
    price REAL NOT NULL,
    amount REAL NOT NULL,
    implementation TEXT NOT NULL,
    run_id TEXT NOT NULL
)"""

ERR_OPEN = "无法打开订单库 {path}: {reason}（检查 AGENT_DATA_DIR）"
MSG_EMPTY = "（订单库 {path} 里没有订单）"
MSG_CLEARED = "已清空 {path}：删除 {count} 笔订单"
USAGE = "python -m shared.orders"


class OrderBookError(OSError):
    """The order database cannot be opened or written; ``str(error)`` is one line."""


@dataclass(frozen=True)
class OrderBook:
    """Where this run's orders go, and what they are recorded as."""

    path: Path
    implementation: str = ""
    run_id: str = ""


# 没有被 orders_recorded_in 固定时（例如在 Python 里直接调 run_agent）：默认目录，不记实现和运行
CURRENT_BOOK: ContextVar[OrderBook] = ContextVar(
    "order_book", default=OrderBook(DEFAULT_DATA_DIR / DATABASE_FILE))


def database_path(data_dir: Path) -> Path:
    return Path(data_dir) / DATABASE_FILE


def open_database(path: Path) -> sqlite3.Connection:
    """The database at ``path`` (created with its table if missing); raises :class:`OrderBookError`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path)
        connection.execute(SCHEMA)
        connection.commit()
    except (OSError, sqlite3.Error) as error:
        raise OrderBookError(ERR_OPEN.format(path=path, reason=getattr(error, "strerror", None) or error)) from None
    return connection


def check_data_dir(data_dir: Path) -> Path:
    """Open (and create) the database once, so a bad AGENT_DATA_DIR fails before any model call."""
    path = database_path(data_dir)
    open_database(path).close()
    return path


@contextmanager
def orders_recorded_in(data_dir: Path, *, implementation: str, run_id: str) -> Iterator[None]:
    """Within the block, ``place_order`` writes to ``data_dir`` as this implementation and run."""
    token = CURRENT_BOOK.set(OrderBook(database_path(data_dir), implementation, run_id))
    try:
        yield
    finally:
        CURRENT_BOOK.reset(token)


def record_order(symbol: str, shares: int, side: str, price: float, amount: float) -> int:
    """Insert one order into the current book; returns its id."""
    book = CURRENT_BOOK.get()
    created_at = datetime.now().astimezone().isoformat(timespec="seconds")
    with closing(open_database(book.path)) as connection:
        try:
            cursor = connection.execute(
                "INSERT INTO orders (created_at, symbol, shares, side, price, amount, implementation, run_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (created_at, symbol, shares, side, price, amount, book.implementation, book.run_id))
            connection.commit()
        except sqlite3.Error as error:
            raise OrderBookError(ERR_OPEN.format(path=book.path, reason=error)) from None
        return int(cursor.lastrowid)


def _not_created_yet(path: Path) -> bool:
    """No database there yet, and nothing in the way of one (a file where a folder should be is an error)."""
    return not path.exists() and not any(parent.is_file() for parent in path.parents)


def list_orders(path: Path) -> list[dict]:
    """Every order in the database at ``path``, oldest first (no database yet: none, and nothing is created)."""
    if _not_created_yet(path):
        return []
    with closing(open_database(path)) as connection:
        rows = connection.execute(f"SELECT {', '.join(COLUMNS)} FROM orders ORDER BY id").fetchall()
    return [dict(zip(COLUMNS, row)) for row in rows]


def clear_orders(path: Path) -> int:
    """Delete every order; returns how many there were (no database yet: 0, and nothing is created)."""
    if _not_created_yet(path):
        return 0
    with closing(open_database(path)) as connection:
        count = connection.execute("DELETE FROM orders").rowcount
        connection.commit()
    return count


def main(argv: list[str] | None = None) -> int:
    """``python -m shared.orders list|clear``：库的位置来自 AGENT_DATA_DIR（默认 .data/）。"""
    from shared.harness.arguments import OneLineParser
    from shared.harness.config import load_settings_or_exit

    parser = OneLineParser(prog=USAGE, description="列出或清空 place_order 写下的订单")
    parser.add_argument("command", choices=("list", "clear"), help="list：列出订单；clear：清空")
    parser.add_argument("--json", action="store_true", help="list 时每笔订单输出一行 JSON")
    args = parser.parse_args(argv)
    path = database_path(load_settings_or_exit().data_dir)
    try:
        if args.command == "clear":
            print(MSG_CLEARED.format(path=path, count=clear_orders(path)))
            return 0
        orders = list_orders(path)
    except OrderBookError as error:
        print(f"{USAGE}: 错误: {error}", file=sys.stderr)
        return 2
    if args.json:
        import json
        for order in orders:
            print(json.dumps(order, ensure_ascii=False))
    elif not orders:
        print(MSG_EMPTY.format(path=path))
    else:
        print("\t".join(COLUMNS))
        for order in orders:
            print("\t".join(str(order[c]) for c in COLUMNS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
