// The Vercel AI SDK with its Anthropic provider (@ai-sdk/anthropic) against
// the fake Anthropic Messages API of fake.mjs (JSON and SSE), shared by
// ../ai-sdk-anthropic-v5 and ../ai-sdk-anthropic-v6: each folder's gen.mjs
// imports its own pinned packages and hands them in.
//
// The runs vary what the OpenAI-provider scenarios do not: tool results of
// every kind (string, array, empty string, number, null), a tool without
// execute (the run stops at its call), a tool named in Unicode, call ids
// the model repeats across turns, a throwing tool, parallel calls and a
// 50-call run, each with generateText and streamText. Saved:
// NAME.messages.json (result.response.messages) and NAME.steps.json
// (JSON.stringify(result.steps)), with -stream for streamText.

import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { FakeProvider } from './fake.mjs';
import { writeExpect, writeJSON, installedVersion, rawJSON } from './scenarios.mjs';

const returns = {
  get_weather: (a) => ({ city: a.city, temp_c: 21 }),
  city_note: (a) => `${a.city} is lovely in May`,
  list_cities: () => ['Oslo', 'Bergen'],
  empty_note: () => '',
  count_cities: () => 42,
  nothing: () => null,
  'météo_ville': (a) => ({ ville: a.ville, ciel: 'dégagé ☀️' }),
  book_flight: () => {
    throw new Error('no seats left');
  },
};

const call = (id, tool, argsText) => ({ id, tool, argsText });
// The fake Anthropic API turns call_x ids into toolu_x.
const toolu = (id) => id.replace(/^call_/, 'toolu_');

const scenarios = [
  {
    name: 'results',
    prompt: 'Tell me about the cities.',
    turns: [
      {
        calls: [
          call('call_k1', 'city_note', '{"city":"Oslo"}'),
          call('call_k2', 'list_cities', '{}'),
          call('call_k3', 'empty_note', '{}'),
          call('call_k4', 'count_cities', '{}'),
          call('call_k5', 'nothing', '{}'),
        ],
      },
      { text: 'Oslo and Bergen.' },
    ],
  },
  {
    name: 'no-execute',
    prompt: 'Send the report.',
    // send_report has no execute: the run ends after the step that calls it.
    turns: [{ text: 'I will send it.', calls: [call('call_n1', 'send_report', '{"to":"ops@example.com"}')] }],
    final: null,
  },
  {
    name: 'unicode-tool',
    prompt: 'Météo à Zürich ?',
    turns: [{ calls: [call('call_mv', 'météo_ville', '{"ville":"Zürich"}')] }, { text: 'Zürich : dégagé ☀️' }],
  },
  {
    name: 'dup-ids',
    prompt: 'Weather in Oslo, then Bergen.',
    turns: [
      { calls: [call('call_1', 'get_weather', '{"city":"Oslo"}')] },
      { calls: [call('call_1', 'get_weather', '{"city":"Bergen"}')] },
      { text: 'Both are 21 °C.' },
    ],
  },
  {
    name: 'error',
    prompt: 'Book LH400.',
    turns: [{ calls: [call('call_e1', 'book_flight', '{"flight":"LH400"}')] }, { text: 'No seats left on LH400.' }],
  },
  {
    name: 'parallel-text',
    prompt: 'Weather in Oslo and Bergen.',
    // Text before the calls in the same turn.
    turns: [{ text: 'Let me check both.', calls: [call('call_p1', 'get_weather', '{"city":"Oslo"}'), call('call_p2', 'get_weather', '{"city":"Bergen"}')] }, { text: 'Oslo and Bergen are 21 °C.' }],
  },
];
{
  const turns = [];
  for (let i = 0; i < 25; i++) turns.push({ calls: [call(`call_l${i}a`, 'get_weather', `{"city":"C${i}"}`), call(`call_l${i}b`, 'city_note', `{"city":"C${i}"}`)] });
  turns.push({ text: 'Done with 25 cities.' });
  scenarios.push({ name: 'long', prompt: 'All the cities.', turns, maxSteps: 30 });
}

function run(c) {
  try {
    return { result: returns[c.tool](JSON.parse(c.argsText)) };
  } catch (e) {
    return { error: e.message };
  }
}

// oracle: the calls of the scenario with the AI SDK's JSON.parse of the
// arguments, the Anthropic ids, the tool's return value as the result (none
// for a tool without execute) and the error flag.
function oracle(sc, { errorKnown = true } = {}) {
  const calls = [];
  for (const t of sc.turns) {
    for (const c of t.calls ?? []) {
      const e = { tool: c.tool, args: rawJSON(JSON.stringify(JSON.parse(c.argsText))), id: toolu(c.id) };
      if (!returns[c.tool]) {
        e.error = false;
      } else {
        const out = run(c);
        e.error = errorKnown && out.error !== undefined;
        if (out.error === undefined) e.result = out.result;
      }
      calls.push(e);
    }
  }
  const last = sc.turns.at(-1);
  return { scenario: sc.name, calls, final_answer: sc.final === null ? null : last.text };
}

// runAISDKAnthropic generates the traces into dir. m: ai (the "ai"
// module), createAnthropic (@ai-sdk/anthropic).
export async function runAISDKAnthropic(dir, m) {
  for (const f of readdirSync(dir)) {
    if (/\.(messages|steps)\.json$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
  }
  const version = installedVersion(dir, 'ai');
  const provVersion = installedVersion(dir, '@ai-sdk/anthropic');
  const fake = await new FakeProvider().start();
  const anthropic = m.createAnthropic({ baseURL: fake.url + '/v1', apiKey: 'sk-ant-test' });
  const schema = (keys) => m.ai.jsonSchema({ type: 'object', properties: Object.fromEntries(keys.map((k) => [k, { type: 'string' }])), additionalProperties: true });
  const tools = {};
  for (const [name, f] of Object.entries(returns)) {
    tools[name] = m.ai.tool({ description: `The ${name} tool.`, inputSchema: schema(['city']), execute: async (a) => f(a) });
  }
  tools.send_report = m.ai.tool({ description: 'Send the report (run by the client).', inputSchema: schema(['to']) });
  const note = `ai@${version}, @ai-sdk/anthropic@${provVersion}; expected calls written from the scenario in _shared/aisdk-anthropic.mjs`;
  try {
    for (const sc of scenarios) {
      for (const mode of ['generate', 'stream']) {
        fake.use(sc);
        const opts = { model: anthropic('claude-sonnet-4-5'), tools, prompt: sc.prompt, stopWhen: m.ai.stepCountIs(sc.maxSteps ?? 10), maxRetries: 0 };
        let messages, steps, text;
        if (mode === 'generate') {
          const r = await m.ai.generateText(opts);
          messages = r.response.messages;
          steps = r.steps;
          text = r.text;
        } else {
          const r = m.ai.streamText({ ...opts, onError: ({ error }) => { throw error; } });
          await r.consumeStream();
          messages = (await r.response).messages;
          steps = await r.steps;
          text = await r.text;
        }
        if (fake.turn !== sc.turns.length) throw new Error(`${sc.name} ${mode}: ${fake.turn} of ${sc.turns.length} turns played`);
        if (text !== (sc.turns.at(-1).text ?? '')) throw new Error(`${sc.name} ${mode}: text ${JSON.stringify(text)}`);
        const name = mode === 'stream' ? `${sc.name}-stream` : sc.name;
        writeJSON(dir, `${name}.messages.json`, messages);
        writeExpect(dir, `${name}.messages`, oracle(sc), note);
        writeJSON(dir, `${name}.steps.json`, steps);
        writeExpect(dir, `${name}.steps`, oracle(sc), note);
      }
    }
  } finally {
    await fake.close();
  }
}

// runAISDKAnthropicOTel runs the same scenarios with experimental_telemetry
// and saves the spans as the OpenTelemetry JS SDK's OTLP/HTTP JSON exporter
// POSTs them (one batch per run) to the fake collector of
// ../otel-kit/kit.mjs: NAME.json (generateText) and NAME-stream.json. m adds
// to runAISDKAnthropic's modules NodeTracerProvider, BatchSpanProcessor,
// OTLPTraceExporter, resourceFromAttributes and startCollector (kit.mjs).
export async function runAISDKAnthropicOTel(dir, m) {
  for (const f of readdirSync(dir)) {
    if (/\.json$/.test(f) && !/^package/.test(f)) rmSync(`${dir}/${f}`);
  }
  const version = installedVersion(dir, 'ai');
  const provVersion = installedVersion(dir, '@ai-sdk/anthropic');
  const fake = await new FakeProvider().start();
  const collector = await m.startCollector();
  const tracerProvider = new m.NodeTracerProvider({
    resource: m.resourceFromAttributes({ 'service.name': 'toolscore-corpus-ai-sdk-otel-anthropic' }),
    spanProcessors: [new m.BatchSpanProcessor(new m.OTLPTraceExporter({ url: collector.url }), { scheduledDelayMillis: 600000, maxExportBatchSize: 1000 })],
  });
  tracerProvider.register();
  const tracer = tracerProvider.getTracer('ai');
  const anthropic = m.createAnthropic({ baseURL: fake.url + '/v1', apiKey: 'sk-ant-test' });
  const schema = (keys) => m.ai.jsonSchema({ type: 'object', properties: Object.fromEntries(keys.map((k) => [k, { type: 'string' }])), additionalProperties: true });
  const tools = {};
  for (const [name, f] of Object.entries(returns)) {
    tools[name] = m.ai.tool({ description: `The ${name} tool.`, inputSchema: schema(['city']), execute: async (a) => f(a) });
  }
  tools.send_report = m.ai.tool({ description: 'Send the report (run by the client).', inputSchema: schema(['to']) });
  const note = `ai@${version}, @ai-sdk/anthropic@${provVersion}, experimental_telemetry (ai.* spans); expected calls written from the scenario in _shared/aisdk-anthropic.mjs`;
  try {
    for (const sc of scenarios) {
      for (const mode of ['generate', 'stream']) {
        fake.use(sc);
        const opts = {
          model: anthropic('claude-sonnet-4-5'),
          tools,
          prompt: sc.prompt,
          stopWhen: m.ai.stepCountIs(sc.maxSteps ?? 10),
          maxRetries: 0,
          experimental_telemetry: { isEnabled: true, functionId: `corpus-${sc.name}`, tracer },
        };
        let text;
        if (mode === 'generate') {
          text = (await m.ai.generateText(opts)).text;
        } else {
          const r = m.ai.streamText({ ...opts, onError: ({ error }) => { throw error; } });
          await r.consumeStream();
          text = await r.text;
        }
        await tracerProvider.forceFlush();
        if (fake.turn !== sc.turns.length) throw new Error(`${sc.name} ${mode}: ${fake.turn} of ${sc.turns.length} turns played`);
        if (text !== (sc.turns.at(-1).text ?? '')) throw new Error(`${sc.name} ${mode}: text ${JSON.stringify(text)}`);
        const name = mode === 'stream' ? `${sc.name}-stream` : sc.name;
        const bodies = collector.take();
        if (bodies.length !== 1) throw new Error(`${name}: ${bodies.length} exports`);
        writeFileSync(`${dir}/${name}.json`, bodies[0] + '\n');
        writeExpect(dir, name, oracle(sc), note);
      }
    }
  } finally {
    await tracerProvider.shutdown();
    await collector.close();
    await fake.close();
  }
}
