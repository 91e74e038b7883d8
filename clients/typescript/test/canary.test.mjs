// Canary buckets (docs/pack-format.md, Conversation buckets): the client hashes every id of
// conformance/buckets.json into the bucket the Python library gave it, and a conversation stays
// on its side whatever happens to the share.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { bucket, Canary, onCandidate } from "../dist/index.js";
import { CONFORMANCE } from "./server.mjs";

const SUITE = JSON.parse(readFileSync(join(CONFORMANCE, "buckets.json"), "utf8"));
const IDS = Array.from({ length: 1000 }, (_, i) => `conversation-${i}`);

test("every id of the suite falls in the library's bucket", async () => {
  assert.equal(SUITE.suite, "route-buckets/1");
  const wrong = [];
  for (const { conversation, bucket: expected } of SUITE.cases) {
    const got = await bucket(conversation);
    if (got !== expected) wrong.push(`${JSON.stringify(conversation).slice(0, 40)}: ${expected} != ${got}`);
  }
  assert.deepEqual(wrong, []);
  assert.ok(SUITE.cases.length > 300);
});

test("a 30% canary takes about 30% of 1,000 conversations", async () => {
  const canary = new Canary("live-pack", "candidate-pack", 30);
  let candidate = 0;
  for (const id of IDS) {
    const { side, target } = await canary.pick(id);
    assert.equal(target, side === "candidate" ? "candidate-pack" : "live-pack");
    assert.equal(side === "candidate", await onCandidate(id, 30));
    if (side === "candidate") candidate += 1;
  }
  assert.ok(candidate >= 260 && candidate <= 340, `${candidate} on the candidate`);
});

test("a conversation never switches side when the share changes", async () => {
  const canary = new Canary("live", "candidate", 30);
  const first = await Promise.all(IDS.map((id) => canary.side(id)));
  for (const share of [60, 10, 100, 0]) {
    canary.setCandidate("candidate", share);
    assert.deepEqual(await Promise.all(IDS.map((id) => canary.side(id))), first);
  }
  canary.setCandidate(null, 0);
  assert.equal(await canary.side(IDS[0]), "live");
  assert.equal(await canary.side(undefined), "live");
  assert.throws(() => canary.setCandidate("candidate", 101), RangeError);
});
