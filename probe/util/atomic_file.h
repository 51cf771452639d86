/* Files written atomically: write a temporary beside the target, fsync,
 * rename. A reader never sees a half-written output, and an interrupted run
 * leaves the previous file (or none) rather than a truncated one. */
#ifndef LLC_UTIL_ATOMIC_FILE_H
#define LLC_UTIL_ATOMIC_FILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct llc_afile;

/* Opens a temporary file next to `path` for writing. */
int llc_afile_open(const char *path, struct llc_afile **out, char *err, size_t errlen);
/* The stream to write to. */
FILE *llc_afile_stream(struct llc_afile *f);
/* Flushes, fsyncs and renames into place; frees f in every case. */
int llc_afile_commit(struct llc_afile *f, char *err, size_t errlen);
/* Removes the temporary file; frees f. Safe with NULL. */
void llc_afile_abort(struct llc_afile *f);

/* Writes `doc` (which must carry "format" and "version") atomically as
 * indented JSON. */
int llc_json_write_atomic(const char *path, const json_t *doc, char *err, size_t errlen);

/* A new JSON object with the project's header fields: format, version,
 * tool version. Returns NULL only on allocation failure. */
json_t *llc_json_doc_new(const char *format, int version);

#endif
