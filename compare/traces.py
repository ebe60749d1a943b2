"""不同的 trace：把一组运行归成几种 trace，每种起一个读者一眼能懂的短名。

Two runs are one trace when the verdict calls them ``equivalent``
(:func:`compare.verdicts.compare_runs`). Each distinct trace gets a letter (A, B, ...) and a
short name made of its shape and its guessed arguments: 「串行链 3 轮」, 「一轮并行 3 个调用 ·
猜参 300」, 「不调工具」. The traces that meet the suite's expectation come first, so the
leftmost column of every view is the correct one.

Left out: what "equivalent" means (:mod:`compare.verdicts`), presentation.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from string import ascii_uppercase

from compare.verdicts import EQUIVALENT, compare_runs, guessed_value, member
from shared.harness.run_record import GUESSED_ARGUMENT, RunRecord, Status


@dataclass
class Trace:
    """One distinct trace: its content (taken from its first run) and the runs that made it."""
    letter: str
    name: str
    passes: bool | None              # meets the suite's expectation (None: the suite has none)
    rounds: list[list[dict]]
    status: str
    answer: str | None
    stopped_at: str | None
    error: str | None
    flags: list[dict]
    members: list[str] = field(default_factory=list)     # "impl#run"

    @property
    def title(self) -> str:
        return f"{self.letter} {self.name}"


def short_name(record: RunRecord) -> str:
    """The shape of a run in words: 「串行链 3 轮」, 「一轮并行 3 个调用 · 猜参 300」..."""
    sizes = [len(round_) for round_ in record.rounds]
    if not sizes:
        shape = "不调工具"
    elif sizes == [1]:
        shape = "单次调用"
    elif all(size == 1 for size in sizes):
        shape = f"串行链 {len(sizes)} 轮"
    elif len(sizes) == 1:
        shape = f"一轮并行 {sizes[0]} 个调用"
    else:
        shape = f"{len(sizes)} 轮（{'+'.join(map(str, sizes))} 个调用）"
    guesses = dict.fromkeys(guessed_value(f) for f in record.flags if f.get("kind") == GUESSED_ARGUMENT)
    if guesses:
        shape += f" · 猜参 {'、'.join(guesses)}"
    if record.status != Status.ANSWERED:
        shape += f" · {record.status}"
    return shape


def distinct_traces(records: list[RunRecord], passes: Callable[[RunRecord], bool] | None = None) -> list[Trace]:
    """The runs grouped into distinct traces, correct ones first.

    Across protocols too: the verdicts judge each protocol group apart, but a JSON loop's
    serial chain that is equivalent to a function-calling one is the same picture.
    """
    found: list[tuple[RunRecord, Trace]] = []
    for record in records:
        home = next((t for first, t in found if compare_runs(first, record)[0] == EQUIVALENT), None)
        if home is None:
            home = Trace("", short_name(record), passes(record) if passes else None,
                         record.rounds, str(record.status), record.answer, record.stopped_at, record.error,
                         record.flags)
            found.append((record, home))
        home.members.append(member(record))
    traces = sorted((t for _, t in found), key=lambda t: t.passes is False)    # 稳定排序：对的在前
    for index, trace in enumerate(traces):
        trace.letter = ascii_uppercase[index] if index < 26 else f"T{index + 1}"
    return traces
