// Shared by the OpenTelemetry generators under testdata/real (ai-sdk-otel-*,
// openinference, openllmetry). Node.js built-ins only, so each generator's
// own package.json pins the libraries it drives.
//
// - startProvider(): a fake OpenAI Chat Completions server on 127.0.0.1
//   that plays a scenario's scripted model turns, streamed (SSE chunks, the
//   tool-call arguments split across deltas) or not.
// - startCollector(): a fake OTLP/HTTP collector on 127.0.0.1 that keeps
//   every POST /v1/traces body exactly as it arrived.
// - SCENARIOS: the scripted runs. TOOLS: the tool implementations.
// - writeExpect(): the oracle NAME.expect.json, written from a scenario's
//   definition only (never from the trace).
// - writeTrace(): the collector's bodies, as NAME.json (one POST) or
//   NAME.jsonl (one POST a line, in arrival order).

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

// SCENARIOS are the scripted runs of scenarios.json (shared with the
// Python generator of ../otel-python-console). A model turn is either
// {tools: [{id, name, args}]} (args is the exact JSON text the model sends)
// or {text}. A scenario lists its turns; the agent runs the tools the model
// asks for and the model's next turn follows.
export const SCENARIOS = JSON.parse(fs.readFileSync(new URL('./scenarios.json', import.meta.url), 'utf8'));

// TOOLS are the tool implementations: each returns a JSON value or throws.
// book_flight throws for seat 12A (every time), so "tool-error" fails and
// "retry" fails once, then succeeds.
export const TOOLS = {
  get_weather: {
    description: 'Get the current weather for a city.',
    params: { city: 'string', note: 'string?' },
    run: ({ city }) => {
      const table = { Paris: [18, 'cloudy'], Tokyo: [24, 'sunny'], 'Zürich': [18, 'bewölkt ☁️'] };
      const [temp_c, sky] = table[city] ?? [20, 'clear'];
      return { city, temp_c, sky };
    },
  },
  book_flight: {
    description: 'Book a seat on a flight.',
    params: { flight: 'string', seat: 'string' },
    run: ({ flight, seat }) => {
      if (seat === '12A') throw new Error(`no seats left on ${flight}`);
      return { flight, seat, confirmation: 'BK-7781' };
    },
  },
  lookup_order: {
    description: 'Look up an order by id.',
    params: { order_id: 'number', line: 'number' },
    run: () => ({ status: 'shipped' }),
  },
  search: {
    description: 'Search the web.',
    params: { query: 'string' },
    run: ({ query }) => ({ query, top: 'Café Marly', rating: 4.5 }),
  },
};

// runTool runs a tool on decoded arguments: {result} or {error}.
export function runTool(name, args) {
  try {
    return { result: TOOLS[name].run(args) };
  } catch (e) {
    return { error: e };
  }
}

// expectedCalls lists the scenario's calls in order with their outcome:
// {tool, argsText, id, error, result}.
export function expectedCalls(sc) {
  const calls = [];
  for (const t of sc.turns) {
    for (const c of t.tools ?? []) {
      const out = runTool(c.name, JSON.parse(c.args));
      calls.push({ tool: c.name, argsText: c.args, id: c.id, error: 'error' in out, result: out.result, errorText: out.error?.message });
    }
  }
  return calls;
}

// finalAnswer is the scenario's last turn's text.
export function finalAnswer(sc) {
  const last = sc.turns[sc.turns.length - 1];
  return last.text ?? null;
}

// writeExpect writes DIR/NAME.expect.json from the scenario definition. The
// arguments are the model's exact argument text, inserted verbatim so large
// integers keep every digit. opts:
//   ids: false when the library exports no call ids (the oracle then has none);
//   results: false when the library exports no tool results;
//   errors: false when the library exports no error flag (the calls then
//     have no "error"); 'lost' when it exports nothing of a failed call but
//     the model's request (those calls have no "error" and no "result");
//   lossyArgs: a sentence, when the library exports the arguments only as
//     JSON.stringify of the parsed input (digits beyond 2^53 are lost): each
//     call then also has "args_exported", what JavaScript makes of the text;
//   note: a sentence kept in the file.
export function writeExpect(dir, name, sc, opts = {}) {
  const calls = expectedCalls(sc);
  const lines = [];
  for (const c of calls) {
    const parts = [`"tool": ${JSON.stringify(c.tool)}`, `"args": ${c.argsText}`];
    if (opts.lossyArgs && /\d{16,}/.test(c.argsText)) {
      parts.push(`"args_exported": ${JSON.stringify(JSON.parse(c.argsText))}`);
    }
    if (opts.ids !== false) parts.push(`"id": ${JSON.stringify(c.id)}`);
    if (opts.errors === 'lost' && c.error) {
      // no span for a failed call: neither its error nor a result
    } else if (opts.errors !== false) {
      parts.push(`"error": ${c.error}`);
      if (c.error) parts.push(`"error_text": ${JSON.stringify(c.errorText)}`);
    }
    if (!c.error && opts.results !== false) parts.push(`"result": ${JSON.stringify(c.result)}`);
    lines.push(`    {${parts.join(', ')}}`);
  }
  let text = '{\n';
  text += `  "scenario": ${JSON.stringify(sc.name)},\n`;
  text += `  "prompt": ${JSON.stringify(sc.prompt)},\n`;
  if (opts.note) text += `  "note": ${JSON.stringify(opts.note)},\n`;
  const failed = calls.some((c) => c.error);
  const missing = [
    opts.ids === false && 'id',
    (opts.errors === false || (opts.errors === 'lost' && failed)) && 'error',
    (opts.results === false || (opts.errors === 'lost' && failed)) && 'result',
  ].filter(Boolean);
  if (missing.length) text += `  "not_exported": ${JSON.stringify(missing)},\n`;
  if (opts.lossyArgs && calls.some((c) => /\d{16,}/.test(c.argsText))) text += `  "args_note": ${JSON.stringify(opts.lossyArgs)},\n`;
  text += `  "calls": [${lines.length ? '\n' + lines.join(',\n') + '\n  ' : ''}],\n`;
  text += `  "final_answer": ${JSON.stringify(finalAnswer(sc))}\n}\n`;
  JSON.parse(text); // must be valid JSON
  fs.writeFileSync(path.join(dir, `${name}.expect.json`), text);
}

// writeTrace writes the collector's bodies for one scenario: NAME.json when
// one POST arrived, else NAME.jsonl with one body a line. Bodies are
// written byte for byte.
export function writeTrace(dir, name, bodies) {
  for (const f of [`${name}.json`, `${name}.jsonl`]) fs.rmSync(path.join(dir, f), { force: true });
  if (bodies.length === 0) throw new Error(`${name}: the collector received nothing`);
  if (bodies.length === 1) {
    fs.writeFileSync(path.join(dir, `${name}.json`), bodies[0].endsWith('\n') ? bodies[0] : bodies[0] + '\n');
    return `${name}.json`;
  }
  for (const b of bodies) if (b.includes('\n')) throw new Error(`${name}: a multi-line body cannot go into JSON Lines`);
  fs.writeFileSync(path.join(dir, `${name}.jsonl`), bodies.join('\n') + '\n');
  return `${name}.jsonl`;
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// startCollector starts the fake OTLP/HTTP collector. It answers every
// POST with 200 {} and keeps the bodies; take() returns and clears them.
export async function startCollector() {
  let bodies = [];
  const server = http.createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method === 'POST' && req.url.endsWith('/v1/traces')) {
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        throw new Error(`collector: content-type ${req.headers['content-type']}, want application/json`);
      }
      bodies.push(body);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    take() {
      const b = bodies;
      bodies = [];
      return b;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

// startProvider starts the fake OpenAI Chat Completions server. play(sc)
// loads a scenario; each POST .../chat/completions answers with its next
// turn, as a chat.completion or, when the request asks for stream: true, as
// chat.completion.chunk events. requests() returns the request bodies seen.
export async function startProvider() {
  let turns = [];
  let n = 0;
  let seen = [];
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = JSON.parse(raw);
    seen.push(body);
    const turn = turns[n++];
    if (!turn) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"script exhausted"}}');
      return;
    }
    const id = `chatcmpl-${n}`;
    const created = 1767225600 + n;
    const model = body.model;
    const usage = { prompt_tokens: 20 * n, completion_tokens: 10, total_tokens: 20 * n + 10 };
    const finish = turn.tools ? 'tool_calls' : 'stop';
    if (!body.stream) {
      const message = { role: 'assistant', content: turn.text ?? null };
      if (turn.tools) {
        message.tool_calls = turn.tools.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta, finish_reason = null, extra = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`);
    chunk({ role: 'assistant', content: '' });
    if (turn.text) {
      const cut = Math.ceil(turn.text.length / 2);
      chunk({ content: turn.text.slice(0, cut) });
      chunk({ content: turn.text.slice(cut) });
    }
    (turn.tools ?? []).forEach((c, index) => {
      const cut = Math.ceil(c.args.length / 2);
      chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.args.slice(0, cut) } }] });
      chunk({ tool_calls: [{ index, function: { arguments: c.args.slice(cut) } }] });
    });
    chunk({}, finish);
    if (body.stream_options?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  });
  const port = await listen(server);
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    play(sc) {
      turns = sc.turns;
      n = 0;
      seen = [];
    },
    done() {
      if (n !== turns.length) throw new Error(`provider: ${n} of ${turns.length} turns played`);
    },
    requests: () => seen,
    close: () => new Promise((r) => server.close(r)),
  };
}

// TOOL_DEFS are the tools as OpenAI Chat Completions function definitions.
export const TOOL_DEFS = Object.entries(TOOLS).map(([name, t]) => ({
  type: 'function',
  function: {
    name,
    description: t.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, { type: v.replace('?', '') }])),
      required: Object.entries(t.params).filter(([, v]) => !v.endsWith('?')).map(([k]) => k),
    },
  },
}));

// openaiAgent is a plain tool loop over the official openai package's
// client.chat.completions.create, as an application writes it: it runs
// every tool call of a turn in order (tool(name) returns the function that
// runs it, possibly wrapped by a tracing library), sends each result (or
// "Error: message" when the tool throws) back as a tool message, and
// returns the text of the first turn without tool calls. With stream, the
// turns are streamed and the deltas assembled.
export async function openaiAgent(client, sc, { stream = false, tool }) {
  const messages = [{ role: 'user', content: sc.prompt }];
  const want = expectedCalls(sc);
  let n = 0;
  for (let step = 0; step < 10; step++) {
    const req = { model: 'gpt-4o-mini', messages, tools: TOOL_DEFS };
    let msg;
    if (!stream) {
      msg = (await client.chat.completions.create(req)).choices[0].message;
    } else {
      msg = { role: 'assistant', content: '' };
      const calls = [];
      const s = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
      for await (const chunk of s) {
        const d = chunk.choices[0]?.delta;
        if (!d) continue;
        if (d.content) msg.content += d.content;
        for (const tc of d.tool_calls ?? []) {
          calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
          if (tc.id) calls[tc.index].id = tc.id;
          if (tc.function?.name) calls[tc.index].function.name += tc.function.name;
          if (tc.function?.arguments) calls[tc.index].function.arguments += tc.function.arguments;
        }
      }
      if (calls.length) msg.tool_calls = calls;
      if (!msg.content) msg.content = null;
    }
    messages.push(msg);
    if (!msg.tool_calls?.length) {
      if (n !== want.length) throw new Error(`openaiAgent: ${n} tool calls run, want ${want.length}`);
      return msg.content;
    }
    for (const tc of msg.tool_calls) {
      let content;
      let failed = false;
      try {
        content = JSON.stringify(await tool(tc.function.name)(JSON.parse(tc.function.arguments)));
      } catch (e) {
        content = `Error: ${e.message}`;
        failed = true;
      }
      // The run must be the scenario's: each call fails exactly when the
      // oracle says so.
      if (failed !== want[n++]?.error) throw new Error(`openaiAgent: call ${n} (${tc.function.name}): ${content}`);
      messages.push({ role: 'tool', tool_call_id: tc.id, content });
    }
  }
  throw new Error('openaiAgent: 10 steps without an answer');
}
