"""A bot whose every piece of text is markup, for the web pages (issue 34): its hello name and
version, its stderr, and the actions it faults with try to run a script in whoever looks at
its games.  It plays the first legal action, except:

- in deal 1, the first time it follows in a trick (a card is on the table) and holds a card it
  may not play, it plays that card (an illegal card in the middle of a trick, R7.2);
- in deal 3, at its first decision, it answers an action made of markup (a malformed action).

Every request, it writes a line of markup to stderr.
"""

import json
import sys

MARK = "<img src=x onerror=\"window.__pwned=(window.__pwned||0)+1\">"
done = set()


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    m = json.loads(line)
    t = m.get("type")
    if t == "hello":
        send({"type": "hello", "protocol": 1, "name": "evil" + MARK, "version": "<script>window.__pwned=9</script>"})
    elif t == "request":
        sys.stderr.write(f"deal {m['deal']} {m['decision']}: <script>window.__pwned=7</script>{MARK}\n")
        sys.stderr.flush()
        action = m["legal"][0]
        view = m["view"]
        if m["deal"] == 1 and m["decision"] == "play" and view["trick"] and 1 not in done:
            bad = [c for c in view["hand"] if "play:" + c not in m["legal"]]
            if bad:
                done.add(1)
                action = "play:" + bad[0]
        elif m["deal"] == 3 and 3 not in done:
            done.add(3)
            action = "play:" + MARK
        send({"type": "action", "id": m["id"], "action": action})
    elif t == "bye":
        break
