"""Publishing: immutable versions, environments, diffs with verdict flips, import and export."""

from __future__ import annotations

import json

import pytest
from django.db import DatabaseError, connection, transaction

from routing_core import PackError, dump_pack, load_pack
from studio.authoring.demo import load_demo_profile
from studio.importing.packs import import_pack, read_upload
from studio.models import AuditEntry, Profile, Route, TestCase, Version, VersionImmutable
from studio.publishing.diff import diff_packs
from studio.publishing.versions import environments, pack_at, pack_diff, promote, publish
from studio.shared.edits import save_item
from studio.shared.errors import Conflict, Refused
from studio.shared.packs import (
    build_pack,
    build_pack_dict,
    release_pack,
    scorer_encoder,
    with_encoder,
)
from studio.suites.runs import start_run
from tests.studio.fixtures import add_conversation


def test_publishing_stores_the_canonical_pack_with_its_number_checksum_and_author(profile, owner):
    version = publish(profile, user=owner, note="first cut")
    pack = load_pack(version.pack_json)
    assert (version.number, pack.version) == (1, 1)
    assert pack.created_at is not None
    assert version.checksum == pack.checksum == json.loads(version.pack_json)["checksum"]
    assert (version.published_by, version.note) == ("owner", "first cut")
    assert version.filename == "shop-v1.json"


def test_version_numbers_are_monotonic_per_profile(profile, owner):
    numbers = [publish(profile, user=owner).number for _ in range(3)]
    assert numbers == [1, 2, 3]


def test_publishing_runs_the_test_cases_and_stores_pass_or_fail(profile, owner):
    TestCase.objects.create(profile=profile, message="I want a real person", expected_route="human")
    TestCase.objects.create(profile=profile, message="download my invoice", expected_route="human")
    version = publish(profile, user=owner)
    assert [r["passed"] for r in version.test_results] == [True, False]
    assert version.test_results[1]["actual"] == "billing"
    assert version.tests_passed == 1


def test_publishing_judges_conversations_and_verdicts_as_a_suite_run_does(profile, owner):
    # Turn 2 passes only if it starts where turn 1 landed (billing) and the verdict is checked:
    # judged alone, "how long does delivery take" is a move to shipping, not a stay.
    add_conversation(
        profile,
        [
            (2, "how long does delivery take", "shipping", "move"),
            (1, "download my invoice", "billing", "move"),
            (3, "where is my parcel", "shipping", "move"),
        ],
    )

    version = publish(profile, user=owner)
    run = start_run(profile, user=None)

    published = [
        (r["message"], r["incumbent"], r["verdict"], r["passed"]) for r in version.test_results
    ]
    suite = [(r["text"], r["incumbent"] or "", r["verdict"], r["passed"]) for r in run.results]
    assert published == suite
    assert published[:2] == [
        ("download my invoice", "", "move", True),
        ("how long does delivery take", "billing", "move", True),
    ]
    assert published[2][1:3] == ("shipping", "stay") and not published[2][3]  # expected a move


def test_publishing_refuses_an_invalid_pack_with_the_reasons_and_stores_nothing(profile, owner):
    Profile.objects.filter(pk=profile.pk).update(default_route="nowhere")
    profile.refresh_from_db()
    with pytest.raises(PackError) as refused:
        publish(profile, user=owner)
    assert any("default_route" in path for path, _ in refused.value.errors)
    assert not Version.objects.exists()


def test_publishing_refuses_a_draft_newer_than_the_one_reviewed(profile, owner):
    with pytest.raises(Conflict):
        publish(profile, user=owner, expected_draft_revision=profile.draft_revision - 1)


def test_a_published_version_refuses_save_and_delete_in_the_model(profile, owner):
    version = publish(profile, user=owner)
    version.note = "rewritten"
    with pytest.raises(VersionImmutable):
        version.save()
    with pytest.raises(VersionImmutable):
        version.delete()


@pytest.mark.parametrize(
    "sql",
    ["UPDATE studio_version SET note = 'rewritten'", "DELETE FROM studio_version"],
)
def test_the_database_refuses_to_update_or_delete_a_published_version(profile, owner, sql):
    publish(profile, user=owner, note="kept")
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert Version.objects.get().note == "kept"


def test_a_queryset_update_of_a_version_is_refused_by_the_database(profile, owner):
    publish(profile, user=owner)
    with pytest.raises(DatabaseError), transaction.atomic():
        Version.objects.update(pack_json="{}")


def test_publishing_puts_the_new_version_on_staging_and_leaves_production(profile, owner):
    publish(profile, user=owner)
    envs = {e.name: e.version for e in environments(profile)}
    assert envs["staging"] is not None and envs["staging"].number == 1
    assert envs["production"] is None


def test_promote_and_roll_back_move_an_environment_and_are_audited(profile, owner):
    v1 = publish(profile, user=owner)
    v2 = publish(profile, user=owner)
    promote(v2, "production", user=owner)
    env = promote(v1, "production", user=owner)
    assert env.version == v1
    actions = list(
        AuditEntry.objects.filter(
            action__startswith="environment.", object_repr__contains="production"
        )
        .order_by("pk")
        .values_list("action", "before", "after")
    )
    assert actions == [
        ("environment.promote", {"version": None}, {"version": 2}),
        ("environment.rollback", {"version": 2}, {"version": 1}),
    ]


def test_promoting_with_a_stale_environment_revision_is_a_conflict(profile, owner):
    v1 = publish(profile, user=owner, environment=None)
    env = promote(v1, "production", user=owner)
    with pytest.raises(Conflict):
        promote(v1, "production", user=owner, expected_revision=env.revision - 1)


def test_the_diff_lists_added_removed_and_changed_fields(profile, owner):
    publish(profile, user=owner)
    billing = profile.routes.get(name="billing")
    billing.examples = [*billing.examples, "refund my card fee"]
    billing.description = "money <script>"
    save_item(billing, user=owner)
    save_item(Route(profile=profile, name="returns", description="sending items back"), user=owner)
    diff = pack_diff(profile, "1", "draft")
    found = {(c.section, c.name, c.kind, c.field) for c in diff.changes}
    assert ("routes", "returns", "added", "") in found
    assert ("routes", "billing", "changed", "description") in found
    examples = next(c for c in diff.changes if c.field == "examples")
    assert examples.added == ("refund my card fee",) and examples.removed == ()


def test_the_diff_reports_policy_and_lexicon_changes(profile):
    old = build_pack(profile)
    profile.near_tie_margin = 0.3
    profile.action_verbs = ["zap"]
    profile.save()
    diff = diff_packs(old, build_pack(profile))
    names = {(c.section, c.name) for c in diff.changes}
    assert ("policy", "near_tie_margin") in names
    assert ("lexicons", "action_verbs") in names


def test_a_test_case_whose_route_changes_is_reported_as_a_verdict_flip(profile, owner):
    TestCase.objects.create(profile=profile, message="I need a copy of my invoice")
    TestCase.objects.create(profile=profile, message="where is my parcel")
    publish(profile, user=owner)
    save_item(
        Route(
            profile=profile, name="documents", examples=["copy of my invoice"], keywords=["copy"]
        ),
        user=owner,
    )
    diff = pack_diff(profile, "1", "draft")
    assert [f.message for f in diff.flips] == ["I need a copy of my invoice"]
    flip = diff.flips[0]
    assert (flip.old.route, flip.new.route) == ("billing", "documents")
    assert "route" in flip.what


def test_an_unknown_version_in_a_diff_is_not_found(profile):
    from django.http import Http404

    with pytest.raises(Http404):
        pack_at(profile, "7")


def _comparable(pack_text_or_dict) -> dict:
    document = load_pack(pack_text_or_dict).model_dump(mode="json")
    document.pop("version")
    document.pop("created_at")
    # Which writer stamped it, not what it routes (left out of the checksum too): a dict
    # built from the models carries FORMAT_MINOR, a dumped pack the lowest minor it needs.
    document.pop("format_minor")
    return document


def test_the_demo_profile_survives_import_then_export_unchanged(db, owner):
    demo = load_demo_profile()
    exported = build_pack_dict(demo)
    imported = import_pack(
        json.dumps({**exported, "profile": {**exported["profile"]}}),
        user=owner,
        slug="support-copy",
    )
    again = build_pack_dict(imported)
    assert again["profile"]["slug"] == "support-copy"
    again["profile"]["slug"] = "support"
    assert _comparable(again) == _comparable(exported)


def test_a_published_version_imported_as_a_new_draft_exports_the_same_pack(db, owner):
    demo = load_demo_profile()
    version = publish(demo, user=owner)
    Route.objects.filter(profile=demo, name="billing").update(description="changed meanwhile")
    import_pack(version.pack_json.encode(), user=owner, into=demo)
    # The release pack learns the same weights the version stored: an equal pack, model and all.
    assert _comparable(dump_pack(release_pack(demo))) == _comparable(version.pack_json)
    assert demo.test_cases.count() > 0  # the draft's test cases stay


def test_a_bad_pack_file_is_refused_with_every_problem_and_nothing_is_imported(db, owner):
    bad = {
        "format": "route-pack",
        "profile": {"slug": "bad", "name": "Bad"},
        "routes": [{"name": "Not A Name"}, {"name": "ok", "action": {"kind": "delegate"}}],
        "default_route": "missing",
    }
    with pytest.raises(PackError) as refused:
        import_pack(json.dumps(bad), user=owner)
    paths = [path for path, _ in refused.value.errors]
    assert len(paths) >= 2
    assert any(p.startswith("routes[0]") for p in paths)
    assert not Profile.objects.filter(slug="bad").exists()


def test_importing_as_a_draft_that_fails_halfway_leaves_the_profile_untouched(
    profile, owner, monkeypatch
):
    import studio.importing.packs as pack_import

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(pack_import, "_tool", explode)
    pack = build_pack(profile)
    with pytest.raises(RuntimeError):
        import_pack(pack.model_dump(mode="json"), user=owner, into=profile)
    assert profile.routes.count() == 3 and profile.tools.count() == 2


def test_importing_a_new_profile_over_an_existing_slug_is_refused(profile, owner):
    with pytest.raises(Refused) as refused:
        import_pack(build_pack_dict(profile), user=owner)
    assert refused.value.errors[0][0] == "profile.slug"


def test_an_upload_over_the_size_limit_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr("studio.importing.packs.MAX_IMPORT_BYTES", 10)
    with pytest.raises(Refused) as refused:
        read_upload(b"{" + b" " * 20 + b"}")
    assert "limit" in refused.value.errors[0][1]


# -- scorer settings beyond the kind ----------------------------------------------------------------

CASCADE = {
    "kind": "cascade",
    "tiers": [
        {"kind": "lexical"},
        {
            "kind": "llm",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "router-small",
            "api_key_env": "ROUTER_KEY",
            "timeout_s": 2.5,
            "max_examples": 3,
        },
    ],
    "decider": {"kind": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "router-big"},
}


def _pack_with(scorer: dict, slug: str = "tiered") -> dict:
    document = build_pack_dict(load_demo_profile())
    return {**document, "profile": {**document["profile"], "slug": slug}, "scorer": scorer}


def test_a_cascade_pack_survives_import_then_export_unchanged(db, owner):
    original = _pack_with(CASCADE)

    profile = import_pack(json.dumps(original), user=owner)

    assert profile.scorer_kind == "cascade"
    assert _comparable(build_pack_dict(profile)) == _comparable(original)
    assert _comparable(dump_pack(release_pack(profile))) == _comparable(original)


def test_a_lexical_scorers_learned_model_is_not_kept_but_relearned(db, owner):
    published = publish(load_demo_profile(), user=owner)
    assert json.loads(published.pack_json)["scorer"]["model"] is not None

    profile = import_pack(published.pack_json, user=owner, slug="relearned")

    assert profile.scorer_settings is None
    assert build_pack_dict(profile)["scorer"] == {"kind": "lexical"}
    assert release_pack(profile).scorer.model == load_pack(published.pack_json).scorer.model


def test_a_cascades_lexical_tier_keeps_no_model_either(db, owner):
    model = json.loads(publish(load_demo_profile(), user=owner).pack_json)["scorer"]["model"]
    tiers = [{"kind": "lexical", "model": model}, CASCADE["tiers"][1]]

    profile = import_pack(_pack_with({**CASCADE, "tiers": tiers}), user=owner)

    assert profile.scorer_settings["tiers"][0] == {"kind": "lexical"}


def test_choosing_another_scorer_kind_sets_the_imported_settings_aside(db, owner):
    profile = import_pack(_pack_with(CASCADE), user=owner)
    Profile.objects.filter(pk=profile.pk).update(scorer_kind="lexical")
    profile.refresh_from_db()
    assert build_pack_dict(profile)["scorer"] == {"kind": "lexical"}


def test_a_profile_that_picks_the_hybrid_fits_its_weight_but_an_imported_one_keeps_its_own(
    db, owner
):
    """A kind picked in the studio gets a new pack's settings (the fitted weight); a hybrid
    imported with a declared weight keeps routing with it."""
    profile = load_demo_profile()
    Profile.objects.filter(pk=profile.pk).update(scorer_kind="hybrid")
    profile.refresh_from_db()
    assert build_pack_dict(profile)["scorer"] == {
        "kind": "hybrid",
        "fit_weight": True,
        "head": True,
    }
    declared = {"kind": "hybrid", "embedding_weight": 0.3}
    imported = import_pack(_pack_with(declared, slug="declared"), user=owner)
    scorer = build_pack_dict(imported)["scorer"]
    assert scorer["embedding_weight"] == 0.3 and scorer["fit_weight"] is False


def test_an_imported_hybrid_keeps_its_settings_when_its_encoder_is_changed(db, owner):
    imported = import_pack(_pack_with({"kind": "hybrid", "embedding_weight": 0.3}), user=owner)
    assert scorer_encoder(imported) == "all-minilm-l6-v2"

    imported.scorer_settings = with_encoder(imported, "multilingual-e5-small")
    imported.save()
    imported.refresh_from_db()

    scorer = build_pack_dict(imported)["scorer"]
    assert scorer["model"] == "multilingual-e5-small"
    assert scorer["embedding_weight"] == 0.3 and scorer["fit_weight"] is False
    assert scorer_encoder(imported) == "multilingual-e5-small"
    # The same encoder again stores nothing new; another kind sets the settings aside.
    assert with_encoder(imported, "multilingual-e5-small") is imported.scorer_settings
    imported.scorer_kind = "lexical"
    assert scorer_encoder(imported) == "all-minilm-l6-v2"
    assert with_encoder(imported, "multilingual-e5-small") is imported.scorer_settings


def test_the_diff_shows_a_changed_scorer_setting_but_not_a_relearned_model(db, owner):
    profile = import_pack(_pack_with(CASCADE), user=owner)
    old = build_pack(profile)
    decider = {**CASCADE["decider"], "model": "router-huge"}
    import_pack(_pack_with({**CASCADE, "decider": decider}), user=owner, into=profile)
    profile.refresh_from_db()
    demo = load_demo_profile()
    before_edit = release_pack(demo)
    demo.routes.filter(name="billing").update(examples=["a brand new example"])

    diff = diff_packs(old, build_pack(profile))
    relearned = diff_packs(before_edit, release_pack(demo))

    assert [(c.section, c.name) for c in diff.changes] == [("scorer", "decider")]
    assert "router-huge" in diff.changes[0].new
    assert before_edit.scorer != release_pack(demo).scorer  # the weights did change
    assert [c.section for c in relearned.changes] == ["routes"]
