/*
 * agent_time.h - a time of day the person said, in the model's call (agent_time.c): "half past
 * six", "7 pm", "quarter to eight", "seven thirty" for an argument that takes "HH:MM".
 */
#ifndef PIPIT_AGENT_TIME_H
#define PIPIT_AGENT_TIME_H

#include "agent_impl.h"
#include "toolspec.h"

#include <stdbool.h>
#include <stdint.h>

/* The one time of day `text` says, in minutes after midnight: digits ("6:30", "6.45", "7am",
 * "7 pm", "9 o'clock"), words ("half past six", "quarter to eight", "ten past nine", "seven
 * thirty", "six forty five", "noon", "midnight"), or an hour after "at" ("at 7", "at seven");
 * "pm", "in the evening", "tonight", "at night", "in the afternoon" move an hour before 12 to
 * the afternoon; "am", "in the morning" keep it. -1 when it says none or two. */
int agent_time_of_day(const char *text);

/* Whether `s` takes a time of day as "HH:MM": a string whose description says "HH:MM" or whose
 * pattern is two digits, a colon and two digits. */
bool agent_time_arg(const struct pipit_schema *s);

/* The person's time of day in the call (docs/agent.md, "A time of day"): when the segment says
 * one, a model's call whose tool takes a time of day gets it; a call of another tool (the cloud
 * tool included) becomes the one tool whose only required argument is a time of day, when the
 * segment names that tool (a word of its name or keys, or the verb its examples open with:
 * "alarm", "wake"). `*renamed` says which happened. True when `call` changed. */
bool agent_restore_time_of_day(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call,
                               bool *renamed);

/* The call of the one tool that takes a time of day (as above), for a segment the model
 * answered in words ("alarm for six in the evening" -> "Sorry, I can't do that."). False, with
 * `call` empty, when the segment says no time or does not name that tool. */
bool agent_time_call(const struct pipit_toolset *ts, const char *segment, struct pipit_call *call);

/* Whether the model's call gives a required time of day nobody said: the segment names no time
 * (as agent_time_of_day(), nor a clock shape, nor any digit or number word) and does not name
 * the tool (agent_names_tool()): "reply to her: see you sunday" -> set_alarm(time="02:00"). */
bool agent_time_guessed(const struct pipit_toolset *ts,
                        int32_t tool,
                        const char *segment,
                        const struct pipit_call *call);

#endif /* PIPIT_AGENT_TIME_H */
