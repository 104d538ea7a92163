/*
 * An example bot for the marias referee (protocol/PROTOCOL.md), in C99 with
 * only the standard library and its own minimal JSON reader.
 *
 * Build:  gcc -O2 -o mariasbot examples/c/bot.c
 * Run:    marias match --bot ./mariasbot --bot random --bot random
 *
 * It reads one JSON message per line on stdin and writes one JSON answer per
 * request on stdout.  Its rule is small but legal by construction: it only
 * ever answers with a string taken from the request's "legal" list.
 *   - lay the cards down whenever that is offered;
 *   - answer "dobra" to everything it is asked (Barva, betl, raises);
 *   - trump card: the highest card of its longest suit;
 *   - talon: ask Barva with the two weakest cards outside the trump suit;
 *     if only betl/durch is possible, play betl and throw the two highest cards;
 *   - play: an ace that wins the trick as it stands (not in betl), otherwise
 *     the lowest legal card.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ JSON */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct json {
    enum jtype type;
    int boolean;
    char *text;            /* J_STR: decoded UTF-8; J_NUM: the number as written */
    struct json **items;   /* J_ARR / J_OBJ values */
    char **keys;           /* J_OBJ keys */
    size_t len, cap;
} json;

typedef struct {
    const char *p, *end;
    int depth;
    int error;
} parser;

static json *jnew(enum jtype t) {
    json *j = calloc(1, sizeof *j);
    if (!j) { perror("calloc"); exit(1); }
    j->type = t;
    return j;
}

static void jfree(json *j) {
    size_t i;
    if (!j) return;
    for (i = 0; i < j->len; i++) {
        jfree(j->items[i]);
        if (j->keys) free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    free(j->text);
    free(j);
}

static void jpush(json *j, char *key, json *v) {
    if (j->len == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 8;
        j->items = realloc(j->items, j->cap * sizeof *j->items);
        if (j->type == J_OBJ) j->keys = realloc(j->keys, j->cap * sizeof *j->keys);
        if (!j->items || (j->type == J_OBJ && !j->keys)) { perror("realloc"); exit(1); }
    }
    if (j->type == J_OBJ) j->keys[j->len] = key;
    j->items[j->len++] = v;
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' || *ps->p == '\n')) ps->p++;
}

static void put_utf8(char **out, unsigned long cp) {
    char *o = *out;
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    *out = o;
}

static int hex4(parser *ps, unsigned long *cp) {
    int i;
    *cp = 0;
    if (ps->end - ps->p < 4) return 0;
    for (i = 0; i < 4; i++) {
        char c = *ps->p++;
        *cp <<= 4;
        if (c >= '0' && c <= '9') *cp |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f') *cp |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *cp |= (unsigned long)(c - 'A' + 10);
        else return 0;
    }
    return 1;
}

/* Parses a string starting at the opening quote; returns a malloc'd UTF-8 copy. */
static char *parse_string(parser *ps) {
    const char *start;
    char *buf, *o;
    if (ps->p >= ps->end || *ps->p != '"') { ps->error = 1; return NULL; }
    start = ++ps->p;
    /* the decoded text is never longer than the escaped one */
    while (ps->p < ps->end && *ps->p != '"') {
        if (*ps->p == '\\') ps->p++;
        ps->p++;
    }
    if (ps->p >= ps->end) { ps->error = 1; return NULL; }
    buf = malloc((size_t)(ps->p - start) + 1);
    if (!buf) { perror("malloc"); exit(1); }
    ps->p = start;
    o = buf;
    while (*ps->p != '"') {
        char c = *ps->p++;
        if (c != '\\') { *o++ = c; continue; }
        c = *ps->p++;
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned long cp, lo;
            if (!hex4(ps, &cp)) { ps->error = 1; free(buf); return NULL; }
            if (cp >= 0xD800 && cp < 0xDC00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                ps->p += 2;
                if (!hex4(ps, &lo)) { ps->error = 1; free(buf); return NULL; }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(&o, cp);
            break;
        }
        default: ps->error = 1; free(buf); return NULL;
        }
    }
    ps->p++; /* closing quote */
    *o = '\0';
    return buf;
}

static json *parse_value(parser *ps) {
    json *j;
    skip_ws(ps);
    if (ps->p >= ps->end || ++ps->depth > 200) { ps->error = 1; return NULL; }
    switch (*ps->p) {
    case '{':
        j = jnew(J_OBJ);
        ps->p++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == '}') { ps->p++; break; }
        for (;;) {
            char *key;
            json *v;
            skip_ws(ps);
            key = parse_string(ps);
            if (ps->error) { jfree(j); return NULL; }
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') { free(key); jfree(j); ps->error = 1; return NULL; }
            ps->p++;
            v = parse_value(ps);
            if (ps->error) { free(key); jfree(j); return NULL; }
            jpush(j, key, v);
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
            if (ps->p < ps->end && *ps->p == '}') { ps->p++; break; }
            jfree(j); ps->error = 1; return NULL;
        }
        break;
    case '[':
        j = jnew(J_ARR);
        ps->p++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ']') { ps->p++; break; }
        for (;;) {
            json *v = parse_value(ps);
            if (ps->error) { jfree(j); return NULL; }
            jpush(j, NULL, v);
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
            if (ps->p < ps->end && *ps->p == ']') { ps->p++; break; }
            jfree(j); ps->error = 1; return NULL;
        }
        break;
    case '"':
        j = jnew(J_STR);
        j->text = parse_string(ps);
        if (ps->error) { jfree(j); return NULL; }
        break;
    case 't':
    case 'f':
    case 'n': {
        const char *word = *ps->p == 't' ? "true" : *ps->p == 'f' ? "false" : "null";
        size_t n = strlen(word);
        if ((size_t)(ps->end - ps->p) < n || strncmp(ps->p, word, n) != 0) { ps->error = 1; return NULL; }
        ps->p += n;
        j = jnew(word[0] == 'n' ? J_NULL : J_BOOL);
        j->boolean = word[0] == 't';
        break;
    }
    default: {
        const char *start = ps->p;
        while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p)) ps->p++;
        if (ps->p == start) { ps->error = 1; return NULL; }
        j = jnew(J_NUM);
        j->text = malloc((size_t)(ps->p - start) + 1);
        if (!j->text) { perror("malloc"); exit(1); }
        memcpy(j->text, start, (size_t)(ps->p - start));
        j->text[ps->p - start] = '\0';
        break;
    }
    }
    ps->depth--;
    return j;
}

static json *jparse(const char *text, size_t len) {
    parser ps = {text, text + len, 0, 0};
    json *j = parse_value(&ps);
    skip_ws(&ps);
    if (ps.error || ps.p != ps.end) { jfree(j); return NULL; }
    return j;
}

static json *jget(const json *j, const char *key) {
    size_t i;
    if (!j || j->type != J_OBJ) return NULL;
    for (i = 0; i < j->len; i++)
        if (strcmp(j->keys[i], key) == 0) return j->items[i];
    return NULL;
}

static const char *jstr(const json *j) {
    return j && j->type == J_STR ? j->text : NULL;
}

/* ------------------------------------------------------------------ the rule */

static const char TRUMP_ORDER[] = "789UOKXA"; /* trump games, low to high (R1.3) */
static const char BETL_ORDER[] = "789XUOKA";  /* betl and durch */

static int strength(const char *card, const char *order) {
    const char *q = strchr(order, card[0]);
    return q ? (int)(q - order) : -1;
}

static int starts(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The legal actions as an array of C strings (pointers into the JSON tree). */
typedef struct {
    const char **a;
    size_t n;
} strs;

static int has(const strs *legal, const char *action) {
    size_t i;
    for (i = 0; i < legal->n; i++)
        if (strcmp(legal->a[i], action) == 0) return 1;
    return 0;
}

/* Cards of a discard action "kind:C1,C2". */
static void pair(const char *action, const char **c1, const char **c2) {
    const char *colon = strchr(action, ':');
    *c1 = colon ? colon + 1 : action;
    *c2 = *c1 + 3;
}

static const char *choose_trump(const json *view, const strs *legal) {
    int counts[256] = {0};
    const json *hand = jget(view, "hand");
    size_t i;
    const char *best = legal->a[0];
    int best_score = -1;
    if (hand && hand->type == J_ARR)
        for (i = 0; i < hand->len; i++) {
            const char *c = jstr(hand->items[i]);
            if (c && strlen(c) == 2) counts[(unsigned char)c[1]]++;
        }
    for (i = 0; i < legal->n; i++) {
        const char *a = legal->a[i];
        const char *c;
        int score;
        if (!starts(a, "trump:") || strcmp(a, "trump:zlidu") == 0) continue;
        c = a + 6;
        score = 10 * counts[(unsigned char)c[1]] + strength(c, TRUMP_ORDER);
        if (score > best_score) { best_score = score; best = a; }
    }
    return best;
}

static const char *choose_talon(const json *view, const strs *legal) {
    const char *trump = jstr(jget(view, "trump"));
    const char *best = NULL;
    long best_score = 0;
    size_t i;
    const char *c1, *c2;
    for (i = 0; i < legal->n; i++) {
        long score;
        if (!starts(legal->a[i], "barva:")) continue;
        pair(legal->a[i], &c1, &c2);
        score = -(strength(c1, TRUMP_ORDER) + strength(c2, TRUMP_ORDER)
                  + (trump && c1[1] == trump[0] ? 100 : 0) + (trump && c2[1] == trump[0] ? 100 : 0));
        if (!best || score > best_score) { best = legal->a[i]; best_score = score; }
    }
    if (best) return best;
    for (i = 0; i < legal->n; i++) {
        long score;
        if (!starts(legal->a[i], "betl:")) continue;
        pair(legal->a[i], &c1, &c2);
        score = strength(c1, BETL_ORDER) + strength(c2, BETL_ORDER);
        if (!best || score > best_score) { best = legal->a[i]; best_score = score; }
    }
    if (best) return best;
    for (i = 0; i < legal->n; i++) {
        long score;
        if (!starts(legal->a[i], "durch:")) continue;
        pair(legal->a[i], &c1, &c2);
        score = -(strength(c1, BETL_ORDER) + strength(c2, BETL_ORDER));
        if (!best || score > best_score) { best = legal->a[i]; best_score = score; }
    }
    return best ? best : legal->a[0];
}

/* Does `card` win the trick in progress as it stands?  trump: suit char or 0. */
static int wins_trick(const char *card, const json *trick, char trump, const char *order) {
    const char *win;
    size_t i;
    if (!trick || trick->type != J_ARR || trick->len == 0) return 1;
    win = jstr(jget(trick->items[0], "card"));
    if (!win) return 0;
    for (i = 1; i < trick->len; i++) {
        const char *c = jstr(jget(trick->items[i], "card"));
        if (!c) continue;
        if (c[1] == win[1]) {
            if (strength(c, order) > strength(win, order)) win = c;
        } else if (trump && c[1] == trump) {
            win = c;
        }
    }
    if (card[1] == win[1]) return strength(card, order) > strength(win, order);
    return trump && card[1] == trump;
}

static const char *choose_play(const json *view, const strs *legal) {
    const char *game = jstr(jget(view, "game"));
    int barva = game && strcmp(game, "barva") == 0;
    int betl = game && strcmp(game, "betl") == 0;
    const char *trump_s = jstr(jget(view, "trump"));
    char trump = barva && trump_s ? trump_s[0] : 0;
    const char *order = barva ? TRUMP_ORDER : BETL_ORDER;
    const json *trick = jget(view, "trick");
    const char *best = NULL;
    int best_strength = 0;
    size_t i;
    if (!betl)
        for (i = 0; i < legal->n; i++) {
            const char *a = legal->a[i];
            if (starts(a, "play:") && a[5] == 'A' && wins_trick(a + 5, trick, trump, order)) return a;
        }
    for (i = 0; i < legal->n; i++) {
        const char *a = legal->a[i];
        int s;
        if (!starts(a, "play:")) continue;
        s = strength(a + 5, order);
        if (!best || s < best_strength) { best = a; best_strength = s; }
    }
    return best ? best : legal->a[0];
}

static const char *choose(const char *decision, const json *view, const strs *legal) {
    if (has(legal, "lay")) return "lay";
    if (strcmp(decision, "trump") == 0) return choose_trump(view, legal);
    if (strcmp(decision, "talon") == 0) return choose_talon(view, legal);
    if (strcmp(decision, "answer") == 0 || strcmp(decision, "flek") == 0)
        return has(legal, "dobra") ? "dobra" : legal->a[0];
    if (strcmp(decision, "contract") == 0) return has(legal, "contract:hra") ? "contract:hra" : legal->a[0];
    if (strcmp(decision, "play") == 0) return choose_play(view, legal);
    return legal->a[0];
}

/* ------------------------------------------------------------------ output */

static void write_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { putchar('\\'); putchar(c); }
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void answer(const json *msg) {
    const json *id = jget(msg, "id");
    const json *legal_j = jget(msg, "legal");
    const char *decision = jstr(jget(msg, "decision"));
    strs legal;
    size_t i;
    const char *action;
    if (!id || id->type != J_NUM || !legal_j || legal_j->type != J_ARR || legal_j->len == 0) {
        fprintf(stderr, "example-c: a request without id or legal actions\n");
        return;
    }
    legal.a = malloc(legal_j->len * sizeof *legal.a);
    if (!legal.a) { perror("malloc"); exit(1); }
    legal.n = 0;
    for (i = 0; i < legal_j->len; i++) {
        const char *s = jstr(legal_j->items[i]);
        if (s) legal.a[legal.n++] = s;
    }
    if (legal.n == 0) { free(legal.a); return; }
    action = choose(decision ? decision : "", jget(msg, "view"), &legal);
    printf("{\"type\":\"action\",\"id\":%s,\"action\":", id->text);
    write_json_string(action);
    printf("}\n");
    fflush(stdout);
    free(legal.a);
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) != -1) {
        json *msg = jparse(line, (size_t)n);
        const char *type;
        if (!msg) {
            if (strspn(line, " \t\r\n") != (size_t)n) fprintf(stderr, "example-c: cannot parse a line\n");
            continue;
        }
        type = jstr(jget(msg, "type"));
        if (type && strcmp(type, "hello") == 0) {
            printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"example-c\",\"version\":\"1\"}\n");
            fflush(stdout);
        } else if (type && strcmp(type, "request") == 0) {
            answer(msg);
        } else if (type && strcmp(type, "bye") == 0) {
            jfree(msg);
            break;
        }
        /* partie_start, deal_start, event, deal_end, partie_end and anything new: nothing to answer */
        jfree(msg);
    }
    free(line);
    return 0;
}
