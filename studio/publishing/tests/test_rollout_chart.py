"""The rollout page's chart of live against candidate over time: the right points for known
turns, its words for a screen reader, and the table kept behind a <details>."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from routing_core import Router, load_pack
from studio.models import Event, Rollout
from studio.publishing.rollout_chart import rollout_chart
from studio.publishing.rollout_guards import over_time
from studio.publishing.tests.test_rollouts import _report, _turn, api, start, two_versions  # noqa: F401  (fixtures)

# Two hours of a canary, as (arm, hours ago, turns, of which nothing matched):
# live 1 of 4 then 0 of 2; the candidate 0 of 2 then 2 of 4.
HOURS = [("live", 2, 4, 1), ("candidate", 2, 2, 0), ("live", 1, 2, 0), ("candidate", 1, 4, 2)]


def _known_turns(profile, owner, two_versions, api) -> Rollout:  # noqa: F811
    rollout = Rollout.objects.get(pk=start(api, min_turns=1000)["id"])
    router = Router(load_pack(two_versions[0].pack_json))
    arm = {"id": rollout.pk, "mode": "canary", "live_version": 1, "candidate_version": 2}
    hour = timezone.now().replace(minute=30, second=0, microsecond=0)
    for side, ago, turns, unmatched in HOURS:
        name = f"{side}-{ago}"
        _report(
            profile,
            owner,
            [
                _turn(router, f"{name}-{i}", 0, "where is my parcel", {**arm, "arm": side})
                for i in range(turns)
            ],
        )
        rows = Event.objects.filter(conversation__startswith=name)
        rows.update(received=hour - timedelta(hours=ago))
        picked = list(rows.values_list("pk", flat=True)[:unmatched])
        Event.objects.filter(pk__in=picked).update(verdict="unmatched", route="")
    return rollout


def test_the_chart_puts_each_hour_of_each_arm_where_its_rate_is(
    profile,
    owner,
    two_versions,  # noqa: F811
    api,  # noqa: F811
):
    rollout = _known_turns(profile, owner, two_versions, api)
    chart = rollout_chart(over_time(rollout))
    # 720 × 220: x from 44 to 708, y from 192 (0 %) up to 24 (the axis top: 50 %, the peak).
    lines = {s.name: s.points for s in chart.series}
    assert lines == {
        "live pack": "44.0,108.0 708.0,192.0",  # 25 % then 0 %
        "candidate pack": "44.0,192.0 708.0,24.0",  # 0 % then 50 %
    }
    assert [t.label for t in chart.y_ticks] == ["0%", "25%", "50%"]


def test_the_rollout_page_draws_the_chart_with_words_and_keeps_the_table(
    profile,
    owner,
    two_versions,  # noqa: F811
    api,  # noqa: F811
    client_for,
):
    rollout = _known_turns(profile, owner, two_versions, api)
    page = client_for(owner).get(f"/profiles/shop/rollouts/{rollout.pk}/").content.decode()
    assert 'data-testid="rollout-chart"' in page
    assert '<polyline class="chart-line s-acc" points="44.0,108.0 708.0,192.0"' in page
    assert '<polyline class="chart-line s-menu" points="44.0,192.0 708.0,24.0"' in page
    assert '<title id="rollout-chart-title">Share of turns nothing matched' in page
    assert "The live pack: nothing matched on 0% to 25% of turns, over 2 hours." in page
    assert "The candidate pack: nothing matched on 0% to 50% of turns, over 2 hours." in page
    assert "nothing matched on 50% of 4 turns" in page  # a dot's own words
    details = page.index('data-testid="rollout-hours-details"')
    assert details < page.index('data-testid="rollout-hours"')
    assert "<summary>The same figures as a table</summary>" in page


def test_a_rollout_without_turns_says_so_instead_of_an_empty_chart(
    two_versions,  # noqa: F811
    api,  # noqa: F811
    owner,
    client_for,
):
    rollout = start(api, mode="shadow")
    page = client_for(owner).get(f"/profiles/shop/rollouts/{rollout['id']}/").content.decode()
    assert 'data-testid="rollout-chart"' not in page
    assert "No turns yet: the chart starts with the first reported turn." in page
