/*
 * fg_vocab.c - pipit_fastgrammar_init(): the fast decoder for a model. The model's vocabulary is
 * read here through pipit.h (token pieces, end-of-generation tokens) and handed to the decoder
 * as data (struct fg_vocab), so the decoder never calls the engine (docs/fastgrammar.md).
 */
#define _GNU_SOURCE

#include "fastgrammar.h"
#include "fg_index.h"
#include "pipit.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>

/* The vocabulary of `model` as data for the fast decoder (docs/fastgrammar.md, "Vocabulary
 * index"): every token's text as llama.cpp's grammar sampler sees it, none for EOG tokens. */
static enum pipit_status read_vocab(const struct pipit_model *model, struct fg_vocab *v) {
    struct pipit_model_info info;
    pipit_model_get_info(model, &info);
    size_t nv = (size_t)info.n_vocab, cap = 0, len = 0;
    *v = (struct fg_vocab){.n_vocab = info.n_vocab};
    v->off = malloc(sizeof(int64_t) * (nv + 1));
    v->eog = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
    bool ok = v->off != NULL && v->eog != NULL;
    char buf[FG_MAX_PIECE];
    for (size_t t = 0; ok && t < nv; t++) {
        v->off[t] = (int64_t)len;
        if (pipit_model_token_is_eog(model, (int32_t)t)) {
            v->eog[v->n_eog++] = (int32_t)t;
            continue;
        }
        int32_t n = pipit_token_piece(model, (int32_t)t, buf, (int32_t)sizeof(buf));
        if (n <= 0) {
            continue; /* no text (or absurdly long): never matches grammar text */
        }
        if (len + (size_t)n > cap) {
            size_t ncap = cap > 0 ? cap : 4096;
            while (ncap < len + (size_t)n) {
                ncap *= 2;
            }
            char *q = realloc(v->text, ncap);
            ok = q != NULL;
            if (ok) {
                v->text = q;
                cap = ncap;
            }
        }
        if (ok) {
            memcpy(v->text + len, buf, (size_t)n);
            len += (size_t)n;
        }
    }
    if (ok) {
        v->off[nv] = (int64_t)len;
        return PIPIT_OK;
    }
    free(v->text);
    free(v->off);
    free(v->eog);
    *v = (struct fg_vocab){0};
    return PIPIT_ERR_NOMEM;
}

enum pipit_status pipit_fastgrammar_init(const struct pipit_model *model,
                                         struct pipit_fastgrammar **out,
                                         struct pipit_error *err) {
    pipit_error_clear(err);
    if (model == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "fastgrammar: NULL argument");
    }
    *out = NULL;
    double t0 = pipit_now_ms();
    struct fg_vocab v;
    enum pipit_status st = read_vocab(model, &v);
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "fastgrammar: cannot index the vocabulary: %s",
                               pipit_status_str(st));
    }
    return fg_decoder_new(&v, model, t0, out, err);
}
