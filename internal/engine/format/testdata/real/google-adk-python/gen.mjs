// Regenerate: node gen.mjs (no dependencies)
//
// WRITTEN, not generated: google-adk (Python) cannot be run here (PyPI is
// not reachable). Session events built field for field from its source (see
// README.md for the commit: src/google/adk/events/event.py,
// events/event_actions.py, models/llm_response.py,
// flows/llm_flows/functions.py):
//   NAME.events.jsonl       event.model_dump_json(exclude_none=True) a line
//                           (snake_case: function_call, function_response,
//                           invocation_id, state_delta)
//   NAME.session-api.json   the session as the ADK API server returns it
//                           (GET .../sessions/{id}: FastAPI dumps by alias,
//                           camelCase), its "events" a list
// A tool's non-dict return value is wrapped as {"result": value}. A tool
// that raises ends the run (functions.py has no handler in this version),
// so there are no error or retry scenarios.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarios, expectation, writeExpect, writeJSON, writeJSONL, rawJSON, pythonJSON } from '../_shared/scenarios.mjs';
import { Clock, clean, hexId, walk } from '../_shared/written.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
clean(dir, /\.events\.jsonl$|\.session-api\.json$/);

const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
function byAlias(v, inArgs) {
  if (Array.isArray(v)) return v.map((x) => byAlias(x, inArgs));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => (inArgs ? [k, x] : [camel(k), byAlias(x, k === 'args' || k === 'response' || k === 'state_delta')])));
  }
  return v;
}

function events(sc) {
  const clock = new Clock();
  const inv = 'e-' + hexId(sc.name + 'inv').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  const id = (k) => hexId(sc.name + k, 8);
  const actions = () => ({ state_delta: {}, artifact_delta: {}, requested_auth_configs: {} });
  const out = [{ content: { parts: [{ text: sc.prompt }], role: 'user' }, invocation_id: inv, author: 'user', actions: actions(), id: id('u'), timestamp: clock.tick().seconds() }];
  let n = 0;
  walk(sc, (t, outs) => {
    n++;
    const parts = [];
    if (t.text !== undefined) parts.push({ text: t.text });
    for (const c of t.calls ?? []) parts.push({ function_call: { id: c.id, args: rawJSON(pythonJSON(c.argsText)), name: c.tool } });
    const ev = { content: { parts, role: 'model' }, usage_metadata: { candidates_token_count: 10, prompt_token_count: 50 * n, total_token_count: 50 * n + 10 }, invocation_id: inv, author: 'assistant', actions: actions(), id: id('m' + n), timestamp: clock.tick().seconds() };
    if (t.calls) ev.long_running_tool_ids = [];
    out.push(ev);
    if (!t.calls) return;
    out.push({
      content: { parts: t.calls.map((c, i) => ({ function_response: { id: c.id, name: c.tool, response: outs[i].result } })), role: 'user' },
      invocation_id: inv,
      author: 'assistant',
      actions: actions(),
      id: id('r' + n),
      timestamp: clock.tick().seconds(),
    });
  });
  return out;
}

const note = 'written from adk-python (see README.md), not generated; expected calls from the scenario in _shared/scenarios.mjs';
for (const sc of scenarios) {
  if (sc.name === 'error' || sc.name === 'retry') continue;
  const evs = events(sc);
  // ADK's args are the Gemini client's json.loads of the model's JSON:
  // integers keep every digit, 1.10 becomes 1.1.
  const exp = expectation(sc, { argsKept: 'python', result: (v) => v });
  writeJSONL(dir, `${sc.name}.events.jsonl`, evs);
  writeExpect(dir, `${sc.name}.events`, exp, note + '; model_dump_json(exclude_none=True) per event');
  const session = { id: hexId(sc.name + 'session', 8) + '-' + hexId(sc.name + 's2', 4), app_name: 'toolscore', user_id: 'u1', state: {}, events: evs, last_update_time: evs[evs.length - 1].timestamp };
  writeJSON(dir, `${sc.name}.session-api.json`, byAlias(session, false));
  writeExpect(dir, `${sc.name}.session-api`, exp, note + '; the API server session (by alias)');
}
