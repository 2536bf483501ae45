/*
 * agent_prompt.h - the agent's prompt texts and prompt limit (agent_prompt.c).
 */
#ifndef PIPIT_AGENT_PROMPT_H
#define PIPIT_AGENT_PROMPT_H

#include "agent_impl.h"

/* Memory lines as permanent text: as they are in pipit's plain format (tokenized without
 * special tokens anyway); in a chat template, a system message whose content is one data span,
 * so that only the template's own text can give control tokens. *out: new string or NULL. */
enum pipit_status agent_memory_message(struct pipit_agent *a, const char *lines, char **out);

/* Build and queue the permanent prefix. */
enum pipit_status agent_prepare_prompt(struct pipit_agent *a, struct pipit_error *err);

/* The ephemeral text of one step. In chat-template mode it is the rendering of
 * [system, user] minus the rendering of [system]. */
char *agent_step_prompt(struct pipit_agent *a, const char *segment, const char *tool_line);

/* Tokens of `text` as the backend would prefill it; -1 without a model. */
int32_t agent_count_tokens(const struct pipit_agent *a, const char *text, bool add_special);

/* Tokens `text` takes in the permanent prefix: counted with the tokenizer, or its bytes on the
 * scripted backend (which counts bytes). */
int32_t agent_prefix_tokens(const struct pipit_agent *a, const char *text);

/* The longest prompt the agent may build (DESIGN.md item 5): the length the model was trained
 * on, at most the context window. A system prompt and tools that leave no room for a short
 * command are refused here, with the numbers, instead of failing every turn. */
enum pipit_status agent_set_prompt_limit(struct pipit_agent *a, struct pipit_error *err);

/* Compare the pack the model was trained for (pipit.pack.name, pipit.pack.hash, written by
 * `pipit train --tools`) with the agent's tool set; on a difference, a->model_notice says which
 * and what to do, and is logged as a warning. A model trained for another pack (by name, or a
 * recipe's model whose pipit.prompt.system is neither the pack's name nor its system text) is
 * foreign: a->foreign_model, and turns run none of its answers. A general model (no pipit
 * keys) is not checked. */
void agent_check_pack(struct pipit_agent *a);

/* The permanent prefix may reach this many tokens: the prompt limit minus the longest tail
 * of the recent turns (or the estimate before any), and at most an explicit context_budget. */
int32_t agent_memory_budget(const struct pipit_agent *a);

#endif /* PIPIT_AGENT_PROMPT_H */
