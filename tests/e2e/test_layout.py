"""The page layout holds on a narrow screen: the profile's tabs wrap instead of overflowing."""

from __future__ import annotations

import os

from playwright.sync_api import Page, expect

from tests.e2e.conftest import sign_in

SHOTS = os.environ.get("LAYOUT_SHOTS")  # a folder: also save screenshots there to look at


def test_the_profile_tabs_wrap_within_an_800_pixel_window(page: Page, live_server, demo) -> None:
    page.set_viewport_size({"width": 800, "height": 900})
    sign_in(page, live_server.url)
    page.get_by_role("link", name="Customer support").click()
    tabs = page.get_by_role("navigation", name="Profile sections").get_by_role("link")
    expect(tabs).to_have_count(14)

    if SHOTS:
        page.screenshot(path=f"{SHOTS}/tabs-800.png")
    boxes = [tabs.nth(i).bounding_box() for i in range(14)]
    assert all(b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 800 for b in boxes)
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    assert len({round(b["y"]) for b in boxes if b}) > 1  # they wrapped onto more than one line


def test_the_profile_tabs_fit_one_line_on_a_wide_screen(page: Page, live_server, demo) -> None:
    sign_in(page, live_server.url)
    page.get_by_role("link", name="Customer support").click()
    tabs = page.get_by_role("navigation", name="Profile sections").get_by_role("link")

    if SHOTS:
        page.screenshot(path=f"{SHOTS}/tabs-1280.png")
    tops = {round(tabs.nth(i).bounding_box()["y"]) for i in range(14)}  # type: ignore[index]
    assert len(tops) == 1


def test_the_tabs_are_grouped_by_what_a_person_is_doing(page: Page, live_server, demo) -> None:
    sign_in(page, live_server.url)
    page.get_by_role("link", name="Customer support").click()
    nav = page.get_by_role("navigation", name="Profile sections")

    groups = {
        "Build": ["Routes", "Rules", "Tools", "Lexicons", "Policy"],
        "Test": ["Playground", "Tests", "Lint", "Overlap", "Tuning"],
        "Ship": ["Versions", "Traffic", "Tokens", "History"],
    }
    for name, links in groups.items():
        expect(nav.get_by_role("group", name=name).get_by_role("link")).to_have_text(links)


def test_pages_name_their_icon_so_the_browser_asks_for_no_favicon_ico(
    page: Page, live_server, demo
) -> None:
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    sign_in(page, live_server.url)
    icon = page.locator('link[rel="icon"]').get_attribute("href")

    assert icon and page.request.get(f"{live_server.url}{icon}").ok
    assert not [url for url in asked if url.endswith("/favicon.ico")]


def test_the_versions_page_buttons_look_like_buttons(page: Page, live_server, demo) -> None:
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/versions/")
    compare = page.get_by_role("link", name="Compare versions")
    publish = page.get_by_role("link", name="Publish the draft…")

    style = "e => [getComputedStyle(e).borderTopStyle, getComputedStyle(e).paddingLeft]"
    border, padding = compare.evaluate(style)
    assert (border, padding) != ("none", "0px")  # a bare link has neither
    assert border == "solid"
    gap = publish.bounding_box()["x"] + publish.bounding_box()["width"]  # type: ignore[index]
    assert compare.bounding_box()["x"] > gap  # type: ignore[index]  # apart, not run together


def test_the_routes_table_fits_a_390_pixel_phone(page: Page, live_server, demo) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/")
    table = page.locator("#items table").first
    expect(table).to_be_visible()

    if SHOTS:
        page.screenshot(path=f"{SHOTS}/routes-390.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = table.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
