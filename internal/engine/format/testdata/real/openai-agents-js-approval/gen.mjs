// Regenerate: npm ci && node gen.mjs
//
// Drives the OpenAI Agents SDK for JavaScript (@openai/agents) against the
// fake Responses API of ../_shared/fake.mjs with a tool that needs
// approval (needsApproval: true), as its human-in-the-loop guide runs it:
// the run stops with result.interruptions; the app saves the run state
// (result.state.toString(), JSON text) to resume later; the user's answer
// (state.approve / state.reject) resumes it (run(agent, state)).
//
//   waiting.state.json     the saved RunState of the interrupted run
//   waiting.history.json   result.history of the interrupted run
//   waiting.new-items.json result.newItems of the interrupted run
//   approved.history.json  result.history after the call was approved
//   approved.state.json    the final RunState
//   rejected.history.json  result.history after the call was rejected
//   rejected.state.json    the final RunState

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import { Agent, run, tool, RunState, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON, installedVersion } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const version = installedVersion(dir, '@openai/agents');
const fake = await new FakeProvider().start();
setDefaultOpenAIClient(new OpenAI({ baseURL: fake.url + '/v1', apiKey: 'sk-test' }));
setTracingDisabled(true);

const t = tools.get_weather;
const weather = tool({
  name: 'get_weather',
  description: t.description,
  parameters: { type: 'object', properties: { city: { type: 'string' }, note: { type: 'string' } }, required: ['city'], additionalProperties: true },
  strict: false,
  needsApproval: true,
  execute: async (input) => t.run(typeof input === 'string' ? JSON.parse(input) : input),
});
const agent = new Agent({ name: 'Assistant', instructions: 'Use the tools.', model: 'gpt-4.1-mini', tools: [weather] });
const sc = scenarios.find((s) => s.name === 'single');
const note = `@openai/agents@${version}; needsApproval; expected calls written from the scenario in _shared/scenarios.mjs`;
const lib = { argsKept: 'text', result: (v) => JSON.stringify(v) };
const base = expectation(sc, lib);
const { result: _r, ...waitingCall } = base.calls[0];
// A rejected call gets the SDK's fixed rejection text as its output, which
// the items do not flag otherwise.
const REJECTED = { ...base, calls: [{ ...waitingCall, error: true }] };

try {
  for (const approve of [true, false]) {
    fake.use(sc);
    const first = await run(agent, sc.prompt, { maxTurns: 10 });
    if (first.interruptions?.length !== 1) throw new Error(`no interruption: ${JSON.stringify(first.interruptions)}`);
    const saved = first.state.toString();
    if (approve) {
      writeFileSync(`${dir}/waiting.state.json`, JSON.stringify(JSON.parse(saved), null, 2) + '\n');
      writeExpect(dir, 'waiting.state', { ...base, calls: [waitingCall], final_answer: null }, note + '; the run waits for approval');
      // result.history of the interrupted run holds only the input: the
      // pending call is in newItems (with its tool_approval_item) and in
      // the state.
      writeJSON(dir, 'waiting.history.json', first.history);
      writeExpect(dir, 'waiting.history', { ...base, calls: [], final_answer: null }, note + '; the run waits for approval, and its history has only the input');
      writeJSON(dir, 'waiting.new-items.json', first.newItems);
      writeExpect(dir, 'waiting.new-items', { ...base, calls: [waitingCall], final_answer: null }, note + '; the run waits for approval');
    }
    const state = await RunState.fromString(agent, saved);
    for (const item of first.interruptions) {
      if (approve) state.approve(item);
      else state.reject(item);
    }
    const done = await run(agent, state, { maxTurns: 10 });
    const name = approve ? 'approved' : 'rejected';
    writeJSON(dir, `${name}.history.json`, done.history);
    writeExpect(dir, `${name}.history`, approve ? base : REJECTED, note + (approve ? '; approved' : '; rejected'));
    writeFileSync(`${dir}/${name}.state.json`, JSON.stringify(JSON.parse(done.state.toString()), null, 2) + '\n');
    writeExpect(dir, `${name}.state`, approve ? base : REJECTED, note + (approve ? '; approved' : '; rejected'));
  }
} finally {
  await fake.close();
}
