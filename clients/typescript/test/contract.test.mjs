// The client's types against the server's contract: the OpenAPI document a real
// `routing-core serve` publishes is turned into TypeScript (openapi-typescript), and the
// compiler checks that every answer the document allows is a value of the client's types,
// that those types name every field the server sends, and that every request the client
// can make is one the server takes. A field added to the decision and not to src/types.ts
// fails here (as the evidence's `reason` would have).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import openapiTS, { astToString } from "openapi-typescript";

import { CONFORMANCE, startServer } from "./server.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const TYPES = resolve(HERE, "..", "src", "types.js");
const TSC = resolve(HERE, "..", "node_modules", "typescript", "bin", "tsc");

// Answers: the document's type must be assignable to the client's, and name no field the
// client's leaves out. Requests: the client's type must be assignable to the document's.
const CHECK = `
import type { components } from "./generated.js";
import type { BatchAnswer, Decision, ErrorBody, PackInfo, RouteRequest, Turn } from "${TYPES}";

type S = components["schemas"];
type Unwrap<T> = T extends readonly (infer U)[] ? Unwrap<U> : NonNullable<T>;
/** The keys of G (at any depth) that C does not have, as "path" strings; never when none. */
type Missing<G, C, At extends string = ""> = G extends object
  ? {
      [K in keyof G & string]-?: K extends keyof C
        ? Missing<Unwrap<G[K]>, Unwrap<C[K]>, \`\${At}.\${K}\`>
        : \`\${At}.\${K}\`;
    }[keyof G & string]
  : never;
type None<T extends never> = T;

export const answers: [Decision, BatchAnswer, PackInfo, ErrorBody] =
  null as unknown as [S["Decision"], S["BatchAnswer"], S["PackInfo"], S["Error"]];
export type Named = [
  None<Missing<S["Decision"], Decision>>,
  None<Missing<S["BatchAnswer"], BatchAnswer>>,
  None<Missing<S["PackInfo"], PackInfo>>,
  None<Missing<S["Error"], ErrorBody>>,
];
export const requests: [S["RouteRequest"], S["Turn"]] = null as unknown as [RouteRequest, Turn];
`;

/** tsc's verdict on the client's types against `document`: [exit status, what it printed]. */
async function compile(document) {
  const dir = mkdtempSync(join(tmpdir(), "routing-contract-"));
  // A property with a default is optional to send (not required, as openapi-typescript would
  // assume), and a span of two numbers is a pair.
  const made = await openapiTS(document, { defaultNonNullable: false, arrayLength: true });
  writeFileSync(join(dir, "generated.ts"), astToString(made));
  writeFileSync(join(dir, "check.ts"), CHECK);
  const options = ["--noEmit", "--strict", "--exactOptionalPropertyTypes", "--skipLibCheck"];
  const module = ["--target", "ES2022", "--module", "NodeNext", "--moduleResolution", "NodeNext"];
  const run = spawnSync(process.execPath, [TSC, ...options, ...module, join(dir, "check.ts")], {
    encoding: "utf8",
  });
  return [run.status, `${run.stdout}${run.stderr}`];
}

describe("the client's types against the server's OpenAPI document", () => {
  let server;
  let document;

  before(async () => {
    server = await startServer(join(CONFORMANCE, "packs", "support.json"));
    document = await (await fetch(`${server.url}/openapi.json`)).json();
  });

  after(async () => {
    await server?.stop();
  });

  test("every answer is a value of the client's types, which name all its fields", async () => {
    const [status, printed] = await compile(document);
    assert.equal(status, 0, printed);
  });

  test("a field the server sends and the client's types lack fails the check", async () => {
    const grown = structuredClone(document);
    const evidence = grown.components.schemas.Decision.properties.evidence.anyOf[0];
    evidence.properties.surprise = { type: "string" };
    evidence.required.push("surprise");
    const [status, printed] = await compile(grown);
    assert.notEqual(status, 0);
    assert.match(printed, /\.evidence\.surprise/);
  });

  test("a verdict the client's types do not know fails the check", async () => {
    const changed = structuredClone(document);
    changed.components.schemas.Decision.properties.verdict.enum.push("maybe");
    const [status] = await compile(changed);
    assert.notEqual(status, 0);
  });
});
