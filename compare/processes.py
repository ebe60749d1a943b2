"""A sweep on every core: the offline model in its own process, worker processes with bounded threads.

Why processes: a Python process runs Python on one core at a time (the GIL). In one process
the agent code of every concurrent run, the HTTP client and the embedded offline model
all take turns on that one core, so a concurrent sweep on a fast (or deliberately slowed)
model ends up waiting for the CPU, not for the model. Here

- the offline model serves from its own process (:class:`ModelProcess`), so answering never
  competes with the agents for a GIL;
- the jobs run in ``workers`` processes (one per core by default), each with up to
  ``threads`` runs at once (the model's latency is waited in threads; the CPU work is spread
  over processes);
- the jobs expected to take longest start first (longest processing time first: a long job
  started last is what leaves the other workers idle at the end);
- the parent alone writes the results file and calls ``on_done``: the workers send each
  finished record back, so the file has one writer, as with threads.

Workers are forked from the parent, so they start with everything the parent imported and
the implementations they are given (a lesson a test replaced, a function defined in a test,
included): a job crosses to a worker as the implementation's name and its plain fields,
never as pickled code. Each builds its own
endpoint (one HTTP client, one set of reused graphs per worker). With ``warm_up`` jobs each
worker runs them first and throws the records away: the first run of an implementation
pays lazy imports and first-use caches, which a timed window must not contain.

Ctrl-C: the workers and the model ignore SIGINT; the parent stops handing out jobs, waits
for the runs in flight, writes them, and re-raises, as :func:`compare.sweep.run_sweep` does.

Left out: platforms without ``fork`` (the caller keeps the thread sweep there), a custom
model brain (a cassette, a scripted model, a human: those sweep in threads, where the brain
lives), and retrying a worker that died (its jobs become error records).
"""
from __future__ import annotations

import math
import multiprocessing
import os
import queue
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from compare.sweep import Job, ResultsFile, record_key, run_job
from shared.harness.config import Settings
from compare.suite import SuitePrompt
from shared.harness.endpoint import Endpoint, endpoint_at
from shared.harness.implementation import Implementation
from shared.harness.run_record import RunRecord, Status
from shared.harness.runner import RunOptions

START_SECONDS = 120          # 一个 worker 启动加热身的上限；超过就当它起不来
POLL_SECONDS = 0.5           # 等结果时多久看一眼 worker 还活着没有
ERR_NO_FORK = "this platform cannot fork"
ERR_WORKER_DIED = "worker process {pid} exited with {code} before sending this run back"
ERR_START = "worker processes did not start within {seconds} s"
ERR_MODEL_START = "the offline model's process did not start: {reason}"
ERR_UNKNOWN = "the workers were not given these implementations when they started: {names}"

_READY = "ready"
_DONE = "done"


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def cores() -> int:
    """The cores this process may run on (a container's limit, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # macOS
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Shape:
    """How a sweep of ``concurrency`` runs at once is spread: ``workers`` processes × ``threads``."""

    workers: int
    threads: int

    @classmethod
    def for_concurrency(cls, concurrency: int, available: int | None = None) -> "Shape":
        workers = max(1, min(concurrency, available or cores()))
        return cls(workers, math.ceil(concurrency / workers))


def longest_first(jobs: Iterable[Job], expected: Callable[[Job], float]) -> list[Job]:
    """The jobs by expected duration, longest first (stable: equal ones keep the plan's order)."""
    return sorted(jobs, key=lambda job: -expected(job))


def expected_model_calls(prompts: Iterable[SuitePrompt]) -> Callable[[Job], float]:
    """What a job is expected to take, in model calls: one per expected round, plus the answer."""
    calls = {p.prompt: len(p.expect.expected_rounds) + 1 for p in prompts if p.expect is not None}
    return lambda job: calls.get(job.prompt, 2)


@contextmanager
def on_cores(settings: Settings, concurrency: int, impls: Iterable[Implementation], *,
             warm_up: Iterable[Job] = (), warm_up_options: RunOptions = RunOptions()) -> Iterator[ProcessSweep]:
    """A :class:`ProcessSweep` shaped for ``concurrency``; the offline model in its own process
    when the settings name no endpoint."""
    with ExitStack() as stack:
        base_url = settings.base_url or stack.enter_context(ModelProcess(settings))
        yield stack.enter_context(ProcessSweep(base_url, settings, Shape.for_concurrency(concurrency), impls,
                                               warm_up=warm_up, warm_up_options=warm_up_options))


# ---- the offline model in its own process ----

class ModelProcess:
    """``with ModelProcess(settings) as base_url:`` the embedded offline model, served by a child process."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._process: multiprocessing.Process | None = None
        self._stop = None

    def __enter__(self) -> str:
        context = multiprocessing.get_context("fork")
        parent_end, child_end = context.Pipe()
        self._process = context.Process(target=_serve_model, args=(self.settings, child_end),
                                        name="offline-model", daemon=True)
        self._process.start()
        child_end.close()
        self._stop = parent_end
        try:
            if not parent_end.poll(START_SECONDS):
                raise RuntimeError(ERR_MODEL_START.format(reason="timed out"))
            kind, value = parent_end.recv()
            if kind != _READY:
                raise RuntimeError(ERR_MODEL_START.format(reason=value))
        except BaseException:
            self.__exit__()
            raise
        return value

    def __exit__(self, *exc_info) -> None:
        if self._stop is not None:
            try:
                self._stop.send(_DONE)
            except OSError:
                pass
        if self._process is not None:
            if exc_info and exc_info[0] is not None:    # 被打断：不等在途的请求
                self._process.terminate()
            self._process.join(5)
            if self._process.is_alive():
                self._process.terminate()
                self._process.join()
        self._process, self._stop = None, None


def _die_with_parent() -> None:
    """A worker or the model process ends when compare does, even when compare is SIGKILLed.

    Forked children hold compare's stdout and stderr open; orphans would keep a reader (a
    pipe, a test) waiting. A watchdog thread notices the parent is gone and exits at once.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def _serve_model(settings: Settings, conn) -> None:
    from shared.offline_llm import OfflineServer

    signal.signal(signal.SIGINT, signal.SIG_IGN)        # Ctrl-C 由父进程收尾
    signal.signal(signal.SIGTERM, signal.SIG_DFL)       # fork 继承了父进程的 SIGTERM 处理；被 terminate 就安静地结束
    _die_with_parent()
    try:
        server = OfflineServer(faults=settings.offline_faults, seed=settings.offline_seed,
                               latency_ms=settings.offline_latency_ms).start()
    except Exception as error:  # noqa: BLE001 — 起不来的原因交给父进程说
        conn.send(("error", f"{type(error).__name__}: {error}"))
        return
    conn.send((_READY, server.base_url))
    try:
        conn.recv()                       # 父进程说停，或父进程没了（EOFError）
    except (EOFError, OSError):
        pass
    server.stop()


# ---- worker processes ----

class ProcessSweep:
    """Worker processes, each running up to ``threads`` jobs at once against one endpoint.

    ``with ProcessSweep(endpoint_url, settings, Shape(2, 8), impls, warm_up=jobs) as sweep:
    records = sweep.run(jobs, results=..., options=...)``. Start-up (forking, warm-up) happens
    in ``__enter__``, so a caller times :meth:`run` alone.
    """

    def __init__(self, base_url: str, settings: Settings, shape: Shape, impls: Iterable[Implementation], *,
                 warm_up: Iterable[Job] = (), warm_up_options: RunOptions = RunOptions()):
        if not can_fork():
            raise RuntimeError(ERR_NO_FORK)
        self.base_url, self.settings, self.shape = base_url, settings, shape
        self.impls = {impl.name: impl for impl in impls}
        self.warm_up, self.warm_up_options = list(warm_up), warm_up_options
        self._context = multiprocessing.get_context("fork")
        self._jobs = self._context.Queue()
        self._results = self._context.Queue()
        self._workers: list[multiprocessing.Process] = []

    def __enter__(self) -> "ProcessSweep":
        try:
            for index in range(self.shape.workers):
                process = self._context.Process(
                    target=_worker, name=f"compare-worker-{index}", daemon=True,
                    args=(self.base_url, self.settings, self.shape.threads, self.impls, self.warm_up,
                          self.warm_up_options, self._jobs, self._results))
                process.start()
                self._workers.append(process)
            ready = 0
            while ready < len(self._workers):
                try:
                    kind, _, _ = self._results.get(timeout=START_SECONDS)
                except queue.Empty:
                    raise RuntimeError(ERR_START.format(seconds=START_SECONDS)) from None
                ready += kind == _READY
        except BaseException:             # Ctrl-C 在启动时也一样：已经起来的 worker 不留下
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        interrupted = bool(exc_info) and exc_info[0] is not None
        for _ in self._workers:
            self._jobs.put(None)
        for process in self._workers:
            if interrupted:               # 被打断：在途的运行放弃，不等它们跑完
                process.terminate()
            process.join(10)
            if process.is_alive():
                process.terminate()
                process.join()
        self._workers = []

    @property
    def worker_pids(self) -> list[int]:
        return [process.pid for process in self._workers]

    def run(self, jobs: list[Job], *, results: ResultsFile, options: RunOptions = RunOptions(),
            on_done: Callable[[RunRecord], None] | None = None,
            expected: Callable[[Job], float] | None = None) -> list[RunRecord]:
        """Every job once, longest expected first; each finished record is written at once (here).

        Returns the records in ``jobs`` order. ``KeyboardInterrupt`` stops handing out jobs and
        propagates at once: the runs in flight are abandoned, not recorded (``--resume`` reruns them).
        """
        unknown = {job.impl.name for job in jobs if self.impls.get(job.impl.name) != job.impl}
        if unknown:
            raise ValueError(ERR_UNKNOWN.format(names=", ".join(sorted(unknown))))
        order = longest_first(jobs, expected) if expected else list(jobs)
        slots = self.shape.workers * self.shape.threads
        by_key = {job.key: job for job in order}
        pending = iter(order)
        in_flight: set = set()
        done: list[RunRecord] = []

        def hand_out() -> None:
            for job in pending:
                # 送过去的是名字和普通字段：实现本身（代码）worker 在 fork 时就有了
                self._jobs.put((job.impl.name, job.prompt, job.temperature, job.run, options))
                in_flight.add(job.key)
                if len(in_flight) >= slots:
                    return

        def collect() -> None:
            kind, key, record = self._next_result(in_flight, by_key)
            if key not in in_flight:
                return                    # 已经记成 error 的（它的 worker 没了）
            in_flight.discard(key)
            if kind == "interrupted":
                raise KeyboardInterrupt
            results.append(record)
            done.append(record)
            if on_done:
                on_done(record)

        try:
            hand_out()
            while in_flight:
                collect()
                hand_out()
        except BaseException:
            # Ctrl-C（或 SIGTERM）：没发出去的不再发；在途的放弃——不等、不记录（没有结局的运行，
            # --resume 会重跑它），和线程版的 sweep 一样。worker 在 __exit__ 里立刻结束
            raise
        position = {job.key: i for i, job in enumerate(jobs)}
        return sorted(done, key=lambda r: position[record_key(r)])

    def _next_result(self, in_flight: set, by_key: dict) -> tuple[str, tuple, RunRecord | None]:
        while True:
            try:
                return self._results.get(timeout=POLL_SECONDS)
            except queue.Empty:
                dead = [p for p in self._workers if not p.is_alive()]
                if dead and in_flight:
                    # 一个 worker 没了：它手里的运行回不来了，都记成 error，别让 sweep 永远等下去
                    key = next(iter(in_flight))
                    job = by_key[key]
                    return ("record", key, RunRecord(
                        impl=job.impl.name, prompt=job.prompt, temperature=job.temperature, run=job.run,
                        status=Status.ERROR, answer=None,
                        error=ERR_WORKER_DIED.format(pid=dead[0].pid, code=dead[0].exitcode)))


def _worker(base_url: str, settings: Settings, threads: int, impls: dict[str, Implementation], warm_up: list[Job],
            warm_up_options: RunOptions, jobs, results) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # Ctrl-C 由父进程收尾
    signal.signal(signal.SIGTERM, signal.SIG_DFL)       # fork 继承了父进程的 SIGTERM 处理；子进程被 terminate 就安静地结束
    _die_with_parent()
    endpoint = endpoint_at(base_url, settings, offline=not settings.base_url)
    with ThreadPoolExecutor(max_workers=threads) as warming:   # 热身：延迟导入、首次使用的缓存、编好的图，不计入
        list(warming.map(lambda job: run_job(job, endpoint, warm_up_options), warm_up))
    results.put((_READY, None, None))
    pool = [threading.Thread(target=_run_jobs, args=(endpoint, impls, jobs, results), daemon=True)
            for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


def _run_jobs(endpoint: Endpoint, impls: dict[str, Implementation], jobs, results) -> None:
    while True:
        item = jobs.get()
        if item is None:
            jobs.put(None)        # 让同一进程里的其他线程也看到结束
            return
        name, prompt, temperature, run, options = item
        job = Job(impls[name], prompt, temperature, run)
        try:
            record = run_job(job, endpoint, options)
        except BaseException:     # noqa: BLE001 — run 里的 KeyboardInterrupt：告诉父进程
            results.put(("interrupted", job.key, None))
            continue
        results.put(("record", job.key, record))
