// A real `routing-core serve` on loopback for the client's tests (the same command operators
// run). PYTHON names the interpreter that has routing_core[server] (default: the repo's .venv).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { existsSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const CONFORMANCE = join(ROOT, "conformance");
const PYTHON = process.env.PYTHON ?? join(ROOT, ".venv", "bin", "python");

export async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

export async function waitUntil(predicate, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await predicate()) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Start the server on `packFile`; resolves once it listens (and, if `ready`, has a pack). */
export async function startServer(packFile, { token, ready = true } = {}) {
  if (!existsSync(PYTHON)) throw new Error(`no Python at ${PYTHON}: set PYTHON or run make .venv/.installed`);
  const port = await freePort();
  const env = { ...process.env };
  delete env.PROMETHEUS_MULTIPROC_DIR;
  if (token) env.ROUTING_CORE_SERVE_TOKENS = token;
  const args = ["-m", "routing_core.cli", "serve", "--pack", packFile, "--port", String(port), "--watch-interval", "0.1", "--log-level", "warning"];
  const child = spawn(PYTHON, args, { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  await waitUntil(async () => {
    if (exited) throw new Error("the server exited");
    return (await fetch(`${url}/healthz`)).ok;
  }, "the server to listen");
  if (exited) throw new Error("the server exited at start");
  if (ready) await waitUntil(async () => (await fetch(`${url}/readyz`)).ok, "a pack in service");
  return {
    url,
    async stop() {
      if (exited) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/** Write as operators should: a complete file renamed over the pack. */
export function replaceFile(path, data) {
  writeFileSync(`${path}.tmp`, data);
  renameSync(`${path}.tmp`, path);
}
