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

from tests.web_server import LiveServer  # noqa: E402

BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (BROWSER and DRIVER), reason=f"no headless browser here (chromium: {BROWSER}, "
                                f"chromedriver: {DRIVER}); apt-get install chromium chromium-driver")
MARIAS = [sys.executable, "-c", "from referee.cli import main; main()"]
FLAGS = ("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
         "--disable-component-update --disable-sync --window-size=1300,1000").split()


def shots_dir(tmp_path) -> Path:
    return Path(os.environ.get("MARIAS_SCREENSHOTS") or tmp_path)


@pytest.fixture(scope="module")
def browser():
    o = webdriver.ChromeOptions()
    o.binary_location = BROWSER
    for a in FLAGS:
        o.add_argument(a)
    o.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="marias-chromium-"))
    d = webdriver.Chrome(service=Service(DRIVER), options=o)
    d.set_page_load_timeout(60)
    yield d
    d.quit()


@pytest.fixture
def server(tmp_path):
    (tmp_path / "served").mkdir()
    srv = LiveServer([tmp_path / "served"], tmp_path / "served" / "plays")
    yield srv
    srv.stop()


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


def test_a_person_plays_a_whole_partie_by_clicking(browser, server, tmp_path):
    browser.get(server.url + "/")
    browser.find_element(By.CSS_SELECTOR, "#bot1 option[value='random'], #bot1 option").click()
    browser.find_element(By.ID, "start").click()
    wait(lambda: "/play/" in browser.current_url, what="the play page")
    shot = False
    t0 = time.monotonic()
    while time.monotonic() - t0 < 600:
        if browser.execute_script("return document.body.dataset.state"):
            break
        talon = browser.find_elements(By.CSS_SELECTOR, "button.act[data-kind]")
        cards = browser.find_elements(By.CSS_SELECTOR, "#myhand .card.legal")
        buttons = browser.find_elements(By.CSS_SELECTOR, "button.act[data-action]")
        try:
            if talon:
                if not shot:
                    browser.save_screenshot(str(shots_dir(tmp_path) / "web-play-talon.png"))
                talon[-1].click()
                for _ in range(2):
                    browser.find_elements(By.CSS_SELECTOR, "#myhand .card.legal")[0].click()
            elif cards:
                if not shot and browser.execute_script("return document.querySelector('#trick .card') !== null"):
                    browser.save_screenshot(str(shots_dir(tmp_path) / "web-play.png"))
                    shot = True
                cards[0].click()
            elif buttons:
                buttons[0].click()
            else:
                time.sleep(0.1)
        except Exception:  # noqa: BLE001 - the page moved on under the click (the next message came)
            time.sleep(0.05)
    assert browser.execute_script("return document.body.dataset.state") == "finished"
    browser.save_screenshot(str(shots_dir(tmp_path) / "web-play-end.png"))
    session = next(iter(server.app.state.sessions._sessions.values()))
    assert browser.execute_script("return window.mariasLines") == session.lines
    r = marias("validate", str(session.log_path))
    assert r.returncode == 0, r.stdout
    browser.find_element(By.ID, "log-link").click()
    wait(lambda: browser.find_element(By.ID, "complete").text.startswith("complete"), what="the log page")


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
