// Regenerate: node gen.mjs (no dependencies)
//
// WRITTEN, not generated: the Python openai-agents package cannot be run
// here (PyPI is not reachable). Built field for field from its source (see
// README.md for the commit):
//   NAME.input-list.json   result.to_input_list(): the input items, then
//                          each new item's to_input_item() (the Responses
//                          API item dicts, model_dump(exclude_unset=True))
//   NAME.trace-export.json the body BackendSpanExporter POSTs:
//                          {"data": [trace.export(), span.export(), ...]}
//                          (src/agents/tracing/processors.py, spans.py,
//                          traces.py, span_data.py), spans in the order
//                          they end
// A tool that raises gets default_tool_error_function's text as its output
// ("An error occurred while running the tool. Please try again. Error:
// ...") and its function span an error {"message": "Error running tool
// (non-fatal)", "data": {"tool_name", "error"}}.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarios, expectation, writeExpect, writeJSON } from '../_shared/scenarios.mjs';
import { Clock, clean, hexId, walk } from '../_shared/written.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
clean(dir, /\.(input-list|trace-export)\.json$/);

const errorText = (e) => `An error occurred while running the tool. Please try again. Error: ${e}`;
// Python's str() of a dict, as str(self.output) in FunctionSpanData.export
// writes it (the SDK's tool output is the tool's return value).
function pyStr(v) {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return "'" + v.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return '[' + v.map(pyStr).join(', ') + ']';
  return '{' + Object.entries(v).map(([k, x]) => pyStr(k) + ': ' + pyStr(x)).join(', ') + '}';
}

function build(sc) {
  const clock = new Clock();
  const items = [{ content: sc.prompt, role: 'user' }];
  const traceId = 'trace_' + hexId(sc.name);
  const spans = [];
  const span = (data, parent, start, error = null) => ({ object: 'trace.span', id: 'span_' + hexId(sc.name + spans.length, 24), trace_id: traceId, parent_id: parent, started_at: start, ended_at: clock.tick().iso(), span_data: data, error });
  const agentStart = clock.tick().iso();
  const agentId = 'span_' + hexId(sc.name + 'agent', 24);
  let turn = 0;
  walk(sc, (t, outs) => {
    turn++;
    const respStart = clock.tick().iso();
    spans.push(span({ type: 'response', response_id: `resp_${hexId(sc.name + turn, 48)}` }, agentId, respStart));
    for (const c of t.calls ?? []) {
      items.push({ arguments: c.argsText, call_id: c.id, name: c.tool, type: 'function_call', id: 'fc_' + hexId(c.id, 48), status: 'completed' });
    }
    if (t.text !== undefined) {
      items.push({ id: 'msg_' + hexId(sc.name + 'msg' + turn, 48), content: [{ annotations: [], text: t.text, type: 'output_text', logprobs: [] }], role: 'assistant', status: 'completed', type: 'message' });
    }
    (t.calls ?? []).forEach((c, i) => {
      const o = outs[i];
      const output = o.error !== undefined ? errorText(o.error) : o.result;
      // The input item keeps the output as text: str() of a non-string.
      items.push({ call_id: c.id, output: o.error !== undefined ? output : pyStr(output), type: 'function_call_output' });
      const start = clock.tick().iso();
      spans.push(
        span(
          { type: 'function', name: c.tool, input: c.argsText, output: typeof output === 'string' && o.error !== undefined ? output : pyStr(output), mcp_data: null },
          agentId,
          start,
          o.error !== undefined ? { message: 'Error running tool (non-fatal)', data: { tool_name: c.tool, error: o.error } } : null,
        ),
      );
    });
  });
  const agentSpan = { object: 'trace.span', id: agentId, trace_id: traceId, parent_id: null, started_at: agentStart, ended_at: clock.tick().iso(), span_data: { type: 'agent', name: 'Assistant', handoffs: [], tools: ['get_weather', 'get_time', 'book_flight', 'lookup_account'], output_type: 'str' }, error: null };
  const trace = { object: 'trace', id: traceId, workflow_name: 'Agent workflow', group_id: null, metadata: null };
  return { items, exportBody: { data: [trace, ...spans, agentSpan] } };
}

const note = 'written from openai-agents-python (see README.md), not generated; expected calls from the scenario in _shared/scenarios.mjs';
for (const sc of scenarios) {
  const { items, exportBody } = build(sc);
  // Outputs are text: str() of the tool's return value (a Python dict repr).
  const exp = expectation(sc, { argsKept: 'text', result: (v) => pyStr(v) });
  writeJSON(dir, `${sc.name}.input-list.json`, items);
  writeExpect(dir, `${sc.name}.input-list`, exp, note + '; result.to_input_list()');
  writeJSON(dir, `${sc.name}.trace-export.json`, exportBody);
  writeExpect(dir, `${sc.name}.trace-export`, expectation(sc, { argsKept: 'text', ids: false, final: false, result: (v) => pyStr(v) }), note + '; the export has no call ids and no final answer');
}
