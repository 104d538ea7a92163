//! An example bot for the marias referee (protocol/PROTOCOL.md), in Rust with
//! only the standard library and its own minimal JSON reader.
//!
//! It reads one JSON message per line on stdin and writes one JSON answer per
//! request on stdout.  Its rule is small but legal by construction: it only
//! ever answers with a string taken from the request's "legal" list.
//!   - lay the cards down whenever that is offered;
//!   - answer "dobra" to everything it is asked (Barva, betl, raises);
//!   - trump card: the highest card of its longest suit;
//!   - talon: ask Barva with the two weakest cards outside the trump suit;
//!     if only betl/durch is possible, play betl and throw the two highest cards;
//!   - play: an ace that wins the trick as it stands (not in betl), otherwise
//!     the lowest legal card.

use std::io::{self, BufRead, Write};

mod json;
use json::Json;

const TRUMP_ORDER: &str = "789UOKXA"; // trump games, low to high (R1.3)
const BETL_ORDER: &str = "789XUOKA"; // betl and durch

fn rank(card: &str) -> char {
    card.chars().next().unwrap_or('?')
}

fn suit(card: &str) -> char {
    card.chars().nth(1).unwrap_or('?')
}

fn strength(card: &str, order: &str) -> i32 {
    order.find(rank(card)).map(|i| i as i32).unwrap_or(-1)
}

/// The first of `items` with the highest score.
fn best<'a, F: Fn(&str) -> i32>(items: &[&'a str], score: F) -> Option<&'a str> {
    let mut out: Option<(&'a str, i32)> = None;
    for &it in items {
        let s = score(it);
        match out {
            Some((_, bs)) if bs >= s => {}
            _ => out = Some((it, s)),
        }
    }
    out.map(|(it, _)| it)
}

/// The two cards of a discard action "kind:C1,C2".
fn pair(action: &str) -> Vec<&str> {
    action.split(':').nth(1).unwrap_or("").split(',').collect()
}

fn choose_trump<'a>(view: &Json, legal: &[&'a str]) -> &'a str {
    let hand: Vec<&str> = view.get("hand").map(|h| h.strings()).unwrap_or_default();
    let count = |s: char| hand.iter().filter(|c| suit(c) == s).count() as i32;
    let cards: Vec<&'a str> = legal.iter().copied().filter(|a| *a != "trump:zlidu").collect();
    best(&cards, |a| {
        let c = &a[6..];
        10 * count(suit(c)) + strength(c, TRUMP_ORDER)
    })
    .unwrap_or(legal[0])
}

fn choose_talon<'a>(view: &Json, legal: &[&'a str]) -> &'a str {
    let trump = view.get("trump").and_then(|t| t.as_str()).and_then(|t| t.chars().next());
    let with = |prefix: &str| -> Vec<&'a str> { legal.iter().copied().filter(|a| a.starts_with(prefix)).collect() };
    let barva = with("barva:");
    if let Some(a) = best(&barva, |a| {
        -pair(a)
            .iter()
            .map(|c| strength(c, TRUMP_ORDER) + if Some(suit(c)) == trump { 100 } else { 0 })
            .sum::<i32>()
    }) {
        return a;
    }
    if let Some(a) = best(&with("betl:"), |a| pair(a).iter().map(|c| strength(c, BETL_ORDER)).sum()) {
        return a;
    }
    if let Some(a) = best(&with("durch:"), |a| -pair(a).iter().map(|c| strength(c, BETL_ORDER)).sum::<i32>()) {
        return a;
    }
    legal[0]
}

/// Does `card` win the trick in progress as it stands?
fn wins_trick(card: &str, trick: &[String], trump: Option<char>, order: &str) -> bool {
    let Some(first) = trick.first() else { return true };
    let mut win: &str = first;
    for c in &trick[1..] {
        if suit(c) == suit(win) {
            if strength(c, order) > strength(win, order) {
                win = c;
            }
        } else if trump == Some(suit(c)) {
            win = c;
        }
    }
    if suit(card) == suit(win) {
        strength(card, order) > strength(win, order)
    } else {
        trump == Some(suit(card))
    }
}

fn choose_play<'a>(view: &Json, legal: &[&'a str]) -> &'a str {
    let game = view.get("game").and_then(|g| g.as_str()).unwrap_or("");
    let barva = game == "barva";
    let trump = if barva { view.get("trump").and_then(|t| t.as_str()).and_then(|t| t.chars().next()) } else { None };
    let order = if barva { TRUMP_ORDER } else { BETL_ORDER };
    let trick: Vec<String> = match view.get("trick") {
        Some(Json::Arr(items)) => items
            .iter()
            .filter_map(|t| t.get("card").and_then(|c| c.as_str()).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let plays: Vec<&'a str> = legal.iter().copied().filter(|a| a.starts_with("play:")).collect();
    if game != "betl" {
        for a in &plays {
            let c = &a[5..];
            if rank(c) == 'A' && wins_trick(c, &trick, trump, order) {
                return a;
            }
        }
    }
    best(&plays, |a| -strength(&a[5..], order)).unwrap_or(legal[0])
}

fn choose<'a>(decision: &str, view: &Json, legal: &[&'a str]) -> &'a str {
    let pick = |want: &str| legal.iter().copied().find(|a| *a == want);
    if let Some(a) = pick("lay") {
        return a;
    }
    match decision {
        "trump" => choose_trump(view, legal),
        "talon" => choose_talon(view, legal),
        "answer" | "flek" => pick("dobra").unwrap_or(legal[0]),
        "contract" => pick("contract:hra").unwrap_or(legal[0]),
        "play" => choose_play(view, legal),
        _ => legal[0],
    }
}

fn answer(msg: &Json) -> Option<String> {
    let id = match msg.get("id") {
        Some(Json::Num(n)) => n.clone(),
        _ => return None,
    };
    let legal_owned = msg.get("legal").map(|l| l.strings()).unwrap_or_default();
    if legal_owned.is_empty() {
        return None;
    }
    let legal: Vec<&str> = legal_owned.iter().copied().collect();
    let decision = msg.get("decision").and_then(|d| d.as_str()).unwrap_or("");
    let null = Json::Null;
    let view = msg.get("view").unwrap_or(&null);
    let action = choose(decision, view, &legal);
    Some(format!("{{\"type\":\"action\",\"id\":{},\"action\":{}}}", id, json::quote(action)))
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    let mut input = stdin.lock();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break, // end of input
            Ok(_) => {}
            Err(e) => {
                eprintln!("example-rust: cannot read stdin: {e}");
                break;
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        let msg = match json::parse(&line) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("example-rust: cannot parse a line: {e}");
                continue;
            }
        };
        let reply = match msg.get("type").and_then(|t| t.as_str()) {
            Some("hello") => Some("{\"type\":\"hello\",\"protocol\":1,\"name\":\"example-rust\",\"version\":\"1\"}".to_string()),
            Some("request") => answer(&msg),
            Some("bye") => break,
            // partie_start, deal_start, event, deal_end, partie_end and anything new: nothing to answer
            _ => None,
        };
        if let Some(text) = reply {
            if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
                break;
            }
        }
    }
}
