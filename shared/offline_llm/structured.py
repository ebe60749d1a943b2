"""结构化输出：按调用方给的 JSON Schema 填出一个合法的 JSON（``response_format``、点名的函数）。

A real model asked for ``response_format: json_schema`` (the ``openai`` SDK's
``client.chat.completions.parse(response_format=Model)``, LangChain's
``with_structured_output(Model)``) or forced to call one named function
(``with_structured_output(Model, method="function_calling")``, ``tool_choice`` naming a
tool) answers with JSON that validates against the schema. The offline model does too,
by walking the schema and filling every property from what it knows about *this*
request, never from invention:

==========================  ==============================================================
property name looks like    value
==========================  ==============================================================
city, location, place       the city the question asks about (北京)
symbol, stock, ticker...    the stock the question asks about (腾讯)
expression, formula         the arithmetic it recognised (365 * 24)
a number                    a number it observed (a price, a calculation result), else 0
language, lang              ``zh`` for a Chinese question, else ``en``
anything else (a string)    its final answer in words (what it would have said as text)
==========================  ==============================================================

Enums take the first value the answer mentions (else the first), booleans say whether
every step of the question was served, arrays hold one item, ``$ref`` / ``anyOf`` /
``allOf`` / nullable types are followed. ``json_object`` without a schema gives
``{"answer": ...}``.

Left out: ``pattern``, ``format``, string lengths, ``if``/``then``, recursion beyond
:data:`MAX_DEPTH` levels.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_DEPTH = 6

_CITY = re.compile(r"city|location|place|town|城市|地点", re.IGNORECASE)
_STOCK = re.compile(r"symbol|stock|ticker|company|股票|公司", re.IGNORECASE)
_EXPRESSION = re.compile(r"expression|formula|equation|算式|表达式", re.IGNORECASE)
_LANGUAGE = re.compile(r"^(?:language|lang|语言)$", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Facts:
    """What the model knows about this request, to fill a schema with."""

    answer: str                    # 它作为文字会说的最终回答
    question: str
    city: str | None = None
    stock: str | None = None
    expression: str | None = None
    number: float | None = None    # 观察到或算出的数字（股价、计算结果）
    served: bool = False           # 问题里的每一步都做到了


def json_object_answer(facts: Facts) -> str:
    """``response_format: json_object`` without a schema: the answer in one field."""
    return json.dumps({"answer": facts.answer}, ensure_ascii=False)


def fill_json(schema: dict, facts: Facts) -> str:
    """JSON text that validates against ``schema``, filled from ``facts``."""
    return json.dumps(fill(schema, facts), ensure_ascii=False)


def fill(schema: object, facts: Facts, *, root: dict | None = None, name: str = "", depth: int = 0) -> object:
    """A value for ``schema`` (a JSON Schema dict) named ``name``."""
    if not isinstance(schema, dict):
        return facts.answer
    root = schema if root is None else root
    if depth > MAX_DEPTH:
        return None
    if "$ref" in schema:
        return fill(_resolve(root, schema["$ref"]), facts, root=root, name=name, depth=depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return _pick_enum(schema["enum"], facts)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            options = [s for s in schema[key] if not (isinstance(s, dict) and s.get("type") == "null")]
            return fill((options or schema[key])[0], facts, root=root, name=name, depth=depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: dict = {}
        for part in schema["allOf"]:
            part = _resolve(root, part["$ref"]) if isinstance(part, dict) and "$ref" in part else part
            if isinstance(part, dict):
                merged = {**merged, **part, "properties": {**merged.get("properties", {}), **part.get("properties", {})}}
        return fill(merged, facts, root=root, name=name, depth=depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _FILLERS.get(kind, _fill_string)(schema, facts, root, name, depth)


def _fill_object(schema: dict, facts: Facts, root: dict, name: str, depth: int) -> dict:
    properties = schema.get("properties") or {}
    return {key: fill(sub, facts, root=root, name=key, depth=depth + 1) for key, sub in properties.items()}


def _fill_array(schema: dict, facts: Facts, root: dict, name: str, depth: int) -> list:
    count = max(1, int(schema.get("minItems") or 0))
    if isinstance(schema.get("maxItems"), int):
        count = min(count, schema["maxItems"])
    return [fill(schema.get("items") or {}, facts, root=root, name=name, depth=depth + 1) for _ in range(count)]


def _fill_string(schema: dict, facts: Facts, root: dict, name: str, depth: int) -> str:
    if _CITY.search(name) and facts.city:
        return facts.city
    if _STOCK.search(name) and facts.stock:
        return facts.stock
    if _EXPRESSION.search(name) and facts.expression:
        return facts.expression
    if _LANGUAGE.match(name):
        return "zh" if _CJK.search(facts.question) else "en"
    if name.casefold() == "name" and (facts.city or facts.stock):
        return facts.city or facts.stock or ""
    return facts.answer


def _fill_number(schema: dict, facts: Facts, root: dict, name: str, depth: int) -> float | int:
    value = facts.number if facts.number is not None else 0
    value = max(value, schema.get("minimum", value))
    value = min(value, schema.get("maximum", value))
    if schema.get("type") == "integer" or (isinstance(schema.get("type"), list) and "integer" in schema["type"]):
        return int(round(value))
    return value


def _fill_boolean(schema: dict, facts: Facts, root: dict, name: str, depth: int) -> bool:
    return facts.served


_FILLERS = {
    "object": _fill_object,
    "array": _fill_array,
    "string": _fill_string,
    "number": _fill_number,
    "integer": _fill_number,
    "boolean": _fill_boolean,
    "null": lambda *_: None,
}


def _pick_enum(values: list, facts: Facts) -> object:
    text = f"{facts.answer} {facts.question}".casefold()
    return next((v for v in values if isinstance(v, str) and v.casefold() in text), values[0] if values else None)


def _resolve(root: dict, ref: str) -> dict:
    """``#/$defs/Name`` or ``#/definitions/Name`` inside the root schema ({} if not found)."""
    node: object = root
    for part in ref.lstrip("#/").split("/") if ref.startswith("#") else ():
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}
