/* The replayer: one deal, step by step, all-seeing or as one seat saw it.
   A seat's view at each step is the engine's Deal.view(seat) (sent as deltas by the server):
   nothing here hides or reveals a card by itself. */
"use strict";
(function () {
  const el = M.el;

  /* A step's delta (referee/web/log_data.py): the keys that changed; {"+": items} appends to a list. */
  M.applyDelta = function (prev, delta) {
    const out = { ...prev };
    for (const [k, v] of Object.entries(delta)) {
      out[k] = v && typeof v === "object" && !Array.isArray(v) && Array.isArray(v["+"]) && Array.isArray(prev[k]) ? prev[k].concat(v["+"]) : v;
    }
    return out;
  };

  M.Replayer = class {
    constructor(data, node, nav) {
      this.d = data; this.node = node; this.nav = nav || {};
      this.i = 0; this.who = "all"; // "all" or 0, 1, 2
      this.views = [[], [], []];
      this.alls = [];
      let every = {};
      for (const st of data.steps) { every = M.applyDelta(every, st.all); this.alls.push(every); }
      for (let s = 0; s < 3; s++) {
        let cur = {};
        for (const st of data.steps) { cur = M.applyDelta(cur, st.views[s]); this.views[s].push(cur); }
      }
      for (const st of data.steps) st.events = st.events.map((e) => e || st.events[0]);
      this.keys = (e) => {
        if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName)) return;
        if (e.key === "ArrowRight" || e.key === "l") this.go(this.i + 1);
        else if (e.key === "ArrowLeft" || e.key === "h") this.go(this.i - 1);
        else if (e.key === "Home") this.go(0);
        else if (e.key === "End") this.go(this.d.steps.length - 1);
        else if ("012".includes(e.key)) this.setWho(Number(e.key));
        else if (e.key === "a") this.setWho("all");
        else return;
        e.preventDefault();
      };
      document.addEventListener("keydown", this.keys);
      this.render();
    }
    destroy() { document.removeEventListener("keydown", this.keys); }
    go(i) { this.i = Math.max(0, Math.min(this.d.steps.length - 1, i)); this.render(); }
    setWho(w) { this.who = w; this.render(); }

    label(s) { return this.d.players[s]; }

    bidLines(view) {
      // the bidding so far in words: all-seeing from the record's decisions, a seat from its view's bids
      const seat = this.who === "all" ? null : this.who;
      const t = new M.Teller(seat, this.d.players);
      const out = [];
      const bids = seat === null
        ? this.d.decisions.slice(0, this.i).filter((x) => x.decision !== "play")
        : view.bids;
      for (const b of bids) {
        const tc = b.decision === "contract" ? (seat === null ? this.d.trump_card : view.trump_card) : null;
        out.push(t.action(b.seat, b.decision, b.action, tc));
      }
      return out;
    }

    seatBox(s, view, all) {
      const seen = this.who === "all" || this.who === s;
      const betl = view.game === "betl" || view.game === "durch";
      const hand = this.who === "all" ? all.hands[s] : this.who === s ? view.hand : null;
      const role = M.ROLE[(s - this.d.forhont + 3) % 3];
      const box = el("div", { class: "seat seat-" + s + (view.to_move === s ? " to-move" : "") + (view.actor === s ? " actor" : ""), "data-seat": s },
        el("div", { class: "name" }, "seat " + s + " · " + this.label(s) + " · " + role + (view.actor === s ? " · actor" : "")));
      if (hand) box.append(M.handEl(hand, betl, { mark: (c) => (c === (this.who === "all" ? all.trump_card : view.trump_card) ? "trumpcard" : null) }));
      else box.append(el("div", { class: "cards hidden-hand" }, el("span", { class: "muted" }, "hidden from seat " + this.who)));
      if (!seen) box.classList.add("other");
      return box;
    }

    render() {
      const d = this.d, i = this.i, st = d.steps[i];
      const s0 = this.who === "all" ? 0 : this.who;
      const view = this.views[s0][i]; // the common facts (tricks, trick, points, hlášky) are the same in every seat's view
      const own = this.who === "all" ? null : view;
      const all = this.alls[i];
      const trump = this.who === "all" ? (i > 0 ? d.trump_card : null) : own.trump_card;
      const talon = this.who === "all" ? all.talon : own.talon;
      const n = d.steps.length;
      const who = el("div", { class: "switch", id: "who" }, "view: ",
        ...["all", 0, 1, 2].map((w) => el("button", { type: "button", class: this.who === w ? "on" : null, "data-who": w,
          onclick: () => this.setWho(w) }, w === "all" ? "all-seeing" : "seat " + w + " (" + this.label(w) + ")")));
      const ctl = el("div", { class: "controls" },
        el("button", { type: "button", id: "first", onclick: () => this.go(0), title: "Home" }, "« first"),
        el("button", { type: "button", id: "prev", onclick: () => this.go(i - 1), title: "←" }, "◀ back"),
        el("span", { id: "step-no", "data-step": i }, "step " + i + " / " + (n - 1)),
        el("button", { type: "button", id: "next", onclick: () => this.go(i + 1), title: "→" }, "next ▶"),
        el("button", { type: "button", id: "last", onclick: () => this.go(n - 1), title: "End" }, "last »"),
        el("span", { class: "muted" }, "  keys ← → Home End · 0 1 2 a: the view"));
      const navs = el("div", { class: "dealnav" },
        this.nav.prev ? el("a", { href: this.nav.prev, id: "prev-deal" }, "← previous deal") : null, " ",
        this.nav.log ? el("a", { href: this.nav.log }, "the log") : null, " ",
        this.nav.next ? el("a", { href: this.nav.next, id: "next-deal" }, "next deal →") : null);
      // the table
      const trick = el("div", { class: "trick", id: "trick" },
        ...(view.trick || []).map((t) => el("div", { class: "played" }, el("span", { class: "muted" }, "seat " + t.seat), M.cardEl(t.card))));
      if (!(view.trick || []).length) trick.append(el("span", { class: "muted" }, view.phase === "play" ? "(no card on the table)" : view.phase));
      const table = el("div", { class: "table" },
        this.seatBox(0, view, all), this.seatBox(1, view, all), this.seatBox(2, view, all),
        el("div", { class: "centre" },
          el("div", {}, "trump card: ", el("span", { id: "trump" }, trump ? M.cardEl(trump) : el("span", { class: "muted" }, view.zlidu ? "z lidu (not shown)" : "not known")),
            view.zlidu && trump ? " (z lidu)" : ""),
          el("div", {}, "talon: ", el("span", { id: "talon" }, talon && talon.length ? talon.map((c) => M.cardEl(c)) : el("span", { class: "muted" }, "not known"))),
          trick));
      // the story
      const next = st.next;
      let nextLine = null;
      if (next) {
        const t = new M.Teller(this.who === "all" ? null : this.who, d.players);
        const shown = this.who === "all" || this.who === next.seat;
        nextLine = el("p", { id: "next-decision" }, "next: seat " + next.seat + " decides (" + next.decision + ")" +
          (shown ? " → " + next.action + (next.ms !== null && next.ms !== undefined ? " in " + next.ms + " ms" : "") : " (see the next step)"));
      }
      const told = this.who === "all" ? [] : st.events[this.who];
      const teller = new M.Teller(this.who === "all" ? null : this.who, d.players);
      const tricks = el("table", { class: "grid tricks", id: "tricks" },
        el("tr", {}, el("th", {}, "#"), el("th", {}, "led by"), el("th", {}, "cards"), el("th", {}, "won by")),
        ...(view.tricks || []).map((t, k) => el("tr", {}, el("td", {}, k + 1), el("td", {}, "seat " + t.leader),
          el("td", {}, t.cards.map((c) => M.cardEl(c))), el("td", {}, "seat " + t.winner))));
      const story = el("div", { class: "story" },
        el("h3", {}, "bidding"), el("ol", { id: "bids" }, this.bidLines(view).map((l) => el("li", {}, l))),
        view.game ? el("p", { id: "game" }, "game: " + (view.game === "barva" ? (M.CONTRACT[view.contract] || "„Barva?“") + (view.trump ? " in " + M.SUITS[view.trump][0] + " " + M.SUITS[view.trump][1] : "") : view.game) +
          ", actor seat " + view.actor + (Object.keys(view.levels || {}).length ? " · " + Object.entries(view.levels).map(([c, v]) => c + (v ? " " + M.LEVELS[v] : "")).join(", ") : "") +
          Object.entries(view.proti || {}).map(([g, s]) => " · " + g + " proti by seat " + s).join("")) : null,
        told.length ? el("div", { id: "told" }, el("h3", {}, "told to seat " + this.who + " after the last action"), el("ul", {}, told.map((e) => el("li", {}, teller.event(e))))) : null,
        nextLine,
        el("h3", {}, "tricks"), tricks,
        (view.hlasky || []).length ? el("p", { id: "hlasky" }, "hlášky: " + view.hlasky.map((h) => "seat " + h.seat + " " + h.points + " " + M.SUITS[h.suit][0]).join(" · ")) : null,
        el("p", { id: "points" }, "card points: " + (view.points || []).map((p, s) => "seat " + s + " " + p).join(" · ")));
      const res = view.result;
      if (res) {
        story.append(el("h3", {}, "settlement (" + res.kind + ")"),
          M.tableEl(res.components.map((c) => ({ component: c.name + (c.level ? " " + M.LEVELS[c.level] : ""), owner: c.owner, won: c.won ? "won" : "lost", amount: c.amount, detail: c.detail })), { id: "settlement" }),
          el("p", { id: "payments" }, "payments: " + res.payments.map((x, s) => "seat " + s + " " + M.signed(x)).join(" · ")),
          ...res.notes.map((x) => el("p", { class: "note" }, x)));
      }
      let fault = null;
      if (d.fault && i === n - 1) {
        const f = d.fault;
        fault = el("div", { class: "faultbox", id: "fault" },
          el("h3", {}, "fault: seat " + f.seat + " (" + d.players[f.seat] + "): " + f.kind),
          el("p", {}, f.message || ""),
          el("p", {}, "rule broken: ", el("b", {}, f.rule), f.detail ? " — " + f.detail : "", "; settled by " + f.settlement),
          el("p", {}, "evidence:"), el("pre", {}, f.evidence || "(none)"),
          el("p", {}, "repeat this deal to the bot:"), el("pre", { id: "replay-command" }, f.command));
      }
      const head = el("h2", {}, "partie " + d.partie + " · deal " + d.deal + " · cut " + (d.cut === null ? "— (deal 1)" : d.cut));
      this.node.replaceChildren(...[head, navs, who, ctl, el("div", { class: "board" }, table, story), fault,
        d.problems.length ? el("p", { class: "error" }, "replay problems: " + d.problems.join("; ")) : null].filter(Boolean));
    }
  };

  async function start() {
    const node = document.getElementById("replay");
    const P = M.page;
    try {
      const data = await M.load(P.api);
      const log = await M.load(P.log_api);
      const list = [];
      for (const p of log.parties) for (const x of p.deals) list.push([p.partie, x.deal]);
      const k = list.findIndex(([p, x]) => p === P.partie && x === P.deal);
      const url = (e) => (e ? P.replay + "?partie=" + e[0] + "&deal=" + e[1] : null);
      window.replayer = new M.Replayer(data, node, { prev: url(list[k - 1]), next: url(list[k + 1]), log: P.log });
    } catch (e) {
      M.fail(node, e);
    }
  }
  if (M.page.kind === "replay") start();
})();
