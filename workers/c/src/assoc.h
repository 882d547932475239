/* Load steps (PROTOCOL.md, "Loading associations"): a parent table's rows with their children
 * and grandchildren, read by the statements a programmer writes by hand for each strategy —
 * lazy (one statement per row of the level above), selectin (one IN statement per level) or
 * joined (one statement, each row split into its entities). The strategies and the keeping of
 * each entity once are here, once for every driver; a driver only runs a bound statement and
 * hands back its rows (ab_driver.query). */
#ifndef AB_ASSOC_H
#define AB_ASSOC_H

#include <jansson.h>

#include "driver.h"

/* The message's `load` (and the parents' columns and key from its `shape`) into
 * st->assoc_spec, in the step's arena; every statement's markers written as `mark` says
 * (AB_MARK_QMARK or AB_MARK_DOLLAR). 0, or -1 with a protocol error in ab_err. */
int ab_assoc_parse(json_t *msg, ab_step *st, int mark);

/* Frees a client's load state (st->assoc, made at its first operation) and clears it. */
void ab_assoc_free(ab_step *st);

/* The statements the client of st has sent in this step (its operations' load statements). */
int64_t ab_assoc_statements(const ab_step *st);

/* How each strategy runs, in words (hello's settings, key "load"). */
extern const char AB_ASSOC_WORDS[];

#endif
