/* The replayer: one deal, step by step, all-seeing or as one seat saw it.
   A seat's view at each step is the engine's Deal.view(seat) (sent as deltas by the server):
   nothing here hides or reveals a card by itself.  Every bot-written text (names, faults,
   stderr) is put on the page as text, never as markup. */
"use strict";
(function () {
  const el = M.el;
  const SPEEDS = [["0.5×", 1600], ["1×", 800], ["2×", 400], ["4×", 200]];

  /* A step's delta (referee/web/log_data.py): the keys that changed; {"+": items} appends to a list. */
  M.applyDelta = function (prev, delta) {
    const out = { ...prev };
    for (const [k, v] of Object.entries(delta)) {
      out[k] = v && typeof v === "object" && !Array.isArray(v) && Array.isArray(v["+"]) && Array.isArray(prev[k]) ? prev[k].concat(v["+"]) : v;
    }
    return out;
  };

  function ms(x) { return x === null || x === undefined ? null : (x < 1 ? x.toFixed(3) : x < 100 ? x.toFixed(1) : Math.round(x)) + " ms"; }

  /* nav: links to the previous and next deal and the log; opts: {step, seat, onMove(step, who)} (where a link opens it). */
  M.Replayer = class {
    constructor(data, node, nav, opts) {
      opts = opts || {};
      this.d = data; this.node = node; this.nav = nav || {}; this.onMove = opts.onMove || null;
      const n = data.steps.length;
      this.i = Math.max(0, Math.min(n - 1, Number.isInteger(opts.step) ? opts.step : 0));
      this.who = [0, 1, 2].includes(opts.seat) ? opts.seat : "all";
      this.views = [[], [], []];
      this.alls = [];
      this.timer = null; this.speed = 1;
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
        else if (e.key === " ") this.toggle();
        else if ("012".includes(e.key)) this.setWho(Number(e.key));
        else if (e.key === "a") this.setWho("all");
        else return;
        e.preventDefault();
      };
      document.addEventListener("keydown", this.keys);
      this.frame();
      this.render();
    }
    destroy() { this.pause(); document.removeEventListener("keydown", this.keys); }
    go(i, keepPlaying) {
      if (!keepPlaying) this.pause();
      this.i = Math.max(0, Math.min(this.d.steps.length - 1, i));
      this.render();
    }
    setWho(w) { this.who = w; this.render(); }
    play() {
      if (this.timer) return;
      if (this.i >= this.d.steps.length - 1) this.go(0);
      this.timer = setInterval(() => {
        if (this.i >= this.d.steps.length - 1) { this.pause(); return; }
        this.go(this.i + 1, true);
      }, SPEEDS[this.speed][1]);
      this.playBtn.textContent = "❚❚ pause"; this.playBtn.dataset.playing = "1";
    }
    pause() {
      if (!this.timer) return;
      clearInterval(this.timer); this.timer = null;
      this.playBtn.textContent = "▶ play"; delete this.playBtn.dataset.playing;
    }
    toggle() { if (this.timer) this.pause(); else this.play(); }

    label(s) { return this.d.players[s]; }

    /* The parts that stay (so that the slider can be dragged); render() fills the rest. */
    frame() {
      const d = this.d, n = d.steps.length;
      this.whoBox = el("div", { class: "switch", id: "who" }, "view: ",
        ...["all", 0, 1, 2].map((w) => el("button", { type: "button", "data-who": w, onclick: () => this.setWho(w) },
          w === "all" ? "all-seeing" : "seat " + w + " (" + this.label(w) + ")")));
      this.stepNo = el("span", { id: "step-no" });
      this.slider = el("input", { type: "range", id: "timeline", min: 0, max: n - 1, step: 1, value: this.i, "aria-label": "step",
        oninput: (e) => this.go(Number(e.target.value)) });
      this.playBtn = el("button", { type: "button", id: "play", onclick: () => this.toggle(), title: "space" }, "▶ play");
      const speed = el("select", { id: "speed", title: "autoplay speed", onchange: (e) => {
        this.speed = Number(e.target.value);
        if (this.timer) { this.pause(); this.play(); }
      } }, SPEEDS.map(([t], k) => el("option", { value: k, selected: k === this.speed }, t)));
      const ctl = el("div", { class: "controls" },
        el("button", { type: "button", id: "first", onclick: () => this.go(0), title: "Home" }, "« first"),
        el("button", { type: "button", id: "prev", onclick: () => this.go(this.i - 1), title: "←" }, "◀ back"),
        this.stepNo,
        el("button", { type: "button", id: "next", onclick: () => this.go(this.i + 1), title: "→" }, "next ▶"),
        el("button", { type: "button", id: "last", onclick: () => this.go(n - 1), title: "End" }, "last »"),
        " ", this.playBtn, " ", speed,
        el("span", { class: "muted" }, "  keys ← → Home End, space: play · 0 1 2 a: the view"));
      const navs = el("div", { class: "dealnav" },
        this.nav.prev ? el("a", { href: this.nav.prev, id: "prev-deal" }, "← previous deal") : null, " ",
        this.nav.log ? el("a", { href: this.nav.log }, "the log") : null, " ",
        this.nav.next ? el("a", { href: this.nav.next, id: "next-deal" }, "next deal →") : null);
      const head = el("h2", {}, "partie " + d.partie + " · deal " + d.deal + " · cut " + (d.cut === null ? "— (deal 1)" : d.cut));
      this.boardBox = el("div", { class: "board" });
      this.faultBox = el("div");
      this.node.replaceChildren(...[head, navs, this.whoBox, ctl, el("div", { class: "timeline" }, this.slider), this.boardBox, this.faultBox,
        d.problems.length ? el("p", { class: "error" }, "replay problems: " + d.problems.join("; ")) : null].filter(Boolean));
    }

    /* Whose decision times may be shown: all-seeing every seat's, a seat only its own. */
    timeShown(seat) { return this.who === "all" || this.who === seat; }

    bidLines(view) {
      // the bidding so far in words: all-seeing from the record's decisions, a seat from its view's bids
      const seat = this.who === "all" ? null : this.who;
      const t = new M.Teller(seat, this.d.players);
      const out = [];
      const made = this.d.decisions.slice(0, this.i).filter((x) => x.decision !== "play");
      const bids = seat === null ? made : view.bids;
      bids.forEach((b, k) => {
        const tc = b.decision === "contract" ? (seat === null ? this.d.trump_card : view.trump_card) : null;
        const when = made[k] && this.timeShown(b.seat) ? ms(made[k].ms) : null;
        out.push(el("li", {}, M.richText(t.action(b.seat, b.decision, b.action, tc)), when ? el("span", { class: "ms" }, " " + when) : null));
      });
      this.teller = t; // where the bidding stands: the next bid is told in its words (nextWords)
      return out;
    }

    nextWords(view, next) {
      // the action about to be taken, as a person reads it (never the protocol's play:Xh)
      if (next.decision === "play") return next.action === "lay" ? "lays the cards down (R8)" : M.cardText(next.action.slice(5));
      const tc = next.decision === "contract" ? (this.who === "all" ? this.d.trump_card : view.trump_card) : null;
      return this.teller.action(next.seat, next.decision, next.action, tc).replace(/^.*?: /, "");
    }

    /* The table when the deal ended by a fault or by laid cards (the engine collects it then). */
    ended() { return this.i === this.d.steps.length - 1 ? this.alls[this.i].end || null : null; }

    seatBox(s, view, all) {
      const seen = this.who === "all" || this.who === s;
      const betl = view.game === "betl" || view.game === "durch";
      const end = this.ended();
      const hands = end ? end.hands : all.hands;
      const hand = this.who === "all" ? hands[s] : this.who === s ? (end ? end.hands[s] : view.hand) : null;
      const role = M.ROLE[(s - this.d.forhont + 3) % 3];
      const mine = this.d.decisions.slice(0, this.i).filter((x) => x.seat === s && typeof x.ms === "number");
      const spent = this.who === "all" && mine.length ? " · " + ms(mine.reduce((a, x) => a + x.ms, 0)) + " in " + mine.length + " decisions" : "";
      const box = el("div", { class: "seat seat-" + s + (view.to_move === s ? " to-move" : "") + (view.actor === s ? " actor" : ""), "data-seat": s },
        el("div", { class: "name" }, "seat " + s + " · " + this.label(s) + " · " + role + (view.actor === s ? " · actor" : "") +
          (view.laid && view.laid.seat === s ? " · laid down (R8)" : ""), el("span", { class: "ms" }, spent)));
      const trumpCard = this.who === "all" ? all.trump_card : view.trump_card;
      if (hand) box.append(M.handEl(hand, betl, { mark: (c) => (c === trumpCard ? "trumpcard" : null) }));
      if (hand) box.lastChild.classList.add("seat-hand");
      else box.append(el("div", { class: "cards hidden-hand" }, el("span", { class: "muted" }, "hidden from seat " + this.who)));
      if (view.laid && view.laid.seat === s && !hand) { // laid cards are shown to every seat
        box.append(el("div", { class: "laid" }, el("span", { class: "muted" }, "laid down (R8): "), view.laid.cards.map((c) => M.cardEl(c))));
      }
      if (!seen) box.classList.add("other");
      return box;
    }

    render() {
      const d = this.d, i = this.i, st = d.steps[i], n = d.steps.length;
      const s0 = this.who === "all" ? 0 : this.who;
      const view = this.views[s0][i]; // the common facts (tricks, trick, points, hlášky) are the same in every seat's view
      const own = this.who === "all" ? null : view;
      const all = this.alls[i];
      const end = this.ended();
      const trump = this.who === "all" ? (i > 0 ? d.trump_card : null) : own.trump_card;
      const talon = this.who === "all" ? all.talon : own.talon;
      for (const b of this.whoBox.querySelectorAll("button")) b.className = String(this.who) === b.dataset.who ? "on" : "";
      this.stepNo.textContent = "step " + i + " / " + (n - 1);
      this.stepNo.dataset.step = i;
      this.slider.value = i;
      // the table
      const onTable = end ? end.trick : view.trick || [];
      const trick = el("div", { class: "trick", id: "trick" },
        ...onTable.map((t) => el("div", { class: "played" }, el("span", { class: "muted" }, "seat " + t.seat), M.cardEl(t.card))));
      const when = end ? (end.how === "fault" ? " at the fault" : " when the cards were laid down") : "";
      if (!onTable.length) trick.append(el("span", { class: "muted" }, view.phase === "play" || end ? "(no card on the table" + when + ")" : view.phase));
      if (end && end.how === "fault") {
        const tried = this.triedCard(d.fault);
        if (tried) trick.append(el("div", { class: "played", id: "tried" }, el("span", { class: "muted" }, "seat " + d.fault.seat + " tried"), M.cardEl(tried, { cls: "tried" })));
      }
      if (end && onTable.length) trick.append(el("span", { class: "muted", id: "ended" }, " ← on the table" + when));
      const table = el("div", { class: "table" },
        this.seatBox(0, view, all), this.seatBox(1, view, all), this.seatBox(2, view, all),
        el("div", { class: "centre" },
          el("div", {}, "trump card: ", el("span", { id: "trump" }, trump ? M.cardEl(trump) : el("span", { class: "muted" }, view.zlidu ? "z lidu (not shown)" : "not known")),
            view.zlidu && trump ? " (z lidu)" : ""),
          el("div", {}, "talon: ", el("span", { id: "talon" }, talon && talon.length ? talon.map((c) => M.cardEl(c)) : el("span", { class: "muted" }, "not known"))),
          trick));
      // the story
      const bidItems = this.bidLines(view);
      const next = st.next;
      let nextLine = null;
      if (next) {
        const shown = this.who === "all" || this.who === next.seat;
        nextLine = el("p", { id: "next-decision", "data-action": shown ? next.action : null },
          "next: seat " + next.seat + " decides (" + next.decision + ")",
          ...(shown ? [" → ", M.richText(this.nextWords(view, next)), next.ms !== null && next.ms !== undefined ? " in " + ms(next.ms) : ""] : [" (see the next step)"]));
      } else if (d.fault) {
        nextLine = el("p", { id: "next-decision" }, "seat " + d.fault.seat + " faulted (" + d.fault.kind + "): the deal ends (R12.2)");
      }
      const told = this.who === "all" ? [] : st.events[this.who];
      const teller = new M.Teller(this.who === "all" ? null : this.who, d.players);
      const plays = d.decisions.filter((x) => x.decision === "play" && x.action !== "lay");
      let k = 0;
      const tricks = el("table", { class: "grid tricks", id: "tricks" },
        el("tr", {}, el("th", {}, "#"), el("th", {}, "led by"), el("th", {}, "cards"), el("th", {}, "won by")),
        ...(view.tricks || []).map((t, j) => el("tr", {}, el("td", {}, j + 1), el("td", {}, "seat " + t.leader),
          el("td", {}, t.cards.map((c) => {
            const p = plays[k++];
            const e = M.cardEl(c);
            if (p && this.timeShown(p.seat) && typeof p.ms === "number") e.title = (e.title ? e.title + " · " : "") + "seat " + p.seat + " in " + ms(p.ms);
            return e;
          })), el("td", {}, "seat " + t.winner))));
      const story = el("div", { class: "story" },
        el("h3", {}, "bidding"), el("ol", { id: "bids" }, bidItems),
        view.game ? el("p", { id: "game" }, M.richText("game: " + (view.game === "barva" ? (M.CONTRACT[view.contract] || "„Barva?“") + (view.trump ? " in " + M.SUITS[view.trump][0] + " " + M.SUITS[view.trump][1] : "") : view.game) +
          ", actor seat " + view.actor + (Object.keys(view.levels || {}).length ? " · " + Object.entries(view.levels).map(([c, v]) => c + (v ? " " + M.LEVELS[v] : "")).join(", ") : "") +
          Object.entries(view.proti || {}).map(([g, s]) => " · " + g + " proti by seat " + s).join(""))) : null,
        told.length ? el("div", { id: "told" }, el("h3", {}, "told to seat " + this.who + " after the last action"), el("ul", {}, told.map((e) => el("li", {}, M.richText(teller.event(e)))))) : null,
        nextLine,
        el("h3", {}, "tricks"), tricks,
        (view.hlasky || []).length ? el("p", { id: "hlasky" }, M.richText("hlášky: " + view.hlasky.map((h) => "seat " + h.seat + " " + h.points + " " + M.SUITS[h.suit][0]).join(" · "))) : null,
        el("p", { id: "points" }, "card points: " + (view.points || []).map((p, s) => "seat " + s + " " + p).join(" · ")));
      const res = view.result;
      if (res) {
        story.append(el("h3", {}, "settlement (" + res.kind + ")"),
          M.tableEl(res.components.map((c) => ({ component: c.name + (c.level ? " " + M.LEVELS[c.level] : ""), owner: c.owner, won: c.won ? "won" : "lost", amount: c.amount, detail: c.detail })), { id: "settlement" }),
          el("p", { id: "payments" }, "payments: " + res.payments.map((x, s) => "seat " + s + " " + M.signed(x)).join(" · ")),
          ...res.notes.map((x) => el("p", { class: "note" }, x)));
      }
      this.boardBox.replaceChildren(table, story);
      this.faultBox.replaceChildren(...(d.fault && i === n - 1 ? [this.faultEl(d.fault)] : []));
      if (this.onMove) this.onMove(i, this.who);
    }

    /* The card a faulty answer played (its evidence is the bot's own line: read as data, shown only when it names a card). */
    triedCard(f) {
      try {
        const a = JSON.parse(f.evidence || "").action;
        return typeof a === "string" && /^play:[789XUOKA][hlba]$/.test(a) ? a.slice(5) : null;
      } catch (e) {
        return null;
      }
    }

    faultEl(f) {
      const err = f.stderr;
      let stderr = null;
      if (err) {
        stderr = el("div", { id: "stderr" },
          el("p", {}, "the end of seat " + f.seat + "'s stderr file (" + err.file + (err.size !== null ? ", " + err.size + " bytes" : "") + ")" +
            (err.note ? ": " + err.note : err.cut ? ", its last lines" : "") + " — it spans the whole match: after a fault the bot is started afresh and writes on"),
          err.note ? null : el("pre", { class: "stderr" }, err.tail || "(empty)"));
      }
      return el("div", { class: "faultbox", id: "fault" },
        el("h3", {}, "fault: seat " + f.seat + " (" + this.d.players[f.seat] + "): " + f.kind),
        el("p", {}, f.message || ""),
        el("p", {}, "rule broken: ", el("b", {}, f.rule), f.detail ? " — " + f.detail : "", "; settled by " + f.settlement),
        el("p", {}, "evidence:"), el("pre", { id: "evidence" }, f.evidence || "(none)"),
        stderr,
        el("p", {}, "repeat this deal to the bot:"), el("pre", { id: "replay-command" }, f.command));
    }
  };

  /* The position an address names: ?step=17&seat=1 (a page) or the same after a report's #replay:…? */
  M.replayPosition = function (query) {
    const q = new URLSearchParams(query);
    const step = q.get("step"), seat = q.get("seat");
    return { step: step !== null && /^\d+$/.test(step) ? Number(step) : null, seat: seat !== null && /^[012]$/.test(seat) ? Number(seat) : "all" };
  };
  M.replayQuery = (partie, deal, step, who) => "?partie=" + partie + "&deal=" + deal + "&step=" + step + "&seat=" + who;

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
      const at = M.replayPosition(location.search);
      window.replayer = new M.Replayer(data, node, { prev: url(list[k - 1]), next: url(list[k + 1]), log: P.log }, {
        step: at.step, seat: at.seat,
        onMove: (i, who) => history.replaceState(null, "", P.replay + M.replayQuery(P.partie, P.deal, i, who)),
      });
      if (P.analysis && M.attachAnalysis) M.attachAnalysis(window.replayer, P.analysis, P.replay); // the values, when the server has them
    } catch (e) {
      M.fail(node, e);
    }
  }
  if (M.page.kind === "replay") start();
})();
