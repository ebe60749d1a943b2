"""内置离线模型：一个 OpenAI 兼容的服务器，大脑是一张确定性的规则表（不是语言模型）。

The embedded offline model. With ``LLM_BASE_URL`` unset, :mod:`shared.harness.endpoint` starts an
:class:`OfflineServer` on 127.0.0.1 and every stage talks to it over HTTP exactly as it
would talk to DeepSeek, vLLM, Ollama or OpenAI. Standalone::

    python -m shared.offline_llm --port 8000

How the package is cut (one idea per file)::

    server.py        HTTP: routes, errors, latency, request log   validation.py  400s, as strict as OpenAI
    streaming.py     a completion as server-sent events           completion.py  a Decision on the wire
    policy.py        THE RULES (start reading here)               decision.py    tool calls or text
    conversation.py  reading the message list, both protocols     intents.py     understanding the question
    progress.py      which steps are done                         answer.py      every sentence it says
    sampling.py      seeded randomness at temperature > 0         tokens.py      counted usage
    faults.py        the seam for OFFLINE_LLM_FAULTS              history.py     call/result pairing (400s)
    actions.py       what no offered tool can do, said plainly    structured.py  JSON that fits a schema
    memory.py        the outdated prices it "remembers"           lesson_wording.py  all it knows of the
                                                                                 lessons' wording

``openai_chat_schema.json`` is the pinned subset of the official OpenAI spec the tests
validate every response against (see its ``$comment`` for where it comes from).
"""
from shared.offline_llm.answer import CAPABILITY_SENTENCE
from shared.offline_llm.policy import PolicyBrain
from shared.offline_llm.server import OfflineServer
from shared.offline_llm.validation import ApiError

__all__ = ["CAPABILITY_SENTENCE", "ApiError", "OfflineServer", "PolicyBrain"]
