/*
 * undosay.c - undo phrasings composed from parts (undosay.h).
 *
 * A frame holds {O} any object ("what you just did", "the last change") or {o} a short object
 * that reads well before a particle ("roll {o} back": "roll that back"), and may end in {t}, the
 * earlier state after "back" (nothing, " to how it was", " the way it was"), or {T}, one that is
 * always said ("back" alone is the back camera, the back door).
 */
#include "undosay.h"

#include "rng.h"
#include "status.h"

#include <stdio.h>
#include <string.h>

#define N_OF(a)  ((int)(sizeof(a) / sizeof((a)[0])))
#define HELD_MOD 5 /* one frame in five held out, as packgen holds out templates */

static const char *const FRAMES[] = {
    "undo {O}",
    "revert {O}",
    "reverse {O}",
    "cancel {O}",
    "roll {o} back",
    "roll back {O}",
    "take {o} back",
    "put {o} back{t}",
    "change {o} back{t}",
    "switch {o} back{t}",
    "set {o} back{t}",
    "turn {o} back{t}",
    "make {o} like it was",
    "return {o} to how it was",
    "scrap {O}",
    "drop {O}",
    "ditch {O}",
    "forget {O}",
    "get rid of {O}",
    "erase {O}",
    "unwind {O}",
    "back out {O}",
    "go back{t}",
    "let's go back{t}",
    "can we go back{t}",
    "back{T}",
    "restore the previous setting",
    "restore how it was",
    "bring back the old setting",
    "the old setting again",
    "i want it back{t}",
    "give me the old one back",
    "put everything back{t}",
    "lose {O}",
    "nix {O}",
    "undo",
    "revert",
    "rewind {O}",
    "change {o} back to what it was",
    "put {o} back to what it was",
};

static const char *const OBJECTS[] = {
    "that",
    "it",
    "this",
    "the last one",
    "the last change",
    "the last thing",
    "what you just did",
    "what you did",
    "your last change",
    "my last request",
    "that change",
    "the last action",
    "that last change",
    "the change",
    "the last step",
    "the last command",
    "that last one",
    "the previous change",
    "what i just asked for",
    "that last bit",
};
static const char *const SHORT_OBJECTS[] = {"that", "it", "this", "that one", "the change"};

static const char *const TAILS[] = {
    " to how it was",   " to what it was",     " to before",
    " the way it was",  " to the way it was",  " to how it was before",
    " to where it was", " to the old setting", " to the previous setting",
    " like it was",     " as it was",          " to what it was before",
};

static const char *const LEADS[] = {
    "oops, ",
    "oh no, ",
    "wait, ",
    "hmm, ",
    "ugh, ",
    "no, ",
    "nope, ",
    "no no, ",
    "whoa, ",
    "hold on, ",
    "actually, ",
    "sorry, ",
    "on second thought, ",
    "my bad, ",
    "ah, ",
    "hang on, ",
    "nah, ",
    "uh oh, ",
    "shoot, ",
    "argh, ",
    "whoops, ",
    "oh wait, ",
    "wait wait, ",
    "hmm no, ",
    "err, ",
    "ok ",
    "hey, ",
    "please ",
    "can you ",
    "could you ",
    "just ",
    "um, ",
    "quick, ",
    "okay so ",
    "no wait, ",
    "yikes, ",
};

static const char *const REMARKS[] = {
    "that was a mistake",
    "that's wrong",
    "that was wrong",
    "i didn't mean that",
    "i didn't mean to do that",
    "wrong one",
    "that's not what i wanted",
    "not what i wanted",
    "i changed my mind",
    "i've changed my mind",
    "i liked it better before",
    "it was better before",
    "that's not right",
    "that was an accident",
    "i hit the wrong thing",
    "bad idea",
    "i didn't ask for that",
    "that's not what i said",
    "my mistake",
    "i messed up",
    "that's worse",
    "i don't like that",
    "i don't like it",
    "that's no good",
    "that didn't help",
    "that was the wrong one",
    "you misheard me",
    "that's not what i meant",
};

/* remarks that ask for the undo on their own */
static const char *const WHOLE_REMARKS[] = {
    "that was a mistake",       "i didn't mean to do that", "i liked it better before",
    "it was better before",     "that was an accident",     "i changed my mind about that",
    "that's not what i wanted", "you misheard me",
};

static const char *const CLOSERS[] = {
    " please", " pls",        " thanks",    " now",           " right now",  " quick",
    " for me", " if you can", " thank you", " straight away", " real quick", " asap",
};

#define PICK(rng, a) ((a)[train_rng_below((rng), (uint32_t)N_OF(a))])

/* Whether a remark is held out: one in five of REMARKS, and any remark holding one ("i changed
 * my mind about that"), so a held-out utterance never has a remark the model was trained on. */
static bool remark_held(const char *remark) {
    for (int i = 0; i < N_OF(REMARKS); i++) {
        if (i % HELD_MOD == 3 && strstr(remark, REMARKS[i]) != NULL) {
            return true;
        }
    }
    for (int i = 0; i < N_OF(REMARKS); i++) {
        if (strcmp(remark, REMARKS[i]) == 0) {
            return false;
        }
    }
    for (int i = 0; i < N_OF(WHOLE_REMARKS); i++) {
        if (strcmp(remark, WHOLE_REMARKS[i]) == 0) {
            return i % HELD_MOD == 3;
        }
    }
    return false;
}

bool train_undo_has_held_remark(const char *said) {
    for (int i = 0; i < N_OF(REMARKS); i++) {
        if (remark_held(REMARKS[i]) && strstr(said, REMARKS[i]) != NULL) {
            return true;
        }
    }
    for (int i = 0; i < N_OF(WHOLE_REMARKS); i++) {
        if (remark_held(WHOLE_REMARKS[i]) && strstr(said, WHOLE_REMARKS[i]) != NULL) {
            return true;
        }
    }
    return false;
}

/* One of `n` remarks from `held`'s side (remark_held). */
static const char *pick_remark(uint64_t *rng, const char *const *list, int n, bool held) {
    int cand[64], k = 0;
    for (int i = 0; i < n && k < N_OF(cand); i++) {
        if (remark_held(list[i]) == held) {
            cand[k++] = i;
        }
    }
    return k > 0 ? list[cand[train_rng_below(rng, (uint32_t)k)]] : list[0];
}
#define REMARK(rng, held)       pick_remark((rng), REMARKS, N_OF(REMARKS), (held))
#define WHOLE_REMARK(rng, held) pick_remark((rng), WHOLE_REMARKS, N_OF(WHOLE_REMARKS), (held))

int train_undo_frames(void) {
    return N_OF(FRAMES);
}

/* `frame` with its placeholders filled. */
static void fill_frame(uint64_t *rng, const char *frame, char *out, size_t size) {
    char at_most[2][160];
    pipit_format(at_most[0], sizeof(at_most[0]), "%s", frame);
    int cur = 0;
    for (const char *at; (at = strchr(at_most[cur], '{')) != NULL; cur = !cur) {
        const char *with = at[1] == 'O'   ? PICK(rng, OBJECTS)
                           : at[1] == 'o' ? PICK(rng, SHORT_OBJECTS)
                           : at[1] == 't' && train_rng_below(rng, 100) < 45 ? ""
                                                                            : PICK(rng, TAILS);
        pipit_format(at_most[!cur], sizeof(at_most[!cur]), "%.*s%s%s", (int)(at - at_most[cur]),
                     at_most[cur], with, at + 3);
    }
    pipit_format(out, size, "%s", at_most[cur]);
}

int train_undo_say(uint64_t *rng, bool held, char *out, size_t size) {
    int cand[N_OF(FRAMES)], n = 0;
    for (int i = 0; i < N_OF(FRAMES); i++) {
        if ((i % HELD_MOD == 3) == held) {
            cand[n++] = i;
        }
    }
    int frame = cand[train_rng_below(rng, (uint32_t)n)];
    uint32_t shape = train_rng_below(rng, 100);
    if (shape < 8) {
        /* the remark alone */
        pipit_format(out, size, "%s%s", train_rng_below(rng, 100) < 40 ? PICK(rng, LEADS) : "",
                     WHOLE_REMARK(rng, held));
        return frame;
    }
    char action[160];
    fill_frame(rng, FRAMES[frame], action, sizeof(action));
    const char *lead = train_rng_below(rng, 100) < 45 ? PICK(rng, LEADS) : "";
    const char *close = train_rng_below(rng, 100) < 25 ? PICK(rng, CLOSERS) : "";
    /* "can you can we go back" and "please let's" read wrong: no asking lead before a frame that
     * asks or proposes already */
    if (strncmp(action, "can ", 4) == 0 || strncmp(action, "let's ", 6) == 0 ||
        strncmp(action, "i want ", 7) == 0) {
        if (strcmp(lead, "can you ") == 0 || strcmp(lead, "could you ") == 0 ||
            strcmp(lead, "please ") == 0 || strcmp(lead, "just ") == 0) {
            lead = "";
        }
    }
    bool asks = strcmp(lead, "can you ") == 0 || strcmp(lead, "could you ") == 0 ||
                strncmp(action, "can ", 4) == 0;
    const char *mark = asks && train_rng_below(rng, 100) < 60 ? "?" : "";
    if (shape < 30) {
        /* a remark before the action */
        const char *sep = train_rng_below(rng, 100) < 70 ? ", " : ". ";
        pipit_format(out, size, "%s%s%s%s%s%s",
                     train_rng_below(rng, 100) < 30 ? PICK(rng, LEADS) : "", REMARK(rng, held), sep,
                     action, close, mark);
    } else if (shape < 42) {
        /* a remark after it */
        pipit_format(out, size, "%s%s%s, %s", lead, action, mark, REMARK(rng, held));
    } else {
        pipit_format(out, size, "%s%s%s%s", lead, action, close, mark);
    }
    return frame;
}
