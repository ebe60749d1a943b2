"""``python -m compare.chaos``：每种故障模式 × 每个实现 × N 个 seed，看每次运行是否都有一个明确的结局。

    python -m compare.chaos [--seeds N] [--modes LIST] [--impl NAME ...] [--concurrency N]
                            [--write FILE | --check FILE]

For each fault mode of the offline model (the model's: ``chatty``, ``bad_json``, ...; the
transport's: ``http_500``, ``http_429``, ``timeout``, ...), an :class:`OfflineServer` with
that one fault is started here and used as a *real* endpoint: ``python -m compare`` runs in a
fresh process with ``LLM_BASE_URL`` pointing at it, a fake ``LLM_API_KEY`` and
``LLM_TIMEOUT=1`` (so a ``timeout`` fault costs a second, not a minute), on the article's
question at temperature 0.7 with ``--runs N``: run ``r`` sends ``seed=r``, so N runs are N
different samples. Then every output and every file of that compare is read:

- runs: planned (implementations × seeds);
- uncaught exceptions: a traceback on stderr, or a run recorded as a bug in an implementation;
- hangs: runs missing after compare was stopped at the time bound, or that took longer than
  :data:`RUN_BOUND_SECONDS` (``max_steps`` × the worst case of one model call);
- explicit status: runs that ended ``answered`` with an answer, ``max_steps``, ``stopped``, or
  ``error`` with a one-line cause;
- unapproved dangerous calls executed: calls of a tool in ``DANGEROUS_TOOLS`` whose result is
  neither a tool error nor a refusal (no approval is ever given here); when no dangerous tool
  is offered, 0 with a note saying so;
- key occurrences: the fake key in stdout, stderr and every file compare wrote.

The goal row: 0 uncaught, 0 hangs, 100 % explicit, 0 dangerous, 0 key occurrences (exit 0,
else 1). ``--write FILE`` puts the table between the markers in FILE (the README);
``--check FILE`` reads that table without running anything and exits 1 unless it covers
every current fault mode with every implementation and at least :data:`README_SEEDS` seeds,
and meets the goal.

Left out: real endpoints (the faults are the offline model's), faults combined in one run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from compare.atomic_file import write_atomically
from compare.failure_modes import MarkersMissing, article_prompt, current_block, replace_block
from compare.implementations import IMPLEMENTATIONS, UnknownImplementationError, get_implementation
from compare.sweep import ERR_BUG, RESULTS_FILE
from shared import tool_functions
from shared.harness.arguments import OneLineParser, positive_int
from shared.harness.config import REPRODUCIBLE_CLOCK
from shared.harness.endpoint import MAX_RETRIES
from shared.harness.process import exit_status_of
from shared.harness.responses import RETRY_AFTER_CAP
from shared.harness.run_record import Status
from shared.offline_llm import OfflineServer
from shared.offline_llm.faults import ALL_FAULT_MODES

PROG = "python -m compare.chaos"
REPO_ROOT = Path(__file__).resolve().parents[1]
FAKE_KEY = "sk-chaos-fake-key-7f3a9c"
LLM_TIMEOUT_SECONDS = 1
MAX_STEPS = 10
TEMPERATURE = "0.7"
README_SEEDS = 50
DEFAULT_CONCURRENCY = 8
# 一次模型调用最坏要等多久：每次尝试 LLM_TIMEOUT，重试之间最多听从 RETRY_AFTER_CAP 秒
WORST_CALL_SECONDS = (1 + MAX_RETRIES) * LLM_TIMEOUT_SECONDS + MAX_RETRIES * RETRY_AFTER_CAP
RUN_BOUND_SECONDS = MAX_STEPS * WORST_CALL_SECONDS
PROCESS_BOUND_SECONDS = 1200          # 一种故障模式的整个 compare 最多跑这么久，超时就杀掉，缺的运行算"卡住"

BEGIN, END = "<!-- chaos:begin -->", "<!-- chaos:end -->"
HEADER = ("| 故障模式 | 运行 | 未捕获的异常 | 卡住 | 以明确状态结束 | 未经批准执行的危险调用 | key 出现次数 "
          "| 结局（answered / error / stopped / max_steps） |")
RULE = "|---|---|---|---|---|---|---|---|"
TOTAL = "**合计**"
NOTE_COMMAND = ("`{command}`：每种故障模式一个带该故障的离线服务器，当作真实端点（`LLM_BASE_URL`，假的 `LLM_API_KEY`，"
                "`LLM_TIMEOUT={timeout}`），对它跑一次 `python -m compare --impl {impls} --prompt <文章的问题> "
                "--temperature {temperature} --runs {seeds}`（第 r 次运行 seed=r）。卡住 = 没在 {bound:g} 秒"
                "（{steps} 步 × 一次调用最坏 {call:g} 秒）内结束。")
NOTE_NO_DANGER = "危险调用：这个版本没有提供危险工具（`DANGEROUS_TOOLS` 为空），所以是 0。"
NOTE_DANGER = "危险调用：{tools} 的调用结果既不是工具错误也不是拒绝，就算执行了（这里从不批准）。"
ERR_CHECK = "{path}: 混沌表格{reason}；运行 {command} 重新生成"


@dataclass
class Tally:
    """One fault mode's numbers (or the sum of several)."""

    mode: str
    runs: int = 0
    uncaught: int = 0
    hangs: int = 0
    explicit: int = 0
    dangerous: int = 0
    key_hits: int = 0
    endings: Counter = field(default_factory=Counter)

    def add(self, other: "Tally") -> None:
        for name in ("runs", "uncaught", "hangs", "explicit", "dangerous", "key_hits"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.endings.update(other.endings)

    @property
    def explicit_percent(self) -> str:
        return f"{100 * self.explicit / self.runs:.1f}%" if self.runs else "–"

    @property
    def meets_goal(self) -> bool:
        return (self.runs > 0 and self.uncaught == self.hangs == self.dangerous == self.key_hits == 0
                and self.explicit == self.runs)


def dangerous_tools() -> frozenset[str]:
    return frozenset(getattr(tool_functions, "DANGEROUS_TOOLS", frozenset()))


def executed_unapproved(rows: list[dict]) -> int:
    """Dangerous calls that ran: a result that is neither a tool error nor the refusal."""
    dangerous = dangerous_tools()
    error_prefix = tool_functions.TOOL_ERROR.split("{")[0]
    refusal = getattr(tool_functions, "REFUSED_MESSAGE", None)
    count = 0
    for row in rows:
        for round_ in row.get("rounds") or []:
            for call in round_:
                result = call.get("result")
                if call.get("name") not in dangerous or not isinstance(result, str):
                    continue
                refused = refusal is not None and result == refusal.format(tool_name=call["name"])
                if not refused and not result.startswith(error_prefix):
                    count += 1
    return count


def explicit(row: dict) -> bool:
    """The run ended with a status that says how, and its cause in one line when it failed."""
    status, error = row.get("status"), row.get("error") or ""
    if status == Status.ANSWERED:
        return bool((row.get("answer") or "").strip())
    if status == Status.ERROR:
        return bool(error.strip()) and "\n" not in error and not error.startswith(ERR_BUG.split("{")[0])
    return status in (Status.MAX_STEPS, Status.STOPPED)


def run_mode(mode: str, *, seeds: int, impls: list[str], concurrency: int, workdir: Path) -> Tally:
    """One ``python -m compare`` against a server with the fault ``mode``; its numbers."""
    prompt, _ = article_prompt()
    out = workdir / mode
    argv = [sys.executable, "-m", "compare", "--impl", *impls, "--prompt", prompt, "--temperature", TEMPERATURE,
            "--runs", str(seeds), "--concurrency", str(concurrency), "--max-steps", str(MAX_STEPS),
            "--out", str(out), "--json"]
    with OfflineServer(faults=(mode,)) as server:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO_ROOT),
               "LLM_BASE_URL": server.base_url, "LLM_API_KEY": FAKE_KEY, "LLM_MODEL": "offline",
               "LLM_TIMEOUT": str(LLM_TIMEOUT_SECONDS), "AGENT_CLOCK": REPRODUCIBLE_CLOCK,
               "AGENT_DATA_DIR": str(workdir / "data")}
        process = subprocess.Popen(argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            stdout, stderr = process.communicate(timeout=PROCESS_BOUND_SECONDS)
            timed_out = False
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            timed_out = True
    rows = _rows(out / RESULTS_FILE)
    planned = len(impls) * seeds
    tally = Tally(mode=mode, runs=planned)
    tally.uncaught = (b"Traceback" in stderr) + sum(1 for r in rows if (r.get("error") or "").startswith(
        ERR_BUG.split("{")[0]))
    tally.hangs = (planned - len(rows) if timed_out else 0) + sum(
        1 for r in rows if (r.get("seconds") or 0) > RUN_BOUND_SECONDS)
    tally.explicit = sum(1 for r in rows if explicit(r))
    tally.dangerous = executed_unapproved(rows)
    key = FAKE_KEY.encode()
    tally.key_hits = stdout.count(key) + stderr.count(key) + sum(
        path.read_bytes().count(key) for path in sorted(workdir.rglob("*")) if path.is_file())
    tally.endings = Counter(r.get("status") for r in rows)
    return tally


def _rows(path: Path) -> list[dict]:
    """The run records of a results file, once per run (an unreadable line is not a run)."""
    rows: dict[tuple, dict] = {}
    if not path.is_file():
        return []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[1:]:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "impl" in row:
            rows.setdefault((row["impl"], row.get("prompt"), row.get("temperature"), row.get("run")), row)
    return list(rows.values())


def run_chaos(*, seeds: int, modes: list[str], impls: list[str], concurrency: int,
              progress=None) -> list[Tally]:
    tallies = []
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix=f"chaos-{mode}-") as where:
            tallies.append(run_mode(mode, seeds=seeds, impls=impls, concurrency=concurrency, workdir=Path(where)))
        if progress:
            progress(tallies[-1])
    return tallies


def render(tallies: list[Tally], *, seeds: int, impls: list[str], command: str) -> str:
    total = Tally(mode=TOTAL)
    for tally in tallies:
        total.add(tally)
    lines = [HEADER, RULE] + [_table_row(t) for t in [*tallies, total]]
    tools = sorted(dangerous_tools())
    notes = [NOTE_COMMAND.format(command=command, timeout=LLM_TIMEOUT_SECONDS, impls=" ".join(impls),
                                 temperature=TEMPERATURE, seeds=seeds, bound=RUN_BOUND_SECONDS, steps=MAX_STEPS,
                                 call=WORST_CALL_SECONDS),
             NOTE_DANGER.format(tools="、".join(tools)) if tools else NOTE_NO_DANGER]
    return "\n".join(lines) + "\n\n" + "\n\n".join(notes)


def _table_row(t: Tally) -> str:
    endings = " / ".join(str(t.endings.get(s, 0)) for s in (Status.ANSWERED, Status.ERROR, Status.STOPPED,
                                                            Status.MAX_STEPS))
    return (f"| {t.mode} | {t.runs} | {t.uncaught} | {t.hangs} | {t.explicit_percent} | {t.dangerous} "
            f"| {t.key_hits} | {endings} |")


def parse_table(block: str) -> dict[str, list[str]]:
    """The table of a rendered block: the cells of each row, by its first cell."""
    lines = block.splitlines()
    if len(lines) < 3 or lines[0] != HEADER or lines[1] != RULE:
        raise ValueError("的表头不对")
    rows = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def check_block(block: str, *, min_seeds: int = README_SEEDS) -> str | None:
    """Why ``block`` is not a current, goal-meeting table (or ``None``)."""
    try:
        rows = parse_table(block)
    except ValueError as error:
        return str(error)
    if missing := [m for m in ALL_FAULT_MODES if m not in rows]:
        return f"缺少故障模式 {', '.join(missing)}"
    for mode in ALL_FAULT_MODES:
        if int(rows[mode][0]) < len(IMPLEMENTATIONS) * min_seeds:
            return f"里 {mode} 只跑了 {rows[mode][0]} 次（应至少 {len(IMPLEMENTATIONS)} 个实现 × {min_seeds} 个 seed）"
    total = rows.get(TOTAL)
    if total is None or total[1:6] != ["0", "0", "100.0%", "0", "0"]:
        return f"的合计行没有达到目标 0, 0, 100%, 0, 0：{total}"
    return None


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=positive_int, default=README_SEEDS, metavar="N",
                        help=f"每个实现跑几个 seed（默认 {README_SEEDS}）")
    parser.add_argument("--modes", metavar="LIST", help=f"只跑这些故障模式，逗号分隔（默认全部: {','.join(ALL_FAULT_MODES)}）")
    parser.add_argument("--impl", nargs="+", metavar="NAME", help="只跑这些实现（默认全部）")
    parser.add_argument("--concurrency", type=positive_int, default=DEFAULT_CONCURRENCY, metavar="N",
                        help=f"每个 compare 同时跑几个（默认 {DEFAULT_CONCURRENCY}）")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="FILE", type=Path, help="把表格写进 FILE 的标记之间")
    group.add_argument("--check", metavar="FILE", type=Path, help="不跑，只检查 FILE 里的表格是否覆盖全部并达到目标")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    modes = args.modes.split(",") if args.modes else list(ALL_FAULT_MODES)
    if unknown := [m for m in modes if m not in ALL_FAULT_MODES]:
        parser.error(f"--modes: 未知的故障模式 {', '.join(unknown)}；已实现: {', '.join(ALL_FAULT_MODES)}")
    try:
        impls = [get_implementation(n).name for n in dict.fromkeys(args.impl or IMPLEMENTATIONS)]
    except UnknownImplementationError as error:
        parser.error(f"--impl: {error}")
    target = args.write or args.check
    command = f"python -m compare.chaos --seeds {args.seeds} --write README.md"
    try:
        text = target.read_text(encoding="utf-8") if target else None
        block = current_block(text, path=str(target), markers=(BEGIN, END)) if target else None
    except (OSError, MarkersMissing) as error:
        print(f"{PROG}: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 2
    if args.check:
        reason = check_block(block)
        if reason:
            print(ERR_CHECK.format(path=target, reason=reason, command=command), file=sys.stderr)
            return 1
        return 0
    tallies = run_chaos(seeds=args.seeds, modes=modes, impls=impls, concurrency=args.concurrency,
                        progress=lambda t: print(_table_row(t), file=sys.stderr, flush=True))
    table = render(tallies, seeds=args.seeds, impls=impls, command=command)
    if args.write:
        write_atomically(args.write, replace_block(text, table, path=str(target), markers=(BEGIN, END)))
    else:
        print(table)
    total = Tally(mode=TOTAL)
    for tally in tallies:
        total.add(tally)
    return 0 if total.meets_goal else 1


if __name__ == "__main__":
    raise SystemExit(exit_status_of(main))
