"""Generates the OpenTelemetry Python SDK console traces of this folder.

The spans are made and printed by the real OpenTelemetry Python SDK
(opentelemetry-api, -sdk and -semantic-conventions, run from a source
checkout: see README.md): ReadableSpan.to_json() as ConsoleSpanExporter
prints it. The attributes on the spans are set by this script, as three
Python instrumentations set them (PyPI is not reachable here, so the
instrumentations themselves do not run; README.md names the source file
each one follows):

- genai-*: the OpenTelemetry GenAI semantic conventions (chat spans with
  gen_ai.output.messages, execute_tool spans);
- openinference-*: OpenInference (openinference-instrumentation: LLM spans
  with flattened llm.output_messages, TOOL spans from the tool decorator,
  an AGENT root);
- openllmetry-*: OpenLLMetry's traceloop-sdk (@tool / @agent decorators:
  traceloop.span.kind, traceloop.entity.input {"args", "kwargs"}) and its
  openai instrumentation, current (gen_ai.output.messages) and before
  0.5.0 of the GenAI conventions (indexed gen_ai.completion.N.tool_calls.M.*).

The scripted model turns are ../otel-kit/scenarios.json, shared with the
Node.js generators. Each trace gets NAME.expect.json, written from the
scenario definition only.

    PYTHONPATH=<api>/src:<sdk>/src:<semconv>/src python3 gen.py
"""

import io
import json
import os
import sys

from opentelemetry import context, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.version import __version__ as sdk_version
from opentelemetry.trace import SpanKind, Status, StatusCode

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "otel-kit", "scenarios.json"), encoding="utf-8") as f:
    SCENARIOS = {s["name"]: s for s in json.load(f)}

SCHEMAS = {
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"}, "note": {"type": "string"}}, "required": ["city"]},
    "book_flight": {"type": "object", "properties": {"flight": {"type": "string"}, "seat": {"type": "string"}}, "required": ["flight", "seat"]},
    "lookup_order": {"type": "object", "properties": {"order_id": {"type": "integer"}, "line": {"type": "integer"}}, "required": ["order_id", "line"]},
    "search": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}


def run_tool(name, args):
    """The tools of ../otel-kit/kit.mjs: a result, or raise."""
    if name == "get_weather":
        temp, sky = {"Paris": (18, "cloudy"), "Tokyo": (24, "sunny"), "Zürich": (18, "bewölkt ☁️")}.get(args["city"], (20, "clear"))
        return {"city": args["city"], "temp_c": temp, "sky": sky}
    if name == "book_flight":
        if args["seat"] == "12A":
            raise RuntimeError(f"no seats left on {args['flight']}")
        return {"flight": args["flight"], "seat": args["seat"], "confirmation": "BK-7781"}
    if name == "lookup_order":
        return {"status": "shipped"}
    if name == "search":
        return {"query": args["query"], "top": "Café Marly", "rating": 4.5}
    raise KeyError(name)


def dumps(v):
    """json.dumps as the instrumentations call it (ASCII escapes, ", " and ": ")."""
    return json.dumps(v)


class Recorder:
    """A tracer provider whose ConsoleSpanExporter prints into a buffer."""

    def __init__(self, service, formatter=None):
        self.out = io.StringIO()
        kw = {"out": self.out}
        if formatter is not None:
            kw["formatter"] = formatter
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self.provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(**kw)))
        self.tracer = self.provider.get_tracer("toolscore.corpus")

    def text(self):
        self.provider.shutdown()
        return self.out.getvalue()


def agent(sc, llm_span, tool_span, tracer):
    """Plays the scenario: one LLM span per model turn (llm_span(turn,
    messages)), the tools of a turn run in order inside tool_span(call, args)
    (None: untraced). Returns the final answer."""
    messages = [{"role": "user", "content": sc["prompt"]}]
    for turn in sc["turns"]:
        llm_span(turn, messages)
        if "tools" not in turn:
            return turn["text"]
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["args"]}} for c in turn["tools"]]})
        for c in turn["tools"]:
            args = json.loads(c["args"])
            try:
                if tool_span is None:
                    content = dumps(run_tool(c["name"], args))
                else:
                    content = tool_span(c, args)
            except Exception as e:  # the agent sends the error to the model
                content = f"Error: {e}"
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})
    raise RuntimeError("the script ended without an answer")


# --- GenAI semantic conventions --------------------------------------------


def genai(rec, sc):
    t = rec.tracer

    def llm(turn, messages):
        with t.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT) as s:
            s.set_attribute("gen_ai.operation.name", "chat")
            s.set_attribute("gen_ai.provider.name", "openai")
            s.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            parts = [{"type": "text", "content": turn["text"]}] if "text" in turn else [
                {"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": json.loads(c["args"])} for c in turn["tools"]]
            s.set_attribute("gen_ai.output.messages", dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if "tools" in turn else "stop"}]))

    def tool(c, args):
        with t.start_as_current_span(f"execute_tool {c['name']}") as s:
            s.set_attribute("gen_ai.operation.name", "execute_tool")
            s.set_attribute("gen_ai.tool.name", c["name"])
            s.set_attribute("gen_ai.tool.call.id", c["id"])
            s.set_attribute("gen_ai.tool.type", "function")
            s.set_attribute("gen_ai.tool.call.arguments", c["args"])
            try:
                r = run_tool(c["name"], args)
            except Exception as e:
                s.set_attribute("error.type", type(e).__qualname__)
                raise
            s.set_attribute("gen_ai.tool.call.result", dumps(r))
            return dumps(r)

    with t.start_as_current_span("invoke_agent corpus-agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "corpus-agent")
        return agent(sc, llm, tool, t)


# --- OpenInference -------------------------------------------------------


def openinference(rec, sc, traced_tools=True):
    t = rec.tracer

    def llm(turn, messages):
        with t.start_as_current_span("ChatCompletion") as s:
            s.set_attribute("openinference.span.kind", "LLM")
            s.set_attribute("llm.model_name", "gpt-4o-mini")
            s.set_attribute("input.value", dumps({"messages": messages, "model": "gpt-4o-mini"}))
            s.set_attribute("input.mime_type", "application/json")
            for i, m in enumerate(messages):
                p = f"llm.input_messages.{i}.message."
                s.set_attribute(p + "role", m["role"])
                if m.get("content") is not None:
                    s.set_attribute(p + "content", m["content"])
                if m["role"] == "tool":
                    s.set_attribute(p + "tool_call_id", m["tool_call_id"])
                for j, tc in enumerate(m.get("tool_calls") or []):
                    q = f"{p}tool_calls.{j}.tool_call."
                    s.set_attribute(q + "id", tc["id"])
                    s.set_attribute(q + "function.name", tc["function"]["name"])
                    s.set_attribute(q + "function.arguments", tc["function"]["arguments"])
            p = "llm.output_messages.0.message."
            s.set_attribute(p + "role", "assistant")
            if "text" in turn:
                s.set_attribute(p + "content", turn["text"])
            for j, c in enumerate(turn.get("tools", [])):
                q = f"{p}tool_calls.{j}.tool_call."
                s.set_attribute(q + "id", c["id"])
                s.set_attribute(q + "function.name", c["name"])
                s.set_attribute(q + "function.arguments", c["args"])
            s.set_status(Status(StatusCode.OK))

    def tool(c, args):
        # openinference-instrumentation _tool_context: input.value is the
        # bound arguments as JSON, tool.parameters the inferred schema.
        with t.start_as_current_span(c["name"]) as s:
            s.set_attribute("input.value", dumps(args))
            s.set_attribute("input.mime_type", "application/json")
            s.set_attribute("tool.name", c["name"])
            s.set_attribute("tool.description", f"The {c['name']} tool.")
            s.set_attribute("tool.parameters", dumps(SCHEMAS[c["name"]]))
            s.set_attribute("openinference.span.kind", "TOOL")
            r = run_tool(c["name"], args)
            s.set_attribute("output.value", dumps(r))
            s.set_attribute("output.mime_type", "application/json")
            s.set_status(Status(StatusCode.OK))
            return dumps(r)

    with t.start_as_current_span("corpus-agent") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("input.value", sc["prompt"])
        answer = agent(sc, llm, tool if traced_tools else None, t)
        root.set_attribute("output.value", answer)
        root.set_status(Status(StatusCode.OK))
        return answer


# --- OpenLLMetry -----------------------------------------------------------


def openllmetry(rec, sc, legacy=False):
    t = rec.tracer

    def llm(turn, messages):
        with t.start_as_current_span("openai.chat", kind=SpanKind.CLIENT) as s:
            s.set_attribute("llm.request.type", "chat")
            s.set_attribute("gen_ai.system", "openai")
            s.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            s.set_attribute("traceloop.workflow.name", "corpus-agent")
            if legacy:
                # chat_wrappers._set_completions before the GenAI 0.5.0 change:
                # the argument text as the model sent it.
                p = "gen_ai.completion.0"
                s.set_attribute(p + ".finish_reason", "tool_calls" if "tools" in turn else "stop")
                s.set_attribute(p + ".role", "assistant")
                if "text" in turn:
                    s.set_attribute(p + ".content", turn["text"])
                for i, c in enumerate(turn.get("tools", [])):
                    s.set_attribute(f"{p}.tool_calls.{i}.id", c["id"])
                    s.set_attribute(f"{p}.tool_calls.{i}.name", c["name"])
                    s.set_attribute(f"{p}.tool_calls.{i}.arguments", c["args"])
            else:
                parts = [{"type": "text", "content": turn["text"]}] if "text" in turn else [
                    {"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": json.loads(c["args"])} for c in turn["tools"]]
                s.set_attribute("gen_ai.operation.name", "chat")
                s.set_attribute("gen_ai.output.messages", dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if "tools" in turn else "stop"}]))

    def entity(name, kind, fn):
        # traceloop-sdk decorators/base.py: _setup_span (start_span, the
        # context attached), _handle_span_input, the call, on an exception
        # status ERROR with str(e) and record_exception, _handle_span_output,
        # _cleanup_span (end, detach).
        s = t.start_span(f"{name}.{kind}")
        token = context.attach(trace.set_span_in_context(s))
        try:
            s.set_attribute("traceloop.span.kind", kind)
            s.set_attribute("traceloop.entity.name", name)
            if kind == "tool":
                s.set_attribute("gen_ai.tool.name", name)
                s.set_attribute("traceloop.entity.path", "")
            s.set_attribute("traceloop.workflow.name", "corpus-agent")
            return fn(s)
        except Exception as e:
            s.set_status(Status(StatusCode.ERROR, str(e)))
            s.record_exception(e)
            raise
        finally:
            s.end()
            context.detach(token)

    def tool(c, args):
        def body(s):
            # the tool called as get_weather(**args)
            s.set_attribute("traceloop.entity.input", dumps({"args": [], "kwargs": args}))
            r = run_tool(c["name"], args)
            s.set_attribute("traceloop.entity.output", dumps(r))
            return dumps(r)
        return entity(c["name"], "tool", body)

    def root(s):
        s.set_attribute("traceloop.entity.input", dumps({"args": [], "kwargs": {}}))
        answer = agent(sc, llm, tool, t)
        s.set_attribute("traceloop.entity.output", dumps(answer))
        return answer

    return entity("corpus-agent", "agent", root)


# --- output -------------------------------------------------------------


def write_expect(name, sc, note, errors=True, results=True):
    """NAME.expect.json from the scenario definition: the argument text is
    inserted verbatim, so large integers keep every digit."""
    lines = []
    any_failed = False
    for turn in sc["turns"]:
        for c in turn.get("tools", []):
            parts = [f'"tool": {json.dumps(c["name"])}', f'"args": {c["args"]}', f'"id": {json.dumps(c["id"])}']
            try:
                r, err = run_tool(c["name"], json.loads(c["args"])), None
            except Exception as e:
                r, err = None, str(e)
                any_failed = True
            if errors:
                parts.append(f'"error": {"true" if err else "false"}')
                if err:
                    parts.append(f'"error_text": {json.dumps(err, ensure_ascii=False)}')
            if results and err is None:
                parts.append(f'"result": {json.dumps(r, ensure_ascii=False)}')
            lines.append("    {" + ", ".join(parts) + "}")
    missing = ([] if errors else ["error"]) + ([] if results else ["result"])
    text = "{\n"
    text += f'  "scenario": {json.dumps(sc["name"])},\n'
    text += f'  "prompt": {json.dumps(sc["prompt"], ensure_ascii=False)},\n'
    text += f'  "note": {json.dumps(note, ensure_ascii=False)},\n'
    if missing:
        text += f'  "not_exported": {json.dumps(missing)},\n'
    text += '  "calls": [' + ("\n" + ",\n".join(lines) + "\n  " if lines else "") + "],\n"
    text += f'  "final_answer": {json.dumps(sc["turns"][-1].get("text"), ensure_ascii=False)}\n}}\n'
    json.loads(text)
    with open(os.path.join(HERE, name + ".expect.json"), "w", encoding="utf-8") as f:
        f.write(text)


# FORMS: how the printed spans are written. console: ConsoleSpanExporter as
# it is (to_json(indent=4) + os.linesep, one span after another); jsonl: its
# formatter set to to_json(indent=None), one span a line; list: the spans
# collected into a JSON array (json.loads of each to_json()).
FORMS = {
    "console": (".console", None),
    "jsonl": (".jsonl", lambda span: span.to_json(indent=None) + os.linesep),
    "list": (".json", None),
}

RUNS = [
    # (file name, convention, scenario, form, options)
    ("genai-single", genai, "single", "console", {}),
    ("genai-parallel", genai, "parallel", "jsonl", {}),
    ("genai-tool-error", genai, "tool-error", "console", {}),
    ("genai-bigint", genai, "bigint", "list", {}),
    ("genai-no-tools", genai, "no-tools", "jsonl", {}),
    ("openinference-single", openinference, "single", "console", {}),
    ("openinference-retry", openinference, "retry", "jsonl", {}),
    ("openinference-unicode", openinference, "unicode", "list", {}),
    ("openinference-bigint", openinference, "bigint", "console", {}),
    ("openinference-llm-only-parallel", openinference, "parallel", "jsonl", {"traced_tools": False}),
    ("openllmetry-single", openllmetry, "single", "console", {}),
    ("openllmetry-tool-error", openllmetry, "tool-error", "jsonl", {}),
    ("openllmetry-parallel", openllmetry, "parallel", "list", {}),
    ("openllmetry-legacy-multistep", openllmetry, "multistep", "console", {"legacy": True}),
    ("openllmetry-legacy-bigint", openllmetry, "bigint", "jsonl", {"legacy": True}),
]


def main():
    for name, conv, scenario, form, opts in RUNS:
        sc = SCENARIOS[scenario]
        ext, formatter = FORMS[form]
        rec = Recorder(f"toolscore-corpus-{conv.__name__}", formatter)
        answer = conv(rec, sc, **opts)
        if answer != sc["turns"][-1].get("text"):
            sys.exit(f"{name}: answered {answer!r}")
        text = rec.text()
        if form == "list":
            dec = json.JSONDecoder()
            spans, i = [], 0
            while i < len(text):
                if text[i].isspace():
                    i += 1
                    continue
                v, i = dec.raw_decode(text, i)
                spans.append(v)
            text = json.dumps(spans, indent=2) + "\n"
        with open(os.path.join(HERE, name + ext), "w", encoding="utf-8") as f:
            f.write(text)
        errors = not (conv is openinference and opts.get("traced_tools") is False)
        write_expect(name, sc, f"opentelemetry-sdk {sdk_version} (ReadableSpan.to_json, ConsoleSpanExporter, form {form}); attributes as {conv.__name__} sets them" + (", tools untraced" if not errors else ""), errors=errors)
        print(name + ext)


if __name__ == "__main__":
    main()
