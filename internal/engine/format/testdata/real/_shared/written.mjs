// Helpers for the traces written from a Python library's source (PyPI is
// not reachable here, so the library cannot be run): a deterministic clock
// and ids, and the scenario walk every such generator shares.

import { readdirSync, rmSync } from 'node:fs';
import { runTool } from './scenarios.mjs';

export function clean(dir, re) {
  for (const f of readdirSync(dir)) if (re.test(f) || /\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}

// Clock returns ISO-8601 times (Python's datetime.isoformat for UTC, with
// microseconds) and float seconds, advancing 1.25 ms a tick.
export class Clock {
  constructor(start = Date.parse('2026-03-01T09:00:00Z')) {
    this.us = start * 1000;
  }
  tick() {
    this.us += 1250;
    return this;
  }
  iso(suffix = '+00:00') {
    const ms = Math.floor(this.us / 1000);
    const frac = String(this.us % 1000000).padStart(6, '0');
    return new Date(ms).toISOString().slice(0, 19) + '.' + frac + suffix;
  }
  seconds() {
    return this.us / 1e6;
  }
}

// hexId makes a stable id of n hex digits from a seed string.
export function hexId(seed, n = 32) {
  let h = 2166136261;
  let out = '';
  while (out.length < n) {
    for (const ch of seed + out.length) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out.slice(0, n);
}

// walk runs a scenario's turns: for each model turn it calls onTurn(turn,
// outcomes) where outcomes[i] is runTool(turn.calls[i]) ({result} or
// {error}).
export function walk(sc, onTurn) {
  for (const t of sc.turns) onTurn(t, (t.calls ?? []).map(runTool));
}
