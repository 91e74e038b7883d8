/**
 * A client for `routing-core serve` (docs/server.md): route each user turn before the
 * agent's model runs. ESM, typed, and nothing but the platform's `fetch`.
 */

import type {
  BatchAnswer,
  Decision,
  ErrorBody,
  ErrorProblem,
  PackInfo,
  RouteRequest,
  Turn,
} from "./types.js";

export type * from "./types.js";
export { bucket, Canary, onCandidate } from "./canary.js";
export type { Side } from "./canary.js";

export interface ClientOptions {
  /** e.g. `http://127.0.0.1:8080` */
  baseUrl: string;
  /** A caller token the server accepts (`ROUTING_CORE_SERVE_TOKENS`). */
  token?: string;
  /** The whole call, retries included, gives up after this many milliseconds (default 2000). */
  deadlineMs?: number;
  /** Tries after the first, while the deadline allows (default 2). */
  retries?: number;
  /** The first wait between tries, doubled each time, with jitter (default 50 ms). */
  backoffMs?: number;
  /** Another `fetch` (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** This call's deadline instead of the client's. */
  deadlineMs?: number;
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
}

/** An answer the server refused (a 4xx), or a call that could not get an answer in time. */
export class RouteError extends Error {
  /** The HTTP status; 0 when no answer came (network failure, deadline). */
  readonly status: number;
  /** The server's error code (`unknown_incumbent`, …), `unavailable` or `deadline_exceeded`. */
  readonly code: string;
  readonly problems: ErrorProblem[];

  constructor(status: number, code: string, message: string, problems: ErrorProblem[] = []) {
    super(message);
    this.name = "RouteError";
    this.status = status;
    this.code = code;
    this.problems = problems;
  }
}

// Worth another try: no answer, or an answer that says "later" (not ready, overloaded).
const RETRIED = new Set([429, 502, 503, 504]);

export class RouteClient {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #deadlineMs: number;
  readonly #retries: number;
  readonly #backoffMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#deadlineMs = options.deadlineMs ?? 2000;
    this.#retries = options.retries ?? 2;
    this.#backoffMs = options.backoffMs ?? 50;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Route one turn. */
  route(request: RouteRequest, options: CallOptions = {}): Promise<Decision> {
    return this.#call<Decision>("POST", "/v1/route", request, options);
  }

  /** Route many turns in one call, all on the same pack. */
  routeBatch(
    turns: Turn[],
    options: CallOptions & { explain?: boolean; exact?: boolean; top?: number } = {},
  ): Promise<BatchAnswer> {
    const body = {
      turns,
      explain: options.explain ?? false,
      exact: options.exact ?? false,
      ...(options.top === undefined ? {} : { top: options.top }),
    };
    return this.#call<BatchAnswer>("POST", "/v1/route/batch", body, options);
  }

  /** The pack in service: slug, version, revision, checksum, when and where it was loaded. */
  pack(options: CallOptions = {}): Promise<PackInfo> {
    return this.#call<PackInfo>("GET", "/v1/pack", undefined, options);
  }

  async #call<T>(method: string, path: string, body: unknown, options: CallOptions): Promise<T> {
    const deadline = Date.now() + (options.deadlineMs ?? this.#deadlineMs);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let last: RouteError = new RouteError(0, "deadline_exceeded", "no time left to call");
    for (let attempt = 0; attempt <= this.#retries; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      try {
        return await this.#once<T>(method, path, payload, remaining, options.signal);
      } catch (error) {
        if (!(error instanceof RouteError) || !isRetried(error)) throw error;
        last = error;
      }
      if (options.signal?.aborted) break;
      const wait = this.#backoffMs * 2 ** attempt * (0.5 + Math.random() / 2);
      if (Date.now() + wait >= deadline) break;
      await sleep(wait);
    }
    throw last;
  }

  async #once<T>(
    method: string,
    path: string,
    payload: string | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (payload !== undefined) headers["content-type"] = "application/json";
    if (this.#token) headers["authorization"] = `Bearer ${this.#token}`;
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
    const init: RequestInit = {
      method,
      headers,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    };
    if (payload !== undefined) init.body = payload;
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(this.baseUrl + path, init);
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw error;
      const timedOut = timeout.aborted;
      throw new RouteError(
        0,
        timedOut ? "deadline_exceeded" : "unavailable",
        timedOut ? `no answer from ${this.baseUrl} in time` : `cannot reach ${this.baseUrl}: ${describe(error)}`,
      );
    }
    if (response.ok) return JSON.parse(text) as T;
    throw errorOf(response.status, text);
  }
}

function isRetried(error: RouteError): boolean {
  return error.code === "unavailable" || RETRIED.has(error.status);
}

function errorOf(status: number, text: string): RouteError {
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>;
    if (body.error) {
      return new RouteError(status, body.error.code, body.error.message, body.error.problems);
    }
  } catch {
    // not the server's error shape: a proxy's page, say
  }
  return new RouteError(status, `http_${status}`, `HTTP ${status}: ${text.slice(0, 200)}`);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
