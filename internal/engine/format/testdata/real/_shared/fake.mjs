// A fake model provider on 127.0.0.1 that answers each request with the
// next turn of the current scenario. It speaks the wire formats the real
// client libraries call: OpenAI Chat Completions and Responses (JSON and
// SSE), Anthropic Messages (JSON and SSE) and the Gemini API
// (generateContent, streamGenerateContent). Only node:http is used.

import http from 'node:http';

export class FakeProvider {
  constructor() {
    this.scenario = null;
    this.turn = 0;
    this.requests = [];
    this.extra = []; // [{match(req), handle(req, body, res)}] for other APIs
    this.seq = 0;
  }

  // use starts a scenario: the next model request gets its first turn.
  use(sc) {
    this.scenario = sc;
    this.turn = 0;
    this.requests = [];
  }

  next() {
    const t = this.scenario.turns[this.turn];
    if (!t) throw new Error(`scenario ${this.scenario.name}: no turn ${this.turn}`);
    this.turn++;
    return t;
  }

  async start() {
    this.server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body = null;
        try {
          body = raw ? JSON.parse(raw) : null;
        } catch {
          body = raw;
        }
        try {
          this.route(req, body, res, raw);
        } catch (e) {
          console.error('fake provider:', req.method, req.url, e);
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: String(e) } }));
        }
      });
    });
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = this.server.address().port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  close() {
    this.server.closeAllConnections?.();
    return new Promise((r) => this.server.close(r));
  }

  route(req, body, res, raw) {
    for (const x of this.extra) {
      if (x.match(req)) return x.handle(req, body, res, raw);
    }
    const path = req.url.split('?')[0];
    if (path.endsWith('/chat/completions')) {
      this.requests.push(body);
      return body.stream ? this.chatStream(res, body) : this.json(res, this.chat(body));
    }
    if (path.endsWith('/responses')) {
      this.requests.push(body);
      return body.stream ? this.responsesStream(res, body) : this.json(res, this.responses(body));
    }
    if (path.endsWith('/messages')) {
      this.requests.push(body);
      return body.stream ? this.anthropicStream(res, body) : this.json(res, this.anthropic(body));
    }
    const g = path.match(/models\/([^/:]+):(generateContent|streamGenerateContent)$/);
    if (g) {
      this.requests.push(body);
      return g[2] === 'generateContent' ? this.json(res, this.gemini(g[1])) : this.geminiStream(res, g[1], req.url.includes('alt=sse'));
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'no route ' + req.method + ' ' + req.url } }));
  }

  json(res, v) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(v));
  }

  sse(res, events, named) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const e of events) {
      if (named) res.write(`event: ${e.type}\n`);
      res.write(`data: ${JSON.stringify(e)}\n\n`);
    }
    if (!named) res.write('data: [DONE]\n\n');
    res.end();
  }

  id(prefix) {
    return `${prefix}_${this.scenario.name.replace(/[^a-z0-9]/g, '')}${this.turn}_${++this.seq}`;
  }

  // --- OpenAI Chat Completions ---
  chat(body) {
    const t = this.next();
    const message = { role: 'assistant', content: t.text ?? null, refusal: null, annotations: [] };
    if (t.calls) {
      message.tool_calls = t.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.tool, arguments: c.argsText } }));
    }
    return {
      id: this.id('chatcmpl'),
      object: 'chat.completion',
      created: 1767225600,
      model: body.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: t.calls ? 'tool_calls' : 'stop' }],
      usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
    };
  }

  chatStream(res, body) {
    const t = this.next();
    const id = this.id('chatcmpl');
    const base = { id, object: 'chat.completion.chunk', created: 1767225600, model: body.model };
    const ev = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
    if (t.text !== undefined) {
      for (const piece of split(t.text)) ev.push({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    }
    (t.calls ?? []).forEach((c, i) => {
      ev.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.tool, arguments: '' } }] }, finish_reason: null }] });
      for (const piece of split(c.argsText)) {
        ev.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: piece } }] }, finish_reason: null }] });
      }
    });
    ev.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: t.calls ? 'tool_calls' : 'stop' }] });
    ev.push({ ...base, choices: [], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } });
    this.sse(res, ev, false);
  }

  // --- OpenAI Responses ---
  responseItems(t) {
    const out = [];
    for (const c of t.calls ?? []) {
      out.push({ id: 'fc_' + c.id, type: 'function_call', status: 'completed', arguments: c.argsText, call_id: c.id, name: c.tool });
    }
    if (t.text !== undefined) {
      out.push({ id: this.id('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: t.text }] });
    }
    return out;
  }

  responseObject(body, id, output, status) {
    return {
      id,
      object: 'response',
      created_at: 1767225600,
      status,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      model: body.model,
      output,
      parallel_tool_calls: true,
      temperature: 1,
      tool_choice: 'auto',
      tools: body.tools ?? [],
      top_p: 1,
      usage: status === 'completed' ? { input_tokens: 50, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 60 } : null,
    };
  }

  responses(body) {
    const t = this.next();
    return this.responseObject(body, this.id('resp'), this.responseItems(t), 'completed');
  }

  responsesStream(res, body) {
    const t = this.next();
    const id = this.id('resp');
    const items = this.responseItems(t);
    let seq = 0;
    const ev = [];
    const push = (e) => ev.push({ ...e, sequence_number: seq++ });
    push({ type: 'response.created', response: this.responseObject(body, id, [], 'in_progress') });
    push({ type: 'response.in_progress', response: this.responseObject(body, id, [], 'in_progress') });
    items.forEach((it, i) => {
      if (it.type === 'function_call') {
        push({ type: 'response.output_item.added', output_index: i, item: { ...it, arguments: '', status: 'in_progress' } });
        for (const piece of split(it.arguments)) push({ type: 'response.function_call_arguments.delta', item_id: it.id, output_index: i, delta: piece });
        push({ type: 'response.function_call_arguments.done', item_id: it.id, output_index: i, arguments: it.arguments });
      } else {
        const text = it.content[0].text;
        push({ type: 'response.output_item.added', output_index: i, item: { ...it, content: [], status: 'in_progress' } });
        push({ type: 'response.content_part.added', item_id: it.id, output_index: i, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } });
        for (const piece of split(text)) push({ type: 'response.output_text.delta', item_id: it.id, output_index: i, content_index: 0, delta: piece, logprobs: [] });
        push({ type: 'response.output_text.done', item_id: it.id, output_index: i, content_index: 0, text, logprobs: [] });
        push({ type: 'response.content_part.done', item_id: it.id, output_index: i, content_index: 0, part: it.content[0] });
      }
      push({ type: 'response.output_item.done', output_index: i, item: it });
    });
    push({ type: 'response.completed', response: this.responseObject(body, id, items, 'completed') });
    this.sse(res, ev, true);
  }

  // --- Anthropic Messages ---
  anthropicContent(t) {
    const content = [];
    if (t.text !== undefined) content.push({ type: 'text', text: t.text });
    for (const c of t.calls ?? []) content.push({ type: 'tool_use', id: c.id.replace(/^call_/, 'toolu_'), name: c.tool, input: JSON.parse(c.argsText) });
    return content;
  }

  anthropic(body) {
    const t = this.next();
    return {
      id: this.id('msg'),
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: this.anthropicContent(t),
      stop_reason: t.calls ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 50, output_tokens: 10 },
    };
  }

  anthropicStream(res, body) {
    const t = this.next();
    const ev = [];
    ev.push({ type: 'message_start', message: { id: this.id('msg'), type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } });
    let i = 0;
    if (t.text !== undefined) {
      ev.push({ type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } });
      ev.push({ type: 'ping' });
      for (const piece of split(t.text)) ev.push({ type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: piece } });
      ev.push({ type: 'content_block_stop', index: i });
      i++;
    }
    for (const c of t.calls ?? []) {
      ev.push({ type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: c.id.replace(/^call_/, 'toolu_'), name: c.tool, input: {} } });
      for (const piece of split(c.argsText)) ev.push({ type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: piece } });
      ev.push({ type: 'content_block_stop', index: i });
      i++;
    }
    ev.push({ type: 'message_delta', delta: { stop_reason: t.calls ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 10 } });
    ev.push({ type: 'message_stop' });
    this.sse(res, ev, true);
  }

  // --- Gemini API ---
  geminiResponse(model) {
    const t = this.next();
    const parts = [];
    if (t.text !== undefined) parts.push({ text: t.text });
    for (const c of t.calls ?? []) parts.push({ functionCall: { id: c.id, name: c.tool, args: JSON.parse(c.argsText) } });
    return {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 10, totalTokenCount: 60 },
      modelVersion: model,
      responseId: this.id('gresp'),
    };
  }

  gemini(model) {
    return this.geminiResponse(model);
  }

  geminiStream(res, model, sse) {
    const r = this.geminiResponse(model);
    if (sse) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(r)}\r\n\r\n`);
      res.end();
      return;
    }
    this.json(res, [r]);
  }
}

// split cuts text into a few pieces at code point boundaries, so streamed
// deltas are really assembled by the client.
function split(s) {
  const cps = Array.from(s);
  if (cps.length < 4) return [s];
  const n = Math.ceil(cps.length / 3);
  const out = [];
  for (let i = 0; i < cps.length; i += n) out.push(cps.slice(i, i + n).join(''));
  return out;
}
