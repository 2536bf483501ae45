/*
 * packlint.c - notes for a pack's author (`pipit tools check`, pipit_pack_notes()): things the
 * pack says that the agent will read in a way the author may not expect.
 *
 * One kind so far, from a new user's coffee machine: an example's first word becomes the verb
 * of its tool to the agent, and for a tool that needs no argument the agent takes that verb
 * over the model's call ("machine status" makes "machine" the status query's verb, though
 * "machine" names the power). The note names the example, the word and what else it names, so
 * the author can open the example with another verb. And from a new user's baby monitor: an
 * action with no effect and no "undo" is passed over by undo, which then reverts the action
 * before it. And from a new user's hot tub: an example that opens with words the router reads
 * as undo ("go back to standard heating") makes those words the pack's, so "go back" alone is
 * no longer undo.
 */
#include "agent_choose.h"
#include "pipit_tools.h"
#include "router.h"
#include "strbuf.h"
#include "toolspec.h"
#include "words.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Whether `text` (names joined by '|', words by ' ', '_' or '-') has word `w`. */
static bool has_word(const char *text, const char *w) {
    size_t lw = strlen(w);
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t l = strcspn(p, "|_- ");
        if (l == lw && strncasecmp(p, w, l) == 0) {
            return true;
        }
        p += l;
        p += *p != '\0';
    }
    return false;
}

/* Whether tool `i` changes `key`. */
static bool changes(const struct pipit_toolset *ts, size_t i, const char *key) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
    for (size_t k = 0; tp != NULL && k < tp->n_changes; k++) {
        if (strcmp(tp->changes[k], key) == 0) {
            return true;
        }
    }
    return false;
}

/* The words an example opens with that the router alone would read as undo ("go back" of "go
 * back to standard heating"), two to four of them, into out; false when none. */
static bool undo_opening(const char *say, char *out, size_t size) {
    struct words_tok t[16];
    size_t n = words_tokenize(say, strlen(say), 0, t, 16);
    for (size_t k = n < 4 ? n : 4; k >= 2; k--) {
        char head[128];
        size_t len = t[k - 1].end - t[0].start;
        if (len >= sizeof(head)) {
            continue;
        }
        memcpy(head, say + t[0].start, len);
        head[len] = '\0';
        if (router_undo_count(head) > 0 && !router_undo_retraction(head)) {
            snprintf(out, size, "%s", head);
            return true;
        }
    }
    return false;
}

char *pipit_pack_notes(const struct pipit_toolset *ts) {
    if (ts == NULL) {
        return NULL;
    }
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    struct strbuf b = {0};
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
            char verb[64], undo[128];
            const char *say = tp->examples[e].say;
            if (!pipit_toolset_is_cloud(ts, i) && undo_opening(say, undo, sizeof(undo))) {
                strbuf_printf(&b,
                              "  note: %s's example \"%s\" opens with \"%s\", which is undo to "
                              "the agent; with this example it is the pack's words instead, so "
                              "\"%s\" said alone goes to the model, not undo (open the example "
                              "another way to keep it as undo)\n",
                              ts->tools[i].name, say, undo, undo);
            }
            bool required = false;
            const struct pipit_tool *t = &ts->tools[i];
            for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
                required = required || t->params->props[j].required;
            }
            /* the verb rule overrules the model for a tool that needs no argument */
            if (required || agent_example_verb(ts, say, verb, sizeof(verb)) != (int32_t)i) {
                continue;
            }
            const char *other = NULL, *kind = NULL;
            for (size_t j = 0; other == NULL && j < ts->n_tools; j++) {
                const char *name = ts->tools[j].name;
                const char *rest = strchr(name, '_');
                if (j != i && rest != NULL && has_word(rest + 1, verb)) {
                    other = name;
                    kind = "tool";
                }
            }
            for (size_t k = 0; other == NULL && pack != NULL && k < pack->n_keys; k++) {
                const struct pipit_pack_key *pk = &pack->keys[k];
                if (!changes(ts, i, pk->key) &&
                    (has_word(pk->key, verb) ||
                     (pk->words.names != NULL && has_word(pk->words.names, verb)))) {
                    other = pk->key;
                    kind = "state key";
                }
            }
            if (other != NULL) {
                strbuf_printf(&b,
                              "  note: %s's example \"%s\" makes \"%s\" its verb to the agent, "
                              "but \"%s\" also names the %s %s: a request that opens with it "
                              "goes to %s (open the example with another verb)\n",
                              ts->tools[i].name, say, verb, verb, kind, other, ts->tools[i].name);
            }
        }
    }
    for (size_t i = 0; pack != NULL && pack->n_keys > 0 && i < ts->n_tools; i++) {
        /* an action that says nothing of undo is passed over by it: "undo" right after a
         * snapshot had reverted the setting before it (a new user's baby monitor) */
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        if (tp != NULL && tp->effect == PIPIT_EFFECT_NONE && !pipit_toolset_is_cloud(ts, i) &&
            ts->tools[i].undo == PIPIT_UNDO_NO_STATE) {
            strbuf_printf(&b,
                          "  note: %s declares no effect and no \"undo\": undo passes over it as "
                          "if it changed nothing and reverts the action before it (write "
                          "\"undo\": \"none\" if it does something that cannot be taken back, "
                          "or \"effect\": \"read\" if it only reads)\n",
                          ts->tools[i].name);
        }
    }
    return b.len > 0 ? strbuf_take(&b) : (strbuf_free(&b), (char *)NULL);
}
