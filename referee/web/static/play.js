/* The play page: this browser is one seat of a table, drawn as a card table.
   It receives exactly the protocol lines a bot in this seat receives (server-sent events, one line
   each, kept in window.mariasLines) and answers the request awaiting an answer with one of its
   legal actions, chosen by clicking cards and buttons.  Nothing here knows more than those lines:
   the opponents' cards are backs, counted from what the seat was told.
   The table shows the lines one by one at a table's pace (a card played, a trick taken), pauses
   after each deal on the settlement and the score sheet (stolový lístek) until the person goes
   on, and keeps the last trick to be looked at (R: "každý hráč má právo shlédnout poslední
   ukončený zdvih").  Untrusted text (names, fault texts) is only ever set as text. */
"use strict";
(function () {
  const P = M.page, el = M.el;
  const lines = (window.mariasLines = []);
  const $ = (id) => document.getElementById(id);
  const me = P.seat;
  const LEFT = (me + 1) % 3, RIGHT = (me + 2) % 3; // clockwise: the next player sits to the left
  const PLACE = { [me]: "me", [LEFT]: "left", [RIGHT]: "right" };
  const DELAY = { bid: 500, play: 650, mine: 200, trick: 1300 };
  const PACES = { calm: 1.6, normal: 1, brisk: 0.45, instant: 0 }; // the table's pace, remembered in this browser
  let pace = "normal";
  try { pace = localStorage.getItem("marias-pace") in PACES ? localStorage.getItem("marias-pace") : "normal"; } catch (e) { /* default */ }

  const T = {
    names: [0, 1, 2].map((s) => "seat " + s), partie: 0, deals: 12,
    deal: 0, forhont: null, dealer: null, totals: [0, 0, 0],
    view: null, bids: [], tricks: [], trick: [], hand: null, laid: null, hlasky: [], trumpCard: null,
    bubbles: {}, shown: null, lastTrick: null, showLast: false,
    ask: null, answered: new Set(), talonKind: null, picked: [],
    sheet: [], settled: false, result: null, final: null, status: null, ended: false, fault: null,
    teller: null,
  };
  const queue = [];
  let caughtUp = false, busy = false, paused = false;

  // ---------------------------------------------------------------- words
  const who = (s) => (s === me ? "you" : T.names[s]);
  const role = (s) => (T.forhont === null ? "" : M.ROLE[(s - T.forhont + 3) % 3]);
  function said(text) { const i = text.indexOf(": "); return i < 0 ? text : text.slice(i + 2); }
  function tell(text, cls) {
    const told = $("told");
    told.append(el("li", { class: cls || null }, M.richText(text)));
    told.scrollTop = told.scrollHeight;
  }
  function gameWords(v) {
    if (!v || !v.game) return null;
    const lv = Object.entries(v.levels || {}).filter(([, x]) => x).map(([c, x]) => M.LEVELS[x] + " na " + (M.ACC[c] || c));
    let head;
    if (v.game === "barva") head = v.contract ? "„" + M.CONTRACT[v.contract] + "“" : "„Barva?“";
    else head = "„" + v.game + "“";
    return { head, trump: v.game === "barva" && v.contract ? v.trump : null, levels: lv, proti: Object.keys(v.proti || {}).map((g) => g + " proti") };
  }
  function answerWords(action, decision) {
    if (action === "dobra") return "„dobrá“";
    if (action === "spatna") return "„špatná“ — take the talon";
    if (action === "durch") return "„durch“ — take the talon";
    if (action === "lay") return "lay the cards down (R8)";
    if (action === "trump:zlidu") return "z lidu — the 8th card, blind";
    if (action.startsWith("contract:")) return "„" + M.CONTRACT[action.slice(9)] + "“";
    if (decision === "flek") {
      const f = M.parseFlek(action);
      return "„" + M.flekWords(f.words, f.proti, (T.ask.msg.view || {}).levels || {}) + "“";
    }
    return action;
  }

  // ---------------------------------------------------------------- what the seat knows
  /* Cards each seat holds now, from the bids and the tricks this seat was told. */
  function counts() {
    const c = [0, 0, 0];
    if (T.forhont === null) return c;
    let dealt = false, holder = null;
    for (const b of T.bids) {
      if (b.decision === "trump") { dealt = true; holder = T.forhont; }
      else if (b.decision === "talon") holder = null;
      else if (b.decision === "answer" && (b.action === "spatna" || b.action === "durch")) holder = b.seat;
    }
    if (!dealt) { c[T.forhont] = 7; return c; }
    for (let s = 0; s < 3; s++) c[s] = s === holder ? 12 : 10;
    for (const t of T.tricks) t.cards.forEach((_, i) => { c[(t.leader + i) % 3] -= 1; });
    for (const x of T.trick) c[x.seat] -= 1;
    if (T.laid) c[T.laid.seat] = 0;
    return c;
  }
  function tricksWon() {
    const w = [0, 0, 0];
    for (const t of T.tricks) w[t.winner] += 1;
    return w;
  }
  const betl = () => T.view && (T.view.game === "betl" || T.view.game === "durch");
  function awaiting() { return T.ask && T.status && T.status.awaiting === T.ask.n && !T.answered.has(T.ask.n) && !T.ended; }

  // ---------------------------------------------------------------- the lines
  function apply(item) {
    const m = item.msg;
    if (m.type === "hello") { T.ask = item; if (awaiting()) hello(); return 0; }
    if (m.type === "partie_start") {
      const again = T.partie === m.partie;
      T.partie = m.partie; T.deals = m.deals;
      T.names = m.players.map((x) => String(x));
      tell(again ? "after the fault your seat starts afresh (as a bot's process would)" : "partie " + m.partie + " · " + m.deals + " deals · you are seat " + me, "head");
      return 0;
    }
    if (m.type === "deal_start") {
      if (T.deal && !T.settled) addRow(T.deal, null, m.totals.map((x, s) => x - T.totals[s]), "not seen: your seat was restarted after a fault");
      Object.assign(T, { deal: m.deal, forhont: m.forhont, dealer: m.dealer, totals: m.totals.slice(), view: null, bids: [], tricks: [], trick: [],
                         hand: null, laid: null, hlasky: [], trumpCard: null, bubbles: {}, shown: null, lastTrick: null, showLast: false,
                         settled: false, result: null, fault: null, teller: new M.Teller(me, T.names) });
      T.teller.who = who; // the names as the table shows them
      $("told").replaceChildren();
      tell("deal " + m.deal + " of " + T.deals + ": forhont " + who(m.forhont) + ", dealer " + who(m.dealer) + (m.cut !== null && m.cut !== undefined ? " · cut at " + m.cut : ""), "head");
      document.body.dataset.deal = m.deal;
      return 0;
    }
    if (m.type === "event") return onEvent(m.event);
    if (m.type === "request") {
      const v = m.view;
      Object.assign(T, { view: v, bids: v.bids.slice(), tricks: v.tricks.slice(), trick: v.trick.slice(), hand: v.hand.slice(),
                         hlasky: v.hlasky.slice(), trumpCard: v.trump_card || T.trumpCard, laid: v.laid, ask: item, talonKind: null, picked: [] });
      if (T.trick.length) T.shown = null;
      return 0;
    }
    if (m.type === "deal_end") {
      const v = m.view;
      Object.assign(T, { view: v, bids: v.bids.slice(), tricks: v.tricks.slice(), trick: v.trick.slice(), hand: v.hand.slice(), laid: v.laid,
                         hlasky: v.hlasky.slice(), trumpCard: v.trump_card || T.trumpCard, result: m.result, settled: true });
      const g = gameWords(v);
      addRow(m.deal, g ? { game: v.game, head: g.head, trump: g.trump, levels: g.levels, actor: v.actor } : null, m.result.payments,
             m.result.kind === "played" ? null : m.result.kind);
      tell("deal " + m.deal + " is over: " + m.result.payments.map((x, s) => who(s) + " " + M.signed(x)).join(" · "), "head");
      document.body.dataset.dealsDone = m.deal;
      if (caughtUp) paused = true;
      return 0;
    }
    if (m.type === "partie_end") { T.final = m; return 0; }
    return 0;
  }
  function onEvent(ev) {
    const text = (T.teller || new M.Teller(me, T.names)).event(ev);
    if (ev.kind === "action") {
      if (ev.decision === "play") {
        if (ev.action === "lay") { tell(text); return 0; }
        const card = ev.action.slice(5);
        if (T.shown) T.shown = null;
        T.showLast = false;
        T.trick.push({ seat: ev.seat, card });
        if (ev.seat === me && T.hand) T.hand = T.hand.filter((c) => c !== card);
        if (ev.seat === me && T.ask) T.answered.add(T.ask.n);
        tell(text);
        return ev.seat === me ? DELAY.mine : DELAY.play;
      }
      T.bids.push({ seat: ev.seat, decision: ev.decision, action: ev.action });
      if (ev.trump_card) T.trumpCard = ev.trump_card;
      if (ev.decision === "trump" && ev.action.startsWith("trump:") && ev.action !== "trump:zlidu") T.trumpCard = ev.action.slice(6);
      if (ev.decision === "talon" && T.view) { T.view = { ...T.view, game: ev.action.split(":")[0], actor: ev.seat }; }
      T.bubbles[ev.seat] = said(text);
      tell(text);
      return ev.seat === me ? 0 : DELAY.bid;
    }
    if (ev.kind === "trick") {
      T.tricks.push({ leader: ev.leader, cards: ev.cards, winner: ev.winner });
      T.lastTrick = { leader: ev.leader, cards: ev.cards, winner: ev.winner };
      T.shown = T.lastTrick;
      T.trick = [];
      tell(text);
      return DELAY.trick;
    }
    if (ev.kind === "hlaska") { T.hlasky.push(ev); T.bubbles[ev.seat] = "hláška " + ev.points; tell(text); return DELAY.bid; }
    if (ev.kind === "laid") { T.laid = { seat: ev.seat, cards: ev.cards }; tell(text); return DELAY.trick; }
    if (ev.kind === "fault") { T.fault = ev; tell(text, "error"); return DELAY.trick; }
    return 0;
  }
  function addRow(deal, game, pay, note) {
    T.sheet = T.sheet.filter((r) => r.deal !== deal);
    T.sheet.push({ deal, game, pay: pay.slice(), note });
  }

  function pump() {
    if (busy || paused || !caughtUp) return;
    while (queue.length) {
      const delay = apply(queue.shift());
      if (paused) break;
      if (delay && PACES[pace]) { render(); busy = true; setTimeout(() => { busy = false; pump(); }, delay * PACES[pace]); return; }
    }
    render();
  }
  function catchUp() {
    // the lines sent before this page opened: applied at once (a reopened tab comes back to where its seat is)
    while (queue.length) apply(queue.shift());
    caughtUp = true;
    if (T.result && T.deal && T.settled && !T.final && !T.ended) paused = true; // between deals: the sheet
    T.shown = null;
    render();
  }

  // ---------------------------------------------------------------- answering
  async function post(url, obj) {
    const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(obj) });
    if (!r.ok) tell("refused: " + (await r.text()), "error");
    return r.ok;
  }
  function act(action) {
    if (!awaiting()) return;
    const n = T.ask.n, req = T.ask.msg;
    T.answered.add(n);
    render();
    post(P.answer, { type: "action", id: req.id, action }).then((ok) => { if (!ok) { T.answered.delete(n); render(); } });
  }
  function hello() {
    const n = T.ask.n;
    T.answered.add(n);
    post(P.answer, { type: "hello", protocol: 1, name: (T.status && T.status.name) || "person", version: "web" });
  }

  // ---------------------------------------------------------------- drawing
  function plate(s, c) {
    const st = T.status && T.status.seats ? T.status.seats[s] : null;
    const v = T.view || {};
    const won = tricksWon()[s];
    const badges = [role(s) ? el("span", { class: "badge" }, role(s)) : null,
                    v.actor === s && v.game ? el("span", { class: "badge actor" }, "actor") : null,
                    st && st.kind === "person" && s !== me ? (st.taken ? el("span", { class: "badge " + (st.here ? "here" : "away") }, st.here ? "here" : "away")
                                                               : el("span", { class: "badge away" }, "invited")) : null,
                    st && st.kind === "bot" ? el("span", { class: "badge bot" }, "bot") : null];
    const total = T.totals[s] + (T.settled && T.result ? T.result.payments[s] : 0);
    return el("div", { class: "plate" + (T.view && T.view.to_move === s && !T.settled ? " to-move" : "") },
      el("div", { class: "who" }, el("b", {}, s === me ? "you (" + T.names[s] + ")" : T.names[s]), " ", badges),
      el("div", { class: "meta" }, "seat " + s + " · " + M.signed(total) + " groše" + (T.tricks.length || won ? " · tricks " + won : "") +
        (v.game === "barva" && T.tricks.length ? " · " + (v.points || [0, 0, 0])[s] + " points" : "") + (c !== null ? " · " + c + (c === 1 ? " card" : " cards") : "")));
  }
  function bubble(s) {
    const b = T.bubbles[s];
    return b ? el("div", { class: "bubble" }, M.richText(b)) : null;
  }
  function fan(n) {
    const row = el("div", { class: "fan" });
    for (let i = 0; i < n; i++) row.append(M.cardEl(null, { cls: "small" }));
    return row;
  }
  function opponent(s, c) {
    const laid = T.laid && T.laid.seat === s ? el("div", { class: "laid" }, T.laid.cards.map((x) => M.cardEl(x, { cls: "small" }))) : null;
    return el("div", { class: "spot spot-" + PLACE[s], "data-seat": s }, plate(s, c), laid || fan(c), bubble(s));
  }
  function centre() {
    const v = T.view || {};
    const g = gameWords(v);
    const trump = betl() ? null : T.trumpCard ? M.cardEl(T.trumpCard, { cls: "small trumpcard" })
      : v.zlidu || T.bids.some((b) => b.action === "trump:zlidu") ? M.cardEl(null, { cls: "small" }) : null;
    const talon = v.talon && v.talon.length ? el("div", { class: "talon" }, el("span", { class: "lbl" }, "talon (yours)"), v.talon.map((c) => M.cardEl(c, { cls: "small" })))
      : T.bids.some((b) => b.decision === "talon") ? el("div", { class: "talon" }, el("span", { class: "lbl" }, "talon"), M.cardEl(null, { cls: "small" }), M.cardEl(null, { cls: "small" })) : null;
    return el("div", { class: "centre" },
      el("div", { class: "game" }, g ? [el("b", {}, g.head), g.trump ? [" in ", M.signEl(g.trump), " " + M.SUITS[g.trump][1]] : null,
                                         v.actor !== null && v.actor !== undefined ? " · actor " + who(v.actor) : null,
                                         g.levels.length ? el("div", { class: "lv" }, g.levels.join(", ")) : null,
                                         g.proti.length ? el("div", { class: "lv" }, g.proti.join(", ")) : null]
                                    : T.deal ? el("span", { class: "muted" }, "bidding") : null),
      el("div", { class: "pile" }, trump ? el("div", { class: "trumpbox" }, el("span", { class: "lbl" }, v.zlidu && !T.trumpCard ? "trump z lidu" : "trump card"), trump) : null, talon),
      T.hlasky.length ? el("div", { class: "hl" }, "hlášky: ", T.hlasky.map((h, i) => [i ? " · " : "", who(h.seat) + " " + h.points + " ", M.signEl(h.suit)])) : null);
  }
  function trickArea() {
    const area = el("div", { class: "trick-area", id: "trick" });
    let cards = T.trick.map((x) => ({ seat: x.seat, card: x.card }));
    let label = null;
    const t = T.showLast ? T.lastTrick : T.shown;
    if (t && !T.trick.length) {
      cards = t.cards.map((c, i) => ({ seat: (t.leader + i) % 3, card: c }));
      label = el("div", { class: "trick-label" }, (T.showLast ? "last trick: " : "") + "taken by " + who(t.winner));
      area.classList.add(T.showLast ? "looking" : "taken");
    }
    for (const x of cards) area.append(el("div", { class: "slot slot-" + PLACE[x.seat], "data-seat": x.seat }, M.cardEl(x.card)));
    if (label) area.append(label);
    return area;
  }
  function handRow() {
    const req = awaiting() ? T.ask.msg : null;
    const row = el("div", { class: "myhand cards", id: "myhand" });
    if (T.laid && T.laid.seat === me) { for (const c of T.laid.cards) row.append(M.cardEl(c)); return row; }
    if (!T.hand) {
      const n = counts()[me];
      for (let i = 0; i < n; i++) row.append(M.cardEl(null));
      if (n) row.append(el("span", { class: "hand-note" }, "your cards are shown when you are first asked"));
      return row;
    }
    const clickable = {};
    if (req && req.decision === "trump") for (const a of req.legal) if (a !== "trump:zlidu") clickable[a.slice(6)] = a;
    if (req && req.decision === "play") for (const a of req.legal) if (a.startsWith("play:")) clickable[a.slice(5)] = a;
    const pickable = new Set();
    if (req && req.decision === "talon" && T.talonKind) {
      for (const a of req.legal) if (a.startsWith(T.talonKind + ":")) {
        const [x, y] = a.split(":")[1].split(",");
        if (!T.picked.length) pickable.add(x); else if (T.picked[0] === x) pickable.add(y);
      }
    }
    const choosing = req && (req.decision === "play" || req.decision === "trump" || (req.decision === "talon" && T.talonKind));
    for (const c of M.sortHand(T.hand, betl())) {
      const action = clickable[c];
      const pick = pickable.has(c);
      const cls = [action || pick ? "legal" : choosing ? "dim" : "", T.picked.includes(c) ? "picked" : "", c === T.trumpCard ? "trumpcard" : ""].join(" ").trim();
      const card = M.cardEl(c, { cls });
      if (action) card.addEventListener("click", () => act(action));
      else if (pick) card.addEventListener("click", () => {
        T.picked.push(c);
        if (T.picked.length === 2) act(T.talonKind + ":" + T.picked.join(","));
        else render();
      });
      row.append(card);
    }
    return row;
  }
  function askBar() {
    const bar = el("div", { class: "ask", id: "ask" });
    if (!awaiting()) {
      return bar;
    }
    const req = T.ask.msg;
    if (req.type !== "request") return bar;
    const title = { trump: "choose the trump card from your first seven — or take it z lidu", talon: "discard two cards and announce the game",
                    answer: "your answer", contract: "announce the contract", flek: "raise (flek) — or „dobrá“", play: "your card" }[req.decision] || req.decision;
    bar.append(el("b", {}, title));
    if (req.decision === "talon") {
      const kinds = [...new Set(req.legal.map((a) => a.split(":")[0]))];
      for (const k of kinds) bar.append(el("button", { type: "button", class: "act" + (T.talonKind === k ? " on" : ""), "data-kind": k,
        onclick: () => { T.talonKind = k; T.picked = []; render(); } }, M.GAME[k]));
      bar.append(el("span", { class: "hint" }, T.talonKind ? (T.picked.length ? "and one more card" : "now click the two cards to discard") : "choose the game, then click two cards"));
    } else {
      for (const a of req.legal) {
        if ((req.decision === "play" && a.startsWith("play:")) || (req.decision === "trump" && a !== "trump:zlidu")) continue;
        bar.append(el("button", { type: "button", class: "act", "data-action": a, onclick: () => act(a) }, answerWords(a, req.decision)));
      }
      if (req.decision === "play" || req.decision === "trump") bar.append(el("span", { class: "hint" }, "click a card that stands out"));
    }
    if (T.status && T.status.move_s) {
      const left = Math.max(0, Math.round((T.ask.at + req.time_ms - Date.now()) / 1000));
      bar.append(el("span", { class: "clock", id: "clock" }, left + " s"));
    }
    return bar;
  }
  function sheetTable(compact) {
    const head = el("tr", {}, el("th", {}, "deal"), compact ? null : el("th", {}, "game"), [0, 1, 2].map((s) => el("th", { class: "num" + (s === me ? " mine" : "") }, s === me ? "you" : T.names[s])));
    const body = [];
    const run = [0, 0, 0];
    for (const r of T.sheet) {
      r.pay.forEach((x, s) => { run[s] += x; });
      let game = "—";
      if (r.game) game = [r.game.head, r.game.trump ? [" ", M.signEl(r.game.trump)] : null, r.game.levels.length ? " · " + r.game.levels.join(", ") : null,
                          r.game.actor !== null && r.game.actor !== undefined ? " · " + who(r.game.actor) : null];
      if (r.note) game = [game, " (" + r.note + ")"];
      body.push(el("tr", {}, el("td", { class: "num" }, r.deal), compact ? null : el("td", {}, game),
        r.pay.map((x, s) => el("td", { class: "num" + (s === me ? " mine" : "") }, M.signed(x), el("span", { class: "run" }, " " + run[s])))));
    }
    return el("table", { class: "sheet" + (compact ? " compact" : "") }, el("thead", {}, head), el("tbody", {}, body),
      el("tfoot", {}, el("tr", {}, el("th", {}, "Σ"), compact ? null : el("th", {}, ""), run.map((x, s) => el("th", { class: "num" + (s === me ? " mine" : "") }, M.signed(x))))));
  }
  let shownKey = null;
  function overlay() {
    // redrawn only when what it shows changes (a name being typed keeps its focus)
    const st = T.status || {};
    let key = null, make = null;
    if (st.state === "waiting") { key = "waiting" + JSON.stringify([st.seats, st.invites]); make = () => waitingBox(st); }
    else if (paused && T.result) { key = "deal" + T.deal + JSON.stringify(st.awaiting); make = settlementBox; }
    else if (T.ended && !queue.length && !busy) { key = "end" + JSON.stringify(st); make = () => endBox(st); }
    if (key === shownKey) return;
    shownKey = key;
    $("overlay").replaceChildren(...(make ? [make()] : []));
  }
  function settlementBox() {
    const r = T.result;
    const comps = el("table", { class: "grid comps" }, el("tbody", {}, r.components.map((c) => el("tr", {},
      el("td", {}, c.name + (c.level ? " " + M.LEVELS[c.level] : "")), el("td", {}, c.owner === "actor" ? "actor " + who(r.actor) : "defence"),
      el("td", {}, c.won ? "won" : "lost"), el("td", { class: "num" }, c.amount + " each"), el("td", { class: "muted" }, String(c.detail))))));
    const waitingMe = T.status && T.status.awaiting && T.status.awaiting > (T.ask ? T.ask.n : 0);
    return el("div", { class: "overlay", id: "settlement" }, el("div", { class: "paper" },
      el("h2", {}, "Deal " + T.deal + " — settled" + (r.kind !== "played" ? " (" + r.kind + ")" : "")),
      r.components.length ? comps : null,
      (r.notes || []).map((n) => el("p", { class: "muted" }, n)),
      el("p", { class: "pay" }, "this deal: " + r.payments.map((x, s) => who(s) + " " + M.signed(x)).join(" · ")),
      el("h3", {}, "stolový lístek — the score sheet"), sheetTable(false),
      el("p", {}, el("button", { type: "button", class: "go", id: "sheet-continue", onclick: () => { paused = false; T.settled = true; pump(); } },
        T.final || T.deal >= T.deals ? "see the end of the partie" : "continue — deal " + Math.min(T.deal + 1, T.deals)),
        waitingMe && T.status.move_s ? el("span", { class: "muted" }, " your next move is waiting: your move time runs") : null)));
  }
  function waitingBox(st) {
    const box = el("div", { class: "paper" }, el("h2", {}, "The table is being set"));
    const free = st.seats.filter((x) => x.kind === "person" && !x.taken);
    const mine = st.seats[me];
    if (!mine.taken) {
      const input = el("input", { type: "text", id: "name", maxlength: "24", value: localName(), placeholder: "your name",
                                  onkeydown: (e) => { if (e.key === "Enter") sit(input.value); } });
      box.append(el("p", {}, "You were invited to seat " + me + ". Your name at the table:"),
        el("p", {}, input, " ", el("button", { type: "button", class: "go", id: "sit", onclick: () => sit(input.value) }, "take the seat")));
    }
    box.append(el("ul", { class: "seats" }, st.seats.map((x) => el("li", {}, "seat " + x.seat + ": ",
      x.kind === "bot" ? x.name + " (bot)" : x.taken ? el("b", {}, x.name) : el("span", { class: "muted" }, "waiting for the invited person"),
      x.seat === me ? " — you" : null))));
    if (st.invites && free.length) {
      box.append(el("p", {}, "Send each person the link of their seat (it admits that seat only; anyone holding it can play there):"));
      for (const [s, path] of Object.entries(st.invites)) {
        if (st.seats[s].taken) continue;
        const url = location.origin + path;
        box.append(el("p", { class: "invite" }, "seat " + s + ": ", el("input", { type: "text", readonly: true, value: url, class: "link", "data-seat": s, onclick: (e) => e.target.select() }),
          " ", el("button", { type: "button", onclick: () => navigator.clipboard && navigator.clipboard.writeText(url) }, "copy")));
      }
    }
    box.append(el("p", { class: "muted" }, "The partie begins when every seat is taken; the bots start then. " + idleWords(st)));
    return el("div", { class: "overlay", id: "waiting" }, box);
  }
  const idleWords = (st) => "A table ends when the person it waits for has had no page of it open and given no answer for " +
    st.idle_minutes + " minutes (its log is kept, incomplete).";
  function endBox(st) {
    const box = el("div", { class: "paper" });
    if (T.final) {
      const order = [0, 1, 2].sort((a, b) => T.final.places[a] - T.final.places[b]);
      box.append(el("h2", {}, "The partie is over"),
        el("ol", { class: "places" }, order.map((s) => el("li", {}, el("b", {}, s === me ? "you" : T.names[s]), " " + M.signed(T.final.totals[s]) + " groše" + " (place " + T.final.places[s] + ")"))));
    } else {
      box.append(el("h2", {}, "The table has ended"), el("p", {}, st.reason || st.state));
    }
    const links = el("p", { class: "links" });
    if (st.review) links.append(el("a", { href: st.review, id: "review-link", class: "go" }, "review this partie"), " ");
    if (st.log) links.append(el("a", { href: st.log, id: "log-link" }, "its log"), " ");
    const again = el("form", { method: "post", action: "/play", class: "again" });
    for (const [k, v] of Object.entries(P.again)) again.append(el("input", { type: "hidden", name: k, value: v }));
    again.append(el("input", { type: "hidden", name: "name", value: (T.status && T.status.name) || "" }),
                 el("button", { type: "submit", class: "go", id: "play-again" }, "play again"));
    box.append(links, again, " ", el("a", { href: "/" }, "the index"));
    if (T.sheet.length) box.append(el("h3", {}, "stolový lístek"), sheetTable(false));
    return el("div", { class: "overlay", id: "end" }, box);
  }

  function render() {
    const c = counts();
    const felt = el("div", { class: "felt", id: "felt" },
      opponent(LEFT, c[LEFT]), opponent(RIGHT, c[RIGHT]), centre(), trickArea(),
      el("div", { class: "spot spot-me", "data-seat": me }, plate(me, null), bubble(me)),
      askBar(), handRow());
    $("table").replaceChildren(felt);
    overlay();
    $("sheet").replaceChildren(T.sheet.length ? sheetTable(true) : el("p", { class: "muted" }, "no deal settled yet"));
    $("last-trick").disabled = !T.lastTrick;
    $("last-trick").classList.toggle("on", T.showLast);
    const st = T.status || {};
    $("quit").hidden = T.ended || !["waiting", "playing"].includes(st.state);
    $("playhead").textContent = st.state === "waiting" ? "waiting for the people invited"
      : T.ended ? (st.state === "finished" ? "finished" : "ended: " + (st.reason || st.state))
      : "partie " + (T.partie || 1) + " · deal " + (T.deal || "–") + " of " + T.deals + (st.move_s ? " · move time " + st.move_s + " s" : "") +
        (awaiting() && T.ask.msg.type === "request" ? " · your move" : T.view && T.view.to_move !== null && T.view.to_move !== undefined && !T.settled ? " · " + who(T.view.to_move) + " to move" : "");
    $("table-note").textContent = st.idle_minutes && !T.ended ? idleWords(st) : "";
    if (T.ended) document.body.dataset.state = st.state;
  }

  // ---------------------------------------------------------------- the people
  function localName() { try { return localStorage.getItem("marias-name") || ""; } catch (e) { return ""; } }
  function sit(name) {
    try { localStorage.setItem("marias-name", name); } catch (e) { /* this page only */ }
    post(P.sit, { name });
  }
  function onStatus(st) {
    T.status = st;
    if (T.ask && T.ask.msg.type === "hello" && awaiting()) hello();
    if (!caughtUp) catchUp(); else render();
  }

  $("last-trick").addEventListener("click", () => { T.showLast = !T.showLast; render(); });
  $("pace").value = pace;
  $("pace").addEventListener("change", (e) => { pace = e.target.value; try { localStorage.setItem("marias-pace", pace); } catch (x) { /* this page only */ } });
  $("quit").addEventListener("click", () => { post(P.quit, {}); });
  setInterval(() => { const c = $("clock"); if (c && awaiting()) { const left = Math.max(0, Math.round((T.ask.at + T.ask.msg.time_ms - Date.now()) / 1000)); c.textContent = left + " s"; } }, 500);

  const es = new EventSource(P.events);
  es.addEventListener("line", (ev) => {
    lines.push(ev.data);
    queue.push({ n: Number(ev.lastEventId), msg: JSON.parse(ev.data), at: Date.now() });
    if (caughtUp) pump();
  });
  es.addEventListener("table", (ev) => onStatus(JSON.parse(ev.data)));
  es.addEventListener("end", () => { es.close(); T.ended = true; render(); });
  es.onerror = () => { if (es.readyState === EventSource.CLOSED && !T.ended) $("playhead").textContent = "the connection to the server is lost: reload the page"; };
})();
