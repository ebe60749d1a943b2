"""A command in a process of its own, forked from the test: real signals and pipes, no imports again.

What a command does when it is killed, interrupted or loses its reader needs a real process:
its own pid, its own stdin/stdout/stderr pipes, signals sent from outside. A fresh ``python -m``
costs seconds of CPU, nearly all of it importing LangChain, LangGraph and the openai SDK again.
:func:`start_forked` forks this process instead (which has imported them already) and runs the
command there as ``python`` would: the same ``__main__``, argv, environment and working
directory, Python's own SIGINT (``KeyboardInterrupt``; uncaught, the process ends by SIGINT as
Python's does) and SIGTERM (default: end the process). The handle has the part of
:class:`subprocess.Popen` the tests use.

Left out, because a fork keeps what the test process had: the interpreter's start-up (so an
import-path bug or an import-order cycle shows only in a fresh interpreter); ``sys.path``
entries and imported modules (the command's directories and ``PYTHONPATH`` only go in
front); module globals, warnings filters, logging handlers, other signal dispositions
(SIGPIPE stays ignored, as Python sets it); open file descriptors (a command forked while
another forked command's pipes are open holds them too: run one at a time); ``atexit``
handlers, which do not run. ``tests/test_smoke.py`` starts one fresh interpreter per
command for what only that shows, and ``tests/test_process.py`` checks a closed pipe at a
real interpreter's exit.
"""
from __future__ import annotations

import io
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

from tests.support.cli import NO_DOTENV_DIR, clean_environment, run_as_python

PIPE, DEVNULL = subprocess.PIPE, subprocess.DEVNULL


def _child(argv: tuple[str, ...], env: dict[str, str], cwd: Path, fds: tuple[int, int, int],
           parent_ends: list[int], new_session: bool) -> None:
    for fd in parent_ends:                  # 只有父进程那头才是"读的一方"：子进程留着它，管道就永远关不掉
        os.close(fd)
    if new_session:
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    _start_path(argv, env, cwd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)
    try:
        status = run_as_python(argv)
    except KeyboardInterrupt:            # 没人接住的 Ctrl-C：Python 打印 traceback，再让 SIGINT 结束自己（-2）
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        raise
    # 退出码、退出前等非守护线程结束、刷新 stdout/stderr：都交给 multiprocessing 的子进程收尾
    raise SystemExit(status)


def _start_path(argv: tuple[str, ...], env: dict[str, str], cwd: Path) -> None:
    """Put in front of ``sys.path`` what ``python ARGV`` starts it with: the script's directory
    (``-m``, ``-c``: the working directory), then ``PYTHONPATH``; this process's entries stay
    behind them. A module already imported from elsewhere that one of these directories also
    holds is imported again, from there (a test's copy of a stage, say)."""
    first = cwd if argv[0] in ("-m", "-c") else Path(argv[0]).resolve().parent
    front = [Path(first).resolve(), *(Path(p).resolve() for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)]
    for directory in front:
        held = {p.stem for p in directory.glob("*.py")} | {p.parent.name for p in directory.glob("*/__init__.py")}
        for name in [n for n in sys.modules if n.split(".")[0] in held]:
            where = getattr(sys.modules[name], "__file__", None)
            if where is None or not Path(where).resolve().is_relative_to(directory):
                del sys.modules[name]
    sys.path[:0] = [str(d) for d in front]


class Forked:
    """A running command: ``pid``, ``poll``, ``wait``, ``communicate``, signals, its pipes."""

    def __init__(self, process: multiprocessing.Process, stdin, stdout, stderr) -> None:
        self._process = process
        self.pid = process.pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode        # 被信号结束时是 -信号值，和 Popen 一样

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"forked {self.pid}", timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:              # 和 Popen 一样：已经结束（并回收）的进程不再发信号
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:       # 刚刚结束，还没回收
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: str | None = None, timeout: float | None = None) -> tuple[str | None, str | None]:
        """Write ``input`` and close stdin; read stdout and stderr to their end, all at once (no pipe
        fills up while another waits); wait for the end. ``TimeoutExpired`` after ``timeout``."""
        read: dict[str, str] = {}

        def write() -> None:
            try:
                self.stdin.write(input or "")
                self.stdin.close()
            except BrokenPipeError:          # 没读完就结束了：和 Popen 一样不算错
                pass

        def read_all(name: str, stream) -> None:
            with stream:
                read[name] = stream.read()

        jobs = [threading.Thread(target=write, daemon=True)] if self.stdin and not self.stdin.closed else []
        jobs += [threading.Thread(target=read_all, args=(name, stream), daemon=True)
                 for name, stream in (("out", self.stdout), ("err", self.stderr)) if stream and not stream.closed]
        deadline = None if timeout is None else time.monotonic() + timeout
        for job in jobs:
            job.start()
        for job in jobs:
            job.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if job.is_alive():
                raise subprocess.TimeoutExpired(f"forked {self.pid}", timeout)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return read.get("out"), read.get("err")


def start_forked(*argv: str, env: dict[str, str] | None = None, cwd: Path | None = None,
                 stdin=DEVNULL, stdout=PIPE, stderr=PIPE, new_session: bool = False) -> Forked:
    """``python ARGV`` (``-m MODULE ...``, ``-c CODE``, ``FILE ...``) in a forked process; text pipes.

    ``env`` is the whole environment, as in the other helpers: :func:`clean_environment`
    (no model variables, so no real endpoint) plus ``env``; ``cwd`` defaults to a directory
    with no ``.env``.
    """
    child_fds, parent_ends, ours = [], [], []
    devnull = os.open(os.devnull, os.O_RDWR)
    for number, how in enumerate((stdin, stdout, stderr)):
        if how is PIPE:
            read_end, write_end = os.pipe()
            child_end, parent_end = (read_end, write_end) if number == 0 else (write_end, read_end)
            child_fds.append(child_end)
            parent_ends.append(parent_end)
            ours.append(io.open(parent_end, "w" if number == 0 else "r", encoding="utf-8"))
        else:
            child_fds.append(devnull)
            ours.append(None)
    process = multiprocessing.get_context("fork").Process(
        target=_child, args=(argv, clean_environment(env), cwd or NO_DOTENV_DIR, tuple(child_fds), parent_ends,
                             new_session), daemon=False)
    process.start()
    for fd in {*child_fds, devnull}:         # 子进程那头只留在子进程里：它退出，读的一方才看到结尾
        os.close(fd)
    return Forked(process, *ours)
