"""The command line every stage shares: the articles' interactive loop, ``-q``, ``--json``.

``python -m stage3_pure_loop`` is ``main(run_agent, ABOUT)``: each stage hands its own
``run_agent`` (and the facts in its ``ABOUT``) to this function. Usage and configuration
mistakes are one line on stderr and exit status 2 (never a traceback, never the key); a run
exits 0 when it ended with an answer, 1 otherwise. A bug in a lesson file is not a usage
mistake: its traceback is shown, with the file and line to fix.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from shared import approval
from shared.harness.arguments import OneLineParser, positive_int
from shared.harness.config import load_settings_or_exit, redact_url
from shared.harness.endpoint import Endpoint, open_endpoint
from shared.harness import human
from shared.harness.implementation import About, Implementation
from shared.harness.process import exit_status_of
from shared.harness.run_record import Status
from shared.harness.runner import RunOptions, run_once
from shared.harness.trace import print_trace
from shared.orders import OrderBookError, check_data_dir

QUIT_WORDS = ("quit", "exit", "q")
BANNER = "  {tier} 已就绪（输入 quit 退出）"
MODEL_LINE = "模型: {model} @ {where}"
OFFLINE_WHERE = "内置离线模型（确定性的规则策略，不是语言模型；设置 LLM_BASE_URL 接入真实模型）"
ERR_FIX = "--no-fix: 未知修复 {name!r}；可用: {known}"
ERR_EMPTY_QUESTION = "-q 的问题不能是空的"
INTERRUPTED = "已中断。"
INTERRUPTED_STATUS = 130          # 128 + SIGINT，shell 的惯例


def build_parser(about: About, *, graph: bool) -> argparse.ArgumentParser:
    parser = OneLineParser(prog=about.command, description=about.tier)
    parser.add_argument("-q", "--question", help="只问这一个问题（不进入交互循环）")
    parser.add_argument("--temperature", type=float, help="采样温度（默认 LLM_TEMPERATURE，即 0）")
    parser.add_argument("--max-steps", type=positive_int, default=10, help="最多调用模型几次（默认 10）")
    parser.add_argument("--serial", action="store_true",
                        help="每轮最多执行一个工具调用（请求带 parallel_tool_calls=False，多出来的调用不执行）")
    parser.add_argument("--approve", choices=approval.POLICIES,
                        help="危险工具（place_order）的审批：ask 在终端上问、all 全部批准、none 全部拒绝"
                             "（默认：终端上 ask，否则 none）")
    parser.add_argument("--faults", help="离线模型注入的故障模式，逗号分隔（同 OFFLINE_LLM_FAULTS）")
    parser.add_argument("--json", action="store_true", help="只输出一个 JSON 对象：运行记录")
    parser.add_argument("--show-config", action="store_true", help="打印生效的配置（key 已遮盖）后退出")
    parser.add_argument("--model", choices=[human.HUMAN], help="human：你来当模型，agent 的每个请求都由你回答")
    if about.fixes:
        parser.add_argument("--no-fix", action="append", default=[], metavar="NAME",
                            help=f"关掉一个修复，可重复: {', '.join(about.fixes)}")
    if graph:
        parser.add_argument("--graph", action="store_true", help="打印编译后的图（Mermaid）后退出")
    return parser


def main(run_agent: Callable, about: About, argv: list[str] | None = None, *,
         graph: Callable[[], str] | None = None) -> int:
    """Run ``run_agent`` as the command ``about.command``; returns the exit status."""
    return exit_status_of(lambda: _main(run_agent, about, argv, graph=graph))


def _main(run_agent: Callable, about: About, argv: list[str] | None, *, graph: Callable[[], str] | None) -> int:
    impl = Implementation(about, run_agent)
    parser = build_parser(about, graph=graph is not None)
    args = parser.parse_args(argv)
    if graph is not None and args.graph:
        print(graph())
        return 0
    disabled = frozenset(getattr(args, "no_fix", []))
    if unknown := sorted(disabled - set(about.fixes)):
        parser.error(ERR_FIX.format(name=unknown[0], known=", ".join(about.fixes)))
    if args.question is not None and not args.question.strip():
        parser.error(ERR_EMPTY_QUESTION)
    settings = load_settings_or_exit(temperature=args.temperature, offline_faults=args.faults)
    if args.show_config:
        print(json.dumps(settings.describe(), ensure_ascii=False, indent=2))
        return 0
    try:                                    # 订单库打不开：在调用模型之前就说清楚（一行，退出码 2）
        check_data_dir(settings.data_dir)
    except OrderBookError as error:
        parser.exit(2, f"{about.command}: 错误: {error}\n")
    options = RunOptions(temperature=settings.temperature, max_steps=args.max_steps,
                         serial=args.serial, disabled_fixes=disabled, clock=settings.clock,
                         approve=approval.policy(args.approve or approval.default_policy_name()),
                         data_dir=settings.data_dir)
    brain = None
    if args.model == human.HUMAN:           # 玩家当模型：仍然走内置服务器的 HTTP，换的只是大脑
        settings, brain = human.play_settings(settings), human.HumanBrain(stream="stderr" if args.json else "stdout")
    try:
        with open_endpoint(settings, brain=brain) as endpoint:
            if args.question is not None:
                return _answer_one(impl, args.question, endpoint, options, as_json=args.json)
            return _repl(impl, endpoint, options, as_json=args.json)
    except KeyboardInterrupt:               # Ctrl-C 在等模型时按下：一行说明，不是 traceback
        print(INTERRUPTED, file=sys.stderr)
        return INTERRUPTED_STATUS


def _model_line(endpoint: Endpoint) -> str:
    if endpoint.model == human.HUMAN:
        return human.MODEL_LINE
    where = OFFLINE_WHERE if endpoint.offline else redact_url(endpoint.base_url)
    return MODEL_LINE.format(model=endpoint.model, where=where)


def _answer_one(impl, question: str, endpoint: Endpoint, options: RunOptions, *, as_json: bool) -> int:
    if not as_json:
        print(_model_line(endpoint))
    record = run_once(impl, question, endpoint, options)
    if as_json:
        print(json.dumps(record.to_dict(), ensure_ascii=False))
    else:
        print_trace(record)
    return 0 if record.status == Status.ANSWERED else 1


def _read_line(prompt: str) -> str:
    """``input(prompt)`` without its blind spot: input() swallows any error raised while it flushes stdout.

    SIGTERM's handler raises right there when the signal lands just after a write (a
    supervisor that reads the banner, then stops the REPL): input() would drop the exception
    and wait for a line for ever. Flushed here, the exception gets through; a terminal still
    gets input()'s line editing, with nothing left for its own flush to write.
    """
    sys.stdout.flush()
    if sys.stdin.isatty() and sys.stdout.isatty():
        return input(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.removesuffix("\n")


def _repl(impl, endpoint: Endpoint, options: RunOptions, *, as_json: bool) -> int:
    """文章里的 main()：读一句、跑一次、打印 trace，直到 quit。

    With ``--json`` stdout carries only JSON lines (one run record per question): no
    banner, no prompt, no farewell.
    """
    if not as_json:
        print("=" * 50 + "\n" + BANNER.format(tier=impl.about.tier) + "\n" + "=" * 50)
        print(_model_line(endpoint))
    while True:
        try:
            user = _read_line("" if as_json else "\n你: ").strip()
        except (EOFError, KeyboardInterrupt):
            if not as_json:
                print()
            return 0
        if user.lower() in QUIT_WORDS:
            if not as_json:
                print("再见！")
            return 0
        if not user:
            continue
        record = run_once(impl, user, endpoint, options)
        if as_json:
            print(json.dumps(record.to_dict(), ensure_ascii=False), flush=True)
        else:
            print_trace(record)
            # 显式 flush：input() 会吞掉它自己 flush 时的错误，读者关掉管道（| head）我们就永远不知道
            sys.stdout.flush()
