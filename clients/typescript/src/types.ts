/**
 * The decision a route server answers: `Decision.to_event()` of routing_core
 * (docs/event-schema.md) plus the pack's revision and each route's unrounded numbers
 * (docs/server.md).
 */

/** A number the event writes as text when it is not finite. */
export type EventNumber = number | "nan" | "inf" | "-inf";

export type Verdict = "move" | "stay" | "menu" | "unmatched";
export type DecidedBy = "rule" | "scorer" | "continuity" | "menu" | "decider" | "default" | "none";

/** A pack, with the server's revision. On a decision, the pack that decided it (during a
 * rollout, the candidate's for the conversations it serves); on a batch, the live pack. */
export interface PackIdentity {
  slug: string;
  version: number;
  checksum: string;
  /** Packs this server process has put in service (1 for the first). */
  revision: number;
}

export interface Ranked {
  route: string;
  score: EventNumber;
  /** Softmax share: the relevances of a turn sum to 1. */
  relevance: EventNumber;
}

export interface EvidenceTerm {
  term: string;
  weight: EventNumber;
  kind: "word" | "example" | string;
}

export interface Evidence {
  source: "rule" | "scorer" | "conversation";
  route: string;
  rule: number | null;
  match: "keywords" | "regex" | "all" | null;
  text: string | null;
  keyword: string | null;
  span: [number, number] | null;
  /** Empty unless the request asked to `explain`. */
  terms: EvidenceTerm[];
  /** Why a turn stayed with or left the conversation's route, in plain words (names routes,
   * never quotes the message); null otherwise. */
  reason: string | null;
}

export interface RouteAction {
  kind: "answer" | "delegate" | "stuck";
  agent: string | null;
  message: string | null;
}

export interface Triage {
  label: "action" | "knowledge" | "ambiguous";
  confidence: number;
  matched_tools: string[];
  reasoning: string;
  action_score: number;
  knowledge_score: number;
  signals: string[];
}

export interface Tools {
  mode: "off" | "shadow" | "enforce";
  /** The tools to bind this turn. */
  bound: string[];
  kept: string[];
  dropped: string[];
  tokens_saved: number;
}

export interface Usage {
  input: number;
  output: number;
  cached: number;
  total: number;
}

export interface TierRecord {
  name: string;
  decided: boolean;
  verdict: Verdict | null;
  elapsed_us: number;
  usage: Usage;
  error: string | null;
  note: string | null;
}

export interface Decision {
  schema: "route-decision/1";
  pack: PackIdentity;
  /** Where the turn goes; null while a menu is outstanding or when nothing matched. */
  route: string | null;
  by: DecidedBy;
  verdict: Verdict;
  from_route: string | null;
  dropped_incumbent: string | null;
  /** The menu to offer the user (or the model) when the turn is a near-tie. */
  offered: string[];
  stay_offered: boolean;
  decisive: boolean;
  /** Every route, best first, rounded to 3 decimals (the `top` best when the request said). */
  ranked: Ranked[];
  runner_up: { route: string; gap: EventNumber } | null;
  evidence: Evidence | null;
  action: RouteAction | null;
  triage: Triage | null;
  tools: Tools;
  usage: Usage;
  policy: {
    near_tie_margin: EventNumber;
    menu_size: number;
    floor: EventNumber | null;
    strictness: "assist" | "guard" | "rails";
    effective_floor: EventNumber | null;
  };
  scorer: { name: string; categorical: boolean; floor: EventNumber | null; error: string | null };
  tiers: TierRecord[];
  regex: { spent_us: number; budget_us: number; skipped: string[] } | null;
  elapsed_us: number;
  /** Each route's score and relevance, unrounded: only when the request asked for `exact`. */
  exact?: { ranked: Ranked[] };
}

export interface Turn {
  message: string;
  /** The route the conversation is in (must be a route of the pack). */
  incumbent?: string | null;
  /** Groups the turns of one conversation in the studio's traffic review. */
  conversation?: string | null;
  turn?: number | null;
}

export interface RouteRequest extends Turn {
  /** Compute the evidence terms (they cost time; empty otherwise). */
  explain?: boolean;
  /** Add `exact.ranked`, every route's unrounded score and relevance. */
  exact?: boolean;
  /** List only this many of the best routes in `ranked` (and `exact.ranked`), 1 to 2000;
   * every route when absent. The rest of the decision is the same. */
  top?: number;
}

export interface BatchAnswer {
  pack: PackIdentity;
  decisions: Decision[];
}

export interface PackInfo {
  loaded: boolean;
  slug: string;
  name: string;
  version: number;
  revision: number;
  checksum: string;
  loaded_at: string;
  source: string;
  routes: string[];
  /** The key id whose signature was verified on the pack in service; null when not verifying. */
  verified_by: string | null;
  last_error: string | null;
}

export interface ErrorProblem {
  path: string;
  reason: string;
}

/** The one shape of every error answer. */
export interface ErrorBody {
  error: { status: number; code: string; message: string; problems: ErrorProblem[] };
}
