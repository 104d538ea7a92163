/* marias web: cards, words and small helpers shared by every page.
   Cards: the German-suited deck drawn with the symbols and colours of the terminal
   (referee/people/screen.py, referee/logs/show.py): ♥ červené red, ♠ zelené green,
   ♦ kule yellow, ♣ žaludy cyan. */
"use strict";
const M = (window.M = {});
M.SUITS = { h: ["♥", "červené"], l: ["♠", "zelené"], b: ["♦", "kule"], a: ["♣", "žaludy"] };
M.SUIT_ORDER = "hlba";
M.RANK_LABEL = { "7": "7", "8": "8", "9": "9", X: "10", U: "U", O: "O", K: "K", A: "A" };
M.RANK_NAME = { "7": "sedma", "8": "osma", "9": "devítka", X: "desítka", U: "spodek", O: "svršek", K: "král", A: "eso" };
M.TRUMP_ORDER = "789UOKXA";
M.BETL_ORDER = "789XUOKA";
M.LEVELS = ["", "flek", "re", "tutti", "boty"];
M.ACC = { hra: "hru", sedma: "sedmu", sto: "sto", betl: "betla", durch: "durch", "sedma-proti": "sedmu proti", "sto-proti": "sto proti" };
M.CONTRACT = { hra: "hra", sedma: "sedma", sto: "sto", "sto-sedma": "sto a sedma" };
M.GAME = { barva: "„Barva?“", betl: "„betl“", durch: "„durch“" };
M.ROLE = ["forhont", "middle", "dealer"];

M.el = function (tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
};

M.cardText = (code) => M.RANK_LABEL[code[0]] + M.SUITS[code[1]][0];
M.cardEl = function (code, opts) {
  opts = opts || {};
  if (!code) return M.el("span", { class: "card back", title: "hidden" }, "🂠");
  const s = code[1];
  return M.el("span", { class: "card s-" + s + (opts.cls ? " " + opts.cls : ""), "data-card": code,
                        title: M.SUITS[s][1] + " " + M.RANK_NAME[code[0]] + " (" + code + ")" },
              M.el("span", { class: "r" }, M.RANK_LABEL[code[0]]), M.el("span", { class: "s" }, M.SUITS[s][0]));
};
M.sortHand = function (codes, betl) {
  const order = betl ? M.BETL_ORDER : M.TRUMP_ORDER;
  return [...codes].sort((a, b) => M.SUIT_ORDER.indexOf(a[1]) - M.SUIT_ORDER.indexOf(b[1]) || order.indexOf(b[0]) - order.indexOf(a[0]));
};
M.handEl = function (codes, betl, opts) {
  opts = opts || {};
  const row = M.el("div", { class: "cards" });
  for (const c of opts.keepOrder ? codes : M.sortHand(codes, betl)) row.append(M.cardEl(c, opts.mark ? { cls: opts.mark(c) } : {}));
  if (!codes.length) row.append(M.el("span", { class: "muted" }, "—"));
  return row;
};
M.suitEl = (s) => M.el("span", { class: "s-" + s }, M.SUITS[s][0] + " " + M.SUITS[s][1]);
M.signed = (x) => (x > 0 ? "+" : "") + x;

/* A raise in the game's words: 'flek na hru', 're na obojí', 'sedma proti' (as referee/logs/show.py). */
M.flekWords = function (words, proti, levels) {
  const by = {};
  for (const w of words) {
    const name = M.LEVELS[Math.min((levels[w] || 0) + 1, 4)];
    (by[name] = by[name] || []).push(w);
  }
  const out = [];
  for (const [name, ws] of Object.entries(by)) {
    const set = ws.slice().sort().join(",");
    if (ws.length === 2 && (set === "hra,sedma" || set === "sedma,sto")) out.push(name + " na obojí");
    else out.push(name + " na " + ws.map((w) => M.ACC[w]).join(" a "));
  }
  for (const p of proti) out.push(p + " proti");
  return out.length ? out.join(", ") : "dobrá";
};
M.parseFlek = function (text) {
  const words = [], proti = [];
  for (const part of text.split(" ")) {
    if (part.startsWith("flek:")) words.push(...part.slice(5).split(","));
    else if (part.startsWith("proti:")) proti.push(...part.slice(6).split(","));
  }
  return { words, proti };
};

/* Tells actions in words, keeping the raise levels as the rounds go (R5.3), like Screen.action_words. */
M.Teller = class {
  constructor(seat, labels) {
    this.seat = seat; // null: the all-seeing narrator
    this.labels = labels || ["seat 0", "seat 1", "seat 2"];
    this.actor = null; this.levels = {}; this.pending = new Set(); this.side = null;
  }
  who(s) {
    if (s === null || s === undefined) return "nobody";
    return s === this.seat ? "you" : this.labels[s] + " (seat " + s + ")";
  }
  action(seat, decision, text, trumpCard) {
    const who = this.who(seat);
    if (decision === "trump") {
      if (text === "trump:zlidu") return who + ": trump card z lidu (the 8th card, blind)";
      if (text.startsWith("trump:")) return who + ": trump card " + M.cardText(text.slice(6)) + " from the first seven";
      return who + ": chooses a trump card from the first seven";
    }
    if (decision === "talon") {
      const [kind, cards] = text.split(":");
      this.actor = seat;
      return who + ": discards " + (cards ? cards.split(",").map(M.cardText).join(" ") : "two cards") + " — " + (M.GAME[kind] || kind);
    }
    if (decision === "answer") {
      if (text === "dobra") return who + ": „dobrá“";
      if (text === "spatna") { this.actor = seat; return who + ": „špatná“ — takes the talon"; }
      if (text === "durch") { this.actor = seat; return who + ": „durch“ — takes the talon"; }
      return who + ": " + text;
    }
    if (decision === "contract") {
      const c = text.split(":")[1];
      this.actor = seat;
      let shown = "";
      if (trumpCard) shown = " — shows the trump card " + M.cardText(trumpCard) + ": trumps are " + M.SUITS[trumpCard[1]][0] + " " + M.SUITS[trumpCard[1]][1];
      return who + ": „" + (M.CONTRACT[c] || c) + "“" + shown;
    }
    if (decision === "flek") {
      const side = seat === this.actor ? "actor" : "defence";
      if (side !== this.side) {
        for (const w of this.pending) this.levels[w] = (this.levels[w] || 0) + 1;
        this.pending = new Set(); this.side = side;
      }
      if (!text.startsWith("flek:") && !text.startsWith("proti:")) return who + ": „dobrá“";
      const f = M.parseFlek(text);
      const words = M.flekWords(f.words, f.proti, this.levels);
      for (const w of f.words) this.pending.add(w);
      return who + ": „" + words + "“";
    }
    if (decision === "play") return text === "lay" ? who + ": lays the cards down (R8)" : who + (who === "you" ? " play " : " plays ") + M.cardText(text.slice(5));
    return who + ": " + text;
  }
  event(ev) {
    if (ev.kind === "action") return this.action(ev.seat, ev.decision, ev.action, ev.trump_card);
    if (ev.kind === "hlaska") return "hláška: " + this.who(ev.seat) + " " + ev.points + " in " + M.SUITS[ev.suit][0] + " " + M.SUITS[ev.suit][1];
    if (ev.kind === "trick") return "trick: " + ev.cards.map((c, i) => this.who((ev.leader + i) % 3) + " " + M.cardText(c)).join(" · ") + " → " + this.who(ev.winner);
    if (ev.kind === "laid") return this.who(ev.seat) + " lays the cards down (R8): " + ev.cards.map(M.cardText).join(" ");
    if (ev.kind === "fault") return "fault: " + this.who(ev.seat) + " " + ev.fault + " — the deal ends (R12.2)";
    return JSON.stringify(ev);
  }
};

/* A table of rows (objects); null shows as '·'. */
M.tableEl = function (rows, opts) {
  opts = opts || {};
  if (!rows || !rows.length) return M.el("p", { class: "muted" }, "(no partie)");
  const cols = Object.keys(rows[0]);
  const t = M.el("table", { class: "grid", id: opts.id || null });
  t.append(M.el("thead", {}, M.el("tr", {}, cols.map((c) => M.el("th", {}, c)))));
  const tb = M.el("tbody");
  for (const r of rows) tb.append(M.el("tr", {}, cols.map((c) => {
    const v = r[c];
    return M.el("td", { class: typeof v === "number" ? "num" : null }, v === null || v === undefined ? "·" : typeof v === "number" && !Number.isInteger(v) ? v.toFixed(2) : v);
  })));
  t.append(tb);
  return t;
};

/* Data: from the server, or from the report's embedded data (marias report). */
M.report = (function () {
  const node = document.getElementById("report-data");
  return node ? JSON.parse(node.textContent) : null;
})();
M.page = JSON.parse(document.getElementById("page").textContent);
M.load = async function (url) {
  if (M.report) {
    if (!(url in M.report.data)) throw new Error("not in this report: " + url);
    return M.report.data[url];
  }
  const r = await fetch(url);
  if (!r.ok) throw new Error(r.status + " " + (await r.text()));
  return r.json();
};
M.fail = function (node, err) {
  node.replaceChildren(M.el("p", { class: "error" }, String(err.message || err)));
};
