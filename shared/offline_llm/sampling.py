"""温度 > 0 时的"随机"：可复现的随机数，以及串行还是并行的那一次抉择。

A real model at temperature 0.7 sometimes answers the articles' question with one
parallel round (time, price and a *guessed* ``calculate`` at once) instead of the serial
chain: the article's section 5. The offline model reproduces that choice, but
reproducibly, so a test, a comparison or a reader can get the same run again:

- **seed material**: the request's ``seed`` if given; else the server's seed
  (``OFFLINE_LLM_SEED``) combined with the question; else the question and the
  temperature alone. Everything goes through :mod:`hashlib`, never ``hash()``, whose
  value changes from one Python process to the next (``PYTHONHASHSEED``).
- **parallel probability** ``p(T) = 1 − e^(−T)``: 0 at T = 0, ≈ 0.50 at 0.7 (the
  article's setting, where both strategies showed up), ≈ 0.63 at 1.0, ≈ 0.86 at 2.0.
- the draw is made from the seed material alone, so it is the same at every turn of one
  conversation: the choice is made once, at the question.

Left out: which calls go into a round (``policy.py``).
"""
from __future__ import annotations

import hashlib
import math
import random


def seed_material(request: dict, question: str, server_seed: int | None) -> str:
    """The text every random draw of this conversation is derived from."""
    seed = request.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        return f"request-seed:{seed}"
    if server_seed is not None:
        return f"server-seed:{server_seed}|question:{question}"
    return f"question:{question}|temperature:{temperature_of(request)!r}"


def temperature_of(request: dict) -> float:
    """The request's temperature; absent means 0 here (the repo's default, not OpenAI's 1)."""
    value = request.get("temperature")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def derived_rng(material: str, purpose: str) -> random.Random:
    """A ``random.Random`` seeded from ``material`` and ``purpose`` via SHA-256."""
    digest = hashlib.sha256(f"{material}|{purpose}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def parallel_probability(temperature: float) -> float:
    """``1 − e^(−T)``: how likely the model is to fire every call in one round."""
    return 1.0 - math.exp(-temperature) if temperature > 0 else 0.0


def chooses_parallel(material: str, temperature: float) -> bool:
    """The once-per-conversation choice between the serial chain and one parallel round."""
    return derived_rng(material, "strategy").random() < parallel_probability(temperature)
