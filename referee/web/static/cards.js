/* marias web: cards, words and small helpers shared by every page.
   Cards are drawn here as SVG (original drawings): the German-suited deck — červené (hearts),
   zelené (leaves), kule (bells), žaludy (acorns) — or, as an option remembered in this browser
   (localStorage "marias-suits"), the French symbols the terminal uses for them
   (referee/people/screen.py, referee/logs/show.py): ♥ red, ♠ green, ♦ yellow, ♣ cyan.
   As text a card is its rank and the terminal's symbol: 10♥, U♠ (never a protocol code). */
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
  for (const k of kids.flat(Infinity)) if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
};

/* ---------------------------------------------------------------- the drawn cards */
const SVGNS = "http://www.w3.org/2000/svg";
M.svg = function (tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, v);
  for (const k of kids.flat(Infinity)) if (k) e.append(k);
  return e;
};
const S = M.svg;

/* Each suit's sign in a 20x20 box, as a list of [tag, attrs]: German (drawn) and French (the terminal's symbols). */
const HEART = "M10 17.8C9 16.8 2 12 1.6 7.4 1.3 4.2 3.4 2.2 6 2.2c1.8 0 3.2 1.1 4 2.6.8-1.5 2.2-2.6 4-2.6 2.6 0 4.7 2 4.4 5.2C18 12 11 16.8 10 17.8Z";
M.SIGNS = {
  german: {
    h: [["path", { d: HEART, fill: "#c62828", stroke: "#7f1515", "stroke-width": ".6" }],
        ["ellipse", { cx: "6.4", cy: "6.2", rx: "1.4", ry: "2.3", fill: "#fff", opacity: ".35", transform: "rotate(-35 6.4 6.2)" }]],
    l: [["path", { d: "M10 1C12.2 3.6 17.6 6.2 17.2 11c-.3 3.6-3.8 5.4-6.6 5.6.1 1.2.6 2.3 1.6 2.9l-.8.4c-1.2-.6-1.9-1.9-2-3.3C6.6 16.4 3.1 14.6 2.8 11 2.4 6.2 7.8 3.6 10 1Z",
                     fill: "#2e7d32", stroke: "#1b4d1e", "stroke-width": ".6" }],
        ["path", { d: "M10 3.4v12.4M10 7 7.2 5.4M10 7l2.8-1.6M10 10 6 8M10 10l4-2M10 13l-3.6-1.4M10 13l3.6-1.4",
                   stroke: "#cfe9c9", "stroke-width": ".7", fill: "none", "stroke-linecap": "round" }]],
    b: [["circle", { cx: "10", cy: "2.3", r: "1.4", fill: "none", stroke: "#8a5a00", "stroke-width": ".9" }],
        ["path", { d: "M10 3.3c4.4 0 7.4 3.4 7.4 7.4s-3 7.2-7.4 7.2-7.4-3.2-7.4-7.2 3-7.4 7.4-7.4Z", fill: "#e8b21a", stroke: "#8a5a00", "stroke-width": ".8" }],
        ["path", { d: "M2.8 9.1c3.2 1.3 11.2 1.3 14.4 0l.2 2.5c-3.3 1.3-11.5 1.3-14.8 0Z", fill: "#c62828" }],
        ["circle", { cx: "10", cy: "14", r: "1.3", fill: "#5a3a00" }],
        ["path", { d: "M10 14v3.8", stroke: "#5a3a00", "stroke-width": "1.1" }],
        ["ellipse", { cx: "6.8", cy: "6.4", rx: "1.6", ry: "1", fill: "#fff", opacity: ".45", transform: "rotate(-30 6.8 6.4)" }]],
    a: [["path", { d: "M10 5.2c.1-1.6.9-3 2.6-3.8", stroke: "#3e240c", "stroke-width": "1.2", fill: "none", "stroke-linecap": "round" }],
        ["path", { d: "M10 19.2c-3.6 0-5-4-4.8-7.6h9.6c.2 3.6-1.2 7.6-4.8 7.6Z", fill: "#d9a441", stroke: "#7a4f14", "stroke-width": ".7" }],
        ["path", { d: "M4.1 12c-.2-4.2 2.5-6.9 5.9-6.9s6.1 2.7 5.9 6.9Z", fill: "#6b4320", stroke: "#3e240c", "stroke-width": ".7" }],
        ["path", { d: "M5.6 8.4 9 12M8 6.2l5.6 5.8M11.4 5.6l3.8 4M14.4 7.6 10.4 12M11.6 5.5 5 12M8.2 5.9 4.6 9.6",
                   stroke: "#b07d45", "stroke-width": ".45", fill: "none" }],
        ["ellipse", { cx: "8", cy: "15", rx: "1", ry: "2", fill: "#fff", opacity: ".3" }]],
  },
  french: {
    h: [["path", { d: HEART, fill: "#c0392b" }]],
    l: [["path", { d: "M10 1.5c2.5 3.5 8 6.1 7.6 10.5-.3 3-3.8 3.8-6.4 1.8.3 2 1.2 3.6 2.8 4.8H6c1.6-1.2 2.5-2.8 2.8-4.8-2.6 2-6.1 1.2-6.4-1.8C2 7.6 7.5 5 10 1.5Z", fill: "#2e7d32" }]],
    b: [["path", { d: "M10 1.2 17 10l-7 8.8L3 10Z", fill: "#d4a90b" }]],
    a: [["circle", { cx: "10", cy: "5.7", r: "3.7", fill: "#0e8a9a" }], ["circle", { cx: "5.3", cy: "11.3", r: "3.7", fill: "#0e8a9a" }],
        ["circle", { cx: "14.7", cy: "11.3", r: "3.7", fill: "#0e8a9a" }], ["circle", { cx: "10", cy: "10", r: "2.2", fill: "#0e8a9a" }],
        ["path", { d: "M9.2 10 8 18.6h4L10.8 10Z", fill: "#0e8a9a" }]],
  },
};

M.suitStyle = function () {
  try { return localStorage.getItem("marias-suits") === "french" ? "french" : "german"; } catch (e) { return "german"; }
};

/* The signs as <symbol>s every card uses (<use href="#sign-h">): switching the style redraws them all. */
M.drawSigns = function () {
  const style = M.suitStyle();
  let sheet = document.getElementById("marias-signs");
  if (!sheet) {
    sheet = S("svg", { id: "marias-signs", width: "0", height: "0", "aria-hidden": "true", style: "position:absolute;width:0;height:0;overflow:hidden" });
    document.body.prepend(sheet);
  }
  const defs = S("defs", {},
    S("pattern", { id: "card-back", width: "8", height: "8", patternUnits: "userSpaceOnUse" },
      S("rect", { width: "8", height: "8", fill: "#7b1e2c" }),
      S("path", { d: "M0 4 4 0l4 4-4 4Z", fill: "none", stroke: "#e3c48f", "stroke-width": ".7" }),
      S("circle", { cx: "4", cy: "4", r: ".9", fill: "#e3c48f" })));
  for (const s of M.SUIT_ORDER) {
    defs.append(S("symbol", { id: "sign-" + s, viewBox: "0 0 20 20" }, M.SIGNS[style][s].map(([t, a]) => S(t, a))));
  }
  sheet.replaceChildren(defs);
  document.documentElement.classList.toggle("suits-french", style === "french");
  document.documentElement.classList.toggle("suits-german", style !== "french");
};
M.setSuitStyle = function (style) {
  try { localStorage.setItem("marias-suits", style); } catch (e) { /* private mode: this page only */ }
  M.drawSigns();
  for (const b of document.querySelectorAll(".suits-toggle")) b.textContent = M.suitToggleText();
};
M.suitToggleText = () => (M.suitStyle() === "french" ? "suits: ♥ ♠ ♦ ♣ (French)" : "suits: German");

const sign = (s, x, y, size, flip) => S("use", { href: "#sign-" + s, x: x - size / 2, y: y - size / 2, width: size, height: size,
                                                 transform: flip ? `rotate(180 ${x} ${y})` : null });
/* Pip places of the number cards in the 64x100 card (x, y; the lower half drawn upside down). */
const PIPS = {
  "7": [[21, 22], [43, 22], [32, 36], [21, 50], [43, 50], [21, 78], [43, 78]],
  "8": [[21, 21], [43, 21], [21, 40], [43, 40], [21, 60], [43, 60], [21, 79], [43, 79]],
  "9": [[21, 21], [43, 21], [21, 40], [43, 40], [32, 50], [21, 60], [43, 60], [21, 79], [43, 79]],
  X: [[21, 21], [43, 21], [32, 30.5], [21, 40], [43, 40], [21, 60], [43, 60], [32, 69.5], [21, 79], [43, 79]],
};

/* A court card's figure (spodek, svršek, král): a bust in a frame, in the suit's colour (CSS --robe). */
function figure(rank, s) {
  const g = S("g", { class: "figure" },
    S("rect", { x: "11", y: "11", width: "42", height: "78", rx: "3", class: "panel" }),
    S("path", { d: "M17 86c0-15 6-24 15-24s15 9 15 24Z", class: "robe" }),
    S("path", { d: "M25 64.5 32 73l7-8.5", class: "collar" }),
    S("path", { d: "M32 73v13", class: "trim" }),
    S("circle", { cx: "32", cy: "50", r: "8.2", class: "skin" }),
    S("path", { d: "M28.6 51.5q3.4 2.6 6.8 0", class: "line" }),
    S("circle", { cx: "29.2", cy: "48", r: ".9", class: "eye" }), S("circle", { cx: "34.8", cy: "48", r: ".9", class: "eye" }));
  if (rank === "K") {
    g.append(S("path", { d: "M24 43v-9l4 4 4-6 4 6 4-4v9Z", class: "crown" }),
             S("path", { d: "M25.5 53c1 6 4 8.5 6.5 8.5s5.5-2.5 6.5-8.5q-6.5 3-13 0Z", class: "beard" }));
    g.append(sign(s, 32, 77, 12));
  } else if (rank === "O") {
    g.append(S("path", { d: "M22 44q10-10 20 0Z", class: "hat" }), S("path", { d: "M40 40q6-8 4-15", class: "feather" }));
    g.append(sign(s, 21, 22, 13));
  } else {
    g.append(S("path", { d: "M23.5 45q8.5-9 17 0Z", class: "cap" }));
    g.append(sign(s, 43, 78, 11));
  }
  return g;
}

function face(code) {
  const r = code[0], s = code[1], label = M.RANK_LABEL[r];
  const index = (flip) => S("g", { class: "index", transform: flip ? "rotate(180 32 50)" : null },
    S("text", { x: "7.6", y: "14.5", "text-anchor": "middle", class: "rk" + (label.length > 1 ? " two" : "") }, label),
    sign(s, 7.6, 22.5, 9));
  const full = S("g", { class: "full" }, index(false), index(true));
  if (PIPS[r]) for (const [x, y] of PIPS[r]) full.append(sign(s, x, y, 14, y > 52));
  else if (r === "A") full.append(S("ellipse", { cx: "32", cy: "50", rx: "21", ry: "30", class: "ring" }), sign(s, 32, 50, 30));
  else full.append(figure(r, s));
  const mini = S("g", { class: "mini" },
    S("text", { x: "4", y: "44", class: "rk big" + (label.length > 1 ? " two" : "") }, label), sign(s, 40, 70, 36));
  return S("svg", { viewBox: "0 0 64 100", class: "face", "aria-hidden": "true" },
    S("rect", { x: ".5", y: ".5", width: "63", height: "99", rx: "6", class: "bg" }), full, mini);
}
function back() {
  return S("svg", { viewBox: "0 0 64 100", class: "face", "aria-hidden": "true" },
    S("rect", { x: ".5", y: ".5", width: "63", height: "99", rx: "6", class: "bg" }),
    S("rect", { x: "5", y: "5", width: "54", height: "90", rx: "3", fill: "url(#card-back)", stroke: "#e3c48f", "stroke-width": "1" }));
}

M.cardText = (code) => M.RANK_LABEL[code[0]] + M.SUITS[code[1]][0];
/* A card drawn (opts.cls: more classes); without a code, its back. */
M.cardEl = function (code, opts) {
  opts = opts || {};
  if (!code) return M.el("span", { class: "card back" + (opts.cls ? " " + opts.cls : ""), title: "a card you cannot see" }, back());
  const s = code[1];
  return M.el("span", { class: "card s-" + s + (opts.cls ? " " + opts.cls : ""), "data-card": code,
                        title: M.SUITS[s][1] + " " + M.RANK_NAME[code[0]] + " (" + M.cardText(code) + ")" },
              face(code), M.el("span", { class: "vh" }, M.cardText(code)));
};
/* A card within a sentence: its rank and its suit's sign, as drawn now. */
M.cardSpan = function (code) {
  const s = code[1];
  return M.el("span", { class: "cardtext s-" + s, title: M.SUITS[s][1] + " " + M.RANK_NAME[code[0]] },
              M.RANK_LABEL[code[0]], S("svg", { viewBox: "0 0 20 20", class: "sign", "aria-hidden": "true" }, S("use", { href: "#sign-" + s })),
              M.el("span", { class: "vh" }, M.SUITS[s][0]));
};
M.signEl = (s) => S("svg", { viewBox: "0 0 20 20", class: "sign", "aria-hidden": "true" }, S("use", { href: "#sign-" + s }));
/* Text in which cards are written as 10♥, U♠ (the Teller's words): the cards drawn as cardSpans. */
M.richText = function (text) {
  const frag = document.createDocumentFragment();
  const SYM = { "♥": "h", "♠": "l", "♦": "b", "♣": "a" };
  const RANK = { "10": "X", "7": "7", "8": "8", "9": "9", U: "U", O: "O", K: "K", A: "A" };
  text = String(text);
  let last = 0;
  for (const m of text.matchAll(/(10|[789UOKA])?([♥♠♦♣])/g)) {
    const s = SYM[m[2]];
    frag.append(text.slice(last, m.index), m[1] ? M.cardSpan(RANK[m[1]] + s) : M.el("span", { class: "s-" + s }, M.signEl(s)));
    last = m.index + m[0].length;
  }
  frag.append(text.slice(last));
  return frag;
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
M.suitEl = (s) => M.el("span", { class: "s-" + s }, M.signEl(s), " " + M.SUITS[s][1]);
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

/* The drawn signs, and the switch between German and French suits in the header (every page). */
M.drawSigns();
(function () {
  const header = document.querySelector("header");
  if (!header) return;
  const b = M.el("button", { type: "button", class: "suits-toggle", id: "suits-toggle", title: "German suits (hearts, leaves, bells, acorns) or the French symbols of the terminal; remembered in this browser",
                             onclick: () => M.setSuitStyle(M.suitStyle() === "french" ? "german" : "french") }, M.suitToggleText());
  header.append(b);
})();
