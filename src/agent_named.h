/*
 * agent_named.h - a tool the person named in full (agent_named.c): "cancel the timer" names
 * cancel_timer, whatever the model called.
 */
#ifndef PIPIT_AGENT_NAMED_H
#define PIPIT_AGENT_NAMED_H

#include "agent_impl.h"
#include "toolspec.h"

#include <stdbool.h>
#include <stdint.h>

/* The one tool every word of whose name the segment says ("cancel the timer": cancel_timer;
 * "request a ride"), when the model called another whose name it does not say in full
 * ("cancel the timer" -> set_timer(minutes=40)): the call becomes that tool's, its required
 * arguments filled from the one enum value the segment says, the model's arguments of the same
 * name and type, the schema's default, for an identifier the number the segment says in the
 * shape of the tool's examples, for a query the newest of that shape in `memory` (may be
 * NULL), or the one
 * item of the state's arrays whose "id" has that shape ("TM-1": the one running timer), or the
 * one number the segment says. A segment that points back ("open that", "check on it") and
 * opens with a verb only one query's examples open with (agent_example_verb(): "open F-201")
 * names that query, when its arguments fill so. Not for the cloud tool, a question or a
 * negation. Returns 1 when
 * `call` was replaced, -1 when the tool is named but an argument cannot be filled (no timer,
 * or two: *named_out is that tool; the model's call must not run either), 0 otherwise. */
int agent_choose_tool_named_in_full(const struct pipit_toolset *ts,
                                    int32_t tool,
                                    const char *segment,
                                    const char *memory,
                                    const json_t *state,
                                    struct pipit_call *call,
                                    int32_t *named_out);

/* The model answered a question with text ("what's its status?" -> "I'm good, thanks."): when
 * the question points back and says a word only one query's name has ("status" of
 * get_ticket_status), *call is that query, its arguments filled as above (its item the newest
 * in `memory`). False otherwise. */
bool agent_query_asked(const struct pipit_toolset *ts,
                       const char *segment,
                       const char *memory,
                       const json_t *state,
                       struct pipit_call *call);

/* A required identifier argument the model left out of its call ("what's the status of my
 * ticket?" -> get_ticket_status{}): an argument named "...id" whose examples show a shape
 * ("T-1000": "T-" and digits) is filled with the one number the segment says in that shape
 * ("ticket 1000" -> "T-1000"), else, for a query (effect "read"), the newest identifier of
 * that shape in `memory` (the session's results: "its status" after "open a ticket" is the
 * ticket it opened), else the one item of that shape in `state`'s arrays. Nothing is filled when
 * the segment says other numbers or no candidate is found (validation then refuses the call). True
 * when `call` changed. */
bool agent_fill_missing_id(const struct pipit_toolset *ts,
                           int32_t tool,
                           const char *segment,
                           const char *memory,
                           const json_t *state,
                           struct pipit_call *call);

/* The item the person describes, by its fields: an identifier argument (a name ending in "id"
 * whose examples show a shape, "P-101") the model wrote and the person did not becomes the one
 * item of the state's arrays of that shape whose string fields say the most of the segment's
 * content words, or whose numbers it writes ("send the Kyoto temple photo to Elena": P-103,
 * tagged temple, place Kyoto, not the example's P-106; "cancel the 5 minute one": the timer of
 * 5 minutes), when that item is the only best and scores above the model's. An ordinal after
 * "the" ("the first one", "the second timer", "the last", "the newest", "the oldest") picks by
 * the state's order of the items of that shape first. True when `call` changed. */
bool agent_resolve_item_id(const struct pipit_toolset *ts,
                           int32_t tool,
                           const char *segment,
                           const json_t *state,
                           struct pipit_call *call);

/* The model answered a request about an item with text or sent it to the cloud ("cancel the 5
 * minute one" -> "Okay."; "open the one from mom" -> the cloud): when the segment is no question,
 * says no negation, and describes one item of the state's arrays better than any other (its
 * string fields say the segment's content words, its numbers are written: item_score), the
 * tools that take an identifier of that item's shape are the candidates; the one the segment
 * names by a word of its name no other tool's name has ("cancel") or by the verb its examples
 * alone open with is called on that item; when the segment names none of them, the one query
 * (effect "read") among them is ("open the one from mom": read_messages, the thread of Mom). Its
 * other required arguments must fill from the segment, else nothing is made; with `named_only`
 * the query is not chosen unnamed (the model made a call of its own). `call` is the model's call
 * (its arguments are freed when replaced) or zeroed. True when `call` is that call. */
bool agent_item_call(const struct pipit_toolset *ts,
                     const char *segment,
                     const json_t *state,
                     bool named_only,
                     struct pipit_call *call);

/* "and the one i just made?" after "what's the status of T-1000": the last call (`last_tool`,
 * `last_args`) is a query (effect "read") of one item by an identifier argument, and the segment
 * opens with "and", "what about", "how about", "same for" or "also", has eight words at most, no
 * negation, no word of another tool's name (one of the last tool's aside) and not the verb only
 * another tool's examples open with: the same query of another item of that shape, the one the
 * segment writes the number of ("and 1002?"), else the newest other one in `memory` when it
 * says "new", "latest", "just", "recent" or "last", else the one `state`'s arrays describe best
 * (item_score). True when `call` is that call. */
bool agent_query_other_item(const struct pipit_toolset *ts,
                            int32_t last_tool,
                            const json_t *last_args,
                            const char *segment,
                            const char *memory,
                            const json_t *state,
                            struct pipit_call *call);

/* "stop navigating please" -> navigate_to(destination="navigating"): a segment that says a
 * word of stopping ("stop", "end", "off", "cancel", ...) and a word of the name of a tool that
 * stops something ("end_navigation": a common start of four letters, "navigating", or an
 * abbreviation, "nav off") asks for that tool, when it takes no required argument, it is the only
 * one, and the model's tool stops nothing itself. True when `call` became that tool. */
bool agent_choose_stop_tool(const struct pipit_toolset *ts,
                            int32_t tool,
                            const char *segment,
                            struct pipit_call *call);

#endif /* PIPIT_AGENT_NAMED_H */
