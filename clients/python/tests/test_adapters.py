"""The adapter: the flight conversation of examples/contracts as each stack
hands it over (OpenAI and Anthropic messages with SDK-style objects, LangChain
messages as objects and as messages_to_dict dicts, a LangGraph state) grades
the same as the shipped OpenAI trace.

The SDKs are not installed here (no PyPI): their objects are stand-ins
with the same conversion method (pydantic v2's model_dump(mode=...,
exclude_none=...)) and the same field layout.
"""

import copy
import dataclasses
import json

import pytest

from conftest import RUN_TAG, repo_json
from toolscore_client import to_trace, trace_format

CONTRACT = repo_json("examples/contracts/contract.json")
OPENAI = repo_json("examples/contracts/trace.json")

SEARCH_RESULT = OPENAI[3]["content"]
WEATHER_RESULT = OPENAI[5]["content"]
SEAT_RESULT = OPENAI[7]["content"]
ANSWER = OPENAI[8]["content"]
CALLS = [
    ("call_1", "search_flights", {"destination": "LIS", "date": "2026-12-18"}, SEARCH_RESULT),
    ("call_2", "get_weather", {"city": "Lisbon"}, WEATHER_RESULT),
    ("call_3", "reserve_seat", {"flight_id": "FL-204", "seat": "12A"}, SEAT_RESULT),
]


class Model:
    """A pydantic-v2-like model: fields as attributes, model_dump as pydantic's."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def model_dump(self, mode="python", exclude_none=False):
        def dump(v):
            if isinstance(v, Model):
                return v.model_dump(mode=mode, exclude_none=exclude_none)
            if isinstance(v, list):
                return [dump(x) for x in v]
            if isinstance(v, dict):
                return {k: dump(x) for k, x in v.items() if not (exclude_none and x is None)}
            return v

        return {k: dump(v) for k, v in self.__dict__.items() if not (exclude_none and v is None)}


def openai_sdk_messages():
    """The messages you send plus the ChatCompletionMessage objects the OpenAI SDK returned."""
    out = [copy.deepcopy(OPENAI[0]), copy.deepcopy(OPENAI[1])]
    for cid, tool, args, result in CALLS:
        out.append(Model(content=None, refusal=None, role="assistant", annotations=None, audio=None, function_call=None,
                         tool_calls=[Model(id=cid, type="function", function=Model(name=tool, arguments=json.dumps(args)))]))
        out.append({"role": "tool", "tool_call_id": cid, "content": result})
    out.append(Model(content=ANSWER, refusal=None, role="assistant", annotations=[], audio=None, function_call=None, tool_calls=None))
    return out


def anthropic_messages():
    """The messages you send, with the Message objects the Anthropic SDK returned."""
    out = [{"role": "user", "content": OPENAI[1]["content"]}]
    for cid, tool, args, result in CALLS:
        tid = cid.replace("call_", "toolu_")
        out.append(Model(id=f"msg_{tid}", type="message", role="assistant", model="claude-sonnet-4-5", stop_reason="tool_use", stop_sequence=None,
                         content=[Model(type="tool_use", id=tid, name=tool, input=args)], usage=Model(input_tokens=10, output_tokens=5)))
        out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": result}]})
    out.append(Model(id="msg_end", type="message", role="assistant", model="claude-sonnet-4-5", stop_reason="end_turn", stop_sequence=None,
                     content=[Model(type="text", text=ANSWER, citations=None)], usage=Model(input_tokens=10, output_tokens=5)))
    return out


def langchain_objects():
    """LangChain BaseMessage objects (their model_dump has type, content, tool_calls...)."""
    out = [Model(type="system", content=OPENAI[0]["content"], additional_kwargs={}, response_metadata={}, name=None, id=None),
           Model(type="human", content=OPENAI[1]["content"], additional_kwargs={}, response_metadata={}, name=None, id=None)]
    for cid, tool, args, result in CALLS:
        out.append(Model(type="ai", content="", additional_kwargs={}, response_metadata={"finish_reason": "tool_calls"}, name=None, id=None,
                         tool_calls=[{"name": tool, "args": args, "id": cid, "type": "tool_call"}], invalid_tool_calls=[]))
        out.append(Model(type="tool", content=result, tool_call_id=cid, name=tool, status="success", additional_kwargs={}, response_metadata={}, id=None))
    out.append(Model(type="ai", content=ANSWER, additional_kwargs={}, response_metadata={"finish_reason": "stop"}, name=None, id=None,
                     tool_calls=[], invalid_tool_calls=[]))
    return out


def langchain_dicts():
    """messages_to_dict(messages): [{"type": ..., "data": {...}}]."""
    return [{"type": m.type, "data": m.model_dump()} for m in langchain_objects()]


@dataclasses.dataclass
class Turn:
    role: str
    content: str


def test_to_trace_converts_objects_and_names_what_it_cannot():
    got = to_trace([Model(role="assistant", content=None, tool_calls=[Model(id="c", function=Model(name="f", arguments="{}"))]), Turn("user", "hi"), ("t",)])
    assert got == [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "user", "content": "hi"}, ["t"]]
    with pytest.raises(TypeError, match=r"cannot turn builtins.object at /1/content into JSON"):
        to_trace([{}, {"content": object()}])
    with pytest.raises(TypeError, match=r"a key at /0 is int"):
        to_trace([{1: "x"}])
    assert trace_format("langgraph") == "langchain"
    assert trace_format(None) is None
    with pytest.raises(ValueError, match="unknown source 'crewai'"):
        trace_format("crewai")


@pytest.mark.parametrize("source,messages,want_format", [
    ("openai", openai_sdk_messages, "openai"),
    (None, openai_sdk_messages, "openai"),
    ("anthropic", anthropic_messages, "anthropic"),
    (None, anthropic_messages, "anthropic"),
    ("langchain", langchain_objects, "langchain"),
    (None, langchain_dicts, "langchain"),
    (None, lambda: {"messages": langchain_objects()}, "langchain"),
])
def test_every_stack_grades_like_the_shipped_trace(client, source, messages, want_format):
    want = client.evaluate(contract=CONTRACT, trace=OPENAI, store=False)
    got = client.evaluate_messages(messages(), contract=CONTRACT, source=source, agent=f"adapter-{RUN_TAG}")
    assert got["stored"] is True
    assert got["format"] == want_format
    assert [(c["tool"], c["args"]) for c in got["trace_calls"]] == [(c["tool"], c["args"]) for c in want["trace_calls"]]
    assert got["final_answer"] == ANSWER
    assert (got["score"], got["grade"], got["passed"], got["metrics"]) == (want["score"], want["grade"], want["passed"], want["metrics"])
    assert [i["fix"] for i in got["issues"]] == [i["fix"] for i in want["issues"]]
