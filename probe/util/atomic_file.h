/* Files written atomically: write a temporary beside the target, fsync,
 * rename. A reader never sees a half-written output, and an interrupted run
 * leaves the previous file (or none) rather than a truncated one. JSON
 * documents: util/json.h (the runtime links these without jansson). */
#ifndef LLC_UTIL_ATOMIC_FILE_H
#define LLC_UTIL_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

struct llc_afile;

/* Creates a temporary `path.XXXXXXXX<suffix>` (random letters) with
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 less the umask, so a planted file or
 * symlink is never opened; fills tmp. Returns the descriptor or a negative
 * errno (err filled). Run it as the invoking user (util/identity.h) when
 * the file is an output. */
int llc_afile_temp(const char *path, const char *suffix, char *tmp, size_t tmplen, char *err,
                   size_t errlen);
/* rename(tmp, path) with the invoking user's permissions: under sudo, a file
 * the user could not replace is not replaced. */
int llc_afile_rename(const char *tmp, const char *path, char *err, size_t errlen);

/* A private temporary directory $TMPDIR/<prefix>-XXXXXX (default /tmp),
 * created (0700) as the invoking user, so the programs llcprobe runs as that
 * user can write into it. dir gets its path. */
int llc_tempdir_create(const char *prefix, char *dir, size_t dirlen, char *err, size_t errlen);

/* Opens a temporary file next to `path` for writing (llc_afile_temp, as the
 * invoking user). */
int llc_afile_open(const char *path, struct llc_afile **out, char *err, size_t errlen);
/* The stream to write to. */
FILE *llc_afile_stream(struct llc_afile *f);
/* Flushes, fsyncs and renames into place; frees f in every case. */
int llc_afile_commit(struct llc_afile *f, char *err, size_t errlen);
/* Removes the temporary file; frees f. Safe with NULL. */
void llc_afile_abort(struct llc_afile *f);

#endif
