/*
 * fg_cache.h - the fast decoder's on-disk cache (docs/fastgrammar.md, "On-disk cache"): one file
 * per vocabulary (the index's trie, vocab-<key>.fgi) and one per grammar text and vocabulary
 * (the automaton's materialized DFA, auto-<key>.fga), in $PIPIT_CACHE/masks or
 * ~/.cache/pipit/masks. Writes are atomic (fileio, no fsync: the cache is disposable and a torn
 * file fails its checksum); reads check everything and leave the caller's object as it was on
 * any mismatch.
 */
#ifndef PIPIT_FG_CACHE_H
#define PIPIT_FG_CACHE_H

#include "fg_automaton.h"
#include "fg_index.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fg_index_new() (fg_index.h) with the on-disk cache in `cache_dir` (NULL: none): the trie is
 * loaded from there when a valid file for this exact vocabulary exists, else built and written
 * (atomically; a failed write is only logged). *from_cache (may be NULL) says which happened. */
enum pipit_status fg_index_new_cached(struct fg_vocab *v,
                                      const char *cache_dir,
                                      bool *from_cache,
                                      struct fg_index **out);
/* The mask cache directory: $PIPIT_CACHE/masks, else ~/.cache/pipit/masks (created). False
 * when the cache is off: PIPIT_CACHE empty or "off", no HOME, or the directory cannot be
 * created or written (logged at debug level). */
bool fg_cache_dir(char *buf, size_t cap);

/* The on-disk cache of one automaton's materialized states (docs/fastgrammar.md). The key
 * (0: the index has no cache key, so no cache) hashes the vocabulary, the NFA and `gbnf`.
 * fg_automaton_load() fills a freshly compiled automaton from `path` and is false, leaving it
 * unchanged, on any problem (no file, another key, a checksum or structural mismatch);
 * fg_automaton_store() writes atomically. fg_automaton_dirty(): states, lists or exact sets
 * were added since the last load or store. */
uint64_t fg_automaton_key(const struct fg_automaton *a, const char *gbnf);
bool fg_automaton_cache_path(char *buf, size_t cap, const char *dir, uint64_t key);
bool fg_automaton_load(struct fg_automaton *a, const char *path, uint64_t key);
bool fg_automaton_store(struct fg_automaton *a, const char *path, uint64_t key);
bool fg_automaton_dirty(const struct fg_automaton *a);
/* The 64-bit word hash behind the cache files' checksums. In an automaton file (96-byte
 * header, then per-state int64 words, transitions, sets, lists, exact sets) the header checksum
 * at byte 72 is fg_hash_words(FILEIO_FNV_OFFSET, header, 72) and the payload checksum at byte
 * 64 chains it over the five arrays in file order. Exposed for the tests that forge files. */
uint64_t fg_hash_words(uint64_t h, const void *data, size_t n);

#endif /* PIPIT_FG_CACHE_H */
