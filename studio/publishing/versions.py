"""Publishing: immutable versions, and environments that point at them.

A version is the canonical pack JSON (`routing_core.dump_pack`) exactly as agents receive it, with
the profile's test case results at publish time. Versions are never edited or deleted (the model
and database triggers refuse it); environments move between them, and every move is audited.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.http import Http404
from django.utils import timezone

from routing_core import CaseResult, Pack, PackError, Router, dump_pack, evaluate, load_pack
from studio.jobs import (
    PER_MILLE,
    JobFailed,
    Reporter,
    exact_pack,
    model_for,
    scoring,
    start_job,
)
from studio.models import (
    ACTIVE,
    Environment,
    EnvironmentName,
    Profile,
    Publication,
    TestCase,
    Version,
    snapshot,
)
from studio.publishing.diff import PackDiff, diff_packs
from studio.shared.audit import audit
from studio.shared.encodings import store_encodings
from studio.shared.errors import Conflict, Refused
from studio.shared.packs import build_pack_dict, pack_report
from studio.suites import suite_cases

# -- publish ----------------------------------------------------------------------------------------


def publish(
    profile: Profile,
    *,
    user: Any,
    note: str = "",
    environment: str | None = EnvironmentName.STAGING,
    expected_draft_revision: int | None = None,
    trained: Pack | None = None,
) -> Version:
    """Validate the draft, run its test cases and store it as the next immutable version.

    Requests start a publication job instead (`start_publication`): this trains when the
    draft's model is not ready, and routes every test case.

    Args:
        environment: point this environment at the new version too (None: leave them).
        expected_draft_revision: the draft the publisher reviewed; a newer one is a conflict.
        trained: the draft with its model, trained beforehand (outside the profile's lock).

    Raises:
        PackError: the draft is not a valid pack (every problem, routing_core's and the studio's).
        Conflict: the draft changed since `expected_draft_revision`.
    """
    with transaction.atomic():
        locked = Profile.objects.select_for_update().get(pk=profile.pk)
        if expected_draft_revision is not None and locked.draft_revision != expected_draft_revision:
            raise Conflict("the draft changed since you reviewed it — review the new diff")
        report = pack_report(locked)
        if report.problems:
            raise PackError(report.problems)
        number = (locked.versions.aggregate(top=Max("number"))["top"] or 0) + 1
        published_at = timezone.now().replace(microsecond=0)
        draft = load_pack(build_pack_dict(locked))
        pack = versioned(model_for(locked, draft, trained), number, published_at)
        version = Version.objects.create(
            profile=locked,
            number=number,
            pack_json=dump_pack(pack),
            checksum=pack.checksum,
            published_by=user.get_username() if user is not None else "",
            published_at=published_at,
            note=note,
            test_results=run_test_cases(pack, locked),
        )
        store_encodings(version)  # compressed once, here, for every pull to come
        audit(user, locked, "version.publish", version, None, _version_facts(version))
        if environment:
            promote(version, environment, user=user)
    return version


def start_publication(
    profile: Profile,
    *,
    user: Any,
    note: str = "",
    environment: str | None = EnvironmentName.STAGING,
    expected_draft_revision: int | None = None,
) -> Publication:
    """Check the draft at once, then publish it on the queue (training its model if need be).

    Raises:
        PackError: the draft is not a valid pack.
        Conflict: the draft changed since `expected_draft_revision`, or the profile was
            deleted since it was read.
    """
    revision = profile.draft_revision
    if expected_draft_revision is not None and revision != expected_draft_revision:
        raise Conflict("the draft changed since you reviewed it — review the new diff")
    report = pack_report(profile)
    if report.problems:
        # A profile deleted since it was read has no routes left: that is not a draft to fix.
        if not Profile.objects.filter(pk=profile.pk).exists():
            raise Conflict("the profile was deleted meanwhile")
        raise PackError(report.problems)
    publication = Publication.objects.create(
        profile=profile,
        started_by=user if user is not None and user.is_authenticated else None,
        draft_revision=revision,
        expected_draft_revision=revision,
        note=note,
        environment=environment or "",
        total=PER_MILLE,
    )
    return start_job(publication)


def execute_publication(job: Publication, progress: Reporter) -> dict[str, Any]:
    """The publication's work: the model of exactly the reviewed draft, then the version."""
    profile = Profile.objects.get(pk=job.profile_id)
    try:
        trained = exact_pack(profile, progress)
        version = publish(
            profile,
            user=job.started_by,
            note=job.note,
            environment=job.environment or None,
            expected_draft_revision=job.expected_draft_revision,
            trained=trained,
        )
    except PackError as exc:
        raise JobFailed("; ".join(f"{path}: {message}" for path, message in exc.errors)) from exc
    except (Conflict, Refused) as exc:
        raise JobFailed(str(exc)) from exc
    return {"version": version, "done": PER_MILLE}


def versioned(pack: Pack, number: int, created_at: datetime) -> Pack:
    """The same pack stamped with its version number and publication time."""
    document = pack.model_dump(mode="json")
    document.update(version=number, created_at=created_at.isoformat())
    return load_pack(document)


def run_test_cases(pack: Pack, profile: Profile) -> list[dict[str, Any]]:
    """Pass/fail of each of the profile's test cases on the pack, exactly as a suite run judges it.

    The cases come from the suites' builder (run order, conversations, every expectation), so
    the results stored with a version agree with a suite run of the same draft.
    """
    pairs = suite_cases(profile)
    report = evaluate(Router(pack), [case for _, case in pairs])
    return [
        _case_result(row, result) for (row, _), result in zip(pairs, report.results, strict=True)
    ]


def _case_result(case: TestCase, result: CaseResult) -> dict[str, Any]:
    return {
        "message": case.message,
        "incumbent": result.decision.from_route or "",  # a later turn's: the turn before's route
        "expected": result.expected_label,
        "actual": result.predicted,
        "verdict": result.decision.verdict,
        "passed": result.passed,
        "failures": result.failures,
    }


def _version_facts(version: Version) -> dict[str, Any]:
    return {
        "number": version.number,
        "checksum": version.checksum,
        "note": version.note,
        "tests": f"{version.tests_passed}/{len(version.test_results)} passed",
    }


# -- environments -----------------------------------------------------------------------------------


def environments(profile: Profile) -> list[Environment]:
    """Staging and production of a profile (created empty on first use)."""
    for name in EnvironmentName.values:
        Environment.objects.get_or_create(profile=profile, name=name)
    return list(profile.environments.select_related("version").order_by("-name"))


def promote(
    version: Version, environment: str, *, user: Any, expected_revision: int | None = None
) -> Environment:
    """Point an environment at a version; an earlier version than the current one is a rollback.

    Raises:
        Refused: no such environment.
        Conflict: the environment moved since `expected_revision`.
    """
    if environment not in EnvironmentName.values:
        raise Refused([("environment", f"unknown environment '{environment}'")])
    profile = version.profile
    with transaction.atomic():
        env, _ = Environment.objects.get_or_create(profile=profile, name=environment)
        env = (
            Environment.objects.select_for_update(of=("self",))
            .select_related("version")
            .get(pk=env.pk)
        )
        _claim_environment(env, expected_revision)
        before = env.version.number if env.version else None
        env.version, env.updated_by = version, user
        env.save()
        moved = "rollback" if before is not None and version.number < before else "promote"
        audit(
            user,
            profile,
            f"environment.{moved}",
            env,
            {"version": before},
            {"version": version.number},
        )
    return env


def _claim_environment(env: Environment, expected_revision: int | None) -> None:
    """Optimistic lock: someone else's move since the page was read is a conflict."""
    expected = env.revision if expected_revision is None else expected_revision
    claimed = Environment.objects.filter(pk=env.pk, revision=expected).update(
        revision=F("revision") + 1
    )
    if not claimed:
        raise Conflict(f"{env.name} was moved by someone else since you looked — reload")
    env.revision = expected + 1


def delete_profile(profile: Profile, *, user: Any) -> None:
    """Delete a draft-only profile; one with published versions is kept (they are immutable).

    The profile's row is locked before anything is read, so a publish that started first is
    seen (and refused, below) and rows it added (its suite run) are deleted with the profile,
    instead of tripping their foreign key when the delete commits.

    Raises:
        Conflict: the profile has published versions or a publish in flight, or a row that
            refers to it was added while it was being deleted.
    """
    try:
        with transaction.atomic():
            locked = Profile.objects.select_for_update().filter(pk=profile.pk).first()
            if locked is None:
                raise Http404("the profile was deleted meanwhile")
            if locked.versions.exists():
                raise Conflict(f"'{profile.slug}' has published versions and cannot be deleted")
            if locked.publications.filter(status__in=ACTIVE).exists():
                raise Conflict(
                    f"'{profile.slug}' is being published: wait until it ends (or cancel it), "
                    "then delete it"
                )
            audit(user, locked, "profile.delete", locked, snapshot(locked), None)
            locked.delete()
    except IntegrityError as exc:
        raise Conflict(
            f"something was started on '{profile.slug}' while it was being deleted: try again"
        ) from exc


# -- diff -------------------------------------------------------------------------------------------


def pack_at(profile: Profile, side: str) -> Pack:
    from studio.shared.drafts import Compiled, ModelPending

    """`draft` (raises PackError when invalid) or a published version number (Http404 if none)."""
    if side == "draft":
        now = scoring(profile)  # built afresh; the model is the one the playground shares
        if not now.exact or now.pack is None:
            raise ModelPending(Compiled(None, now))
        return now.pack
    version = profile.versions.filter(number=int(side)).first()
    if version is None:
        raise Http404(f"no version {side}")
    return load_pack(version.pack_json)


def pack_diff(profile: Profile, old: str, new: str) -> PackDiff:
    """The diff between two sides (`draft` or a version number), with the verdict flips."""
    return diff_packs(pack_at(profile, old), pack_at(profile, new), profile.test_cases.all())
