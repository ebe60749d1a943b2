"""题库：读入并校验 ``compare/suite.json``（或 ``--suite`` 给的文件、``--prompt`` 给的临时题）。

A suite is a JSON object ``{"prompts": [...]}``; each prompt is

- ``prompt`` (required): the user's question;
- ``id``, ``note``: a short name and a line of explanation, for the report;
- ``expect`` (optional): the calls a correct agent makes, so the suite checks correctness and
  not only agreement: ``{"match": "strict" | "unordered" | "subset" | "superset",
  "args": "exact" | "by_value" | "ignore", "rounds": [[call, ...], ...]}`` or, when the
  grouping does not matter, ``"calls": [call, ...]`` (not with ``strict``); a call is
  ``{"name": str, "args": object}``;
- ``answer_contains`` (optional): strings the final answer must contain.

The pydantic models below are the schema; a file that does not fit is one line naming the
file, the place (``prompts[3].expect.match``) and the problem, raised as :class:`SuiteError`
(exit status 2 on the command line). Unknown keys are errors: a misspelt ``"expected"``
silently ignored would make the suite look like it checks something it does not.

Left out: how calls are compared (:mod:`compare.matching`), running anything.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from compare.matching import BY_VALUE, STRICT

DEFAULT_SUITE = Path(__file__).with_name("suite.json")

ERR_READ = "无法读取题库 {path}: {reason}"
ERR_JSON = "题库 {path} 不是合法 JSON: {reason}"
ERR_AT = "题库 {path}: {where}: {problem}"
ERR_ROUNDS_OR_CALLS = "要给 rounds（按轮分组）或 calls（平铺）之一"
ERR_STRICT_FLAT = "strict 比对需要 rounds（轮次分组），平铺的 calls 只能配 unordered / subset / superset"
ERR_DUPLICATE = "与 prompts[{other}] 重复（同一题只需出现一次）"

ERR_TEXT = "应是非空字符串"


def _nonblank(text: str) -> str:
    if not text.strip():
        raise ValueError(ERR_TEXT)
    return text


Text = Annotated[str, AfterValidator(_nonblank)]


class SuiteError(ValueError):
    """The suite file cannot be used; ``str(error)`` is one line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExpectedCall(_Strict):
    name: Text
    args: dict = Field(default_factory=dict)


class Expectation(_Strict):
    """What a correct run does: the calls (grouped into rounds, or flat) and how to compare them."""
    match: Literal["strict", "unordered", "subset", "superset"] = STRICT
    args: Literal["exact", "by_value", "ignore"] = BY_VALUE
    rounds: list[list[ExpectedCall]] | None = None
    calls: list[ExpectedCall] | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> Expectation:
        if (self.rounds is None) == (self.calls is None):
            raise ValueError(ERR_ROUNDS_OR_CALLS)
        if self.calls is not None and self.match == STRICT:
            raise ValueError(ERR_STRICT_FLAT)
        return self

    @property
    def expected_rounds(self) -> list[list[dict]]:
        """The calls as rounds; flat ``calls`` are one call per round (only ``strict`` looks at rounds)."""
        rounds = self.rounds if self.rounds is not None else [[c] for c in self.calls]
        return [[c.model_dump() for c in round_] for round_ in rounds]


class SuitePrompt(_Strict):
    prompt: Text
    id: str = ""
    note: str = ""
    expect: Expectation | None = None
    answer_contains: list[Text] = Field(default_factory=list)

    @property
    def label(self) -> str:
        return self.id or self.prompt


class Suite(_Strict):
    about: str = ""
    prompts: list[SuitePrompt] = Field(min_length=1)


def ad_hoc(prompts: list[str], known: list[SuitePrompt] = ()) -> list[SuitePrompt]:
    """``--prompt TEXT`` 给的临时题。题库里有同一题时沿用它的期望，否则只比较实现之间是否一致。"""
    by_text = {p.prompt: p for p in known}
    return [by_text.get(text) or SuitePrompt(prompt=text, id=f"prompt{i + 1}") for i, text in enumerate(prompts)]


def load_suite(path: Path = DEFAULT_SUITE) -> list[SuitePrompt]:
    """Read and validate a suite file; any problem is a :class:`SuiteError` of one line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SuiteError(ERR_READ.format(path=path, reason=getattr(error, "strerror", None) or error)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SuiteError(ERR_JSON.format(path=path, reason=error)) from None
    return parse_suite(data, path=str(path))


def parse_suite(data: object, *, path: str = "<suite>") -> list[SuitePrompt]:
    """Validate already-parsed suite data (the tests build suites in memory)."""
    try:
        prompts = Suite.model_validate(data).prompts
    except ValidationError as error:
        first = error.errors()[0]
        raise SuiteError(ERR_AT.format(path=path, where=_where(first["loc"]), problem=first["msg"].removeprefix("Value error, "))) from None
    seen: dict[str, int] = {}
    for i, prompt in enumerate(prompts):
        if prompt.prompt in seen:
            raise SuiteError(ERR_AT.format(path=path, where=f"prompts[{i}]",
                                           problem=ERR_DUPLICATE.format(other=seen[prompt.prompt])))
        seen[prompt.prompt] = i
    return prompts


def _where(loc: tuple) -> str:
    """pydantic's ``("prompts", 0, "expect", "match")`` as ``prompts[0].expect.match``."""
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc
                    if part not in ("function-after[_one_shape()]",))
    return where.lstrip(".") or "$"
