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
