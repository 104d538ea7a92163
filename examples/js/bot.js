#!/usr/bin/env node
// An example bot for the marias referee (protocol/PROTOCOL.md), Node.js, no dependencies.
//
// It reads one JSON message per line on stdin and writes one JSON answer per
// request on stdout.  Its rule is small but legal by construction: it only
// ever picks a string from the request's "legal" list.
//   - lay the cards down whenever that is offered;
//   - answer "dobra" to everything it is asked (Barva, betl, raises);
//   - trump card: the highest card of its longest suit;
//   - talon: ask Barva with the two weakest cards outside the trump suit;
//     if only betl/durch is possible, play betl and throw the two highest cards;
//   - play: an ace that wins the trick as it stands (not in betl), otherwise
//     the lowest legal card.
"use strict";

const readline = require("readline");

const TRUMP_ORDER = "789UOKXA"; // trump games, low to high (R1.3)
const BETL_ORDER = "789XUOKA"; // betl and durch

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function strength(card, order) {
  return order.indexOf(card[0]);
}

// Index of the best element by score (first one on ties).
function best(items, score) {
  let bi = 0;
  let bs = -Infinity;
  items.forEach((it, i) => {
    const s = score(it);
    if (s > bs) {
      bs = s;
      bi = i;
    }
  });
  return items[bi];
}

function chooseTrump(view, legal) {
  const counts = {};
  for (const c of view.hand) counts[c[1]] = (counts[c[1]] || 0) + 1;
  const cards = legal.filter((a) => a !== "trump:zlidu");
  if (cards.length === 0) return legal[0];
  return best(cards, (a) => {
    const c = a.slice(6);
    return 10 * (counts[c[1]] || 0) + strength(c, TRUMP_ORDER);
  });
}

function chooseTalon(view, legal) {
  const pair = (a) => a.split(":")[1].split(",");
  const barva = legal.filter((a) => a.startsWith("barva:"));
  if (barva.length > 0) {
    return best(barva, (a) => {
      let cost = 0;
      for (const c of pair(a)) cost += strength(c, TRUMP_ORDER) + (c[1] === view.trump ? 100 : 0);
      return -cost;
    });
  }
  const betl = legal.filter((a) => a.startsWith("betl:"));
  if (betl.length > 0) {
    return best(betl, (a) => pair(a).reduce((s, c) => s + strength(c, BETL_ORDER), 0));
  }
  const durch = legal.filter((a) => a.startsWith("durch:"));
  if (durch.length > 0) {
    return best(durch, (a) => -pair(a).reduce((s, c) => s + strength(c, BETL_ORDER), 0));
  }
  return legal[0];
}

// Does `card` win the trick in progress as it stands?
function winsTrick(card, trick, trump, order) {
  if (trick.length === 0) return true;
  let win = trick[0].card;
  for (const t of trick.slice(1)) {
    const c = t.card;
    if (c[1] === win[1]) {
      if (strength(c, order) > strength(win, order)) win = c;
    } else if (trump !== null && c[1] === trump) {
      win = c;
    }
  }
  if (card[1] === win[1]) return strength(card, order) > strength(win, order);
  return trump !== null && card[1] === trump;
}

function choosePlay(view, legal) {
  const cards = legal.filter((a) => a.startsWith("play:")).map((a) => a.slice(5));
  if (cards.length === 0) return legal[0];
  const trump = view.game === "barva" ? view.trump : null;
  const order = view.game === "barva" ? TRUMP_ORDER : BETL_ORDER;
  if (view.game !== "betl") {
    for (const c of cards) {
      if (c[0] === "A" && winsTrick(c, view.trick, trump, order)) return "play:" + c;
    }
  }
  return "play:" + best(cards, (c) => -strength(c, order));
}

function choose(decision, view, legal) {
  if (legal.includes("lay")) return "lay";
  switch (decision) {
    case "trump":
      return chooseTrump(view, legal);
    case "talon":
      return chooseTalon(view, legal);
    case "answer":
    case "flek":
      return legal.includes("dobra") ? "dobra" : legal[0];
    case "contract":
      return legal.includes("contract:hra") ? "contract:hra" : legal[0];
    case "play":
      return choosePlay(view, legal);
    default:
      return legal[0];
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });

rl.on("line", (line) => {
  if (line.trim() === "") return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    process.stderr.write("example-js: cannot parse a line: " + e.message + "\n");
    return;
  }
  if (msg === null || typeof msg !== "object") return;
  switch (msg.type) {
    case "hello":
      send({ type: "hello", protocol: 1, name: "example-js", version: "1" });
      break;
    case "request": {
      let action;
      try {
        action = choose(msg.decision, msg.view, msg.legal);
      } catch (e) {
        process.stderr.write("example-js: rule failed, playing the first legal action: " + e.message + "\n");
        action = msg.legal[0];
      }
      send({ type: "action", id: msg.id, action: action });
      break;
    }
    case "bye":
      rl.close();
      process.stdin.destroy(); // stop reading: the process ends once stdout is written
      break;
    default:
      break; // partie_start, deal_start, event, deal_end, partie_end and anything new: nothing to answer
  }
});

rl.on("close", () => {
  process.exitCode = 0;
});
