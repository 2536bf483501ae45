/*
 * agent_number.h - the person's numbers in the model's call (agent_number.c): written or said,
 * in the argument's unit, with the direction the words give, and the ends of a range.
 */
#ifndef PIPIT_AGENT_NUMBER_H
#define PIPIT_AGENT_NUMBER_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Puts the person's out-of-range number back into `call` when the model bent it (above).
 * Returns true when the arguments were changed. */
bool agent_restore_person_number(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call);

/* Converts a number the model copied without its unit ("5 hours" -> minutes=5 becomes 300;
 * agent_number.c has the rule). Returns true when the arguments were changed. */
bool agent_convert_person_unit(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call);

/* The end of the range said in words put back ("jpeg at max" -> quality 60 becomes the
 * schema's maximum, "exposure to the minimum" its minimum; docs/agent.md): the tool's one
 * numeric argument, not a step's, a segment without digits or negation that says one side
 * only ("max", "maximum", "highest"; "min", "minimum", "lowest"). True when `call` was
 * changed. */
bool agent_restore_bound_words(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call);

/* The person's number said in words put back ("remind me in twenty five minutes" ->
 * minutes=205 becomes 25; docs/agent.md): the tool's one numeric argument, a segment without
 * digits that says exactly one number in words in the clause it reads (the only clause with a
 * number, or the only such one naming the tool: "zoom to three x, she's in lane four"), no
 * words of a relative change in that clause unless the argument is a step's. True when `call`
 * was changed. */
bool agent_restore_number_words(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

/* The numbers in digits the segment says, converted to the unit of time of `arg` when a unit
 * follows them ("2 minutes" for seconds: 120); with no digit, the numbers said in words
 * ("seventy", "twenty five"; a lone "one" is a pronoun, "half" says none). How many were
 * written to `out` (at most max). */
size_t agent_person_numbers(const char *segment,
                            const struct pipit_schema_prop *arg,
                            double *out,
                            size_t max);

/* A number with a unit put where that unit is not taken ("let it mow for 5 hours straight" ->
 * set_cut_height(mm=5); "set heater to 26 degrees" -> set_heater() without its switch): when
 * the segment says one number, with a unit of time or "degrees" after it, the model's call
 * holds a number in an argument that takes no such unit or misses a required argument, and
 * exactly one other tool has a required number of that unit (a unit of time; "celsius",
 * "fahrenheit", "degree" or "temperature" in its name or description) as its only required
 * argument, the call becomes that tool with the number in its unit (300 minutes), for
 * validation to take or refuse. True when `call` changed, its tool too (docs/agent.md). */
bool agent_restore_time_span(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call);

/* `call` becomes tool `tool` (an index of `ts`) with only `v` for its number argument `arg`,
 * for validation to take or refuse. False when out of memory or the tool's name does not fit. */
bool agent_number_call(const struct pipit_toolset *ts,
                       int32_t tool,
                       const struct pipit_schema_prop *arg,
                       double v,
                       struct pipit_call *call);

/* A step called with a value to reach ("turn the voice down to 25 percent" -> change_volume
 * (step=-25); "sixty degrees, heavy soil" -> change_temperature(degrees=60)): when the segment
 * says "to" or "at" right before its one number, or says nothing of a change (no direction, no
 * sign, none of the step's values, no "by", "again", "another", ...), and the stepped key has a
 * setter (a tool that sets it from its only required number), the call becomes the setter with
 * that number (docs/agent.md). True when `call` changed, its tool too. */
bool agent_restore_step_setting(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

/* A key named with a number, and the model's call of a tool that does not write that key
 * ("exposure plus three, it's so shady under here" -> take_photo; "zoom to like fifty x" ->
 * set_exposure): the call becomes the key's number setter with the one number said (digits,
 * or words; "minus" signs it), for validation to take or refuse. Not with words of a relative
 * change ("up", "more", "by": a step's) nor when the segment says a word of the model's tool's
 * name ("a photo at 2x"). True when `call` changed, its tool too (docs/agent.md). */
bool agent_key_number_named(const struct pipit_toolset *ts,
                            int32_t tool,
                            const char *segment,
                            const char *key,
                            struct pipit_call *call);

/* The tool that sets state key `key` from its only required argument, a number ("{level}"),
 * and that argument in *arg; -1 when none or several. */
int32_t agent_number_setter(const struct pipit_toolset *ts,
                            const char *key,
                            const struct pipit_schema_prop **arg);

/* Whether the segment says "to" or "at" right before a number ("down to 2", "set it at 5"): a
 * value to reach, not a step of that size. */
bool agent_number_said_to(const char *segment);

/* For the other guards (agent_choose.c, agent_switch.c, ...): the numbers written in digits in
 * `text` (an optional sign right before them counts; "16:9" and "50%" are skipped), in `arg_unit`
 * seconds when a unit of time follows them, into `out`, as written into `raw`; how many (at most
 * `max`). */
size_t
agent_numbers_written(const char *text, double arg_unit, double *out, double *raw, size_t max);

/* The unit of time of a numeric argument in seconds, from its name or description; 0: none. */
double agent_number_time_unit(const struct pipit_schema_prop *num);

/* A step whose sign is an enum argument mapped to +1/-1 (`"sign": {"arg": "direction", "map":
 * {"up": 1, "down": -1}}`): when the segment's words say one direction ("louder", "more",
 * "cooler", ...; no negation; none of the map's values said: "a bit more out") and the model's
 * value maps to the other, the one value that maps to the words' direction is put in. A step
 * by a signed number of its own ("degrees") whose sign goes against the words' direction takes
 * the other sign ("hmm, one more degree" -> -1 becomes 1). True when `call` changed. */
bool agent_restore_step_direction(const struct pipit_toolset *ts,
                                  int32_t tool,
                                  const char *segment,
                                  struct pipit_call *call);

/* A setter given the number of a change as its value ("bump the jpeg quality up by ten" ->
 * quality=10, "two degrees warmer" -> celsius=2): when the segment says one number as a change
 * ("by N", "up N", "another N", "N more", "N degrees warmer"; not "up to N") with a direction,
 * the tool sets one numeric key and steps none, and the state holds that key (per place: the
 * call's place), the value becomes the state's plus or minus the number, so that the tool runs
 * what was asked or validation refuses it with the limit. When the pack steps that key by a
 * number argument of its own (a tool whose step is "{degrees}", needing nothing else but the
 * place), the call becomes that step with the signed number instead ("raise the temperature
 * by 3" -> adjust_thermostat(degrees=3)). True when `call` changed, maybe its tool too. */
bool agent_restore_setting_by(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              const json_t *state,
                              struct pipit_call *call);

/* A setter called for a change said as a direction, no number written ("zoom in a notch" ->
 * set_zoom(level=1)): the tool that steps the same key by a sign argument (its map's value
 * said, "in", else the words' direction, "brighter") is called instead, with the setter's place
 * for a key per place; not when the words say an end ("max", "all the way", "reset") or negate,
 * nor when that tool needs another argument (a step's size). True when `call` was replaced. */
bool agent_restore_setting_step(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

/* "living room light cool white and sixty percent" -> set_blinds(open_percent=60): a segment of
 * at most five words that says one number, maybe its unit, and only words such as "and", "at",
 * "to", "make it" besides, after a call of this turn (`last_tool`, `last_args`) on a place (an
 * enum argument such as room): the one tool that takes that place argument (every other
 * required argument of it is such a place the last call gave) and a number, whose number's
 * name or description has the unit said ("percent"), is called on that place with the number.
 * True when `call` changed. */
bool agent_number_in_last_place(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                int32_t last_tool,
                                const json_t *last_args,
                                struct pipit_call *call);

/* "its kinda gloomy, exposure plus one" -> set_exposure(ev=-1): the model's number is the
 * negative of one the segment says right after "plus" or "up" (or before "up": "one up"), or
 * the positive of one said after "minus" or "down", on the tool's one number whose range has
 * negatives: the sign said wins over a remark's mood ("gloomy", "dark"). True when `call`
 * changed. */
bool agent_restore_said_sign(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call);

/* Whether the tokens say a word of a change downwards ("down", "lower", "cooler", ...). */
bool agent_number_says_down(const struct words_tok *tok, size_t n);

#endif
