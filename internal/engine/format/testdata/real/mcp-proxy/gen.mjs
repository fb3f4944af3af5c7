// Regenerate: npm ci && node gen.mjs
//
// A real MCP client and server (@modelcontextprotocol/sdk, linked by its
// InMemoryTransport) exchange real JSON-RPC messages; a logging transport in
// this script, standing where a proxy stands, records every message as it
// crosses, serialised on the spot. Two logs per scenario:
//   NAME.envelopes.jsonl  {ts, direction: "client_to_server" |
//                         "server_to_client", message} a line, as logging
//                         proxies write them
//   NAME.inspector.json   the MCP Inspector's message log (MessageEntry[]:
//                         {id, timestamp, direction: request | response |
//                         notification, origin, message, response?,
//                         duration?}), built by the rules of the Inspector's
//                         core/mcp/state/messageLogState.ts and
//                         core/mcp/inspectorClient.ts (written from its
//                         source: its npm package does not export them)
// The server pings the client from inside a tool call (a server-to-client
// request whose ids collide with the client's), and the "cancel" scenario
// aborts a call, so the SDK sends notifications/cancelled and the call
// never gets a response.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { tools, rawJSON, writeExpect, writeJSON, writeJSONL, installedVersion } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const version = installedVersion(dir, '@modelcontextprotocol/sdk');
for (const f of readdirSync(dir)) {
  if (/\.envelopes\.jsonl$|\.inspector\.json$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}

let clock = Date.parse('2026-03-01T09:00:00.000Z');
const now = () => new Date((clock += 7));

function newServer() {
  const server = new McpServer({ name: 'travel', version: '1.0.0' });
  const shape = {
    get_weather: { city: z.string(), note: z.string().optional() },
    get_time: { tz: z.string() },
    book_flight: { from: z.string(), to: z.string(), date: z.string() },
  };
  for (const [name, params] of Object.entries(shape)) {
    server.registerTool(name, { description: tools[name].description, inputSchema: params }, async (args) => ({
      content: [{ type: 'text', text: JSON.stringify(tools[name].run(args)) }],
    }));
  }
  // slow_search waits until it is cancelled; ping_then_time pings the client
  // three times (server-to-client requests) before it answers.
  server.registerTool('slow_search', { description: 'A search that takes long.', inputSchema: { q: z.string() } }, async (args, extra) => {
    await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
    return { content: [{ type: 'text', text: 'never sent' }] };
  });
  server.registerTool('ping_then_time', { description: 'Checks the client is alive, then tells the time.', inputSchema: { tz: z.string() } }, async (args, extra) => {
    for (let i = 0; i < 3; i++) await server.server.ping();
    return { content: [{ type: 'text', text: JSON.stringify(tools.get_time.run(args)) }] };
  });
  return server;
}

// Each scenario: what the client does, and the calls it implies.
const ok = (v) => ({ content: [{ type: 'text', text: JSON.stringify(v) }] });
const scenarios = [
  {
    name: 'single',
    run: async (c) => [await c.callTool({ name: 'get_weather', arguments: { city: 'Paris' } })],
    calls: [{ tool: 'get_weather', args: { city: 'Paris' }, result: ok(tools.get_weather.run({ city: 'Paris' })) }],
  },
  {
    name: 'parallel',
    run: async (c) =>
      Promise.all([
        c.callTool({ name: 'get_weather', arguments: { city: 'Paris' } }),
        c.callTool({ name: 'get_weather', arguments: { city: 'Tokyo' } }),
        c.callTool({ name: 'get_time', arguments: { tz: 'Asia/Tokyo' } }),
      ]),
    calls: [
      { tool: 'get_weather', args: { city: 'Paris' }, result: ok(tools.get_weather.run({ city: 'Paris' })) },
      { tool: 'get_weather', args: { city: 'Tokyo' }, result: ok(tools.get_weather.run({ city: 'Tokyo' })) },
      { tool: 'get_time', args: { tz: 'Asia/Tokyo' }, result: ok(tools.get_time.run({ tz: 'Asia/Tokyo' })) },
    ],
  },
  {
    name: 'error',
    run: async (c) => [await c.callTool({ name: 'book_flight', arguments: { from: 'CDG', to: 'JFK', date: 'next friday' } })],
    calls: [{ tool: 'book_flight', args: { from: 'CDG', to: 'JFK', date: 'next friday' }, error: true }],
  },
  {
    name: 'retry',
    run: async (c) => [
      await c.callTool({ name: 'book_flight', arguments: { from: 'CDG', to: 'JFK', date: '1 May' } }),
      await c.callTool({ name: 'book_flight', arguments: { from: 'CDG', to: 'JFK', date: '2026-05-01' } }),
    ],
    calls: [
      { tool: 'book_flight', args: { from: 'CDG', to: 'JFK', date: '1 May' }, error: true },
      { tool: 'book_flight', args: { from: 'CDG', to: 'JFK', date: '2026-05-01' }, result: ok(tools.book_flight.run({ from: 'CDG', to: 'JFK', date: '2026-05-01' })) },
    ],
  },
  {
    name: 'unicode',
    run: async (c) => [await c.callTool({ name: 'get_weather', arguments: { city: 'Zürich 東京 🌧', note: 'naïve "quoted" \\ back é' } })],
    calls: [{ tool: 'get_weather', args: { city: 'Zürich 東京 🌧', note: 'naïve "quoted" \\ back é' }, result: ok(tools.get_weather.run({ city: 'Zürich 東京 🌧' })) }],
  },
  {
    name: 'ping',
    run: async (c) => [
      await c.callTool({ name: 'ping_then_time', arguments: { tz: 'Europe/Paris' } }),
      await c.callTool({ name: 'get_weather', arguments: { city: 'Paris' } }),
    ],
    calls: [
      { tool: 'ping_then_time', args: { tz: 'Europe/Paris' }, result: ok(tools.get_time.run({ tz: 'Europe/Paris' })) },
      { tool: 'get_weather', args: { city: 'Paris' }, result: ok(tools.get_weather.run({ city: 'Paris' })) },
    ],
  },
  {
    name: 'cancel',
    run: async (c) => {
      const ac = new AbortController();
      const p = c.callTool({ name: 'slow_search', arguments: { q: 'flights to JFK' } }, undefined, { signal: ac.signal }).catch((e) => ({ cancelled: e.message }));
      await new Promise((r) => setTimeout(r, 50));
      ac.abort('the user stopped it');
      const r1 = await p;
      return [r1, await c.callTool({ name: 'get_time', arguments: { tz: 'UTC' } })];
    },
    calls: [
      { tool: 'slow_search', args: { q: 'flights to JFK' } },
      { tool: 'get_time', args: { tz: 'UTC' }, result: ok(tools.get_time.run({ tz: 'UTC' })) },
    ],
  },
  {
    name: 'no-tools',
    run: async (c) => [await c.listTools()],
    calls: [],
  },
];

const note = `@modelcontextprotocol/sdk@${version} client and server; expected calls written from the scenario in gen.mjs (ids are assigned by the SDK client, so they are not listed)`;

for (const sc of scenarios) {
  const envelopes = [];
  const entries = []; // Inspector MessageEntry[]
  const pending = new Map(); // the Inspector's pendingRequestEntries
  const track = (message, origin) => {
    const ts = now();
    envelopes.push({ ts: ts.toISOString(), direction: origin === 'client' ? 'client_to_server' : 'server_to_client', message: JSON.parse(JSON.stringify(message)) });
    const m = JSON.parse(JSON.stringify(message));
    const direction = 'method' in m ? ('id' in m ? 'request' : 'notification') : 'response';
    const entry = { id: randomUUID(), timestamp: ts, direction, origin, message: m };
    if (direction === 'request') {
      pending.set(m.id, entry);
    } else if (direction === 'response' && pending.has(m.id)) {
      const req = pending.get(m.id);
      pending.delete(m.id);
      req.response = m;
      req.duration = ts.getTime() - req.timestamp.getTime();
      return;
    }
    entries.push(entry);
  };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const send = clientSide.send.bind(clientSide);
  clientSide.send = async (message, options) => {
    track(message, 'client');
    return send(message, options);
  };
  const server = newServer();
  await server.connect(serverSide);
  const client = new Client({ name: 'toolscore-gen', version: '1.0.0' });
  const onmessage = () => clientSide.onmessage;
  const connecting = client.connect(clientSide);
  const inner = onmessage();
  clientSide.onmessage = (message, extra) => {
    track(message, 'server');
    return inner(message, extra);
  };
  await connecting;
  await sc.run(client);
  await new Promise((r) => setTimeout(r, 20));
  await client.close();
  await server.close();

  const exp = {
    scenario: sc.name,
    calls: sc.calls.map((c) => ({ tool: c.tool, args: rawJSON(JSON.stringify(c.args)), error: c.error === true, ...(c.result ? { result: c.result } : {}) })),
    final_answer: null,
  };
  writeJSONL(dir, `${sc.name}.envelopes.jsonl`, envelopes);
  writeExpect(dir, `${sc.name}.envelopes`, exp, note);
  writeJSON(dir, `${sc.name}.inspector.json`, entries);
  writeExpect(dir, `${sc.name}.inspector`, exp, note + '; Inspector MessageEntry log');
}
