"""What reaches a terminal is text, and a command ends quietly when its reader or supervisor goes away."""
from __future__ import annotations

import io
import signal
import subprocess
import sys

import pytest

from compare.implementations import IMPLEMENTATIONS
from shared.harness import cli
from shared.harness.process import BROKEN_PIPE_STATUS, TERMINATED, TERMINATED_STATUS, Terminated
from shared.harness.text import for_terminal
from shared.harness.trace import print_trace
from tests.support.agents import Agent
from tests.support.cli import NO_DOTENV_DIR, clean_environment
from tests.support.forked import PIPE, start_forked
from tests.support.scripted import ScriptedBrain, answer, call

HOSTILE = "清屏\x1b[2J\x1b]0;pwned\x07改标题\u202egpj.exe\x00"


def test_the_sanitiser_shows_control_and_bidi_characters():
    shown = for_terminal(HOSTILE + "\n下一行\t制表")
    assert "\x1b" not in shown and "\u202e" not in shown and "\x00" not in shown and "\x07" not in shown
    assert "\\x1b[2J" in shown and "\\u202e" in shown and "\\x00" in shown
    assert shown.endswith("\n下一行\t制表")          # 换行和制表符照常


@pytest.mark.parametrize("impl_name", ["pure_loop", "json_loop"])
def test_a_hostile_answer_and_tool_result_print_as_text(impl_name):
    brain = ScriptedBrain(call("get_weather", city=HOSTILE), answer(HOSTILE))
    record = Agent(IMPLEMENTATIONS[impl_name])(HOSTILE, brain=brain)
    out = io.StringIO()
    print_trace(record, file=out)
    assert "\x1b" not in out.getvalue() and "\u202e" not in out.getvalue()
    assert out.getvalue().count("\\x1b[2J") == 4          # 问题、调用参数、工具结果、回答


def _start(*argv: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *argv], cwd=NO_DOTENV_DIR, env=clean_environment(None),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


# 交互循环和它对管道、信号的处理都是 shared.harness.cli 的，每个阶段的命令都一样：用不加载 LangChain 的
# 零框架循环，新解释器起得快一倍
REPL = "stage3_pure_loop.json_loop"


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly_with_141():
    # 一个真的新解释器：管道关了之后，解释器退出时还会再刷一次 stdout，那一次也得安静
    # （其他命令关管道的测试在 fork 出来的进程里跑：tests/support/forked.py）
    process = _start(REPL, stdin=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()                                 # 像 "| head -1" 一样：读了一行就走
    process.stdin.write("北京天气怎么样\n" * 200)          # 之后的输出远超管道缓冲，一定写到已关闭的管道
    process.stdin.close()
    process.wait(timeout=120)
    assert process.returncode == BROKEN_PIPE_STATUS
    assert "Traceback" not in process.stderr.read()


@pytest.mark.slow
def test_sigterm_ends_the_repl_with_one_line_and_143():
    process = start_forked("-m", REPL, stdin=PIPE)
    for _ in range(3):
        process.stdout.readline()                          # 横幅打印出来了：信号处理已经装好
    process.send_signal(signal.SIGTERM)
    # 不用 communicate()：它会立刻关掉 stdin，REPL 可能先读到输入结束（退出码 0），信号还没处理
    process.wait(timeout=60)
    err = process.stderr.read()
    assert process.returncode == TERMINATED_STATUS and err.strip() == TERMINATED


class SigtermInTheFirstFlush(io.StringIO):
    """A stdout where SIGTERM's handler runs during the first flush, as it does just after a write to a pipe."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        if self.flushes == 1:
            raise Terminated()            # what the handler raises (shared.harness.process)
        super().flush()


def test_sigterm_while_the_repl_flushes_its_prompt_is_not_lost(offline, monkeypatch):
    # input() 会吞掉它 flush stdout 时抛出的异常：信号就落在那一刻时，REPL 会一直等下一行输入
    from stage3_pure_loop.agent import ABOUT, run_agent

    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", SigtermInTheFirstFlush())
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert cli.main(run_agent, ABOUT, []) == TERMINATED_STATUS
    assert err.getvalue().strip() == TERMINATED
