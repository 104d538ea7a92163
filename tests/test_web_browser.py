"""marias serve in a real browser: headless Chromium driven by Selenium (the system chromedriver;
nothing is downloaded).  Where no browser is installed these tests skip, saying why.

Screenshots of each page go to $MARIAS_SCREENSHOTS (default: the test's tmp folder)."""

from __future__ import annotations

import json
import os
import re
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

from tests.web_server import LiveServer, serving  # noqa: E402
from urllib.parse import quote  # noqa: E402

BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (BROWSER and DRIVER), reason=f"no headless browser here (chromium: {BROWSER}, "
                                f"chromedriver: {DRIVER}); apt-get install chromium chromium-driver")
MARIAS = [sys.executable, "-c", "from referee.cli import main; main()"]
FLAGS = ("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
         "--disable-component-update --disable-sync --window-size=1300,1000").split()


def shots_dir(tmp_path) -> Path:
    return Path(os.environ.get("MARIAS_SCREENSHOTS") or tmp_path)


def cards_at(browser, selector: str) -> list[str]:
    """The ``data-card`` of every element ``selector`` finds, read in one script: the page may
    draw itself again at any moment (the analysis arriving), which would leave elements found
    one call earlier stale."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), e => e.getAttribute('data-card'))", selector)


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
        return cards_at(browser, f".seat-{seat} .card")

    for s in range(3):  # all-seeing, step 0: the hands as dealt
        assert sorted(hand(s)) == sorted(rec["hands"][s])
    n = len(rec["decisions"])
    for i in range(n):
        assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == str(i)
        nxt = browser.find_element(By.ID, "next-decision")
        assert nxt.get_attribute("data-action") == rec["decisions"][i]["action"]
        assert not re.search(r"\b(play|barva|betl|durch|flek|proti|trump):", nxt.text), nxt.text  # words, not the protocol
        browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == str(n)
    pay = rec["result"]["payments"]
    assert browser.find_element(By.ID, "payments").text == "payments: " + " · ".join(
        f"seat {s} {'+' if x > 0 else ''}{x}" for s, x in enumerate(pay))
    played = [t["cards"] for t in rec["tricks"]]
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('#tricks tr')).slice(1).map("
        "r => Array.from(r.querySelectorAll('.card'), c => c.getAttribute('data-card')))")
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


def _views(data: dict, seat: int) -> list[dict]:
    out, cur = [], {}
    for st in data["steps"]:
        cur = dict(cur)
        for k, v in st["views"][seat].items():
            grown = isinstance(v, dict) and isinstance(v.get("+"), list) and isinstance(cur.get(k), list)
            cur[k] = cur[k] + v["+"] if grown else v
        out.append(cur)
    return out


def test_the_replayer_opens_at_the_position_a_link_names_and_no_bot_text_runs_a_script(browser, web_site, tmp_path):
    """A link opens the replayer at its deal, step and view; the address follows the steps; the slider
    and autoplay move it.  Every page over a folder of bot-written markup (hello name and version, faults,
    stderr, a log's file name) runs none of it.  A decided duel's page shows no ETA and no live mark, and
    its LLR of minus infinity at the lower bound."""
    srv = LiveServer([web_site.root], tmp_path / "plays")
    log = web_site.log.relative_to(web_site.root).as_posix()
    clean = "return window.__pwned === undefined && document.querySelectorAll('img').length === 0"
    try:
        data = json.loads(srv.get(f"/api/replay/0/{log}?partie=1&deal=4", 30)[1])
        view = _views(data, 1)[17]
        browser.get(f"{srv.url}/replay/0/{log}?partie=1&deal=4&step=17&seat=1")
        wait(lambda: browser.find_element(By.ID, "step-no").get_attribute("data-step") == "17", what="step 17")

        def hand(seat):
            return cards_at(browser, f".seat-{seat} .seat-hand .card")

        assert "on" in browser.find_element(By.CSS_SELECTOR, "button[data-who='1']").get_attribute("class")
        assert sorted(hand(1)) == sorted(view["hand"]) and hand(0) == [] and hand(2) == []
        assert browser.find_element(By.ID, "timeline").get_attribute("value") == "17"
        browser.save_screenshot(str(shots_dir(tmp_path) / "web-replay-link.png"))
        browser.find_element(By.ID, "next").click()
        assert browser.current_url.endswith("partie=1&deal=4&step=18&seat=1")
        browser.find_element(By.TAG_NAME, "body").send_keys("a")
        assert browser.current_url.endswith("step=18&seat=all")
        browser.execute_script("const s = document.getElementById('timeline'); s.value = 5; s.dispatchEvent(new Event('input'));")
        assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == "5" and browser.current_url.endswith("step=5&seat=all")
        browser.find_element(By.ID, "play").click()
        wait(lambda: int(browser.find_element(By.ID, "step-no").get_attribute("data-step")) >= 7, 30, "autoplay")
        browser.find_element(By.ID, "play").click()
        stopped = browser.find_element(By.ID, "step-no").get_attribute("data-step")
        time.sleep(2)  # paused: it stays
        assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == stopped
        # the fault in the middle of a trick (bug 3): at the last step the led card is on the table
        rec = next(json.loads(x) for x in web_site.log.read_text().splitlines() if '"type":"deal"' in x and '"deal":1,' in x)
        led = [d["action"][5:] for d in rec["decisions"] if d["decision"] == "play"][-1]
        browser.get(f"{srv.url}/replay/0/{log}?partie=1&deal=1&step=999")
        wait(lambda: browser.find_elements(By.ID, "fault"), what="the fault")
        assert cards_at(browser, "#trick .played .card")[0] == led
        # cards laid down (bug 4): the all-seeing last step shows every hand as it was when they were laid
        laid = next(json.loads(x) for x in web_site.log.read_text().splitlines() if '"type":"deal"' in x and '"deal":4,' in x)
        assert laid["laid"], "robot lays its cards down in deal 4 of the site's match"
        played = {c for t in laid["tricks"] for c in t["cards"]}
        browser.get(f"{srv.url}/replay/0/{log}?partie=1&deal=4&step=999&seat=all")
        wait(lambda: browser.find_elements(By.ID, "ended") or "when the cards were laid" in browser.find_element(By.ID, "trick").text,
             what="the laid-down end")
        shown = [hand(s) for s in range(3)]
        assert all(shown) and sorted(shown[laid["laid"]["seat"]]) == sorted(laid["laid"]["cards"])
        assert not played & {c for h in shown for c in h}
        # markup written by the bot: shown as text, never run
        browser.get(f"{srv.url}/replay/0/{log}?partie=1&deal=3&step=999")
        wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#stderr pre"), what="the stderr tail")
        assert "<script>window.__pwned=7</script>" in browser.find_element(By.CSS_SELECTOR, "#stderr pre").text
        assert "onerror" in browser.find_element(By.ID, "evidence").text and browser.execute_script(clean)
        markup = quote(web_site.markup_log.relative_to(web_site.root).as_posix())
        for page, ready in [("/", "#events"), (f"/log/0/{markup}", "#analysis-summary"), (f"/replay/0/{markup}?partie=1&deal=3&step=99", "#fault"),
                            (f"/replay/0/{markup}?partie=1&deal=2&step=20&seat=1", "#loss-graph canvas"),
                            (f"/log/0/{log}", "#complete"), ("/tournament/0/tour", "#table-standings")]:
            browser.get(srv.url + page)
            wait(lambda: browser.find_elements(By.CSS_SELECTOR, ready), what=page)
            assert browser.execute_script(clean), page
        # the tournament's bot links to its games
        browser.find_element(By.CSS_SELECTOR, "#table-standings a.bot-logs").click()
        wait(lambda: "?bot=" in browser.current_url and browser.find_element(By.ID, "logs-title").text.startswith("Logs of"), what="a bot's logs")
        bot = browser.find_element(By.ID, "logs-title").text.split()[-1]
        rows = browser.find_elements(By.CSS_SELECTOR, "#logs-table tr[data-log]")
        assert rows and all(bot + " " in r.find_element(By.CSS_SELECTOR, "td.result").text for r in rows)
        # a decided duel (bug 5): no ETA, no live mark; its -inf LLR drawn at the lower bound, marked
        browser.get(srv.url + "/tournament/0/same")
        wait(lambda: browser.find_elements(By.ID, "llr-clipped"), what="the duel")
        assert browser.find_element(By.ID, "state").text.lower() == "decided"
        assert not browser.find_elements(By.ID, "eta") and not browser.find_elements(By.ID, "live")
        lower, marks = browser.execute_script("const d = M.plots.llr.data; return [d[3][0], d[4]]")
        assert marks[2] == pytest.approx(lower, abs=1e-3) and marks[:2] == [None, None]
    finally:
        srv.stop()


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
        assert not browser.find_elements(By.ID, "eta") and not browser.find_elements(By.ID, "live")  # nothing runs
        stopped_at = done()
        proc = subprocess.Popen([*MARIAS, *args], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait(lambda: state() == "finished", 300, "the finished state")
        assert done() == 12 >= stopped_at and first
        assert not browser.find_elements(By.ID, "eta") and not browser.find_elements(By.ID, "live")
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


def test_the_report_opens_offline_inflates_its_logs_and_says_which_it_left_out(browser, web_site, tmp_path):
    out = tmp_path / "t.html"
    marias("report", str(web_site.tour), "-o", str(out), "--max-logs", "2")
    logs = sorted(p.name for p in (web_site.tour / "logs").glob("*.jsonl"))
    browser.get(out.as_uri())
    wait(lambda: browser.find_element(By.ID, "table-standings"), what="the standings")
    assert browser.find_element(By.CSS_SELECTOR, "#curves canvas")  # the chart library ran, offline
    assert len(browser.find_elements(By.CSS_SELECTOR, "#logs-table tr[data-log] a")) == 2
    assert [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#logs-table .tag.off")] == ["not in this report"] * 2
    browser.find_element(By.CSS_SELECTOR, "#logs-table a").click()
    wait(lambda: len(browser.find_elements(By.CSS_SELECTOR, "table.deals tr[data-deal]")) == 12, what="the log, inflated")
    browser.find_elements(By.CSS_SELECTOR, "a.replay-link")[4].click()
    wait(lambda: browser.find_element(By.ID, "step-no"), what="the replayer")
    for _ in range(12):
        browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "step-no").get_attribute("data-step") == "12"
    assert "step=12&seat=all" in browser.current_url  # the position, in the address
    assert "null" not in browser.find_element(By.ID, "replay").text.split()
    browser.save_screenshot(str(shots_dir(tmp_path) / "web-report-replay.png"))
    browser.find_element(By.ID, "next-deal").click()
    wait(lambda: browser.find_element(By.ID, "step-no").get_attribute("data-step") == "0", what="the next deal")
    assert "deal 6" in browser.find_element(By.CSS_SELECTOR, "#replay h2").text
    # a log the report left out (bug 2: "Cannot read properties of undefined") says so
    browser.get(out.as_uri() + "#log:0/logs/" + logs[-1])
    wait(lambda: "not in this report" in browser.find_element(By.ID, "loghead").text, what="the note")
    assert "--max-logs 2" in browser.find_element(By.ID, "loghead").text
    # a bot's games
    browser.get(out.as_uri() + "#bot:r")
    wait(lambda: browser.find_element(By.ID, "logs-title").text == "Logs of r", what="r's logs")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#logs-table tr[data-log]")) == 3


def test_the_replayer_shows_each_legal_cards_value_a_loss_graph_and_the_blunders(browser, web_site, tmp_path):
    """Issue 35 item 3: the log page asks the server for the log's analysis (computed in the background,
    two worlds a decision to keep it cheap) and lists its blunders; a blunder's link opens the replayer at
    that step in that seat's view, where each legal card carries its values (the API's numbers), the loss
    graph is drawn and the deal's blunders link to their steps."""
    from referee.analysis.deals import Settings

    root = tmp_path / "served"
    (root / "logs").mkdir(parents=True)
    logs = sorted((web_site.tour / "logs").glob("*.jsonl"))
    log = root / "logs" / logs[0].name
    shutil.copyfile(logs[0], log)
    srv = LiveServer([root], tmp_path / "plays", analysis=Settings(worlds=2), analysis_processes=1)
    rel = f"logs/{log.name}"
    try:
        browser.get(f"{srv.url}/log/0/{rel}")
        wait(lambda: browser.find_elements(By.ID, "analysis-summary"), 300, "the log's analysis")
        d = json.loads(srv.get(f"/api/analysis/0/{rel}", 30)[1])
        assert d["state"] == "done" and d["cached"]  # computed once, then read from the cache
        blunders = [(dl, x) for dl in d["deals"] for x in dl["decisions"] if x["blunder"]]
        assert blunders, "random bots blunder"
        rows = browser.find_elements(By.CSS_SELECTOR, "#blunders tr[data-step]")
        assert len(rows) == len(blunders)
        summary = browser.find_element(By.ID, "analysis-summary").text
        assert all(r["bot"] in summary for r in d["summary"])
        browser.save_screenshot(str(shots_dir(tmp_path) / "web-log-blunders.png"))
        k = len(blunders) // 2
        dl, x = blunders[k]
        rows[k].find_element(By.CSS_SELECTOR, "a.blunder-link").click()
        wait(lambda: browser.find_elements(By.ID, "values-table"), 60, "the values at the blunder")
        assert browser.current_url.endswith(f"partie={dl['partie']}&deal={dl['deal']}&step={x['step']}&seat={x['seat']}")
        shown = {r.get_attribute("data-action"): r for r in browser.find_elements(By.CSS_SELECTOR, "#values-table tr[data-action]")}
        assert sorted(shown) == sorted(v["action"] for v in x["legal"])
        for v in x["legal"]:
            r = shown[v["action"]]
            assert float(r.find_element(By.CSS_SELECTOR, "td.dd").get_attribute("data-grose")) == v["dd"]["grose"]
            assert float(r.find_element(By.CSS_SELECTOR, "td.view").get_attribute("data-grose")) == pytest.approx(v["view"]["grose"])
        assert "chosen" in shown[x["chosen"]].get_attribute("class") and "blunder" in browser.find_element(By.ID, "verdict").text
        # on the cards of the hand: every legal card carries its value, no other card does
        valued = set(cards_at(browser, f".seat-{x['seat']} .seat-hand .card.valued"))
        assert valued == {v["action"][5:] for v in x["legal"] if v["action"] != "lay"}
        # the loss graph and the deal's blunders, each a link to its step
        assert browser.find_elements(By.CSS_SELECTOR, "#loss-graph canvas")
        links = browser.find_elements(By.CSS_SELECTOR, "#deal-blunders a.blunder-link")
        here = [y for e, y in blunders if (e["partie"], e["deal"]) == (dl["partie"], dl["deal"])]
        assert [int(a.get_attribute("data-step")) for a in links] == [y["step"] for y in here]
        browser.save_screenshot(str(shots_dir(tmp_path) / "web-replay-values.png"))
        links[-1].click()
        wait(lambda: browser.find_element(By.ID, "step-no").get_attribute("data-step") == str(here[-1]["step"]), what="the last blunder")
        assert browser.current_url.endswith(f"step={here[-1]['step']}&seat={here[-1]['seat']}")  # in that seat's view
        wait(lambda: browser.find_elements(By.ID, "values-table"), 60, "its values")
        # the graph's points are steps: a click on the graph moves the replayer (keys and slider as before)
        browser.find_element(By.ID, "first").click()
        assert not browser.find_elements(By.ID, "values-table")  # the bidding: no card to value
    finally:
        srv.stop()
