"""The article's observations as cassettes: article 3's published traces, replayable.

``python -m compare.article_cassettes --write`` writes ``compare/cassettes/*.json``;
``--check`` (the tests) regenerates them in memory and fails if a file differs. This module is
the source of those files: every model decision in them is transcribed here from the
article's text (article 3, sections 4 and 5), nothing was recorded from a model.

How a transcription becomes a cassette: a scripted brain answers turn ``n`` of the
conversation with the article's ``n``-th decision, the function-calling loop of stage 3 runs
against it over HTTP (at the article's temperature, with compare's fixed clock and compare's
seed for run 0), and every exchange is kept. The tool results in the requests are therefore
the repository's tools' (the same values the article printed: 385.6 港元, 38560.0, 30000);
the time is compare's fixed clock, since the article did not print its own.

Replay them (``python -m compare --replay FILE``; the files name their question and
temperature, so nothing else is needed)::

    python -m compare --replay compare/cassettes/article3_section4.json
    python -m compare --replay compare/cassettes/article3_control_run1.json compare/cassettes/article3_control_run2.json
    python -m compare --replay compare/cassettes/article3_parallel_t07.json

Left out: the article's first two parts (their traces are the same chain), the JSON-protocol
loops (the article's traces are function calling; a JSON loop's requests differ from the
first message on).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from compare.cassette import Cassette
from compare.implementations import IMPLEMENTATIONS
from compare.sweep import seed_for
from shared.harness.config import REPRODUCIBLE_CLOCK, load_settings
from shared.harness.endpoint import open_endpoint
from shared.harness.process import exit_status_of
from shared.harness.implementation import Protocol
from shared.harness.run_record import Status
from shared.harness.runner import RunOptions, run_once
from shared.offline_llm.completion import build_completion
from shared.offline_llm.conversation import read_conversation
from shared.offline_llm.decision import Decision, ToolCall

CASSETTE_DIR = Path(__file__).resolve().parent / "cassettes"
QUESTION = "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"
RECORDED_WITH = "pure_loop"           # 用哪个实现生成请求（function calling 的几层发出的请求逐字节相同）
TRANSCRIBED = ("转录自文章，不是录制：《从零构建 LLM Agent（三）》{where}。模型的每个决定照抄文章；"
               "工具结果由仓库的工具给出（与文章印出的一致），时间是 compare 固定的时钟（文章没有印出它的时间）。{extra}")
MSG_STALE = "{path} 与文章的转录不一致：运行 python -m compare.article_cassettes --write"
MSG_WROTE = "写入 {path}（{n} 条）"

TIME, PRICE = ToolCall("get_current_time", {}), ToolCall("get_stock_price", {"symbol": "腾讯"})


@dataclass(frozen=True)
class Transcription:
    name: str
    where: str
    temperature: float
    decisions: tuple[Decision, ...]     # 第 n 轮模型说的话
    extra: str = ""

    @property
    def path(self) -> Path:
        return CASSETTE_DIR / f"{self.name}.json"


def _calls(*calls: ToolCall) -> Decision:
    return Decision(tool_calls=calls)


def _chain(expression: str, answer: str) -> tuple[Decision, ...]:
    return (_calls(TIME), _calls(PRICE), _calls(ToolCall("calculate", {"expression": expression})),
            Decision.answer(answer))


UNPUBLISHED_ANSWER = "终答文章没有印出，沿用第 4 节的「市值约为 38,560 港元」。"

TRANSCRIPTIONS = (
    Transcription("article3_section4", "第 4 节「等价性验证」（temperature=0）", 0.0,
                  _chain("385.6 * 100", "市值约为 38,560 港元")),
    Transcription("article3_control_run1", "第 5 节对照实验的第 1 次（temperature=0：time → stock(腾讯) → "
                  "calculate(385.6 * 100)）", 0.0, _chain("385.6 * 100", "市值约为 38,560 港元"),
                  extra=UNPUBLISHED_ANSWER),
    Transcription("article3_control_run2", "第 5 节对照实验的第 2 次（temperature=0：time → stock(腾讯) → "
                  "calculate(100 * 385.6)，仅乘数顺序不同）", 0.0, _chain("100 * 385.6", "市值约为 38,560 港元"),
                  extra=UNPUBLISHED_ANSWER),
    Transcription("article3_parallel_t07", "第 5 节 temperature=0.7 的那次：一轮并行三个调用，calculate 猜了 300", 0.7,
                  (_calls(TIME, PRICE, ToolCall("calculate", {"expression": "300 * 100"})),
                   Decision.answer("385.6 × 100 = 38,560 港元")),
                  extra="终答按文章只印出的那一句；请求带 seed=0（compare 在温度 > 0 时给第 0 次运行的种子）。"),
)


def scripted(decisions: tuple[Decision, ...]):
    """A brain that answers turn ``n`` of the conversation with ``decisions[n]``."""
    def brain(request: dict) -> dict:
        conversation = read_conversation(request)
        completion = build_completion(request, conversation, decisions[conversation.turn], fixed_ids=True)
        completion["created"] = 0            # 文件逐字可复现
        return completion
    return brain


def build(transcription: Transcription) -> Cassette:
    impl = IMPLEMENTATIONS[RECORDED_WITH]
    options = RunOptions(temperature=transcription.temperature, clock=REPRODUCIBLE_CLOCK,
                         seed=seed_for(transcription.temperature, 0))
    with open_endpoint(load_settings(env={}, dotenv=None), brain=scripted(transcription.decisions)) as endpoint:
        record = run_once(impl, QUESTION, endpoint, options)
    if record.status != Status.ANSWERED or record.llm_calls != len(transcription.decisions):
        raise RuntimeError(f"{transcription.name}: {record.status} {record.error or ''}")
    cassette = Cassette(protocols={Protocol.FUNCTION_CALLING.value}, prompts=[QUESTION],
                        temperatures=[transcription.temperature],
                        note=TRANSCRIBED.format(where=transcription.where, extra=transcription.extra))
    cassette.add_exchanges(record.exchanges)
    return cassette


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compare.article_cassettes", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="写入 compare/cassettes/")
    mode.add_argument("--check", action="store_true", help="文件与转录一致时退出 0")
    args = parser.parse_args(argv)
    stale = 0
    for transcription in TRANSCRIPTIONS:
        cassette = build(transcription)
        if args.write:
            cassette.save(transcription.path)
            print(MSG_WROTE.format(path=transcription.path, n=len(cassette.interactions)))
            continue
        on_disk = json.loads(transcription.path.read_text(encoding="utf-8")) if transcription.path.is_file() else None
        if on_disk != json.loads(json.dumps(cassette.to_dict(), ensure_ascii=False)):
            print(MSG_STALE.format(path=transcription.path), file=sys.stderr)
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(exit_status_of(main))
