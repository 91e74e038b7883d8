"""`routing-core`: validate, route, build, eval, lint, import and schema from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from routing_core.build import build_pack_file
from routing_core.cases import load_cases
from routing_core.codec import dump_pack, load_pack
from routing_core.decision import Decision
from routing_core.errors import PackError
from routing_core.evaluate import EvalReport, Progress, evaluate
from routing_core.policy import Policy
from routing_core.replay_cli import add_replay_command
from routing_core.router import Router
from routing_core.schema import decision_schema, pack_schema

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2
BAR_WIDTH = 24


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `routing-core` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except PackError as exc:
        for line in exc.lines():
            print(line, file=sys.stderr)
        return EXIT_INVALID
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="routing-core", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    validate = commands.add_parser("validate", help="check a pack; one 'path: reason' per problem")
    validate.add_argument("pack")
    validate.set_defaults(handler=_validate)

    route = commands.add_parser("route", help="route one message and show the decision")
    route.add_argument("pack")
    route.add_argument("message")
    route.add_argument("--incumbent", help="the route the conversation is in")
    route.add_argument("--json", action="store_true", help="print decision.to_event() as JSON")
    route.set_defaults(handler=_route)

    build = commands.add_parser("build", help="make a pack from [{name, examples, description?}]")
    build.add_argument("routes")
    build.add_argument("--slug", default="built")
    build.add_argument("--name")
    build.add_argument("-o", "--output", help="write here instead of stdout")
    build.add_argument(
        "--out-of-scope",
        metavar="CASES",
        help="JSONL cases: those with expected null are learned as out-of-scope examples",
    )
    build.set_defaults(handler=_build)

    ev = commands.add_parser("eval", help="measure a pack on JSONL cases")
    ev.add_argument("pack")
    ev.add_argument("cases")
    ev.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ev.add_argument("--floor", type=float, help="override the policy floor")
    ev.add_argument("--margin", type=float, help="override the near-tie margin")
    ev.add_argument(
        "--fail-under",
        type=_percent,
        metavar="PERCENT",
        help="exit 1 when fewer than PERCENT of the cases pass (a CI gate: 100 for every case)",
    )
    ev.set_defaults(handler=_eval)

    lint = commands.add_parser("lint", help="find routes that fight each other; exit 1 on errors")
    lint.add_argument("pack")
    lint.add_argument(
        "--messages",
        metavar="FILE",
        help="recent user messages, one a line: routes with no examples in a language many of "
        "them use are reported (needs the languages extra)",
    )
    lint.set_defaults(handler=_lint)

    from routing_core.importers.command import add_import_command

    add_import_command(commands)

    _add_signing_commands(commands)

    schema = commands.add_parser("schema", help="print the JSON Schema of the pack format")
    schema.add_argument(
        "--decision",
        action="store_true",
        help="the decision event's instead (docs/event-schema.md)",
    )
    schema.set_defaults(
        handler=lambda args: _print_json(decision_schema() if args.decision else pack_schema())
    )

    add_replay_command(commands)

    from routing_core.server.command import add_serve_command

    add_serve_command(commands)

    from routing_core.conformance.command import add_conformance_command

    add_conformance_command(commands)
    return parser


def _add_signing_commands(commands: Any) -> None:
    verify = commands.add_parser(
        "verify",
        help="check a pack's detached signature (PACK.sig) with public keys; exit 1 if refused",
    )
    verify.add_argument("pack")
    verify.add_argument(
        "--key", action="append", required=True, metavar="PEM", help="a public key (repeatable)"
    )
    verify.add_argument("--signature", metavar="FILE", help="the signature (default: PACK.sig)")
    verify.set_defaults(handler=_verify)

    sign = commands.add_parser("sign", help="write PACK.sig: an Ed25519 signature of PACK's bytes")
    sign.add_argument("pack")
    sign.add_argument("--key", required=True, metavar="PEM", help="the private key's file")
    sign.add_argument("-o", "--output", help="the signature file (default: PACK.sig)")
    sign.set_defaults(handler=_sign)


def _verify(args: argparse.Namespace) -> int:
    from routing_core.signing import PublicKeys, SignatureError, verify_pack_file

    keys = PublicKeys.from_files(args.key)
    try:
        body, key_id = verify_pack_file(args.pack, keys, args.signature)
    except SignatureError as exc:
        print(f"refused: {exc.reason}", file=sys.stderr)
        return EXIT_FAILED
    pack = load_pack(body)
    print(f"ok: {pack.profile.slug} v{pack.version} signed by key {key_id}")
    return EXIT_OK


def _sign(args: argparse.Namespace) -> int:
    from pathlib import Path

    from routing_core.signing import load_private_key, sign_pack, signature_path

    body = Path(args.pack).read_bytes()
    load_pack(body)  # sign only what a runtime would load
    signature = sign_pack(body, load_private_key(Path(args.key).read_bytes()))
    out = Path(args.output) if args.output else signature_path(args.pack)
    out.write_text(signature.to_text() + "\n", encoding="ascii")
    print(f"signed by key {signature.key_id}: {out}")
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    ignored: list[str] = []
    pack = load_pack(args.pack, ignored=ignored)
    for path in ignored:
        print(f"{path}: ignored, a field of a newer format minor", file=sys.stderr)
    print(
        f"ok: {pack.profile.slug} v{pack.version} — {len(pack.routes)} routes, "
        f"{len(pack.rules)} rules, {len(pack.tools)} tools, {pack.checksum[:19]}…"
    )
    return EXIT_OK


def _route(args: argparse.Namespace) -> int:
    decision = Router(load_pack(args.pack)).route(args.message, args.incumbent)
    if args.json:
        return _print_json(decision.to_event())
    print(render_decision(decision))
    return EXIT_OK


def _build(args: argparse.Namespace) -> int:
    out_of_scope = None
    if args.out_of_scope:
        out_of_scope = [c.text for c in load_cases(args.out_of_scope) if c.expected is None]
    with _ProgressBar(BUILD_STEPS, "learning the routes") as bar:
        learned = None if bar is None else (lambda f: bar(round(f * BUILD_STEPS), BUILD_STEPS))
        pack = build_pack_file(
            args.routes,
            slug=args.slug,
            name=args.name,
            out_of_scope=out_of_scope,
            progress=learned,
        )
    text = dump_pack(pack, indent=1)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        print(text)
    return EXIT_OK


def _eval(args: argparse.Namespace) -> int:
    """The report; exit 1 under `--fail-under`. A file of no cases is an error, not a pass: a
    CI job pointed at the wrong or an empty file must not go green having checked nothing."""
    router = Router(load_pack(args.pack))
    cases = load_cases(args.cases)
    if not cases:
        raise ValueError(f"{args.cases}: no cases (one JSON object a line)")
    overrides = {
        k: v for k, v in (("floor", args.floor), ("near_tie_margin", args.margin)) if v is not None
    }
    policy: Policy | None = router.policy_with(**overrides) if overrides else None
    with _ProgressBar(len(cases)) as progress:
        report = evaluate(router, cases, policy=policy, progress=progress)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(render_report(report))
    return _gate(sum(r.passed for r in report.results), report.n, args.fail_under)


def _gate(passed: int, total: int, fail_under: float | None) -> int:
    """EXIT_FAILED when fewer than `fail_under` percent of `total` cases passed, compared in
    whole cases (29 of 100 is 29%, which 0.29 × 100 in floating point is not); said on
    stderr, so that `--json` output stays one object."""
    if fail_under is None or passed * 100 >= fail_under * total:
        return EXIT_OK
    print(
        f"failed: {passed} of {total} cases pass ({100 * passed / total:.2f}%),"
        f" under --fail-under {fail_under:g}%",
        file=sys.stderr,
    )
    return EXIT_FAILED


def _percent(text: str) -> float:
    """A percentage from 0 to 100, for argparse."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 100")
    return value


def _lint(args: argparse.Namespace) -> int:
    from routing_core.lint import lint_pack

    traffic = _message_languages(args.messages) if args.messages else None
    findings = lint_pack(load_pack(args.pack), traffic_languages=traffic)
    for f in findings:
        print(f"{f.severity:<7} {f.path}: {f.message}")
    errors = sum(f.severity == "error" for f in findings)
    print(f"{len(findings)} finding(s), {errors} error(s)")
    return EXIT_FAILED if errors else EXIT_OK


def _message_languages(path: str) -> dict[str, int]:
    """How many of the file's lines (one message each) are in each language.

    Raises:
        ValueError: the `languages` extra is not installed (said as a usage error).
    """
    from collections import Counter

    from routing_core import languages

    if not languages.available():
        raise ValueError(
            "--messages needs the languages extra: pip install 'routing-core[languages]'"
        )
    with open(path, encoding="utf-8") as lines:
        found = Counter(languages.detect(line) for line in lines if line.strip())
    return {code: n for code, n in found.items() if code}


# A build's progress bar counts thousandths of the learning.
BUILD_STEPS = 1000


class _ProgressBar:
    """A rich progress bar on a terminal; silent when stderr is not one (CI, pipes)."""

    def __init__(self, total: int, label: str = "routing cases") -> None:
        self._total = total
        self._label = label
        self._bar: Any = None

    def __enter__(self) -> Progress | None:
        if not sys.stderr.isatty() or self._total < 200:
            return None
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(transient=True)
        self._bar.start()
        task = self._bar.add_task(self._label, total=self._total)
        return lambda done, _total: self._bar.update(task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def render_decision(decision: Decision, top: int = 5) -> str:
    """The decision as a few readable lines: verdict, top scores as bars, triage, tools."""
    lines = [_headline(decision)]
    if decision.evidence and decision.evidence.reason:
        lines.append(f"  why:      {decision.evidence.reason}")
    if decision.evidence and decision.evidence.text:
        lines.append(
            f"  evidence: {decision.evidence.text!r} (keyword {decision.evidence.keyword!r})"
        )
    if decision.evidence and decision.evidence.terms:
        words = [t for t in decision.evidence.terms if t.kind == "word"]
        if words:
            lines.append("  terms:    " + ", ".join(f"{t.term} {t.weight:.2f}" for t in words))
        for example in decision.evidence.terms:
            if example.kind == "example":
                lines.append(
                    f"  close in meaning to the example “{example.term}” {example.weight:.2f}"
                )
    lines.append("  scores:")
    for ranked in decision.ranked[:top]:
        bar = "█" * round(ranked.relevance * BAR_WIDTH)
        lines.append(
            f"    {ranked.route:<24} {ranked.score:6.3f} {bar:<{BAR_WIDTH}} {ranked.relevance:6.1%}"
        )
    if decision.triage:
        t = decision.triage
        lines.append(f"  triage:   {t.label} ({t.confidence:.2f}) — {t.reasoning}")
    tools = decision.tools
    lines.append(f"  tools:    kept {', '.join(tools.kept) or '-'}")
    if tools.dropped:
        lines.append(
            f"            dropped {', '.join(tools.dropped)} (~{tools.tokens_saved} tokens saved)"
        )
    if decision.scorer.error:
        lines.append(f"  scorer error: {decision.scorer.error}")
    return "\n".join(lines)


def _headline(decision: Decision) -> str:
    where = decision.route or (
        "menu: " + ", ".join(decision.offered) if decision.offered else "none"
    )
    action = decision.action
    act = ""
    if action and action.kind == "delegate":
        act = f" → delegate to {action.agent}"
    elif action and action.kind == "stuck":
        act = f" → stuck: {action.message}"
    gap = f", gap {decision.runner_up.gap:.2f}" if decision.runner_up else ""
    return f"{decision.verdict} {where} (by {decision.by}{gap}){act}"


def render_report(report: EvalReport, worst: int = 10) -> str:
    """Evaluation figures as a short text report."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2%}"

    lines = [
        f"cases               {report.n}",
        f"pass rate           {pct(report.pass_rate)}",
        f"top-1 accuracy      {pct(report.top1_accuracy)}",
        f"in-scope accuracy   {pct(report.in_scope_accuracy)}",
        f"out-of-scope recall {pct(report.oos_recall)}",
        f"oos precision       {pct(report.oos_precision)}",
        f"menu rate           {pct(report.menu_rate)}",
        *_threshold_lines(report),
        f"latency p50 / p99   {report.latency_us['p50']:.0f} / {report.latency_us['p99']:.0f} µs"
        f" (first case apart: {report.latency_us['first']:.0f} µs)",
        *_tier_lines(report),
        *_conversation_lines(report),
        "worst routes (F1):",
    ]
    ordered = sorted(report.per_route.items(), key=lambda kv: kv[1].f1)[:worst]
    lines += [
        f"  {name:<28} P {s.precision:.2f}  R {s.recall:.2f}  F1 {s.f1:.2f}  n={s.support}"
        for name, s in ordered
    ]
    lines.append("worst confusions (expected → predicted):")
    lines += [f"  {e} → {p}: {c}" for e, p, c in report.confusions[:worst]]
    return "\n".join(lines)


def _threshold_lines(report: EvalReport) -> list[str]:
    """The floor and margin the cases were judged with, and where the floor came from."""
    if report.near_tie_margin is None:
        return []
    floor = "none" if report.floor is None else f"{report.floor:.2f}"
    return [
        f"floor               {floor} ({report.floor_source})",
        f"near-tie margin     {report.near_tie_margin:.2f}",
    ]


def _conversation_lines(report: EvalReport, shown: int = 5) -> list[str]:
    """Turn, stay and move accuracy when the cases hold conversations, and the first wrong
    turns with the turns before them."""
    talk = report.conversations
    if talk is None:
        return []

    def pct(value: float | None, n: int | None = None) -> str:
        figure = "n/a" if value is None else f"{value:.2%}"
        return figure if n is None else f"{figure} ({n} turns)"

    lines = [
        f"conversations       {talk.conversations} ({talk.turns} turns)",
        f"turn accuracy       {pct(talk.turn_accuracy)}",
        f"first-turn accuracy {pct(talk.first_accuracy)}",
        f"stay accuracy       {pct(talk.stay_accuracy, talk.stay_turns)}",
        f"move accuracy       {pct(talk.move_accuracy, talk.move_turns)}",
    ]
    if talk.wrong:
        lines.append(f"wrong turns ({len(talk.wrong)}; the first {min(shown, len(talk.wrong))}):")
    for wrong in talk.wrong[:shown]:
        should = {"first": "opening", "stay": "should stay", "move": "should move"}[wrong.kind]
        lines.append(f"  {wrong.conversation}, turn {wrong.position} ({should}):")
        for i in wrong.around:
            r = report.results[i]
            mark = "→" if i == wrong.index else " "
            lines.append(
                f"   {mark} {r.case.text[:60]!r}: expected {r.expected_label}, got {r.predicted}"
            )
    return lines


def _tier_lines(report: EvalReport) -> list[str]:
    """Who decided, and each scoring tier's latency and tokens (only when there is a choice)."""
    if len(report.tiers) < 2 and not any(t.usage.total_tokens for t in report.tiers.values()):
        return []
    lines = ["decided by:         " + ", ".join(f"{k} {v}" for k, v in report.decided_by.items())]
    for name, t in report.tiers.items():
        lines.append(
            f"  tier {name:<13} ran {t.ran}, decided {t.decided}, p50 / p99 "
            f"{t.latency_us['p50']:.0f} / {t.latency_us['p99']:.0f} µs, "
            f"{t.usage.total_tokens} tokens" + (f", {t.errors} errors" if t.errors else "")
        )
    return lines


def _print_json(value: Any, stream: TextIO | None = None) -> int:
    print(json.dumps(value, ensure_ascii=False, indent=1), file=stream or sys.stdout)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
