/* The play page: this browser is one seat of a match.  It receives the protocol lines a bot in
   that seat receives (server-sent events, one line each, kept in window.mariasLines) and answers
   each request with one of its legal actions, chosen by clicking cards and buttons. */
"use strict";
(function () {
  const P = M.page, el = M.el;
  const lines = (window.mariasLines = []);
  const S = { seat: P.seat, labels: ["seat 0", "seat 1", "seat 2"], request: null, talonKind: null, picked: [], teller: null, deal: null, done: false };
  const told = document.getElementById("told");

  function tell(text, cls) { if (text) told.append(el("li", { class: cls || null }, text)); told.scrollTop = told.scrollHeight; }
  function head(text) { document.getElementById("playhead").textContent = text; }

  async function send(obj) {
    const r = await fetch(P.answer, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(obj) });
    if (!r.ok) tell("refused: " + (await r.text()), "error");
  }
  function act(action) {
    const req = S.request;
    if (!req) return;
    S.request = null;
    document.getElementById("ask").replaceChildren(el("span", { class: "muted" }, "sent: " + action));
    send({ type: "action", id: req.id, action });
  }

  function words(action, decision) {
    if (action === "dobra") return "„dobrá“";
    if (action === "spatna") return "„špatná“ (take the talon)";
    if (action === "durch") return "„durch“ (take the talon)";
    if (action === "lay") return "lay the cards down (R8)";
    if (action.startsWith("contract:")) return "„" + M.CONTRACT[action.slice(9)] + "“";
    if (decision === "flek") { const f = M.parseFlek(action); return "„" + M.flekWords(f.words, f.proti, (S.request.view || {}).levels || {}) + "“"; }
    if (action === "trump:zlidu") return "z lidu (the 8th card, blind)";
    return action;
  }

  function renderTable(view) {
    const t = document.getElementById("table");
    const betl = view.game === "betl" || view.game === "durch";
    const rows = [0, 1, 2].map((s) => el("div", { class: "seat" + (view.to_move === s ? " to-move" : "") + (view.actor === s ? " actor" : ""), "data-seat": s },
      el("div", { class: "name" }, (s === S.seat ? "you" : S.labels[s]) + " · seat " + s + " · " + M.ROLE[(s - view.forhont + 3) % 3] + (view.actor === s ? " · actor" : ""))));
    const centre = el("div", { class: "centre" },
      el("div", {}, "trump card: ", view.trump_card ? M.cardEl(view.trump_card) : el("span", { class: "muted" }, view.zlidu ? "z lidu (not shown)" : "not known")),
      view.game ? el("div", {}, "game: " + (view.game === "barva" ? (M.CONTRACT[view.contract] || "„Barva?“") + (view.trump && view.contract ? " in " + M.SUITS[view.trump][0] + " " + M.SUITS[view.trump][1] : "") : view.game) +
        (Object.keys(view.levels || {}).length ? " · " + Object.entries(view.levels).map(([c, v]) => c + (v ? " " + M.LEVELS[v] : "")).join(", ") : "")) : null,
      view.talon && view.talon.length ? el("div", {}, "talon (yours): ", view.talon.map((c) => M.cardEl(c))) : null,
      el("div", { class: "trick", id: "trick" }, (view.trick || []).length ? view.trick.map((x) => el("div", { class: "played" }, el("span", { class: "muted" }, x.seat === S.seat ? "you" : "seat " + x.seat), M.cardEl(x.card))) : el("span", { class: "muted" }, view.phase)),
      (view.hlasky || []).length ? el("div", {}, "hlášky: " + view.hlasky.map((h) => "seat " + h.seat + " " + h.points + " " + M.SUITS[h.suit][0]).join(" · ")) : null,
      el("div", {}, "points: " + (view.points || []).map((p, s) => (s === S.seat ? "you " : "seat " + s + " ") + p).join(" · ")));
    t.replaceChildren(...rows, centre);
    return betl;
  }

  function renderRequest(req) {
    S.request = req; S.talonKind = null; S.picked = [];
    const view = req.view, legal = req.legal;
    const betl = renderTable(view);
    const ask = document.getElementById("ask");
    const handNode = document.getElementById("hand");
    const clickable = {}; // card -> action, for the cards that are an action by themselves
    if (req.decision === "trump") for (const a of legal) if (a !== "trump:zlidu") clickable[a.slice(6)] = a;
    if (req.decision === "play") for (const a of legal) if (a.startsWith("play:")) clickable[a.slice(5)] = a;
    const buttons = legal.filter((a) => !(a in Object.fromEntries(Object.values(clickable).map((x) => [x, 1]))));
    function drawHand() {
      const talonCards = new Set();
      if (req.decision === "talon" && S.talonKind) {
        for (const a of legal) if (a.startsWith(S.talonKind + ":")) {
          const [x, y] = a.split(":")[1].split(",");
          if (!S.picked.length || S.picked[0] === x) talonCards.add(S.picked.length ? y : x);
        }
      }
      const row = el("div", { class: "cards mine", id: "myhand" });
      for (const c of M.sortHand(view.hand, betl)) {
        const action = clickable[c];
        const pickable = talonCards.has(c);
        const card = M.cardEl(c, { cls: (action || pickable ? "legal" : "") + (S.picked.includes(c) ? " picked" : "") });
        if (action) card.addEventListener("click", () => act(action));
        else if (pickable) card.addEventListener("click", () => {
          S.picked.push(c);
          if (S.picked.length === 2) act(S.talonKind + ":" + S.picked.join(","));
          else drawHand();
        });
        row.append(card);
      }
      handNode.replaceChildren(el("h3", {}, "your hand"), row);
    }
    const title = { trump: "choose the trump card from your first seven, or take it z lidu", talon: "discard two cards and announce the game", answer: "your answer", contract: "announce the contract", flek: "raise (flek) or say dobrá", play: "your card" }[req.decision];
    const box = el("div", {}, el("b", {}, title), " ");
    if (req.decision === "talon") {
      const kinds = [...new Set(legal.map((a) => a.split(":")[0]))];
      for (const k of kinds) box.append(el("button", { type: "button", class: "act", "data-kind": k, onclick: () => { S.talonKind = k; S.picked = []; drawHand(); box.querySelectorAll("button").forEach((b) => b.classList.toggle("on", b.dataset.kind === k)); } }, M.GAME[k] + " — then click two cards"));
    } else {
      for (const a of buttons) box.append(el("button", { type: "button", class: "act", "data-action": a, onclick: () => act(a) }, words(a, req.decision)));
    }
    ask.replaceChildren(box);
    drawHand();
    head("partie " + req.partie + " · deal " + req.deal + " · your move (" + req.decision + ") · groše so far: " + req.totals.map((x, s) => (s === S.seat ? "you " : "seat " + s + " ") + M.signed(x)).join(" · "));
  }

  function onLine(line) {
    lines.push(line);
    const m = JSON.parse(line);
    if (m.type === "hello") { send({ type: "hello", protocol: 1, name: "person", version: "web" }); return; }
    if (m.type === "partie_start") {
      S.seat = m.seat;
      S.labels = m.players.map((x, s) => (s === m.seat ? "you" : x));
      tell("partie " + m.partie + " (" + m.deals + " deals): you are seat " + m.seat, "head");
    } else if (m.type === "deal_start") {
      S.teller = new M.Teller(S.seat, S.labels);
      told.replaceChildren();
      S.deal = m.deal;
      tell("deal " + m.deal + ": forhont " + S.teller.who(m.forhont) + ", dealer " + S.teller.who(m.dealer) + (m.cut !== null ? ", cut " + m.cut : ""), "head");
      document.body.dataset.deal = m.deal;
    } else if (m.type === "event") {
      tell((S.teller || new M.Teller(S.seat, S.labels)).event(m.event));
    } else if (m.type === "request") {
      renderRequest(m);
    } else if (m.type === "deal_end") {
      renderTable(m.view);
      const r = m.result;
      tell("deal " + m.deal + " is over (" + r.kind + "): " + r.payments.map((x, s) => S.teller.who(s) + " " + M.signed(x)).join(" · "), "head");
      for (const c of r.components) tell(c.name + (c.level ? " " + M.LEVELS[c.level] : "") + " " + c.owner + " " + (c.won ? "won" : "lost") + " " + c.amount + " each (" + c.detail + ")");
      document.getElementById("hand").replaceChildren(el("h3", {}, "your cards left"), M.handEl(m.view.hand, false));
      document.getElementById("ask").replaceChildren(el("span", { class: "muted" }, "waiting for the next deal…"));
      document.body.dataset.dealsDone = m.deal;
    } else if (m.type === "partie_end") {
      head("partie over: " + m.totals.map((x, s) => (s === S.seat ? "you " : "seat " + s + " ") + M.signed(x) + " (place " + m.places[s] + ")").join(" · "));
    } else if (m.type === "bye") {
      S.done = true;
    }
  }

  function finish(status) {
    const link = document.getElementById("loglink");
    head((status.state === "finished" ? "finished: " : status.state + ": ") + (status.totals ? status.totals.map((x, s) => (s === S.seat ? "you " : "seat " + s + " ") + M.signed(x)).join(" · ") : "") + (status.error ? " " + status.error : ""));
    document.getElementById("ask").replaceChildren();
    if (P.log) link.replaceChildren(el("a", { href: P.log, id: "log-link" }, "the log of this game"));
    document.body.dataset.state = status.state;
  }

  const es = new EventSource(P.events);
  es.addEventListener("line", (ev) => onLine(ev.data));
  es.addEventListener("state", (ev) => { finish(JSON.parse(ev.data)); es.close(); });
  document.getElementById("quit").addEventListener("click", () => fetch(P.quit, { method: "POST" }));
})();
