"""Turn the objects an agent stack hands you into a trace the service reads.

The service detects the format itself (OpenAI Chat Completions, Anthropic
Messages, LangChain, Gemini, MCP, OpenTelemetry... see docs/formats.md);
what it needs is JSON. :func:`to_trace` converts a messages list as you
have it, SDK objects and dicts mixed, into plain JSON values:

- OpenAI: the ``messages`` you sent, with the ``ChatCompletionMessage``
  objects the SDK returned appended (or the whole ``ChatCompletion``).
- Anthropic: the ``messages`` you sent, with the returned ``Message``
  appended.
- LangChain: a list of ``BaseMessage`` objects, ``messages_to_dict``
  output, ``{"type": "ai", "content": ...}`` dicts, or a LangGraph state
  ``{"messages": [...]}``.

Objects are converted with what they offer: ``model_dump`` (pydantic v2,
as the OpenAI, Anthropic and LangChain SDKs use), ``dict`` (pydantic v1),
``to_dict``, or dataclass fields. Nothing here imports those SDKs.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Mapping, Optional

SOURCES = {
    "openai": "openai",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "langchain": "langchain",
    "langgraph": "langchain",
    "gemini": "gemini",
}
"""Names :func:`trace_format` accepts for ``source``, with the format each forces."""

_MAX_DEPTH = 1000


def to_trace(obj: Any) -> Any:
    """Returns ``obj`` as plain JSON values (dicts, lists, strings, numbers, booleans, None).

    Raises TypeError naming the value and its place when something cannot
    be converted.
    """
    return _convert(obj, "", 0)


def trace_format(source: Optional[str]) -> Optional[str]:
    """The ``format`` to force for a source name (None: let the service detect it)."""
    if source is None:
        return None
    try:
        return SOURCES[source]
    except KeyError:
        raise ValueError(f"toolscore: unknown source {source!r}; valid: {', '.join(sorted(SOURCES))}, or None to detect") from None


def _convert(v: Any, where: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise TypeError(f"toolscore: the trace nests deeper than {_MAX_DEPTH} levels at {where or '/'}")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, enum.Enum):
        return _convert(v.value, where, depth + 1)
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise TypeError(f"toolscore: a key at {where or '/'} is {type(k).__name__}, not a string")
            out[k] = _convert(x, f"{where}/{k}", depth + 1)
        return out
    if isinstance(v, (list, tuple)):
        return [_convert(x, f"{where}/{i}", depth + 1) for i, x in enumerate(v)]
    dumped = _dump(v)
    if dumped is not None:
        return _convert(dumped, where, depth + 1)
    raise TypeError(f"toolscore: cannot turn {type(v).__module__}.{type(v).__qualname__} at {where or '/'} into JSON "
                    "(give dicts, lists, or objects with model_dump, dict or to_dict)")


def _dump(v: Any) -> Optional[Any]:
    """An object's own plain form, or None when it offers none."""
    model_dump = getattr(v, "model_dump", None)
    if callable(model_dump):
        try:
            return model_dump(mode="json", exclude_none=True)
        except TypeError:
            return model_dump()
    as_dict = getattr(v, "dict", None)
    if callable(as_dict) and not isinstance(v, type):
        try:
            return as_dict(exclude_none=True)
        except TypeError:
            return as_dict()
    to_dict = getattr(v, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}
    return None
