// Regenerate: node gen.mjs (after ../mcp-proxy's gen.mjs; no packages)
//
// The JSON-RPC messages of ../mcp-proxy's real @modelcontextprotocol/sdk
// client-server runs as a transport tap without envelopes records them:
// each NAME.envelopes.jsonl there, its message alone, one a line, in the
// order they were sent. Nothing says which side sent a message, so a
// server's ping and the client's tools/call can share an id. The oracle is
// ../mcp-proxy's NAME.envelopes.expect.json (the same run).

import { readFileSync, writeFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = dirname(fileURLToPath(import.meta.url));
const src = join(dir, '..', 'mcp-proxy');
for (const f of readdirSync(dir)) if (/\.messages\.jsonl$|\.expect\.json$/.test(f)) rmSync(join(dir, f));
for (const f of readdirSync(src)) {
  const m = f.match(/^(.*)\.envelopes\.jsonl$/);
  if (!m) continue;
  const lines = readFileSync(join(src, f), 'utf8').split('\n').filter(Boolean);
  // The message text as it was logged, cut out of the envelope line
  // without decoding it again (JSON.parse would round big integers).
  const msgs = lines.map((l) => {
    const i = l.indexOf('"message":');
    if (i < 0 || !l.endsWith('}')) throw new Error(`${f}: no message in ${l}`);
    const text = l.slice(i + '"message":'.length, -1);
    JSON.parse(text); // it must be the whole message
    return text;
  });
  writeFileSync(join(dir, `${m[1]}.messages.jsonl`), msgs.join('\n') + '\n');
  const exp = JSON.parse(readFileSync(join(src, `${m[1]}.envelopes.expect.json`), 'utf8'));
  const text = readFileSync(join(src, `${m[1]}.envelopes.expect.json`), 'utf8').replace(/"note": "([^"]*)"/, (_, n) => `"note": ${JSON.stringify(n + '; the messages without their envelopes')}`);
  if (!exp.calls) throw new Error(`${m[1]}: no calls in the oracle`);
  writeFileSync(join(dir, `${m[1]}.messages.expect.json`), text);
}
