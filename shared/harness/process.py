"""How a command ends when its reader or its supervisor goes away: quietly, with the usual status.

- ``... | head -1``: the pipe closes while we still print; Python would show a
  ``BrokenPipeError`` traceback (and another one at exit). A closed pipe is the reader's
  choice, not an error: exit 141 (128 + SIGPIPE) with nothing on stderr.
- ``kill PID`` / a container stopping: SIGTERM ends the run like Ctrl-C does, with one line
  and exit 143 (128 + SIGTERM), so what a command writes as it goes is not cut mid-line.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable

TERMINATED = "已终止（SIGTERM）。"
BROKEN_PIPE_STATUS = 128 + signal.SIGPIPE
TERMINATED_STATUS = 128 + signal.SIGTERM


class Terminated(Exception):
    """SIGTERM arrived."""


def _terminate(signum, frame) -> None:
    raise Terminated()


def exit_status_of(command: Callable[[], int]) -> int:
    """Run ``command``; a closed stdout or SIGTERM ends it quietly with the conventional status."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        status = command()
        sys.stdout.flush()      # 缓冲里剩下的在这里写出：管道关了就在这里知道，而不是在解释器退出时
        return status
    except Terminated:
        print(TERMINATED, file=sys.stderr)
        return TERMINATED_STATUS
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_STATUS
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the flush at exit does not complain about the pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):     # 测试里 stdout 可能是 StringIO，没有 fileno
        pass
