"""The chaos table in the README: every fault mode × every implementation, and the goal row holds.

The README's table comes from ``python -m compare.chaos --seeds 50 --write README.md`` (minutes
on two cores); here it is read and checked (every fault mode and implementation covered, at
least 50 seeds, the goal row 0, 0, 100%, 0, 0), and a small real run (one seed, one fault
mode) must meet the same goal and render the same table format.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from compare import chaos
from compare.failure_modes import current_block
from compare.implementations import IMPLEMENTATIONS
from shared.offline_llm.faults import ALL_FAULT_MODES

README = Path(__file__).resolve().parents[1] / "README.md"
GOAL = ["0", "0", "100.0%", "0", "0"]


def readme_block() -> str:
    return current_block(README.read_text(encoding="utf-8"), markers=(chaos.BEGIN, chaos.END))


def test_the_readme_table_covers_every_fault_mode_and_meets_the_goal():
    assert chaos.check_block(readme_block()) is None
    rows = chaos.parse_table(readme_block())
    assert set(rows) == {*ALL_FAULT_MODES, chaos.TOTAL}
    assert int(rows[chaos.TOTAL][0]) == len(ALL_FAULT_MODES) * len(IMPLEMENTATIONS) * chaos.README_SEEDS
    assert "python -m compare.chaos --seeds 50 --write README.md" in readme_block()


@pytest.mark.parametrize("column, value", [(1, "1"), (2, "3"), (3, "99.7%"), (4, "1"), (5, "2")])
def test_a_table_that_misses_the_goal_is_refused(column, value):
    lines = readme_block().splitlines()
    total = next(i for i, line in enumerate(lines) if line.startswith(f"| {chaos.TOTAL} |"))
    cells = lines[total].strip("|").split("|")
    cells[column + 1] = f" {value} "
    lines[total] = "|" + "|".join(cells) + "|"
    assert "目标" in chaos.check_block("\n".join(lines))


def test_check_refuses_a_table_missing_a_fault_mode():
    block = "\n".join(line for line in readme_block().splitlines() if not line.startswith("| timeout |"))
    assert "timeout" in chaos.check_block(block)


@pytest.mark.slow
def test_a_small_chaos_run_meets_the_goal():
    # 一种模型故障就走遍了混沌运行的每一步（带故障的服务器当真实端点、一个全新的 compare 进程、读它的每个输出和
    # 文件、数 key、渲染表格）；每多一种模式就多一个全新的 compare 进程（几秒 CPU）。
    # 每种故障 × 每个实现都以明确状态结束，由 test_faults、test_reliability 在进程内逐一检查
    modes = ["empty"]
    tallies = chaos.run_chaos(seeds=1, modes=modes, impls=list(IMPLEMENTATIONS), concurrency=8)
    table = chaos.render(tallies, seeds=1, impls=list(IMPLEMENTATIONS), command="python -m compare.chaos --seeds 1")
    rows = chaos.parse_table(table)
    assert list(rows) == [*modes, chaos.TOTAL]
    assert rows[chaos.TOTAL][0] == str(len(modes) * len(IMPLEMENTATIONS))
    assert rows[chaos.TOTAL][1:6] == GOAL, table
    # 故障确实起了作用：空消息没有人"答完"，都被点名为错误（hardened_loop 重试三次不合格之后降级、停下）
    assert tallies[0].endings["answered"] == 0 and tallies[0].endings["error"] > 0
