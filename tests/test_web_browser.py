"""marias serve in a real browser: headless Chromium driven by Selenium (the system chromedriver;
nothing is downloaded).  Where no browser is installed these tests skip, saying why.

Screenshots of each page go to $MARIAS_SCREENSHOTS (default: the test's tmp folder)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from tests.web_server import serving  # noqa: E402

BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (BROWSER and DRIVER), reason=f"no headless browser here (chromium: {BROWSER}, "
                                f"chromedriver: {DRIVER}); apt-get install chromium chromium-driver")
MARIAS = [sys.executable, "-c", "from referee.cli import main; main()"]
FLAGS = ("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
         "--disable-component-update --disable-sync --window-size=1300,1000").split()


def shots_dir(tmp_path) -> Path:
    return Path(os.environ.get("MARIAS_SCREENSHOTS") or tmp_path)


def chrome():
    o = webdriver.ChromeOptions()
    o.binary_location = BROWSER
    for a in FLAGS:
        o.add_argument(a)
    o.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="marias-chromium-"))
    d = webdriver.Chrome(service=Service(DRIVER), options=o)
    d.set_page_load_timeout(60)
    return d


@pytest.fixture(scope="module")
def browser():
    d = chrome()
    yield d
    d.quit()


@pytest.fixture
def server(tmp_path):
    yield from serving(tmp_path)


def wait(cond, timeout=60.0, what="the page"):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            v = cond()
        except Exception:  # noqa: BLE001 - the page is still changing
            v = None
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def marias(*args, cwd=None):
    r = subprocess.run([*MARIAS, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), r.stderr
    return r


def test_replay_steps_through_a_deal_as_logged(browser, server, tmp_path):
    root = tmp_path / "served"
    marias("match", "-b", "robot", "-b", "random", "-b", "random", "--partie", "1", "--log", "logs", "--seed", "5",
           "--sandbox", "none", cwd=root)
    log = next((root / "logs").glob("*.jsonl"))
    rec = next(json.loads(x) for x in log.read_text().splitlines() if '"type":"deal"' in x and '"deal":3,' in x)
    browser.get(f"{server.url}/log/0/logs/{log.name}")
    wait(lambda: browser.find_elements(By.CSS_SELECTOR, "table.deals tr[data-deal]"), what="the deals")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.deals tr[data-deal]")
    assert len(rows) == 12
    browser.save_screenshot(str(shots_dir(tmp_path) / "web-log.png"))
    rows[2].find_element(By.CSS_SELECTOR, "a.replay-link").click()
    wait(lambda: browser.find_element(By.ID, "step-no"), what="the replayer")

    def hand(seat):
        return [e.get_attribute("data-card") for e in browser.find_elements(By.CSS_SELECTOR, f".seat-{seat} .card")]

    for s in range(3):  # all-seeing, step 0: the hands as dealt
        assert sorted(hand(s)) == sorted(rec["hands"][s])
    n = len(rec["decisions"])
    for i in range(n):
        assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == str(i)
        nxt = browser.find_element(By.ID, "next-decision").text
        assert rec["decisions"][i]["action"] in nxt
        browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == str(n)
    pay = rec["result"]["payments"]
    assert browser.find_element(By.ID, "payments").text == "payments: " + " · ".join(
        f"seat {s} {'+' if x > 0 else ''}{x}" for s, x in enumerate(pay))
    played = [t["cards"] for t in rec["tricks"]]
    shown = [[c.get_attribute("data-card") for c in row.find_elements(By.CSS_SELECTOR, ".card")]
             for row in browser.find_elements(By.CSS_SELECTOR, "#tricks tr")[1:]]
    assert shown == played
    browser.save_screenshot(str(shots_dir(tmp_path) / "web-replay-all.png"))
    # one seat's view: its own hand only, and the keys move back
    browser.find_element(By.CSS_SELECTOR, "button[data-who='1']").click()
    browser.find_element(By.TAG_NAME, "body").send_keys("\ue012")  # arrow left
    assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == str(n - 1)
    assert hand(0) == [] and hand(2) == [] and hand(1)
    browser.find_element(By.TAG_NAME, "body").send_keys("\ue011")  # Home
    assert sorted(hand(1)) == sorted(rec["hands"][1])
    browser.save_screenshot(str(shots_dir(tmp_path) / "web-replay-seat1.png"))


def test_a_live_tournament_page_follows_the_run_through_a_stop_and_a_resume(browser, server, tmp_path):
    root = tmp_path / "served"
    args = ["tournament", "-b", "a=random:1", "-b", "b=random:2", "-b", "c=random:3", "-b", "r=robot", "--partie", "1",
            "--arrangements", "rotations", "--seed", "9", "--out", "tour", "--concurrency", "1", "--sandbox", "none"]
    proc = subprocess.Popen([*MARIAS, *args], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(lambda: (root / "tour" / "manifest.json").exists(), 120, "the tournament to start")
        browser.get(f"{server.url}/tournament/0/tour")
        done = lambda: int(browser.execute_script("return document.getElementById('done').textContent").split()[0])  # noqa: E731
        state = lambda: browser.execute_script("return document.getElementById('state').textContent")  # noqa: E731
        first = wait(lambda: browser.find_element(By.ID, "done").text, what="the status")
        start_done = done()
        wait(lambda: done() > start_done, 180, "a unit to finish")
        wait(lambda: browser.find_element(By.ID, "table-standings"), what="the standings")
        browser.save_screenshot(str(shots_dir(tmp_path) / "web-tournament-live.png"))
        assert state() == "running"
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        wait(lambda: state() == "stopped", 30, "the stopped state")
        stopped_at = done()
        proc = subprocess.Popen([*MARIAS, *args], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait(lambda: state() == "finished", 300, "the finished state")
        assert done() == 12 >= stopped_at and first
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(60)
    table = json.loads(marias("table", str(root / "tour"), "--format", "json").stdout)
    cells = browser.execute_script("return [...document.querySelectorAll('#table-standings tbody tr')]"
                                   ".map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent))")
    assert [(c[1], int(c[4])) for c in cells] == [(r["bot"], r["groše"]) for r in table["standings"]]
    browser.save_screenshot(str(shots_dir(tmp_path) / "web-tournament.png"))


@pytest.fixture
def browser2():
    """A second person's browser (a profile, cookies and storage of its own)."""
    d = chrome()
    yield d
    d.quit()


def step(b) -> str | None:
    """One click of a person at the table: go on after a deal's settlement, choose a game and two
    cards to discard, a card, or a button; the click made, or None when nothing is asked."""
    go = b.find_elements(By.ID, "sheet-continue")
    if go:
        go[0].click()
        return "continue"
    talon = b.find_elements(By.CSS_SELECTOR, "button.act[data-kind]")
    if talon:
        talon[0].click()
        for _ in range(2):
            b.find_elements(By.CSS_SELECTOR, "#myhand .card.legal")[0].click()
        return "talon"
    cards = b.find_elements(By.CSS_SELECTOR, "#myhand .card.legal")
    if cards:
        cards[0].click()
        return "card"
    buttons = b.find_elements(By.CSS_SELECTOR, "button.act[data-action]")
    if buttons:
        buttons[0].click()
        return "button"
    return None


def test_two_people_play_a_partie_at_one_table_through_an_invite_link(browser, browser2, server, tmp_path):
    """Issue 34: a person opens a table from the index with a second person's seat and a bot; the
    second joins by the invite link; both play the partie to its end by clicking, each page
    receiving exactly its seat's lines; the log validates; the quit button is gone at the end."""
    shots = shots_dir(tmp_path)
    for b in (browser, browser2):
        b.get(server.url + "/")
        b.execute_script("localStorage.setItem('marias-pace', 'instant'); localStorage.removeItem('marias-name')")
    browser.find_element(By.CSS_SELECTOR, "#seat1 option[value='person']").click()
    browser.find_element(By.CSS_SELECTOR, "#seat2 option[value='random']").click()
    browser.find_element(By.ID, "name").send_keys("Ann")
    browser.find_element(By.ID, "start").click()
    link = wait(lambda: browser.find_element(By.CSS_SELECTOR, "input.link[data-seat='1']").get_attribute("value"), what="the invite link")
    table = server.app.state.tables.get(browser.current_url.split("/")[-2])
    assert table.state == "waiting" and link.endswith(table.place(1).token)
    browser2.get(link)
    wait(lambda: browser2.find_element(By.ID, "sit"), what="the invited seat")
    assert browser2.current_url.endswith(f"/play/{table.id}/1")
    browser2.find_element(By.ID, "name").send_keys("Bob<img src=x>")  # a name is text, never markup
    browser2.find_element(By.ID, "sit").click()
    shot = {"trick": False, "settlement": False, "last trick": False}
    looking = "const t = document.getElementById('trick'); return t.classList.contains('looking') && " \
              "t.querySelectorAll('.card').length === 3 && t.querySelector('.trick-label').textContent.startsWith('last trick: taken by')"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 900:
        states = [b.execute_script("return document.body.dataset.state") for b in (browser, browser2)]
        if all(states) and all(b.find_elements(By.ID, "end") for b in (browser, browser2)):  # each went on past the last sheet
            break
        moved = False
        for b in (browser, browser2):
            try:
                if not shot["trick"] and len(b.find_elements(By.CSS_SELECTOR, "#trick:not(.taken):not(.looking) .card")) == 2:
                    b.save_screenshot(str(shots / "web-table-trick.png"))
                    shot["trick"] = True
                if not shot["settlement"] and b.find_elements(By.ID, "settlement"):
                    b.save_screenshot(str(shots / "web-table-settlement.png"))
                    shot["settlement"] = True
                if b is browser and not shot["last trick"] and b.find_element(By.ID, "last-trick").is_enabled():
                    b.find_element(By.ID, "last-trick").click()  # the last trick taken, to be looked at
                    shot["last trick"] = b.execute_script(looking)
                    b.find_element(By.ID, "last-trick").click()
                moved = step(b) is not None or moved
            except Exception:  # noqa: BLE001 - the page moved on under the click (the next line came)
                moved = True
        if not moved:
            time.sleep(0.05)
    assert states == ["finished", "finished"], states
    assert "Bob<img src=x>" in browser.find_element(By.ID, "felt").text and not browser.find_elements(By.CSS_SELECTOR, "#felt img")
    assert all(shot.values()), shot
    browser.save_screenshot(str(shots / "web-table-end.png"))
    for b, seat in ((browser, 0), (browser2, 1)):  # each page got its seat's lines, all of them, and only them
        assert b.execute_script("return window.mariasLines") == table.place(seat).lines
        assert not b.find_element(By.ID, "quit").is_displayed()  # issue 34: it stayed after the partie ended
        assert b.find_element(By.ID, "play-again").is_displayed()
    # the German suits drawn here, or the terminal's French symbols: one click, remembered in this browser
    sign = "return document.querySelector('#marias-signs #sign-a').innerHTML"
    german = browser.execute_script(sign)
    browser.find_element(By.ID, "suits-toggle").click()
    assert browser.execute_script(sign) != german and "French" in browser.find_element(By.ID, "suits-toggle").text
    browser.refresh()
    wait(lambda: browser.find_element(By.ID, "end"), what="the end of the partie, the tab reopened")
    assert browser.execute_script("return document.documentElement.classList.contains('suits-french')")
    assert browser.execute_script("return window.mariasLines") == table.place(0).lines  # a reopened tab: all its lines again
    browser.save_screenshot(str(shots / "web-table-end-french.png"))
    r = marias("validate", str(table.log_path), "--transcript", str(table.log_path.parent))
    assert r.returncode == 0, r.stdout
    browser2.find_element(By.ID, "review-link").click()
    wait(lambda: browser2.find_element(By.ID, "step-no"), what="the replayer")
    assert "seat=1" in browser2.current_url


def test_the_report_opens_offline_and_replays(browser, tmp_path):
    marias("tournament", "-b", "a=random:1", "-b", "b=random:2", "-b", "r=robot", "--partie", "1", "--arrangements", "fixed",
           "--seed", "3", "--out", str(tmp_path / "t"), "--concurrency", "1", "--sandbox", "none")
    out = tmp_path / "t.html"
    marias("report", str(tmp_path / "t"), "-o", str(out))
    browser.get(out.as_uri())
    wait(lambda: browser.find_element(By.ID, "table-standings"), what="the standings")
    assert browser.find_element(By.CSS_SELECTOR, "#curves canvas")  # the chart library ran, offline
    browser.find_element(By.CSS_SELECTOR, "#logs a").click()
    wait(lambda: len(browser.find_elements(By.CSS_SELECTOR, "table.deals tr[data-deal]")) == 12, what="the log")
    browser.find_elements(By.CSS_SELECTOR, "a.replay-link")[4].click()
    wait(lambda: browser.find_element(By.ID, "step-no"), what="the replayer")
    for _ in range(12):
        browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == "12"
    assert "null" not in browser.find_element(By.ID, "replay").text.split()
    browser.save_screenshot(str(shots_dir(tmp_path) / "web-report-replay.png"))
    browser.find_element(By.ID, "next-deal").click()
    wait(lambda: browser.find_element(By.ID, "step-no").get_attribute("data-step") == "0", what="the next deal")
    assert "deal 6" in browser.find_element(By.CSS_SELECTOR, "#replay h2").text
