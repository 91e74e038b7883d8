"""The overlap checkup holds each example out and reports the ones that land elsewhere."""

from __future__ import annotations

from routing_core import load_pack
from routing_core.overlap import overlap_checkup


def test_an_example_that_reads_like_another_route_is_reported_and_a_clean_one_is_not():
    pack = load_pack(
        {
            "profile": {"slug": "o", "name": "O"},
            "routes": [
                {
                    "name": "billing",
                    "examples": [
                        "invoice charge payment",
                        "my invoice is wrong",
                        "charge on my card",
                        "payment failed",
                        "where is my parcel",
                    ],
                },  # reads like shipping
                {
                    "name": "shipping",
                    "examples": [
                        "where is my parcel",
                        "parcel delivery late",
                        "track my parcel",
                        "parcel lost in delivery",
                        "delivery address change",
                    ],
                },
            ],
        }
    )
    findings = overlap_checkup(pack)
    billing = [f for f in findings if f.route == "billing"]
    assert [f.example for f in billing] == ["where is my parcel"]
    assert billing[0].path == "routes[0].examples[4]"
    assert billing[0].other_route == "shipping" and billing[0].other_score > billing[0].own_score


def test_large_profiles_use_k_fold_and_report_progress():
    routes = [
        {"name": f"r{i}", "examples": [f"topic{i} word{j}" for j in range(40)]} for i in range(10)
    ]
    seen = []
    overlap_checkup(
        load_pack({"profile": {"slug": "o", "name": "O"}, "routes": routes}),
        progress=lambda done, total: seen.append(total),
    )
    assert seen and set(seen) == {10}


def test_the_held_out_copies_of_a_cross_validated_pack_choose_their_schedule_once(
    monkeypatch, fold_schedules
) -> None:
    """A pack of 100-199 texts chooses by fold models learned both ways (docs/decisions.md,
    "Packs of 100-199 texts"); the checkup's copies of it reuse the first copy's choice and
    thresholds, or the demo's 57 held-out examples cost 42 s instead of 3."""
    from routing_core import overlap
    from routing_core.build import build_pack
    from routing_core.scorers import _model
    from tests.routing_core.test_incremental_model import generated_routes

    monkeypatch.setattr(overlap, "EXACT_LIMIT", 0)  # ten held-out copies
    pack = build_pack(generated_routes(12, 12), slug="twelve", no_background=True)
    fold_schedules.clear()  # the build's own choice
    overlap_checkup(pack)

    # The first copy learns both ways and chooses; the others learn no fold model.
    assert fold_schedules == [True, False]
    assert _model._SHARED_SCHEDULE.get() is None  # the choice does not outlive the checkup
