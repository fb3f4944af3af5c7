// The scenarios every generator drives its library through, and the oracle
// (NAME.expect.json) each one implies. A scenario is a script for the fake
// provider (the model's turns: tool calls with their exact argument text, or
// a final text) plus the tools the library runs. The oracle is written from
// the scenario alone, never from what the library saved.

import { readFileSync, writeFileSync } from 'node:fs';

// The tools the agents are given. Each returns a plain JSON value or throws.
export const tools = {
  get_weather: {
    description: 'Current weather for a city.',
    params: { city: 'string', note: 'string?' },
    run: (a) => ({ city: a.city, temp_c: 21, sky: 'clear' }),
  },
  get_time: {
    description: 'Current time in an IANA time zone.',
    params: { tz: 'string' },
    run: (a) => ({ tz: a.tz, time: '12:00' }),
  },
  book_flight: {
    description: 'Book a flight; date is YYYY-MM-DD.',
    params: { from: 'string', to: 'string', date: 'string' },
    run: (a) => {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(a.date)) {
        throw new Error('date must be YYYY-MM-DD, got ' + JSON.stringify(a.date));
      }
      return { booking: 'BK-1', from: a.from, to: a.to, date: a.date };
    },
  },
  lookup_account: {
    description: 'Look up an account by its number.',
    params: { account_id: 'number', n: 'number', f: 'number' },
    run: () => ({ found: true }),
  },
};

// call builds one scripted tool call: id, tool name and the exact argument
// text the fake model sends.
const call = (id, tool, argsText) => ({ id, tool, argsText });

// The scenarios. turns[i] is the model's i-th answer: {calls: [...]} or
// {text}. The last turn is the final answer.
export const scenarios = [
  {
    name: 'single',
    prompt: 'What is the weather in Paris?',
    turns: [
      { calls: [call('call_w1', 'get_weather', '{"city":"Paris"}')] },
      { text: 'It is 21 °C and clear in Paris.' },
    ],
  },
  {
    name: 'parallel',
    prompt: 'Weather in Paris and Tokyo, and the time in Tokyo?',
    turns: [
      {
        calls: [
          call('call_p1', 'get_weather', '{"city":"Paris"}'),
          call('call_p2', 'get_weather', '{"city":"Tokyo"}'),
          call('call_p3', 'get_time', '{"tz":"Asia/Tokyo"}'),
        ],
      },
      { text: 'Paris and Tokyo are both 21 °C and clear; it is 12:00 in Tokyo.' },
    ],
  },
  {
    name: 'error',
    prompt: 'Book CDG to JFK next friday.',
    turns: [
      { calls: [call('call_e1', 'book_flight', '{"from":"CDG","to":"JFK","date":"next friday"}')] },
      { text: 'I could not book it: the date must be YYYY-MM-DD.' },
    ],
  },
  {
    name: 'retry',
    prompt: 'Book CDG to JFK on 1 May 2026.',
    turns: [
      { calls: [call('call_r1', 'book_flight', '{"from":"CDG","to":"JFK","date":"1 May"}')] },
      { calls: [call('call_r2', 'book_flight', '{"from":"CDG","to":"JFK","date":"2026-05-01"}')] },
      { text: 'Booked: BK-1, CDG to JFK on 2026-05-01.' },
    ],
  },
  {
    name: 'unicode',
    prompt: 'Wetter in Zürich? 東京は?',
    turns: [
      { calls: [call('call_u1', 'get_weather', '{"city":"Zürich 東京 🌧","note":"naïve \\"quoted\\" \\\\ back \\u00e9"}')] },
      { text: 'Zürich: 21 °C, 晴れ ☀️ — «ok» 🌧' },
    ],
  },
  {
    name: 'bigint',
    prompt: 'Look up account 12345678901234567890.',
    turns: [
      { calls: [call('call_b1', 'lookup_account', '{"account_id":12345678901234567890,"n":9007199254740993,"f":1.10}')] },
      { text: 'Account 12345678901234567890 was found.' },
    ],
  },
  {
    name: 'no-tools',
    prompt: 'Say hello.',
    turns: [{ text: 'Hello! No tools were needed.' }],
  },
  {
    name: 'multistep',
    prompt: 'Weather in Paris, then the time there.',
    turns: [
      { calls: [call('call_m1', 'get_weather', '{"city":"Paris"}')] },
      { calls: [call('call_m2', 'get_time', '{"tz":"Europe/Paris"}')] },
      { text: 'Paris: 21 °C and clear, and it is 12:00.' },
    ],
  },
];

export const byName = (name) => scenarios.find((s) => s.name === name);

// run executes a scripted call's tool as the library would: {result} or
// {error}.
export function runTool(c) {
  try {
    return { result: tools[c.tool].run(JSON.parse(c.argsText)) };
  } catch (e) {
    return { error: e.message };
  }
}

// Exact JSON text for the oracle. args are embedded as text so that
// integers beyond 2^53 and decimals such as 1.10 keep every digit.
const RAW = '\u0000raw:';
export const rawJSON = (text) => RAW + text;

// expectation builds the oracle of a scenario for one library.
//   argsKept: 'text'   the library keeps the model's argument text
//             'parsed' it keeps JSON.parse(text) (numbers as doubles)
//             'python' it keeps Python's json.loads(text) (exact integers,
//                      doubles for the rest)
//   result(value, call) how the library records a tool's return value
//             (undefined: results are not in this trace)
//   ids: false when the trace carries no call ids
//   errorKnown: false when the trace does not say a tool failed
//   turns: how many of the scenario's turns the trace holds (default all)
export function expectation(sc, lib) {
  const calls = [];
  const turns = sc.turns.slice(0, lib.turns ?? sc.turns.length);
  for (const t of turns) {
    for (const c of t.calls ?? []) {
      const out = runTool(c);
      const e = {
        tool: c.tool,
        args: rawJSON(lib.argsKept === 'parsed' ? JSON.stringify(JSON.parse(c.argsText)) : lib.argsKept === 'python' ? pythonJSON(c.argsText) : c.argsText),
      };
      if (lib.ids !== false) e.id = lib.id ? lib.id(c) : c.id;
      e.error = lib.errorKnown === false ? false : out.error !== undefined;
      if (out.error === undefined && lib.result) {
        const r = lib.result(out.result, c);
        if (r !== undefined) e.result = r;
      }
      calls.push(e);
    }
  }
  const last = turns[turns.length - 1];
  const final = last && last.text !== undefined ? last.text : null;
  return { scenario: sc.name, calls, final_answer: lib.final === false ? null : final };
}

// writeExpect writes NAME.expect.json for the trace file NAME.ext.
export function writeExpect(dir, name, exp, note) {
  const o = { ...(note ? { note } : {}), ...exp };
  const text = stringify(o, 2);
  writeFileSync(`${dir}/${name}.expect.json`, text + '\n');
}

// stringify is JSON.stringify, with rawJSON(text) values written as the
// JSON text itself.
export function stringify(v, indent) {
  return JSON.stringify(v, null, indent).replace(/"\\u0000raw:((?:[^"\\]|\\.)*)"/g, (_, s) => JSON.parse('"' + s + '"'));
}

export function writeJSON(dir, file, v) {
  writeFileSync(`${dir}/${file}`, stringify(v, 2) + '\n');
}

export function writeJSONL(dir, file, list) {
  writeFileSync(`${dir}/${file}`, list.map((v) => stringify(v)).join('\n') + '\n');
}

// pythonJSON is JSON text as Python reads and writes it back: integers keep
// every digit, numbers with a fraction or exponent become doubles.
export function pythonJSON(text) {
  return text.replace(/("(?:[^"\\]|\\.)*")|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (m, str) => (str ? str : /[.eE]/.test(m) ? String(Number(m)) : m));
}

// installedVersion reads the version of a package installed under dir.
export function installedVersion(dir, pkg) {
  return JSON.parse(readFileSync(`${dir}/node_modules/${pkg}/package.json`, 'utf8')).version;
}
