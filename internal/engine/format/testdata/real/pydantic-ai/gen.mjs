// Regenerate: node gen.mjs (no dependencies)
//
// WRITTEN, not generated: Pydantic AI is a Python library and PyPI is not
// reachable here. These are the message histories result.all_messages_json()
// (ModelMessagesTypeAdapter.dump_json) writes, built field for field from
// pydantic_ai_slim/pydantic_ai/messages.py and usage.py (see README.md for
// the commit), for an agent on the OpenAI model (tool-call args kept as the
// model's JSON text) and, in "parallel-anthropic", the Anthropic model
// (args as an object).
//
// A tool raising ModelRetry gives a retry-prompt part (tool_name,
// tool_call_id, content); a tool raising ToolFailed gives a tool-return part
// with outcome "failed". Any other exception ends the run.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarios, byName, expectation, writeExpect, writeJSON } from '../_shared/scenarios.mjs';
import { Clock, clean, hexId, walk } from '../_shared/written.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
clean(dir, /\.messages\.json$/);

function usage(inTok, outTok) {
  return { input_tokens: inTok, cache_write_tokens: 0, cache_read_tokens: 0, output_tokens: outTok, input_audio_tokens: 0, cache_audio_read_tokens: 0, output_audio_tokens: 0, details: { accepted_prediction_tokens: 0, audio_tokens: 0, reasoning_tokens: 0, rejected_prediction_tokens: 0 }, cost: null };
}

// history builds all_messages() for a scenario. mode: how a failing tool
// reports: "retry" (ModelRetry) or "failed" (ToolFailed).
function history(sc, { provider = 'openai', mode = 'retry' } = {}) {
  const clock = new Clock();
  const runId = hexId(sc.name + provider + mode).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  const request = (parts) => ({ parts, timestamp: clock.tick().iso('Z'), instructions: 'Use the tools.', kind: 'request', run_id: runId, conversation_id: null, metadata: null, state: 'complete' });
  const msgs = [request([{ content: sc.prompt, timestamp: clock.tick().iso('Z'), part_kind: 'user-prompt' }])];
  let n = 0;
  walk(sc, (t, outs) => {
    n++;
    const parts = [];
    if (t.text !== undefined) parts.push({ content: t.text, id: null, provider_name: null, provider_details: null, part_kind: 'text' });
    for (const c of t.calls ?? []) {
      const id = provider === 'anthropic' ? c.id.replace(/^call_/, 'toolu_') : c.id;
      parts.push({ tool_name: c.tool, args: provider === 'anthropic' ? JSON.parse(c.argsText) : c.argsText, tool_call_id: id, tool_kind: null, id: null, provider_name: null, provider_details: null, part_kind: 'tool-call' });
    }
    const finish = t.calls ? 'tool_call' : 'stop';
    msgs.push({
      parts,
      usage: usage(50 * n, 10),
      model_name: provider === 'anthropic' ? 'claude-sonnet-4-5-20250929' : 'gpt-4o-2024-08-06',
      timestamp: clock.tick().iso('Z'),
      kind: 'response',
      provider_name: provider,
      provider_url: provider === 'anthropic' ? 'https://api.anthropic.com' : 'https://api.openai.com/v1/',
      provider_details: { finish_reason: provider === 'anthropic' ? (t.calls ? 'tool_use' : 'end_turn') : t.calls ? 'tool_calls' : 'stop' },
      provider_response_id: provider === 'anthropic' ? `msg_01${hexId(sc.name + n, 22)}` : `chatcmpl-${hexId(sc.name + n, 29)}`,
      finish_reason: finish,
      run_id: runId,
      conversation_id: null,
      metadata: null,
      state: 'complete',
    });
    if (!t.calls) return;
    msgs.push(
      request(
        t.calls.map((c, i) => {
          const id = provider === 'anthropic' ? c.id.replace(/^call_/, 'toolu_') : c.id;
          const o = outs[i];
          if (o.error !== undefined && mode === 'retry') {
            return { content: o.error, tool_name: c.tool, tool_call_id: id, timestamp: clock.tick().iso('Z'), part_kind: 'retry-prompt' };
          }
          return { tool_name: c.tool, content: o.error ?? o.result, tool_call_id: id, tool_kind: null, metadata: null, timestamp: clock.tick().iso('Z'), outcome: o.error !== undefined ? 'failed' : 'success', part_kind: 'tool-return' };
        }),
      ),
    );
  });
  return msgs;
}

const note = 'written from pydantic-ai messages.py (see README.md), not generated; expected calls from the scenario in _shared/scenarios.mjs';
for (const sc of scenarios) {
  writeJSON(dir, `${sc.name}.messages.json`, history(sc));
  writeExpect(dir, `${sc.name}.messages`, expectation(sc, { argsKept: 'text', result: (v) => v }), note + '; a failing tool raised ModelRetry');
}
for (const name of ['error', 'retry']) {
  writeJSON(dir, `${name}-failed.messages.json`, history(byName(name), { mode: 'failed' }));
  writeExpect(dir, `${name}-failed.messages`, expectation(byName(name), { argsKept: 'text', result: (v) => v }), note + '; a failing tool raised ToolFailed (outcome "failed")');
}
const par = byName('parallel');
writeJSON(dir, 'parallel-anthropic.messages.json', history(par, { provider: 'anthropic' }));
writeExpect(dir, 'parallel-anthropic.messages', expectation(par, { argsKept: 'parsed', id: (c) => c.id.replace(/^call_/, 'toolu_'), result: (v) => v }), note + '; Anthropic model: args as an object');
