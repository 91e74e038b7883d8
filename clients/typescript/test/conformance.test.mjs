// The conformance suite (conformance/README.md) through the client: every pack swapped into one
// real server, every case routed with route(), each field compared as `routing-core conformance
// check` compares it (scores and relevance to 1e-6).
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { RouteClient } from "../dist/index.js";
import { CONFORMANCE, replaceFile, startServer, waitUntil } from "./server.mjs";

const TOLERANCE = 1e-6;
const EXACT = ["route", "verdict", "by", "offered", "action", "triage", "tools_kept"];

function observed(decision) {
  return {
    route: decision.route,
    verdict: decision.verdict,
    by: decision.by,
    offered: decision.offered,
    action: decision.action?.kind ?? null,
    triage: decision.triage?.label ?? null,
    tools_kept: decision.tools.kept,
    ranked: decision.exact.ranked,
  };
}

function close(want, got) {
  if (typeof want === "string" || typeof got === "string") return want === got;
  return typeof got === "number" && Math.abs(want - got) <= TOLERANCE;
}

function differences(expect, got) {
  const lines = EXACT.filter((k) => JSON.stringify(expect[k]) !== JSON.stringify(got[k])).map(
    (k) => `${k}: expected ${JSON.stringify(expect[k])}, got ${JSON.stringify(got[k])}`,
  );
  const have = new Map(got.ranked.map((r) => [r.route, r]));
  for (const row of expect.ranked) {
    const other = have.get(row.route);
    for (const key of ["score", "relevance"]) {
      if (!other || !close(row[key], other[key])) lines.push(`ranked[${row.route}].${key}: expected ${row[key]}, got ${other?.[key]}`);
    }
  }
  if (have.size !== expect.ranked.length) lines.push("ranked: not the same routes");
  return lines;
}

test("the client passes the conformance suite", async () => {
  const files = readdirSync(join(CONFORMANCE, "cases")).filter((f) => f.endsWith(".json")).sort();
  const suites = files.map((f) => JSON.parse(readFileSync(join(CONFORMANCE, "cases", f), "utf8")));
  const packFile = join(mkdtempSync(join(tmpdir(), "routing-conformance-")), "pack.json");
  writeFileSync(packFile, readFileSync(join(CONFORMANCE, suites[0].pack)));
  const server = await startServer(packFile);
  const client = new RouteClient({ baseUrl: server.url, deadlineMs: 30_000 });
  const report = [];
  let count = 0;
  try {
    for (const suite of suites) {
      replaceFile(packFile, readFileSync(join(CONFORMANCE, suite.pack)));
      await waitUntil(async () => (await client.pack()).checksum === suite.checksum, suite.pack);
      for (const c of suite.cases) {
        const decision = await client.route({ message: c.message, incumbent: c.incumbent, exact: true });
        assert.equal(decision.pack.checksum, suite.checksum);
        count += 1;
        for (const line of differences(c.expect, observed(decision))) report.push(`${c.id}: ${line}`);
      }
    }
  } finally {
    await server.stop();
  }
  assert.deepEqual(report, []);
  assert.equal(count, suites.reduce((n, s) => n + s.cases.length, 0));
  assert.ok(count > 100);
});
