"""A command as a user types it, isolated from the developer's configuration.

- :func:`run_cli` runs ``python -m MODULE ARGS`` *in this process* (``runpy``, as ``-m``
  does), with its own environment, working directory, stdin, stdout and stderr: fast
  enough for every CLI test;
- :func:`run_command` starts a real ``python -m`` subprocess: a smoke test for each agent
  command and for ``compare`` (``tests/test_smoke.py``, marked ``slow``) proves that the
  in-process runs tell the truth;
- ``tests/support/forked.py`` runs a command in a forked process, for real signals and pipes.

All three run in an empty directory (no ``.env`` can be read) with no model variables
inherited, so a developer's real endpoint and key can never be reached, and with the clock
fixed (``AGENT_CLOCK``), so traces can be compared. In-process, the command shares this
process's imported modules and their state, and its stdin and stdout are ``StringIO`` (no
file descriptor, no terminal).
"""
from __future__ import annotations

import contextlib
import io
import os
import runpy
import subprocess
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from tests.support.agents import CLOCK, ROOT

# 一个空目录：命令行测试在这里运行，读不到任何 .env
NO_DOTENV_DIR = Path(tempfile.mkdtemp(prefix="agent-cli-tests-"))


@dataclass
class Completed:
    """What ``subprocess.run`` would give back: exit status and the two streams."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def clean_environment(env: dict[str, str] | None) -> dict[str, str]:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT), "AGENT_CLOCK": CLOCK}
    return {**base, **(env or {})}


def run_as_python(argv: tuple[str, ...] | list[str]) -> int:
    """What ``python ARGV`` does once the interpreter is up (``-m MODULE ...``, ``-c CODE ...``,
    ``FILE ...``): run it as ``__main__`` with ``sys.argv`` set, and return the exit status. An
    uncaught exception prints its traceback on stderr and gives 1, as the interpreter does."""
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            with warnings.catch_warnings():
                # runpy warns when the module was imported before (a test imported it): harmless here
                warnings.filterwarnings("ignore", category=RuntimeWarning, module="runpy")
                runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 — python -c
        else:
            sys.argv = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as done:
        if isinstance(done.code, str):
            print(done.code, file=sys.stderr)
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except Exception:  # noqa: BLE001 — what the interpreter would print for an uncaught error
        traceback.print_exc()
        return 1
    return 0


def run_cli(*argv: str, env: dict[str, str] | None = None, input: str | None = None,
            cwd: Path | None = None) -> Completed:
    """``python -m ARGV`` in-process; an uncaught exception is a traceback on stderr and exit 1."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.dict(os.environ, clean_environment(env), clear=True))
        stack.enter_context(mock.patch.object(sys, "argv", list(argv)))      # run_as_python sets it; put back after
        stack.enter_context(mock.patch.object(sys, "stdin", io.StringIO(input or "")))
        stack.enter_context(contextlib.redirect_stdout(stdout))
        stack.enter_context(contextlib.redirect_stderr(stderr))
        stack.enter_context(contextlib.chdir(cwd or NO_DOTENV_DIR))
        code = run_as_python(("-m", *argv))
    return Completed(list(argv), code, stdout.getvalue(), stderr.getvalue())


def run_command(*argv: str, env: dict[str, str] | None = None, input: str | None = None,
                cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m ARGV`` in a fresh interpreter (slow: imports every framework again)."""
    return subprocess.run([sys.executable, "-m", *argv], cwd=cwd or NO_DOTENV_DIR,
                          env=clean_environment(env), input=input, capture_output=True, text=True,
                          timeout=120)
