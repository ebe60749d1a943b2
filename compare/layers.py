"""The cost of each layer: what every implementation adds per model call, at start, on disk and in tokens.

Measured by :mod:`compare.bench` (its default mode), all in one run so the ratios compare
like with like:

- **µs per model call, in-process**: every suite prompt run on a model that answers inside
  the process (:class:`InProcessModel`, an httpx transport that hands the request body to
  the offline model's own parser and rule brain and returns its JSON: no socket, no server
  thread). What is left is the agent code, its framework, the SDK and the harness's meter,
  plus the brain's own time, measured alone as a row of its own. Chosen over a scripted
  model because it answers every implementation's own requests, with the same decisions
  as over HTTP.
- **µs per model call over HTTP**: the same runs against the offline model served by its
  own process (:class:`compare.processes.ModelProcess`), so the model's CPU is not counted
  in the client's time.
- **the floors**, in the same run: the requests pure_loop sent, sent again by a bare
  ``openai`` SDK client (``client.chat.completions.create(**body)``) and by raw HTTP
  (``http.client`` on one keep-alive connection). The ratio to the SDK floor is what an
  implementation costs beyond "call the API".
- **cold start**: a fresh ``python`` per implementation: importing the lesson module and the
  client it needs, then everything until its first answer (the harness, the client, building
  the agent, the calls).
- **installed footprint** of each tier, from the installed distributions' file records
  (``importlib.metadata``: every file a distribution's RECORD lists, its size on disk) and
  their dependency closure (``requires``, markers evaluated, extras not followed).
- **lines** of each lesson file: all of them, and the code (no blank, comment or docstring lines).

Left out: asserting any of it (numbers depend on the machine), memory use, real endpoints.
"""
from __future__ import annotations

import ast
import http.client
import io
import json
import os
import subprocess
import sys
import time
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from shared.harness.config import REPRODUCIBLE_CLOCK, Settings
from shared.harness.endpoint import Endpoint, endpoint_at
from shared.harness.implementation import Implementation, Sdk
from shared.harness.runner import RunOptions, run_once
from shared.offline_llm import PolicyBrain
from shared.offline_llm.validation import ApiError, parse_chat_request

ROOT = Path(__file__).resolve().parent.parent
IN_PROCESS_URL = "http://in-process/v1"
MB = 1_000_000
ARTICLE_CLAIM_MB = 500            # 第二篇："LangChain 500MB 的依赖树"

# 一次运行离不开的客户端库：LangChain 几层在第一次运行时才 import langchain_openai，零框架的循环只要 openai
CLIENT_MODULE = {Sdk.LANGCHAIN: "langchain_openai", Sdk.OPENAI: "openai"}

# 每一层：名字、认出它的顶层模块（一个进程 import 了它，就用到了这一层）、它连同下面几层要装的分发包
TIERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("openai SDK", "openai", ("openai",)),
    ("+ langchain-core, langchain-openai", "langchain_core", ("openai", "langchain-core", "langchain-openai")),
    ("+ langgraph", "langgraph", ("openai", "langchain-core", "langchain-openai", "langgraph")),
    ("+ langchain", "langchain", ("openai", "langchain-core", "langchain-openai", "langgraph", "langchain")),
)

COLD_START_SNIPPET = """\
import importlib, json, sys, time
started = time.perf_counter()
for name in sys.argv[1].split(","):
    importlib.import_module(name)
imported = time.perf_counter()
from shared.harness.config import load_settings
from shared.harness.endpoint import endpoint_at
from shared.harness.implementation import Implementation
from shared.harness.runner import RunOptions, run_once
module = sys.modules[sys.argv[1].split(",")[0]]
endpoint = endpoint_at(sys.argv[2], load_settings(env={}, dotenv=None))
record = run_once(Implementation(module.ABOUT, module.run_agent), sys.argv[3], endpoint,
                  RunOptions(clock=sys.argv[4]))
answered = time.perf_counter()
loaded = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"import": imported - started, "first_answer": answered - imported, "status": record.status,
                  "loaded": loaded}))
"""
ERR_COLD_START = "在新进程里跑 {module} 失败（退出码 {code}）：{reason}"


class MeasureError(RuntimeError):
    """A fresh interpreter could not import or run an implementation; one line."""


# ---- a model that answers in the process ----

class InProcessModel(httpx.BaseTransport):
    """An httpx transport that answers chat completions with the offline model's brain, no socket."""

    def __init__(self, brain=None) -> None:
        self.brain = brain or PolicyBrain()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            completion = self.brain(parse_chat_request(request.read()))
        except ApiError as error:
            return httpx.Response(error.status, json=error.body(), request=request)
        return httpx.Response(200, request=request, headers={"content-type": "application/json"},
                              content=json.dumps(completion, ensure_ascii=False).encode("utf-8"))


def in_process_endpoint(settings: Settings) -> Endpoint:
    return endpoint_at(IN_PROCESS_URL, settings, transport=InProcessModel())


# ---- µs per model call ----

@dataclass
class CallCost:
    """One implementation's (or floor's) runs, round by round: µs per call is the fastest round's."""
    runs: int = 0
    answered: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rounds: list[tuple[float, int]] = field(default_factory=list)     # (seconds, model calls) per round

    def add(self, seconds: float, calls: int, *, new_round: bool) -> None:
        if new_round or not self.rounds:
            self.rounds.append((0.0, 0))
        total, count = self.rounds[-1]
        self.rounds[-1] = (total + seconds, count + calls)

    @property
    def us_per_call(self) -> float:
        # 每一轮（每道题都跑过一次）算一个 µs/次，取最快的一轮（和 timeit 一样）：别的进程抢走 CPU
        # 只会让一轮变慢、不会变快，最快的那轮最接近代码本身的成本
        per_round = [seconds / calls * 1e6 for seconds, calls in self.rounds if calls]
        return min(per_round, default=0.0)


@dataclass
class Measured:
    in_process: dict[str, CallCost]
    over_http: dict[str, CallCost]
    floors: dict[str, CallCost]


FLOORS = ("sdk_in_process", "sdk_http", "raw_http", "model_alone")


def per_call_costs(impls: list[Implementation], prompts: list[str], in_process: Endpoint, over_http: Endpoint,
                   options: RunOptions, repeat: int, floor_impl: Implementation) -> Measured:
    """Every implementation and every floor, interleaved: prompt by prompt, each one after the other.

    Interleaving is what makes the ratios fair on a machine others use too: a slow second
    hits every implementation and the floors alike, not one of them.
    """
    from openai import OpenAI

    endpoints = {"in_process": in_process, "over_http": over_http}
    for impl in impls:                                   # 热身：延迟导入、首次使用的缓存、编好的图
        for endpoint in endpoints.values():
            run_once(impl, prompts[0], endpoint, options)
    requests = {prompt: [(body, json.dumps(body, ensure_ascii=False).encode("utf-8"))
                         for body in recorded_requests(floor_impl, [prompt], over_http, options)]
                for prompt in prompts}
    clients = {"sdk_in_process": OpenAI(base_url=IN_PROCESS_URL, api_key="floor", max_retries=0,
                                        http_client=httpx.Client(transport=InProcessModel())),
               "sdk_http": OpenAI(base_url=over_http.base_url, api_key="floor", max_retries=0)}
    raw = RawHttp(over_http.base_url)
    brain = PolicyBrain()
    # 每个地板拿到（请求 dict, 编好的字节）：SDK 和原始 HTTP 自己序列化（客户端本来就要做），
    # "离线模型自己"从字节开始：解析、决定、编码回答，正是服务器为一个请求做的事
    floors = {
        "sdk_in_process": lambda body, _: clients["sdk_in_process"].chat.completions.create(**body),
        "sdk_http": lambda body, _: clients["sdk_http"].chat.completions.create(**body),
        "raw_http": lambda body, _: raw.post(json.dumps(body, ensure_ascii=False).encode("utf-8")),
        "model_alone": lambda _, raw_body: json.dumps(brain(parse_chat_request(raw_body)),
                                                      ensure_ascii=False).encode("utf-8"),
    }
    for send in floors.values():
        send(*requests[prompts[0]][0])
    measured = Measured({impl.name: CallCost() for impl in impls}, {impl.name: CallCost() for impl in impls},
                        {name: CallCost() for name in FLOORS})
    try:
        for _ in range(repeat):
            for index, prompt in enumerate(prompts):
                for impl in impls:
                    for where, endpoint in endpoints.items():
                        _run_timed(getattr(measured, where)[impl.name], impl, prompt, endpoint, options,
                                   new_round=index == 0)
                for name, send in floors.items():
                    started = time.perf_counter()
                    for body, raw_body in requests[prompt]:
                        send(body, raw_body)
                    measured.floors[name].add(time.perf_counter() - started, len(requests[prompt]),
                                              new_round=index == 0)
    finally:
        raw.close()
    return measured


def _run_timed(cost: CallCost, impl: Implementation, prompt: str, endpoint: Endpoint, options: RunOptions, *,
               new_round: bool) -> None:
    started = time.perf_counter()
    record = run_once(impl, prompt, endpoint, options)
    cost.add(time.perf_counter() - started, record.llm_calls, new_round=new_round)
    cost.runs += 1
    cost.answered += record.status == "answered"
    cost.llm_calls += record.llm_calls
    cost.prompt_tokens += record.usage.get("prompt_tokens", 0)
    cost.completion_tokens += record.usage.get("completion_tokens", 0)


def recorded_requests(impl: Implementation, prompts: list[str], endpoint: Endpoint,
                      options: RunOptions) -> list[dict]:
    """The request bodies ``impl`` sends for the prompts: what the floors send again."""
    return [exchange["request"] for prompt in prompts
            for exchange in run_once(impl, prompt, endpoint, options).exchanges]


class RawHttp:
    """``http.client`` posting chat completions on one keep-alive connection; the answer parsed, nothing else."""

    def __init__(self, base_url: str) -> None:
        url = urlsplit(base_url)
        self.path = url.path.rstrip("/") + "/chat/completions"
        self.connection = http.client.HTTPConnection(url.hostname, url.port)

    def post(self, body: bytes) -> dict:
        self.connection.request("POST", self.path, body=body, headers={"Content-Type": "application/json"})
        return json.loads(self.connection.getresponse().read())     # 客户端至少要把回答解析出来

    def close(self) -> None:
        self.connection.close()


# ---- cold start ----

def needed_modules(impl: Implementation) -> tuple[str, ...]:
    """What a run of ``impl`` cannot start without: its module and its client library."""
    return (impl.module, CLIENT_MODULE[impl.sdk])


def cold_start(impl: Implementation, base_url: str, prompt: str, samples: int) -> tuple[float, float, list[str]]:
    """The fastest of ``samples`` fresh interpreters: seconds to import ``impl`` (and its client), then to its first answer;
    and the top-level packages that process had loaded by then."""
    command = [sys.executable, "-c", COLD_START_SNIPPET, ",".join(needed_modules(impl)), base_url, prompt,
               REPRODUCIBLE_CLOCK]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    imports, answers = [], []
    for _ in range(samples):
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        lines = (done.stdout if done.returncode == 0 else done.stderr).strip().splitlines()
        if done.returncode != 0:
            raise MeasureError(ERR_COLD_START.format(module=impl.module, code=done.returncode,
                                                     reason=lines[-1] if lines else ""))
        timing = json.loads(lines[-1])
        imports.append(timing["import"])
        answers.append(timing["first_answer"])
    return min(imports), min(answers), timing["loaded"]


def tier_of(loaded: Iterable[str]) -> str:
    """The smallest tier holding every package a process loaded (which layer an implementation needs)."""
    loaded = set(loaded)
    return next((tier for tier, module, _ in reversed(TIERS) if module in loaded), TIERS[0][0])


# ---- installed footprint ----

@dataclass(frozen=True)
class Footprint:
    tier: str
    distributions: int
    files: int
    bytes: int


def dependency_closure(names: Iterable[str]) -> dict[str, metadata.Distribution]:
    """The installed distributions ``names`` need, themselves included (markers evaluated, no extras)."""
    environment = {**default_environment(), "extra": ""}
    found: dict[str, metadata.Distribution] = {}
    todo = [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        try:
            found[name] = dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue                  # 某个平台才装的依赖，这里没有
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(environment):
                todo.append(canonicalize_name(requirement.name))
    return found


def footprint(tier: str, names: Iterable[str]) -> Footprint:
    files = size = 0
    distributions = dependency_closure(names)
    for dist in distributions.values():
        for file in dist.files or []:
            path = Path(dist.locate_file(file))
            if path.is_file():
                files += 1
                size += path.stat().st_size
    return Footprint(tier, len(distributions), files, size)


def footprints() -> list[Footprint]:
    return [footprint(tier, names) for tier, _, names in TIERS]


# ---- lines of code ----

@dataclass(frozen=True)
class Lines:
    path: str
    total: int
    code: int


def lines_of(path: Path) -> Lines:
    """All lines, and the lines with code: no blank line, no comment, no docstring."""
    text = path.read_text(encoding="utf-8")
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                          tokenize.ENDMARKER):
            continue
        code.update(line for line in range(token.start[0], token.end[0] + 1) if line not in docstrings)
    return Lines(str(path.relative_to(ROOT)), len(text.splitlines()), len(code))
