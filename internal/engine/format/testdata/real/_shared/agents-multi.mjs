// The multi-agent runs of the OpenAI Agents SDK for JavaScript, shared by
// ../openai-agents-js-multi (@openai/agents 0.20.0) and
// ../openai-agents-js-0.3 (0.3.9): each folder's gen.mjs imports its own
// pinned packages and hands them in (a bare import from this file would
// resolve against this folder, which has no node_modules).
//
// Against the fake Responses API of fake.mjs: a handoff from a triage agent
// to a specialist, an agent used as a tool (agent.asTool) whose inner agent
// calls a tool of its own, tool results of every kind (object, array,
// string, empty string, number, null), empty argument text, call ids the
// model repeats across turns, and a long run (120 calls). Each run is saved
// as result.history, result.newItems, the events of the same run streamed
// (Runner with stream: true) and the trace export bodies the SDK POSTs (one
// a line). A run the library ends is skipped and logged.

import { readdirSync, rmSync } from 'node:fs';
import { FakeProvider } from './fake.mjs';
import { writeExpect, writeJSON, writeJSONL, installedVersion, rawJSON } from './scenarios.mjs';

// run generates the traces into dir; m holds the modules: OpenAI (the
// openai package's default export) and agents (@openai/agents).
export async function runAgentsMulti(dir, m) {
  const { OpenAI } = m;
  const { Agent, Runner, tool, handoff, setDefaultOpenAIClient, setTraceProcessors, BatchTraceProcessor, OpenAITracingExporter, getGlobalTraceProvider } = m.agents;
  const version = installedVersion(dir, '@openai/agents');
  for (const f of readdirSync(dir)) {
    if (/\.(history|new-items)\.json$|\.(stream|trace-export)\.jsonl$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
  }

  const fake = await new FakeProvider().start();
  const ingested = [];
  fake.extra.push({
    match: (req) => req.url.startsWith('/v1/traces/ingest'),
    handle: (req, body, res) => {
      ingested.push(body);
      res.writeHead(204);
      res.end();
    },
  });
  setDefaultOpenAIClient(new OpenAI({ baseURL: fake.url + '/v1', apiKey: 'sk-test' }));
  const exporter = new OpenAITracingExporter({ endpoint: fake.url + '/v1/traces/ingest', apiKey: 'sk-test' });
  setTraceProcessors([new BatchTraceProcessor(exporter, { scheduleDelay: 60_000 })]);

  // The tools, and what each returns (the SDK keeps a return value as text:
  // a string as it is, anything else JSON.stringify / String).
  const returns = {
    get_weather: (a) => ({ city: a.city, temp_c: 21 }),
    list_cities: () => ['Oslo', 'Bergen'],
    city_note: (a) => `${a.city} is lovely in May`,
    empty_note: () => '',
    count_cities: () => 42,
    nothing: () => null,
    ping: () => 'pong',
  };
  const textOf = (v) => (typeof v === 'string' ? v : v === null || typeof v !== 'object' ? String(v) : JSON.stringify(v));
  const fn = (name, params) =>
    tool({
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', properties: Object.fromEntries(params.map((p) => [p, { type: 'string' }])), required: [], additionalProperties: true },
      strict: false,
      execute: async (input) => returns[name](typeof input === 'string' ? (input ? JSON.parse(input) : {}) : input),
    });
  const weatherTools = [fn('get_weather', ['city']), fn('list_cities', []), fn('city_note', ['city']), fn('empty_note', []), fn('count_cities', []), fn('nothing', []), fn('ping', [])];

  const weatherAgent = new Agent({ name: 'Weather agent', instructions: 'Answer weather questions.', model: 'gpt-4.1-mini', tools: weatherTools });
  const triage = new Agent({ name: 'Triage', instructions: 'Hand weather questions to the weather agent.', model: 'gpt-4.1-mini', handoffs: [handoff(weatherAgent)] });
  const expert = new Agent({ name: 'Expert', instructions: 'Look the weather up.', model: 'gpt-4.1-mini', tools: [fn('get_weather', ['city'])] });
  const orchestrator = new Agent({
    name: 'Orchestrator',
    instructions: 'Ask the expert.',
    model: 'gpt-4.1-mini',
    tools: [expert.asTool({ toolName: 'weather_expert', toolDescription: 'Ask the weather expert.' })],
  });

  const call = (id, tool, argsText) => ({ id, tool, argsText });
  const HANDOFF = `{"assistant":"Weather agent"}`;

  // Each scenario: the agent it starts with, the model's turns (played by
  // the fake in request order, inner agents' turns included) and the calls
  // each saved shape holds, with their result text.
  const scenarios = [
    {
      name: 'handoff',
      agent: triage,
      prompt: 'Weather in Oslo?',
      turns: [
        { calls: [call('call_h1', 'transfer_to_Weather_agent', '{}')] },
        { calls: [call('call_h2', 'get_weather', '{"city":"Oslo"}')] },
        { text: 'Oslo: 21 °C.' },
      ],
      calls: [
        { tool: 'transfer_to_Weather_agent', args: '{}', id: 'call_h1', result: HANDOFF, handoff: true },
        { tool: 'get_weather', args: '{"city":"Oslo"}', id: 'call_h2', result: textOf(returns.get_weather({ city: 'Oslo' })) },
      ],
    },
    {
      name: 'agent-as-tool',
      agent: orchestrator,
      prompt: 'Weather in Oslo, ask the expert.',
      turns: [
        { calls: [call('call_x1', 'weather_expert', '{"input":"Weather in Oslo?"}')] },
        { calls: [call('call_x2', 'get_weather', '{"city":"Oslo"}')] },
        { text: 'Oslo is 21 °C.' },
        { text: 'The expert says Oslo is 21 °C.' },
      ],
      // The outer run's items hold the outer call only; the export has a
      // function span for the inner agent's call too (it ran first... see
      // the export oracle below).
      calls: [{ tool: 'weather_expert', args: '{"input":"Weather in Oslo?"}', id: 'call_x1', result: 'Oslo is 21 °C.' }],
      exportCalls: [
        { tool: 'weather_expert', args: '{"input":"Weather in Oslo?"}', result: 'Oslo is 21 °C.' },
        { tool: 'get_weather', args: '{"city":"Oslo"}', result: textOf(returns.get_weather({ city: 'Oslo' })) },
      ],
    },
    {
      name: 'results',
      agent: weatherAgent,
      prompt: 'Tell me about the cities.',
      turns: [
        {
          calls: [
            call('call_k1', 'list_cities', '{}'),
            call('call_k2', 'city_note', '{"city":"Oslo"}'),
            call('call_k3', 'empty_note', '{}'),
            call('call_k4', 'count_cities', '{}'),
            call('call_k5', 'nothing', '{}'),
          ],
        },
        { text: 'Oslo and Bergen.' },
      ],
      calls: [
        { tool: 'list_cities', args: '{}', id: 'call_k1', result: textOf(returns.list_cities()) },
        { tool: 'city_note', args: '{"city":"Oslo"}', id: 'call_k2', result: textOf(returns.city_note({ city: 'Oslo' })) },
        { tool: 'empty_note', args: '{}', id: 'call_k3', result: '' },
        { tool: 'count_cities', args: '{}', id: 'call_k4', result: '42' },
        { tool: 'nothing', args: '{}', id: 'call_k5', result: 'null' },
      ],
    },
    {
      name: 'empty-args',
      agent: weatherAgent,
      prompt: 'Ping.',
      turns: [{ calls: [call('call_z1', 'ping', '')] }, { calls: [call('call_z2', 'ping', '{}')] }, { text: 'pong' }],
      calls: [
        // The SDK does not run a tool whose argument text is empty: it
        // answers the model with its parse error text, an error.
        { tool: 'ping', args: '{}', id: 'call_z1', error: true },
        { tool: 'ping', args: '{}', id: 'call_z2', result: 'pong' },
      ],
    },
    {
      name: 'dup-ids',
      agent: weatherAgent,
      prompt: 'Weather in Oslo, then Bergen.',
      turns: [
        { calls: [call('call_1', 'get_weather', '{"city":"Oslo"}')] },
        { calls: [call('call_1', 'get_weather', '{"city":"Bergen"}')] },
        { text: 'Oslo and Bergen are 21 °C.' },
      ],
      calls: [
        { tool: 'get_weather', args: '{"city":"Oslo"}', id: 'call_1', result: textOf(returns.get_weather({ city: 'Oslo' })) },
        { tool: 'get_weather', args: '{"city":"Bergen"}', id: 'call_1', result: textOf(returns.get_weather({ city: 'Bergen' })) },
      ],
    },
  ];
  // long: 60 turns of two parallel calls, then an answer.
  {
    const turns = [];
    const calls = [];
    for (let i = 0; i < 60; i++) {
      const a = call(`call_l${i}a`, 'get_weather', `{"city":"C${i}"}`);
      const b = call(`call_l${i}b`, 'city_note', `{"city":"C${i}"}`);
      turns.push({ calls: [a, b] });
      calls.push({ tool: 'get_weather', args: a.argsText, id: a.id, result: textOf(returns.get_weather({ city: `C${i}` })) });
      calls.push({ tool: 'city_note', args: b.argsText, id: b.id, result: textOf(returns.city_note({ city: `C${i}` })) });
    }
    turns.push({ text: 'Done with 60 cities.' });
    scenarios.push({ name: 'long', agent: weatherAgent, prompt: 'All the cities.', turns, calls, maxTurns: 70 });
  }

  const note = `@openai/agents@${version}; expected calls written from the scenario in _shared/agents-multi.mjs`;
  const oracle = (sc, calls, { ids = true, final = true } = {}) => ({
    scenario: sc.name,
    calls: calls.map((c) => ({ tool: c.tool, args: rawJSON(c.args), ...(ids ? { id: c.id } : {}), error: !!c.error, ...(c.error ? {} : { result: c.result }) })),
    final_answer: final ? sc.turns.at(-1).text : null,
  });

  const runner = new Runner();
  try {
    for (const sc of scenarios) {
      fake.use(sc);
      ingested.length = 0;
      let result;
      try {
        result = await runner.run(sc.agent, sc.prompt, { maxTurns: sc.maxTurns ?? 10 });
      } catch (e) {
        // Runs the library ends: from 0.1x on the runner refuses a call id
        // the model repeats; before, an empty argument text throws out of
        // the run (JSON.parse("")).
        const ends = { 'dup-ids': /reused/, 'empty-args': /Unexpected end of JSON input/ };
        if (!ends[sc.name]?.test(e.message)) throw e;
        console.log(`${sc.name}: not generated: ${e.message.split('\n')[0]}`);
        await getGlobalTraceProvider().forceFlush();
        ingested.length = 0;
        continue;
      }
      if (fake.turn !== sc.turns.length) throw new Error(`${sc.name}: ${fake.turn} of ${sc.turns.length} turns played`);
      if (result.finalOutput !== sc.turns.at(-1).text) throw new Error(`${sc.name}: final output ${JSON.stringify(result.finalOutput)}`);
      await getGlobalTraceProvider().forceFlush();
      const exp = oracle(sc, sc.calls);
      writeJSON(dir, `${sc.name}.history.json`, result.history);
      writeExpect(dir, `${sc.name}.history`, exp, note);
      writeJSON(dir, `${sc.name}.new-items.json`, result.newItems);
      writeExpect(dir, `${sc.name}.new-items`, exp, note);
      if (ingested.length < 1) throw new Error(`${sc.name}: ${ingested.length} trace exports`);
      writeJSONL(dir, `${sc.name}.trace-export.jsonl`, ingested);
      // A handoff is a "handoff" span (from_agent, to_agent): no arguments
      // text and no result; the tool name is the SDK's default one.
      const exportCalls = (sc.exportCalls ?? sc.calls).map((c) => (c.handoff ? { ...c, result: undefined } : c));
      writeExpect(dir, `${sc.name}.trace-export`, oracle(sc, exportCalls, { ids: false, final: false }), note + '; the export has no call ids and no final answer; a handoff span has no result');

      fake.use(sc);
      ingested.length = 0;
      const stream = await runner.run(sc.agent, sc.prompt, { maxTurns: sc.maxTurns ?? 10, stream: true });
      const events = [];
      for await (const ev of stream) events.push(JSON.parse(JSON.stringify(ev)));
      await stream.completed;
      await getGlobalTraceProvider().forceFlush();
      writeJSONL(dir, `${sc.name}.stream.jsonl`, events);
      writeExpect(dir, `${sc.name}.stream`, exp, note);
    }
  } finally {
    await getGlobalTraceProvider().shutdown();
    await fake.close();
  }
}
