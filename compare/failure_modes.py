"""README 里"翻车现场"那张表（每种故障 × 天真版 / 加固版，真跑一遍得出来的）和两个循环的 diff。

``python -m compare.failure_modes [--write README.md] [--check README.md]``

Every fault mode of the offline model (``OFFLINE_LLM_FAULTS``) is run against the
article's 50-line loop (``json_loop``) and the hardened one (``hardened_loop``) on the
article's question; then, for each fix, the hardened loop with *that* fix switched off
(``--no-fix NAME``) under the fault it exists for. Every run is the real thing: the
embedded server with the fault switched on, ``shared.harness.runner.run_once``, the same run
record as everywhere else. Temperature 0 and a fixed ``AGENT_CLOCK`` make the table
deterministic, so a test can regenerate it and compare it with the README.

- no option: print the Markdown;
- ``--write FILE``: replace the block between the two markers in FILE;
- ``--check FILE``: exit 1 if FILE's block is not what the runs give now.

The second block is ``diff -u`` of ``json_loop.run_agent`` and ``hardened_loop.run_agent``:
the hardened loop is the naive loop's three steps with each fix one named call, so the
diff is the list of fixes.

Left out: real endpoints (the faults are the offline model's), several runs or
temperatures (that is ``python -m compare``).
"""
from __future__ import annotations

import difflib
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from compare.implementations import IMPLEMENTATIONS
from compare.suite import load_suite
from compare.atomic_file import write_atomically
from shared.harness.arguments import OneLineParser
from shared.harness.process import exit_status_of
from shared.harness.config import REPRODUCIBLE_CLOCK, load_settings
from shared.harness.endpoint import open_endpoint
from shared.offline_llm.faults import ARTICLE_FAULTS
from shared.harness.run_record import RunRecord, Status
from shared.harness.runner import RunOptions, run_once
from shared.harness.text import for_terminal, shorten

BEGIN, END = "<!-- failure-modes:begin -->", "<!-- failure-modes:end -->"
DIFF_BEGIN, DIFF_END = "<!-- fixes-diff:begin -->", "<!-- fixes-diff:end -->"
MAX_STEPS = 10
IMPLS = ("json_loop", "hardened_loop")
NO_FAULT = "（无）"

# 每个修复为哪种故障而生：关掉它，就在这种故障下重跑加固版
FAULT_OF_FIX = {
    "extract": "chatty",
    "repeat": "loop",
    "window": "long",
    "unknown_tool": "hallucinate",
    "validate": "garbled",
}

ERR_MARKERS = "{path}: 找不到标记 {begin} … {end}（表格写在两者之间）"
ERR_READ = "无法读取 {path}: {reason}"
CHECK_DIFFERS = "{path} 里的表格与这次运行的结果不一致：运行 python -m compare.failure_modes --write {path}"
HEADER = ("| 故障模式 | 实现 | status | 模型调用 | 答案正确 | 怎么结束的 |\n"
          "|---|---|---|---|---|---|")
FIX_HEADER = ("| 关掉的修复 | 在哪种故障下 | status | 模型调用 | 答案正确 | 怎么结束的 |\n"
              "|---|---|---|---|---|---|")
EXCERPT_CHARS = 36


class MarkersMissing(ValueError):
    """The file has no ``BEGIN … END`` block to write the table into."""


@dataclass(frozen=True)
class Run:
    fault: str                     # 故障模式，或 NO_FAULT
    impl: str
    disabled: str                  # 关掉的修复（"" = 全开）
    record: RunRecord


def article_prompt() -> tuple[str, tuple[str, ...]]:
    """The suite's article question and what its answer must contain (one source of truth)."""
    article = next(p for p in load_suite() if p.id == "article")
    return article.prompt, article.answer_contains


def run_all(prompt: str) -> list[Run]:
    """Every row of both tables, in order."""
    runs = []
    for fault in (NO_FAULT, *ARTICLE_FAULTS):
        for impl in IMPLS:
            runs.append(Run(fault, impl, "", run_one(impl, prompt, fault)))
    for fix, fault in FAULT_OF_FIX.items():
        runs.append(Run(fault, "hardened_loop", fix,
                        run_one("hardened_loop", prompt, fault, disabled=frozenset({fix}))))
    return runs


def run_one(impl: str, prompt: str, fault: str, *, disabled: frozenset[str] = frozenset()) -> RunRecord:
    faults = () if fault == NO_FAULT else (fault,)
    # env={}、不读 .env：这张表永远是离线模型的表，与读者配置的真实端点无关
    settings = load_settings(env={}, dotenv=None, offline_faults=faults)
    with open_endpoint(settings) as endpoint:
        return run_once(IMPLEMENTATIONS[impl], prompt, endpoint,
                        RunOptions(temperature=0.0, max_steps=MAX_STEPS, disabled_fixes=disabled,
                                   clock=REPRODUCIBLE_CLOCK))


def render(runs: list[Run], expected: tuple[str, ...]) -> str:
    """The two Markdown tables."""
    main_rows = [_row(r.fault, r.impl, r.record, expected) for r in runs if not r.disabled]
    fix_rows = [_row(f"`{r.disabled}`", r.fault, r.record, expected) for r in runs if r.disabled]
    return "\n".join([
        HEADER, *main_rows, "",
        "每个修复单独关掉（`--no-fix NAME`），在它针对的故障下重跑加固版：",
        "", FIX_HEADER, *fix_rows,
    ])


def is_correct(record: RunRecord, expected: tuple[str, ...]) -> bool:
    """Answered, and the answer says what the article's answer says (38,560)."""
    return record.status == Status.ANSWERED and all(text in (record.answer or "") for text in expected)


def ending(record: RunRecord) -> str:
    """How the run ended, in a few words: the answer's start, the guard, the error code."""
    if record.status == Status.ANSWERED:
        text = " ".join((record.answer or "").split())
        shown = shorten(text, EXCERPT_CHARS + 1)
        return f"答：「{shown}」" if text else "答：（空）"
    if record.status == Status.STOPPED:
        return record.stopped_at or record.error or ""
    if record.status == Status.ERROR:
        # openai SDK 的错误文本："BadRequestError: Error code: 400 - <服务器的 message>"
        http = re.search(r"Error code: (\d+) - (.*)", record.error or "")
        text = f"HTTP {http.group(1)}：{http.group(2)}" if http else (record.error or "")
        return shorten(text, 2 * EXCERPT_CHARS + 1)
    return f"用完 {MAX_STEPS} 步"


def replace_block(text: str, table: str, *, path: str = "README.md", markers: tuple[str, str] = (BEGIN, END)) -> str:
    first, last = markers
    begin, end = text.find(first), text.find(last)
    if begin < 0 or end < begin:
        raise MarkersMissing(ERR_MARKERS.format(path=path, begin=first, end=last))
    return text[:begin + len(first)] + "\n" + table + "\n" + text[end:]


def current_block(text: str, *, path: str = "README.md", markers: tuple[str, str] = (BEGIN, END)) -> str:
    first, last = markers
    begin, end = text.find(first), text.find(last)
    if begin < 0 or end < begin:
        raise MarkersMissing(ERR_MARKERS.format(path=path, begin=first, end=last))
    return text[begin + len(first):end].strip("\n")


def build_fix_diff() -> str:
    """``diff -u -w`` of the two loops' ``run_agent``: the lines the hardened loop adds are the fixes.

    White space is ignored when lines are matched (as ``git diff -w`` does): the hardened
    loop sits one level deeper, inside the ``try`` that turns a guard into status "stopped".
    Whole-line comments are left out of both sides: the naive loop explains the article's
    code in them, and they are not code the fixes change.
    """
    from stage3_pure_loop import hardened_loop, json_loop

    def code_lines(function) -> list[str]:
        return [line for line in inspect.getsource(function).splitlines() if not line.strip().startswith("#")]

    naive, hardened = code_lines(json_loop.run_agent), code_lines(hardened_loop.run_agent)
    matcher = difflib.SequenceMatcher(None, [" ".join(line.split()) for line in naive],
                                      [" ".join(line.split()) for line in hardened], autojunk=False)
    lines = ["--- stage3_pure_loop/json_loop.py", "+++ stage3_pure_loop/hardened_loop.py"]
    for group in matcher.get_grouped_opcodes(3):
        lines.append(f"@@ -{group[0][1] + 1},{group[-1][2] - group[0][1]} "
                     f"+{group[0][3] + 1},{group[-1][4] - group[0][3]} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in hardened[j1:j2]]
                continue
            lines += ["-" + line for line in naive[i1:i2]]
            lines += ["+" + line for line in hardened[j1:j2]]
    return "```diff\n" + "\n".join(lines) + "\n```"


def blocks() -> dict[tuple[str, str], str]:
    """Every generated block of the README, by its markers."""
    return {(BEGIN, END): build_table(), (DIFF_BEGIN, DIFF_END): build_fix_diff()}


def build_table() -> str:
    prompt, expected = article_prompt()
    return render(run_all(prompt), expected)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m compare.failure_modes", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="FILE", type=Path, help="把表格写进 FILE 的标记之间")
    group.add_argument("--check", metavar="FILE", type=Path, help="FILE 里的表格过期则退出 1")
    args = parser.parse_args(argv)
    target = args.write or args.check
    try:
        text = target.read_text(encoding="utf-8") if target else None
        if text is not None:
            for markers in ((BEGIN, END), (DIFF_BEGIN, DIFF_END)):
                current_block(text, path=str(target), markers=markers)   # 先确认有标记，再花时间跑
    except (OSError, MarkersMissing) as error:
        reason = error.strerror if isinstance(error, OSError) else None
        print(ERR_READ.format(path=target, reason=reason) if reason else str(error), file=sys.stderr)
        return 2
    generated = blocks()
    if args.write:
        for markers, content in generated.items():
            text = replace_block(text, content, path=str(target), markers=markers)
        write_atomically(args.write, text)
    elif args.check:
        if any(current_block(text, path=str(target), markers=m) != c for m, c in generated.items()):
            print(CHECK_DIFFERS.format(path=target), file=sys.stderr)
            return 1
    else:
        print("\n\n".join(generated.values()))
    return 0


def _row(first: str, second: str, record: RunRecord, expected: tuple[str, ...]) -> str:
    cells = [first, second, record.status, str(record.llm_calls),
             "✅" if is_correct(record, expected) else "❌", _escape(ending(record))]
    return "| " + " | ".join(cells) + " |"


def _escape(text: str) -> str:
    # 模型的原话进表格：| 会切断单元格，` 会开出代码段，控制字符显示成转义
    return for_terminal(text.replace("|", "\\|").replace("`", "\\`").replace("\n", " "))


if __name__ == "__main__":
    raise SystemExit(exit_status_of(main))
