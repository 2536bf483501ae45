/*
 * undosay.h - "undo the last action" said the ways people say it, composed from parts: a lead-in
 * ("oops,", "hold on,"), a remark ("that was a mistake", "i liked it better before"), an action
 * frame ("put {it} back{ to how it was}", "scrap {that}", "go back"), a closer ("please"). A
 * fixed list of whole phrasings taught a pack model the list and little else: three authors'
 * blind undo sets each used mostly phrasings the list lacked (docs/training.md, "Any pack").
 *
 * No pack's words are here: the parts are how people take something back, whatever the device.
 * The action frames and the remarks are split like templates: one in five is held out of
 * training, so the held-out evaluation measures frames and remarks the model never saw.
 */
#ifndef PIPIT_TRAIN_UNDOSAY_H
#define PIPIT_TRAIN_UNDOSAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The number of action frames (the held-out ones included). */
int train_undo_frames(void);

/* Write one composed undo utterance (lowercase, no final punctuation unless it asks) to `out`,
 * drawn from `rng`, its action frame and remark from the held-out fifth when `held`. Returns
 * the frame's index. */
int train_undo_say(uint64_t *rng, bool held, char *out, size_t size);

/* Whether `said` holds a held-out remark (for the tests). */
bool train_undo_has_held_remark(const char *said);

#endif /* PIPIT_TRAIN_UNDOSAY_H */
