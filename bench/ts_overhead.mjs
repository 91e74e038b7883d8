// The TypeScript client's cost over raw fetch: N sequential route() calls against N raw fetch
// POSTs to the same server, alternating rounds so that both see the same machine.
// Usage: node bench/ts_overhead.mjs http://127.0.0.1:PORT [N]
import { RouteClient } from "../clients/typescript/dist/index.js";

const [url, n = "3000"] = process.argv.slice(2);
const N = Number(n);
const client = new RouteClient({ baseUrl: url, deadlineMs: 30_000 });
const messages = ["what is my balance", "book a flight to paris", "play some jazz", "translate hello into french"];

async function viaClient(count) {
  for (let i = 0; i < count; i++) await client.route({ message: messages[i % messages.length] });
}

async function viaFetch(count) {
  for (let i = 0; i < count; i++) {
    const answer = await fetch(`${url}/v1/route`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ message: messages[i % messages.length] }),
    });
    if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
    JSON.parse(await answer.text());
  }
}

async function timed(fn, count) {
  const started = process.hrtime.bigint();
  await fn(count);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

await viaFetch(200);
await viaClient(200);
// Many short alternating rounds, and the median of their ratios: on a shared machine a burst of
// someone else's work lands in one round, not on one side of the comparison.
const rounds = 20;
const per = Math.max(1, Math.floor(N / rounds));
const ratios = [];
let client_ms = 0;
let fetch_ms = 0;
for (let r = 0; r < rounds; r++) {
  const f = await timed(viaFetch, per);
  const c = await timed(viaClient, per);
  fetch_ms += f;
  client_ms += c;
  ratios.push(c / f);
}
ratios.sort((a, b) => a - b);
const median = (ratios[rounds / 2 - 1] + ratios[rounds / 2]) / 2;
const calls = per * rounds;
console.log(
  `${calls} sequential calls: raw fetch ${((fetch_ms * 1000) / calls).toFixed(0)} µs/call, ` +
    `client ${((client_ms * 1000) / calls).toFixed(0)} µs/call: overhead ${((median - 1) * 100).toFixed(1)}% ` +
    `(median of ${rounds} alternating rounds; ${((client_ms / fetch_ms - 1) * 100).toFixed(1)}% in total)`,
);
