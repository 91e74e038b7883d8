/**
 * Canary buckets (docs/pack-format.md, Conversation buckets): a candidate serves a share of
 * conversations, chosen by a hash every runtime computes alike, and a conversation stays on the
 * side its first turn was given. The hash is Web Crypto's SHA-256 (`crypto.subtle`: Node ≥ 20,
 * Deno, Bun, browsers); conformance/buckets.json pins it to the Python library's.
 */

export type Side = "live" | "candidate";

/**
 * The conversation's bucket, 0 … 99: SHA-256 of its UTF-8 bytes, the first 8 bytes read as a
 * big-endian unsigned integer, mod 10,000, divided by 100 (rounded down). `TextEncoder` writes an
 * unpaired surrogate as U+FFFD, as the specification says.
 */
export async function bucket(conversation: string): Promise<number> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) throw new Error("bucket() needs Web Crypto (crypto.subtle)");
  const digest = await subtle.digest("SHA-256", new TextEncoder().encode(conversation));
  const n = new DataView(digest).getBigUint64(0, false);
  return Number((n % 10_000n) / 100n);
}

/** Whether a new conversation goes to the candidate at `share` percent (0 … 100). */
export async function onCandidate(conversation: string, share: number): Promise<boolean> {
  return (await bucket(conversation)) < share;
}

/**
 * Picks, per conversation, between a live target and a candidate (two `RouteClient`s, two
 * packs, anything), and keeps each conversation where its first turn went: a new share applies
 * to new conversations only; withdrawing the candidate sends everyone back to live.
 */
export class Canary<T> {
  readonly live: T;
  #candidate: T | null = null;
  #share = 0;
  readonly #sides = new Map<string, Side>();
  readonly #remember: number;

  constructor(live: T, candidate: T | null = null, share = 0, remember = 100_000) {
    this.live = live;
    this.#remember = remember;
    this.setCandidate(candidate, share);
  }

  get share(): number {
    return this.#share;
  }

  /** Change the rollout; `share` is a whole percentage, 0 … 100. */
  setCandidate(candidate: T | null, share: number): void {
    if (!Number.isInteger(share) || share < 0 || share > 100) {
      throw new RangeError("a canary share is a whole percentage, 0 to 100");
    }
    if (candidate === null) this.#sides.clear();
    this.#candidate = candidate;
    this.#share = share;
  }

  /** The side of this conversation (no conversation id: live), placed on its first turn. */
  async side(conversation?: string): Promise<Side> {
    if (conversation === undefined || this.#candidate === null) return "live";
    let side = this.#sides.get(conversation);
    if (side === undefined) {
      const share = this.#share;
      side = (await onCandidate(conversation, share)) ? "candidate" : "live";
      side = this.#sides.get(conversation) ?? side; // a concurrent first turn placed it already
      this.#sides.set(conversation, side);
      if (this.#sides.size > this.#remember) {
        this.#sides.delete(this.#sides.keys().next().value as string);
      }
    } else {
      this.#sides.delete(conversation); // most recently used last
      this.#sides.set(conversation, side);
    }
    return side;
  }

  /** The target for this conversation's turn, with its side. */
  async pick(conversation?: string): Promise<{ side: Side; target: T }> {
    const side = await this.side(conversation);
    const candidate = this.#candidate;
    if (side === "candidate" && candidate !== null) return { side, target: candidate };
    return { side: "live", target: this.live };
  }
}
