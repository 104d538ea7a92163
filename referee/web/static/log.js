/* The log page: its header facts, partie and deals (contract, actor, result, faults). */
"use strict";
(function () {
  const el = M.el;

  function gameText(d) {
    if (!d.game) return "no game";
    if (d.game === "barva") {
      const lv = Object.entries(d.levels || {}).filter(([, v]) => v).map(([c, v]) => c + " " + M.LEVELS[v]).join(", ");
      return (M.CONTRACT[d.contract] || "barva") + (d.trump ? " in " + M.SUITS[d.trump][0] + " " + M.SUITS[d.trump][1] : "") + (lv ? " · " + lv : "");
    }
    const lv = (d.levels || {})[d.game];
    return d.game + (lv ? " " + M.LEVELS[lv] : "");
  }

  M.renderLog = function (data, head, body, link) {
    head.replaceChildren(
      el("h2", {}, data.name),
      el("table", { class: "kv" },
        data.labels.map((l, i) => {
          const b = data.bots[i] || {};
          const said = b.name && b.name !== l ? " · says it is " + b.name + (b.version ? " " + b.version : "") : b.version ? " · version " + b.version : "";
          return el("tr", {}, el("th", {}, "bot " + i), el("td", {}, l + "  ", el("span", { class: "muted" }, JSON.stringify(b.command || "") + said)));
        }),
        el("tr", {}, el("th", {}, "created"), el("td", {}, data.created || "-")),
        el("tr", {}, el("th", {}, "state"), el("td", { id: "complete" }, data.complete ? "complete; seed " + data.seed : "incomplete (no footer): not a result")),
        el("tr", {}, el("th", {}, "limits"), el("td", {}, JSON.stringify(data.limits) + " · sandbox " + data.sandbox))));
    body.replaceChildren();
    for (const p of data.parties) {
      body.append(el("h3", {}, "partie " + p.partie + ": " + p.players.map((n, s) => "seat " + s + " " + n).join(" · ")));
      const t = el("table", { class: "grid deals", "data-partie": p.partie });
      t.append(el("thead", {}, el("tr", {}, ["deal", "forhont", "game", "actor", "result", "seat 0", "seat 1", "seat 2", "faults", ""].map((h) => el("th", {}, h)))));
      const tb = el("tbody");
      for (const d of p.deals) {
        const pay = d.payments || [null, null, null];
        tb.append(el("tr", { class: d.faults.length ? "fault" : null, "data-deal": d.deal },
          el("td", { class: "num" }, d.deal), el("td", {}, d.forhont), el("td", {}, M.richText(gameText(d))),
          el("td", {}, d.actor === null ? "-" : "seat " + d.actor), el("td", {}, d.kind || "-"),
          ...pay.map((x) => el("td", { class: "num" }, x === null ? "·" : M.signed(x))),
          el("td", {}, d.faults.map((f) => "seat " + f.seat + " " + f.kind).join("; ") || "-"),
          el("td", {}, el("a", { href: link(p.partie, d.deal), class: "replay-link" }, "replay"))));
      }
      t.append(tb);
      body.append(t);
      if (p.forfeit) body.append(el("p", { class: "note" }, "seat " + p.forfeit.seat + " forfeited the rest from deal " + p.forfeit.from_deal + " (R12.3)"));
      if (p.totals) body.append(el("p", {}, "totals: " + p.totals.map((x, s) => "seat " + s + " " + M.signed(x) + " (place " + p.places[s] + ")").join(" · ")));
    }
  };

  async function start() {
    const head = document.getElementById("loghead"), body = document.getElementById("parties");
    try {
      const data = await M.load(M.page.api);
      M.renderLog(data, head, body, (p, d) => M.page.replay + "?partie=" + p + "&deal=" + d);
      if (M.page.analysis && M.attachLogAnalysis) M.attachLogAnalysis(M.page.analysis, document.getElementById("analysis"), M.page.replay);
    } catch (e) {
      M.fail(head, e);
    }
  }
  if (M.page.kind === "log") start();
})();
