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


def test_the_leaderboard_updates_live_and_a_versions_page_plots_its_history_and_replays_its_games(browser, tmp_path):  # noqa: F811
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
        pairs = {r.get_attribute("data-against"): r for r in browser.find_elements(By.CSS_SELECTOR, "#pairs-table tr[data-against]")}
        assert sorted(pairs) == ["beta@1", "delta@1", "gamma@1"]
        assert pairs["beta@1"].find_element(By.CSS_SELECTOR, ".diff").text.startswith("+7.00 ± ")  # 6, 6 and 9 a partie
        assert pairs["delta@1"].find_element(By.CSS_SELECTOR, ".diff").text == "+9.00"  # one group: no interval
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


@pytest.mark.slow  # the upload is built and checked in the sandbox
def test_an_author_uploads_from_the_page_and_reads_their_own_stderr_only(browser, tmp_path):  # noqa: F811
    from referee.ladder import submissions as S
    from referee.seats.sandbox import bwrap_status
    from tests.test_web_ladder import PLAYER, archive

    served = tmp_path / "served"
    lad = LadderFolder.init(served / "season")
    eva, jan = S.make_token(lad.path, "eva"), S.make_token(lad.path, "jan")
    ids = [lad.add("evabot", "random", check=False, author="eva"), lad.add("other", "random", check=False),
           lad.add("third", "random", check=False)]
    play_groups(lad, ids, [2, -1, -1])
    game = lad.games("evabot@1")[0]
    (lad.path / "logs" / f"{game['id']}.seat{game['seat']}.stderr.log").write_text("eva's debug line\n")
    (tmp_path / "bot.tar.gz").write_bytes(archive({"bot.py": PLAYER}))
    srv = LiveServer([served], tmp_path / "plays")
    try:
        browser.get(f"{srv.url}/ladder/0/season?version=evabot@1")
        wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#games-table tr[data-game]"), what="the version's page")
        browser.find_element(By.CSS_SELECTOR, "#stderr-box summary").click()
        for token, expect in ((jan, "another author's"), (eva, "eva's debug line")):
            field = browser.find_element(By.ID, "stderr-token")
            field.clear()
            field.send_keys(token)
            browser.find_element(By.ID, "stderr-show").click()
            wait(lambda expect=expect: expect in browser.find_element(By.ID, "stderr").text,
                 what=f"the stderr answer ({expect})")
        if bwrap_status()[0] is None:
            pytest.skip(f"no bubblewrap here for the upload's build: {bwrap_status()[1]}")
        browser.get(f"{srv.url}/ladder/0/season")
        wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr[data-version]"), what="the leaderboard")
        browser.find_element(By.CSS_SELECTOR, "#upload-box summary").click()
        for field, value in (("up-token", eva), ("up-name", "fromweb"), ("up-command", "python3 bot.py"),
                             ("up-file", str(tmp_path / "bot.tar.gz"))):
            browser.find_element(By.ID, field).send_keys(value)
        browser.find_element(By.ID, "up-send").click()
        wait(lambda: "entered as fromweb@1" in browser.find_element(By.ID, "up-result").text, timeout=120,
             what="the upload's answer")
        wait(lambda: browser.find_elements(By.CSS_SELECTOR, 'tr[data-version="fromweb@1"]'), what="the new version listed")
        assert lad.version("fromweb@1")["author"] == "eva"
        browser.save_screenshot(str(shots_dir(tmp_path) / "web-ladder-upload.png"))
    finally:
        srv.stop()
