/*
 * modelfile.h - a model file checked before llama.cpp sees it, and its fingerprint
 * (modelfile.c).
 */
#ifndef PIPIT_MODELFILE_H
#define PIPIT_MODELFILE_H

#include "pipit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Check a file before handing it to llama.cpp, which reports every failure as
 * NULL. On success `arch` holds general.architecture. */
enum pipit_status modelfile_check(const char *path,
                                  bool vocab_only,
                                  char *arch,
                                  size_t arch_size,
                                  struct pipit_error *err);

/* FNV-1a over the model's shape and the first 64 KiB of its tensor data: two random models of
 * the same shape differ, the same file copied elsewhere does not. */
uint64_t modelfile_fingerprint(const char *path, const struct pipit_model_info *info);

#endif /* PIPIT_MODELFILE_H */
