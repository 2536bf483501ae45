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
 * "off", strings as they are; an unresolved placeholder prints its name. Returns a new string
 * (free with free) or NULL when out of memory. */
char *render_template(const char *tmpl,
                      const json_t *args,
                      const json_t *data,
                      const char *error,
                      const char *code);

/* True when plain-text model output claims that an action was performed ("I've turned on the
 * flash", "Zoom set to 2x", "Done!") and mentions something one of the tools controls. Such
 * text must not reach the person: no tool ran. */
bool render_claims_action(const char *text, const struct pipit_toolset *ts);

/* The honest sentence that replaces a narrated action. */
const char *render_no_action_sentence(void);

#endif /* PIPIT_RENDER_H */
