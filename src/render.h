/*
 * render.h - the sentence a person reads, from a tool's template and the real result.
 *
 * The sentence never comes from model narration: success templates are filled from the call's
 * arguments and the result data, failure templates from the device's real reason (code and
 * message). Plain-text answers that claim an action no tool performed are caught here too.
 */
#ifndef PIPIT_RENDER_H
#define PIPIT_RENDER_H

#include "pipit.h"
#include "toolspec.h"

#include <jansson.h>
#include <stdbool.h>

/* Fill `tmpl`: {name} from `args`, then from `data` (either may be NULL); {error} and {code}
 * from the failure; "{{" / "}}" are literal braces. Numbers print with %g, booleans as "on" /
 * "off", null as "nothing", strings as they are, arrays as their items joined "a, b and c";
 * an unresolved placeholder prints its name. {name:v=text|v=text|*=text} prints the text of
 * the first entry whose v is the value's text (booleans also match "true"/"false", "*" any
 * value; "#" in the text is the value), else the value: "The timer is
 * {seconds:0=off|*=# seconds}." Returns a new string (free with free) or NULL when out of
 * memory. */
char *render_template(const char *tmpl,
                      const json_t *args,
                      const json_t *data,
                      const char *error,
                      const char *code);

/* render_template, and then placeholders from `limits` (may be NULL); arrays from `limits`
 * join with "or" ("off, 3, 5 or 10"). */
char *render_template_limits(const char *tmpl,
                             const json_t *args,
                             const json_t *data,
                             const json_t *limits,
                             const char *error,
                             const char *code);

/* Reason codes of a call that validation refused (the handler never ran). */
#define RENDER_OUT_OF_RANGE      "out_of_range"      /* a number below minimum / above maximum */
#define RENDER_NOT_ALLOWED       "not_allowed"       /* a value outside its enum */
#define RENDER_INVALID_ARGUMENTS "invalid_arguments" /* anything else */

/* The sentence for a call of tool `tool` that validation refused with `problem` (the first
 * problem pipit_toolset_validate_args reported; `args` the call's parsed arguments, may be
 * NULL). The reason code (RENDER_OUT_OF_RANGE, RENDER_NOT_ALLOWED or
 * RENDER_INVALID_ARGUMENTS, decided from the argument's schema and value) is written to
 * `code` (`code_size` bytes, may be NULL) and selects the tool's failure template (then its
 * "*", then the default). The template is filled from `args`, then from the refused argument's
 * limits: {min} and {max} (its minimum and maximum, when it has them), {allowed} (its enum,
 * "a, b or c"), {argument} (its name); {error} is "<path>: <problem>" ("level: 50 is above the
 * maximum 10"), {code} the reason code. Returns a new string (free with free) or NULL when out
 * of memory. */
char *render_refusal(const struct pipit_toolset *ts,
                     size_t tool,
                     const json_t *args,
                     const struct pipit_arg_problem *problem,
                     char *code,
                     size_t code_size);

/* True when plain-text model output claims that an action was performed ("I've turned on the
 * flash", "Zoom set to 2x", "Done!") and mentions something one of the tools controls. Such
 * text must not reach the person: no tool ran. */
bool render_claims_action(const char *text, const struct pipit_toolset *ts);

/* True when plain-text model output is no sentence but pieces of a call: call syntax ('<',
 * '>', '=', '(', ')', '{', '}', an odd number of '"') or a name of the tool set (a tool or
 * argument name with '_': "reason_for_escalation"). "The back camera is on hano\",
 * reason_for_escalation=\"photography advice\")" must not reach the person. */
bool render_is_garbled(const char *text, const struct pipit_toolset *ts);

/* Whether `text` is only an acknowledgement ("Okay.", "Sure!", "Done.", "Got it", "On it."):
 * said to a command with no call, it claims an action that did not happen. */
bool render_is_acknowledgement(const char *text);

/* The honest sentence that replaces a narrated action. */
const char *render_no_action_sentence(void);

/* The reason code of the built-in "none" outcome (docs/agent.md, "None of these tools"). */
#define RENDER_NO_TOOL "no_tool"

/* The sentence for a request none of the tools can do, from the person's words: with `verb`
 * (where the segment's command verb starts, inside `segment`; NULL when it has none) "I can't
 * take a photo: none of my tools does that, so I did nothing."; without, "I can't do \"a
 * photo\": none of my tools does that, so I did nothing." Returns a new string (free()), NULL
 * when out of memory. */
char *render_no_tool_sentence(const char *segment, const char *verb);

#endif /* PIPIT_RENDER_H */
