// The servers the integration tests talk to: TOOLSCORE_URL (a server on a
// fresh database), TOOLSCORE_TINY_URL (one with a single worker and a
// queue of one, for 429s) and TOOLSCORE_OTEL_URL (one whose OpenTelemetry
// ingest grades a trace 200 ms after its last span and keeps unmatched
// traces), with their keys TOOLSCORE_API_KEY, TOOLSCORE_TINY_API_KEY and
// TOOLSCORE_OTEL_API_KEY (every scope but admin) and TOOLSCORE_ADMIN_KEY
// (their bootstrap admin key). clients/ci.sh starts them. Without them the
// tests are skipped, unless CI=true, where a missing server is a failure.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The repository root (this file is clients/typescript/dist/test/env.js). */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/** Reads a file of the repository as JSON. */
export function repoJSON<T = unknown>(path: string): T {
  return JSON.parse(readFileSync(repoRoot + path, "utf8")) as T;
}

/** The server URL in variable name, or a skip reason (throws under CI=true). */
export function server(name: "TOOLSCORE_URL" | "TOOLSCORE_TINY_URL" | "TOOLSCORE_OTEL_URL"): { url?: string; skip?: string } {
  const url = process.env[name];
  if (url) return { url };
  if (process.env.CI === "true") throw new Error(`${name} is not set: clients/ci.sh starts the test servers`);
  return { skip: `${name} is not set (clients/ci.sh starts the test servers)` };
}

/** The key of TOOLSCORE_URL (every scope but admin). */
export const apiKey = process.env.TOOLSCORE_API_KEY || undefined;
/** The key of TOOLSCORE_TINY_URL. */
export const tinyApiKey = process.env.TOOLSCORE_TINY_API_KEY || undefined;
/** The key of TOOLSCORE_OTEL_URL. */
export const otelApiKey = process.env.TOOLSCORE_OTEL_API_KEY || undefined;
/** The bootstrap admin key of both servers. */
export const adminKey = process.env.TOOLSCORE_ADMIN_KEY || undefined;

/** A suffix that keeps this run's names apart from earlier runs' on the same server. */
export const runTag = Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
