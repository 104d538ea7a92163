/* The analysis of a log (marias analyze, computed by the server in the background: referee/web/analyses.py):
   in the replayer, each legal card's value at the step shown (double-dummy and from the seat's view) and a
   loss graph over the deal with the blunders marked; on the log page, the blunders with links to their steps.
   The page asks again while the server computes.  Bot names are put on the page as text. */
"use strict";
(function () {
  const el = M.el;
  const POLL_MS = 1500, BUSY_MS = 5000;

  /* a value in groše, signed: whole numbers as they are, means to two places */
  const groše = (x) => (x === null || x === undefined ? "·" : (x > 0 ? "+" : x < 0 ? "−" : "") + (Number.isInteger(x) ? Math.abs(x) : Math.abs(x).toFixed(2)));
  const lossText = (x) => (x === null || x === undefined ? "·" : Number.isInteger(x) ? String(x) : x.toFixed(2));
  const valueText = (v) => (v ? groše(v.grose) + (v.points !== undefined && v.points !== null ? " (" + (Number.isInteger(v.points) ? v.points : v.points.toFixed(1)) + " points)" : "") : "·");
  const actionEl = (a) => (a === "lay" ? el("span", { class: "lay" }, "lay down (R8)") : M.cardEl(a.slice(5)));
  const actionText = (a) => (a === "lay" ? "lay down" : M.cardText(a.slice(5)));
  const query = (partie, deal, step, seat) => "?partie=" + partie + "&deal=" + deal + "&step=" + step + "&seat=" + seat;

  /* Ask `url` until the analysis is done or failed; `show(d)` after each answer, `said(text)` on an error. */
  M.pollAnalysis = async function (url, show, said) {
    for (;;) {
      let r;
      try {
        r = await fetch(url);
      } catch (e) {
        said("the analysis: " + e.message);
        return;
      }
      if (r.status === 503) { said(await r.text()); await new Promise((ok) => setTimeout(ok, BUSY_MS)); continue; }
      if (!r.ok) { said("the analysis: " + r.status + " " + (await r.text())); return; }
      const d = await r.json();
      show(d);
      if (d.state !== "computing") return;
      await new Promise((ok) => setTimeout(ok, POLL_MS));
    }
  };

  function statusText(d) {
    const s = d.settings || {};
    if (d.state === "failed") return "the analysis failed: " + d.error;
    const how = "values in the seat's own groše: double-dummy (every hand known, best play after it) and from the seat's view (the mean over the " +
      s.worlds + " worlds it could not tell apart); a blunder: a loss from its view of at least " + s.blunder + " groš";
    if (d.state === "computing") return "analysing the log in the background (marias analyze): " + d.done + " of " + d.total + " deals done… " + how;
    return how + (d.cached ? " (from the cache)" : "");
  }

  /* ------------------------------------------------------------------ the replayer */
  M.attachAnalysis = function (rp, url, page) {
    const status = el("p", { class: "muted", id: "analysis-status" }, "asking for the analysis…");
    const graph = el("div", { class: "chart", id: "loss-graph" });
    const list = el("div", { id: "deal-blunders" });
    const box = el("div", { class: "analysis", id: "analysis" }, el("h3", {}, "analysis"), status, graph, list);
    rp.boardBox.after(box); // under the table, above a fault's box
    let deal = null, plot = null;
    const prev = rp.onMove;
    rp.onMove = (i, who) => { if (prev) prev(i, who); draw(i); };

    function link(x) { return page + query(rp.d.partie, rp.d.deal, x.step, x.seat); }

    function draw(i) {
      if (plot) plot.redraw(false);
      if (!deal) return;
      const x = deal.decisions.find((y) => y.step === i);
      if (!x) return;
      const story = rp.boardBox.querySelector(".story");
      const best = new Set(x.best_dd), bestView = new Set(x.best_view || []);
      const rows = x.legal.map((v) => el("tr", { "data-action": v.action, class: [v.action === x.chosen ? "chosen" : "", best.has(v.action) ? "best-dd" : "", bestView.has(v.action) ? "best-view" : ""].join(" ").trim() || null },
        el("td", {}, actionEl(v.action), v.action === x.chosen ? el("span", { class: "muted" }, " played") : null),
        el("td", { class: "num dd", "data-grose": v.dd.grose }, valueText(v.dd), best.has(v.action) ? " ★" : ""),
        el("td", { class: "num view", "data-grose": v.view ? v.view.grose : null }, valueText(v.view), bestView.has(v.action) ? " ★" : "")));
      const verdict = x.forced ? "a single legal card: no choice, no loss counted" :
        "played " + actionText(x.chosen) + ": it gave up " + lossText(x.loss_dd) + " groše double-dummy" + (x.loss_view === null ? "" : ", " + lossText(x.loss_view) + " from its view") +
        (x.blunder ? " — a blunder" : "");
      story.prepend(el("div", { id: "values" },
        el("h3", {}, "values of seat " + x.seat + "'s choices here (" + x.bot + ", in its groše)"),
        el("table", { class: "grid values", id: "values-table" },
          el("tr", {}, el("th", {}, "card"), el("th", {}, rp.who === "all" ? "double-dummy" : "double-dummy (every hand known: more than the seat knew)"),
            el("th", {}, "from its view (" + x.worlds + " worlds)")), rows),
        el("p", { id: "verdict", class: x.blunder ? "error" : null }, M.richText(verdict))));
      // on the cards themselves, where the hand is shown
      for (const v of x.legal) {
        if (v.action === "lay") continue;
        const c = rp.boardBox.querySelector(".seat-" + x.seat + " .seat-hand .card[data-card='" + v.action.slice(5) + "']");
        if (!c) continue;
        c.dataset.value = groše(v.dd.grose) + (v.view ? "\n" + groše(v.view.grose) : ""); // double-dummy over the seat's view
        c.classList.add("valued");
        if (best.has(v.action)) c.classList.add("best");
        c.title += " · double-dummy " + valueText(v.dd) + (v.view ? ", from its view " + valueText(v.view) : "");
      }
    }

    /* the bidding judged double-dummy: the game declared, and the betls and durches passed by that were makeable */
    function biddingEl(b) {
      if (!b) return null;
      const out = [];
      const g = b.declared;
      if (g) out.push("seat " + g.seat + " (" + g.bot + ") declared " + (g.game === "barva" ? M.CONTRACT[g.contract] || g.contract : g.game) +
        ": " + (g.made ? "made" : "not made") + " double-dummy" + (g.dd ? " (" + groše(g.dd.grose) + " for the actor)" : ""));
      for (const p of b.passed || []) if (p.makeable) out.push("seat " + p.seat + " (" + p.bot + ") passed by a " + p.game + " that was makeable double-dummy (step " + p.step + ")");
      return out.length ? el("p", { id: "bidding-verdict" }, "bidding: " + out.join("; ")) : null;
    }

    function buildGraph() {
      const xs = deal.decisions.filter((x) => !x.forced);
      if (!xs.length) { graph.replaceChildren(el("p", { class: "muted" }, "no card decision with a choice in this deal")); return; }
      const data = [xs.map((x) => x.step), xs.map((x) => x.actor_dd), xs.map((x) => x.loss_dd), xs.map((x) => x.loss_view),
        xs.map((x) => (x.blunder ? x.loss_view : null))];
      graph.replaceChildren();
      const width = Math.max(320, Math.min(1000, graph.clientWidth || 900));
      plot = new uPlot({
        width, height: 220, scales: { x: { time: false }, loss: { range: (u, lo, hi) => [0, Math.max(1, hi)] } },
        series: [{ label: "step" },
          { label: "the actor's value (double-dummy)", stroke: "#2980b9", width: 2 },
          { label: "loss (double-dummy)", scale: "loss", stroke: "#888", width: 0, points: { show: true, size: 6 } },
          { label: "loss (from the seat's view)", scale: "loss", stroke: "#e67e22", width: 0, points: { show: true, size: 7 } },
          { label: "blunder", scale: "loss", stroke: "#c0392b", width: 0, points: { show: true, size: 12, width: 3, fill: "#fff" } }],
        axes: [{ label: "step (click: go there)" }, { label: "the actor's groše" },
          { label: "loss, the seat's groše", scale: "loss", side: 1, grid: { show: false } }],
        hooks: { draw: [(u) => { // the step shown
          if (rp.i < data[0][0] || rp.i > data[0][data[0].length - 1]) return;
          const x = u.valToPos(rp.i, "x", true), ctx = u.ctx;
          ctx.save(); ctx.strokeStyle = "#444"; ctx.setLineDash([4, 4]); ctx.beginPath();
          ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke(); ctx.restore();
        }] },
      }, data, graph);
      plot.over.addEventListener("click", () => { const k = plot.cursor.idx; if (k !== null && k !== undefined) rp.go(data[0][k]); });
      const blunders = xs.filter((x) => x.blunder);
      list.replaceChildren(biddingEl(deal.bidding), el("p", {}, blunders.length ? "blunders in this deal:" : "no blunder in this deal"),
        blunders.length ? el("ul", {}, blunders.map((x) => el("li", {}, el("a", { href: link(x), class: "blunder-link", "data-step": x.step,
          onclick: (e) => { e.preventDefault(); rp.who = x.seat; rp.go(x.step); } },
          "step " + x.step + ", trick " + x.trick), M.richText(": seat " + x.seat + " (" + x.bot + ") played " + actionText(x.chosen) + ", " +
          "gave up " + lossText(x.loss_view) + " groše from its view (better " + (x.best_view || []).map(actionText).join(" ") + ")")))) : null);
    }

    M.pollAnalysis(url, (d) => {
      status.textContent = statusText(d);
      if (!deal && d.deals.length) {
        deal = d.deals[0];
        rp.analysis = deal;
        buildGraph();
        rp.render();
      }
    }, (text) => { status.textContent = text; });
  };

  /* ------------------------------------------------------------------ the log page */
  M.attachLogAnalysis = function (url, node, replay) {
    const status = el("p", { class: "muted", id: "analysis-status" }, "asking for the analysis…");
    const body = el("div");
    node.replaceChildren(el("h3", {}, "analysis"), status, body);
    M.pollAnalysis(url, (d) => {
      status.textContent = statusText(d);
      if (d.state !== "done") return;
      const summary = M.tableEl((d.summary || []).map((r) => ({
        bot: r.bot, "card decisions": r.decisions, "mean loss (double-dummy)": r.loss_dd, "mean loss (its view)": r.loss_view,
        blunders: r.blunders, "per 100 decisions": r.blunders_per_100, declared: r.declared, "made (double-dummy)": r.made_dd })), { id: "analysis-summary" });
      const rows = [];
      for (const dl of d.deals) for (const x of dl.decisions) if (x.blunder) rows.push([dl, x]);
      const table = el("table", { class: "grid", id: "blunders" },
        el("tr", {}, ["partie", "deal", "trick", "seat", "bot", "played", "better", "loss (its view)", "loss (double-dummy)", ""].map((h) => el("th", {}, h))),
        rows.map(([dl, x]) => el("tr", { "data-step": x.step },
          el("td", { class: "num" }, dl.partie), el("td", { class: "num" }, dl.deal), el("td", { class: "num" }, x.trick), el("td", {}, "seat " + x.seat), el("td", {}, x.bot),
          el("td", {}, actionEl(x.chosen)), el("td", {}, (x.best_view || []).map(actionEl)),
          el("td", { class: "num" }, lossText(x.loss_view)), el("td", { class: "num" }, lossText(x.loss_dd)),
          el("td", {}, el("a", { class: "blunder-link", href: replay + query(dl.partie, dl.deal, x.step, x.seat) }, "step " + x.step)))));
      body.replaceChildren(el("h4", {}, "per bot"), summary, el("h4", {}, rows.length ? rows.length + " blunders" : "no blunder"), rows.length ? table : null);
    }, (text) => { status.textContent = text; });
  };
})();
