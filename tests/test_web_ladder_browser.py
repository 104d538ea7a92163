"""A ladder in a real browser (issue 37.6): the leaderboard of a small ladder, updated live when a
group is rated, and a version's page with its rating history plot, its games and a replay.  Headless
Chromium through Selenium, as tests/test_web_browser.py (skipped where no browser is installed).
Screenshots go to $MARIAS_SCREENSHOTS (default: the test's tmp folder)."""

from __future__ import annotations

import pytest

pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.webdriver.common.by import By  # noqa: E402

from referee.ladder.folder import LadderFolder  # noqa: E402
from referee.tools.bench import write_random_log  # noqa: E402
from tests.test_web_browser import BROWSER, DRIVER, browser, shots_dir, wait  # noqa: E402,F401 - the fixture
from tests.test_web_ladder import play_groups  # noqa: E402
from tests.web_server import LiveServer  # noqa: E402

pytestmark = pytest.mark.skipif(not (BROWSER and DRIVER), reason=f"no headless browser here (chromium: {BROWSER}, "
                                f"chromedriver: {DRIVER})")


def test_the_leaderboard_updates_live_and_a_versions_page_plots_its_history_and_replays_its_games(browser, tmp_path):
    served = tmp_path / "served"
    lad = LadderFolder.init(served / "season")
    ids = [lad.add(n, "random", check=False, author=a) for n, a in (("alpha", "eva"), ("beta", "jan"), ("gamma", None))]
    play_groups(lad, ids, [6, 0, -6], groups=2)
    lad.retire("gamma@1")
    newest = lad.games("alpha@1")[0]
    write_random_log(lad.path / newest["log"], deals=12)  # a real log where the newest game's is
    srv = LiveServer([served], tmp_path / "plays")
    try:
        browser.get(f"{srv.url}/")
        browser.find_element(By.CSS_SELECTOR, 'a[href="/ladder/0/season"]').click()
        rows = wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr[data-version]"), what="the leaderboard")
        assert [r.get_attribute("data-version") for r in rows] == ["alpha@1", "beta@1", "gamma@1"]
        board = {r["id"]: r for r in lad.leaderboard()}
        first = rows[0]
        assert first.find_element(By.CSS_SELECTOR, ".rating").text == \
            f"{board['alpha@1']['rating']:.2f} ± {(board['alpha@1']['high'] - board['alpha@1']['low']) / 2:.2f}"
        assert first.find_element(By.CSS_SELECTOR, ".games").text == "12"
        assert rows[2].find_element(By.CSS_SELECTOR, ".state").text.lower() == "retired"
        assert browser.find_element(By.ID, "counts").text.startswith("2 groups rated · 12 partie")
        browser.save_screenshot(str(shots_dir(tmp_path) / "web-ladder.png"))
        # a group is rated while the page is open: it shows without a reload
        play_groups(lad, ids[:2] + [lad.add("delta", "random", check=False)], [6, -3, -3])
        wait(lambda: browser.find_element(By.CSS_SELECTOR, 'tr[data-version="alpha@1"] .games').text == "18",
             what="the live update")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr[data-version]")) == 4
        # the version's page: its history plot and its games
        browser.find_element(By.CSS_SELECTOR, 'tr[data-version="alpha@1"] a.version-link').click()
        wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#history .uplot canvas"), what="the history plot")
        assert browser.find_element(By.ID, "history").get_attribute("data-points") == "3"
        assert "after 18 partie" in browser.find_element(By.ID, "summary").text
        games = browser.find_elements(By.CSS_SELECTOR, "#games-table tr[data-game]")
        assert len(games) == 18
        assert [a.get_attribute("href").split("/replay/0/season/")[1]
                for a in browser.find_elements(By.CSS_SELECTOR, "#games-table a.replay-link")] == \
            [newest["log"] + "?partie=1&deal=1"]  # only the game whose log exists is replayable
        browser.save_screenshot(str(shots_dir(tmp_path) / "web-ladder-version.png"))
        browser.find_element(By.CSS_SELECTOR, "#games-table a.replay-link").click()
        wait(lambda: browser.find_element(By.ID, "step-no"), what="the replayer")
        assert browser.find_elements(By.CSS_SELECTOR, ".seat-0 .card")
    finally:
        srv.stop()
