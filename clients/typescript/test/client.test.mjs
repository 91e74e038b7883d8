import assert from "node:assert/strict";
import { createServer } from "node:http";
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { RouteClient, RouteError } from "../dist/index.js";
import { CONFORMANCE, freePort, replaceFile, startServer, waitUntil } from "./server.mjs";

const TOKEN = "client-test-token";
const SUPPORT = readFileSync(join(CONFORMANCE, "packs", "support.json"));

/** The global fetch, counting calls: how many tries a call made. */
function countingFetch() {
  const counted = (input, init) => {
    counted.calls += 1;
    return fetch(input, init);
  };
  counted.calls = 0;
  return counted;
}

function withoutTimings(decision) {
  const { elapsed_us, tiers, regex, ...rest } = decision;
  return {
    ...rest,
    tiers: tiers.map(({ elapsed_us: _e, ...t }) => t),
    regex: regex && { budget_us: regex.budget_us, skipped: regex.skipped },
  };
}

describe("against a real routing-core serve", () => {
  let server;
  let client;
  const dir = mkdtempSync(join(tmpdir(), "routing-client-"));
  const packFile = join(dir, "pack.json");

  before(async () => {
    writeFileSync(packFile, SUPPORT);
    server = await startServer(packFile, { token: TOKEN });
    client = new RouteClient({ baseUrl: server.url, token: TOKEN, deadlineMs: 10_000 });
  });
  after(async () => server?.stop());

  test("route() returns the server's decision, typed", async () => {
    const decision = await client.route({ message: "why was I charged twice?", incumbent: "shipping" });
    assert.equal(decision.schema, "route-decision/1");
    assert.equal(decision.route, "billing");
    assert.equal(decision.verdict, "move");
    assert.equal(decision.from_route, "shipping");
    assert.equal(decision.pack.slug, "support");
    assert.deepEqual(decision.tools.bound, ["hydrate_context"]);
    const raw = await fetch(`${server.url}/v1/route`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ message: "why was I charged twice?", incumbent: "shipping" }),
    }).then((r) => r.json());
    assert.deepEqual(withoutTimings(decision), withoutTimings(raw));
  });

  test("explain asks for the evidence terms", async () => {
    const plain = await client.route({ message: "why was I charged twice?" });
    const explained = await client.route({ message: "why was I charged twice?", explain: true });
    assert.deepEqual(plain.evidence.terms, []);
    assert.ok(explained.evidence.terms.length > 0);
  });

  test("routeBatch() decides every turn on one pack", async () => {
    const turns = [{ message: "track my parcel" }, { message: "reset my password", incumbent: "billing" }];
    const answer = await client.routeBatch(turns);
    assert.equal(answer.decisions.length, 2);
    assert.deepEqual(answer.decisions.map((d) => d.route), ["shipping", "account"]);
    assert.equal(answer.pack.checksum, answer.decisions[0].pack.checksum);
  });

  test("top lists only the best routes, in one call and in a batch", async () => {
    const whole = await client.route({ message: "track my parcel", exact: true });
    const short = await client.route({ message: "track my parcel", exact: true, top: 2 });
    assert.ok(whole.ranked.length > 2);
    assert.deepEqual(short.ranked, whole.ranked.slice(0, 2));
    assert.deepEqual(short.exact.ranked, whole.exact.ranked.slice(0, 2));
    assert.equal(short.route, whole.route);
    const batch = await client.routeBatch([{ message: "track my parcel" }], { top: 1 });
    assert.deepEqual(batch.decisions[0].ranked, whole.ranked.slice(0, 1));
    await assert.rejects(client.route({ message: "track my parcel", top: 0 }), (error) => {
      assert.equal(error.status, 422);
      assert.deepEqual(error.problems.map((p) => p.path), ["top"]);
      return true;
    });
  });

  test("pack() tells the pack in service", async () => {
    const pack = await client.pack();
    assert.equal(pack.slug, "support");
    assert.equal(pack.version, 7);
    assert.match(pack.checksum, /^sha256:[0-9a-f]{64}$/);
    assert.equal(pack.source, `file:${packFile}`);
    assert.ok(pack.routes.includes("legal"));
    assert.equal(pack.verified_by, null); // the server was given no key
  });

  test("a refusal is a RouteError with the server's code and problems, never retried", async () => {
    const counting = countingFetch();
    const picky = new RouteClient({ baseUrl: server.url, token: TOKEN, fetch: counting, retries: 3 });
    await assert.rejects(picky.route({ message: "hi", incumbent: "nowhere" }), (error) => {
      assert.ok(error instanceof RouteError);
      assert.equal(error.status, 422);
      assert.equal(error.code, "unknown_incumbent");
      assert.deepEqual(error.problems, [{ path: "incumbent", reason: "'nowhere' is not a route of this pack" }]);
      return true;
    });
    assert.equal(counting.calls, 1);
    await assert.rejects(picky.route({ message: 42 }), { status: 422, code: "invalid_request" });
  });

  test("a wrong token is a 401", async () => {
    const stranger = new RouteClient({ baseUrl: server.url, token: "wrong" });
    await assert.rejects(stranger.route({ message: "hi" }), { status: 401, code: "unauthorized" });
    const anonymous = new RouteClient({ baseUrl: server.url });
    await assert.rejects(anonymous.pack(), { status: 401, code: "unauthorized" });
  });
});

describe("retries with a deadline", () => {
  test("no server: tries again, then gives up as unavailable", async () => {
    const port = await freePort();
    const counting = countingFetch();
    const client = new RouteClient({ baseUrl: `http://127.0.0.1:${port}`, fetch: counting, retries: 3, backoffMs: 10, deadlineMs: 5000 });
    await assert.rejects(client.route({ message: "hi" }), { status: 0, code: "unavailable" });
    assert.equal(counting.calls, 4);
  });

  test("a server that is not ready yet (503): tried again until it is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "routing-client-"));
    const packFile = join(dir, "pack.json");
    writeFileSync(packFile, "{ not yet");
    const server = await startServer(packFile, { ready: false });
    try {
      const counting = countingFetch();
      const client = new RouteClient({ baseUrl: server.url, fetch: counting, retries: 2, backoffMs: 10 });
      await assert.rejects(client.route({ message: "hi" }), { status: 503, code: "not_ready" });
      assert.equal(counting.calls, 3);
      // Ready while the client keeps trying: the call succeeds within its deadline.
      const patient = new RouteClient({ baseUrl: server.url, retries: 1000, backoffMs: 20, deadlineMs: 60_000 });
      const pending = patient.route({ message: "track my parcel" });
      replaceFile(packFile, SUPPORT);
      assert.equal((await pending).route, "shipping");
    } finally {
      await server.stop();
    }
  });

  test("a server that never answers: the deadline ends the call", async () => {
    const silent = createServer(() => {}); // accepts, never answers
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    try {
      const client = new RouteClient({ baseUrl: `http://127.0.0.1:${silent.address().port}`, deadlineMs: 300 });
      await assert.rejects(client.route({ message: "hi" }), { status: 0, code: "deadline_exceeded" });
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  test("the caller's signal cancels the call", async () => {
    const silent = createServer(() => {});
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    try {
      const client = new RouteClient({ baseUrl: `http://127.0.0.1:${silent.address().port}`, deadlineMs: 30_000 });
      const controller = new AbortController();
      const pending = client.route({ message: "hi" }, { signal: controller.signal });
      controller.abort();
      await assert.rejects(pending, { name: "AbortError" });
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
