// Regenerate: npm ci && node gen.mjs
//
// Drives @anthropic-ai/sdk's MessageStream (client.messages.stream) against
// a fake Anthropic Messages API on 127.0.0.1 through a tool-use loop, and
// saves the stream events two ways:
//   NAME.by-ref.jsonl   the event objects the SDK yielded, pushed to an array
//                       and written after the run (what a logger that keeps
//                       the events does). The SDK builds its message snapshot
//                       on message_start's own "message" object, so by then
//                       message_start.message holds the finished content,
//                       stop_reason and usage of its turn.
//   NAME.copied.jsonl   the same events serialised as they arrived.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync, rmSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { FakeProvider } from '../_shared/fake.mjs';
import { byName, tools, runTool, expectation, writeExpect, writeJSONL, installedVersion } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const version = installedVersion(dir, '@anthropic-ai/sdk');
for (const f of readdirSync(dir)) {
  if (/\.(by-ref|copied)\.jsonl$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}

const fake = await new FakeProvider().start();
const client = new Anthropic({ baseURL: fake.url, apiKey: 'sk-ant-test', maxRetries: 0 });
const toolDefs = Object.entries(tools).map(([name, t]) => ({
  name,
  description: t.description,
  input_schema: {
    type: 'object',
    properties: Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, { type: v.replace('?', '') }])),
    required: Object.entries(t.params).filter(([, v]) => !v.endsWith('?')).map(([k]) => k),
  },
}));

const note = `@anthropic-ai/sdk@${version} MessageStream; expected calls written from the scenario in _shared/scenarios.mjs`;
// Stream events carry the assistant's turns only: no tool results, so no
// error flags. The input_json_delta fragments keep the argument text
// exactly (the snapshot's parsed "input" does not).
const lib = { argsKept: 'text', id: (c) => c.id.replace(/^call_/, 'toolu_'), errorKnown: false };

try {
  for (const name of ['single', 'parallel', 'no-tools', 'unicode', 'bigint', 'multistep']) {
    const sc = byName(name);
    fake.use(sc);
    const byRef = [];
    const copied = [];
    const messages = [{ role: 'user', content: sc.prompt }];
    for (let turn = 0; turn < 10; turn++) {
      const stream = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, tools: toolDefs, messages });
      for await (const ev of stream) {
        byRef.push(ev);
        copied.push(JSON.parse(JSON.stringify(ev)));
      }
      const msg = await stream.finalMessage();
      messages.push({ role: 'assistant', content: msg.content });
      const uses = msg.content.filter((b) => b.type === 'tool_use');
      if (uses.length === 0) break;
      messages.push({
        role: 'user',
        content: uses.map((u) => {
          const out = runTool({ tool: u.name, argsText: JSON.stringify(u.input) });
          return out.error !== undefined
            ? { type: 'tool_result', tool_use_id: u.id, is_error: true, content: out.error }
            : { type: 'tool_result', tool_use_id: u.id, content: JSON.stringify(out.result) };
        }),
      });
    }
    const exp = expectation(sc, lib);
    writeJSONL(dir, `${name}.by-ref.jsonl`, byRef);
    writeExpect(dir, `${name}.by-ref`, exp, note + '; events kept by reference');
    writeJSONL(dir, `${name}.copied.jsonl`, copied);
    writeExpect(dir, `${name}.copied`, exp, note + '; events copied on arrival');
  }
} finally {
  await fake.close();
}
