// The TypeScript example of docs/clients.md and README.md (the block after
// `<!-- example: typescript -->`) is the same in both and runs as written
// against TOOLSCORE_URL, importing this build instead of the installed
// package.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { Client, type ContractDocument } from "../index.js";
import { apiKey, repoJSON, repoRoot, server } from "./env.js";

const { url, skip } = server("TOOLSCORE_URL");

/** The fenced block after the marker in a Markdown file of the repository. */
export function example(path: string, lang: string): string {
  const md = readFileSync(repoRoot + path, "utf8");
  const m = md.match(new RegExp(`<!-- example: ${lang} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\`\\n`));
  assert.ok(m, `${path} has no example block for ${lang}`);
  return m[1]!;
}

test("the docs' TypeScript example is the README's", () => {
  assert.equal(example("README.md", "typescript"), example("docs/clients.md", "typescript"));
  assert.equal(example("docs/clients.md", "typescript").split("\n").length, 5);
});

test("the docs' TypeScript example runs and prints the verdict", { skip }, async () => {
  await new Client({ baseUrl: url!, apiKey }).createContractVersion("flights", repoJSON<ContractDocument>("examples/contracts/contract.json"));
  const code = example("docs/clients.md", "typescript")
    .replace('"@toolscore/client"', JSON.stringify(pathToFileURL(new URL("../index.js", import.meta.url).pathname).href))
    .replace('"http://localhost:8080"', JSON.stringify(url));
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: repoRoot, encoding: "utf8" });
  assert.equal(out, "A PASS In the call to `reserve_seat`: drop `seat`\n");
});
