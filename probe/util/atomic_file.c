#include "util/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "util/version.h"

struct llc_afile {
    FILE *stream;
    char tmp[PATH_MAX];
    char path[PATH_MAX];
};

int llc_afile_open(const char *path, struct llc_afile **out, char *err, size_t errlen)
{
    *out = NULL;
    struct llc_afile *f = calloc(1, sizeof(*f));
    if (!f)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
    int rc = 0;
    if (snprintf(f->path, sizeof(f->path), "%s", path) >= (int)sizeof(f->path) ||
        snprintf(f->tmp, sizeof(f->tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(f->tmp)) {
        rc = llc_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
        goto out;
    }
    const int fd = mkstemp(f->tmp);
    if (fd < 0) {
        rc = llc_errf(err, errlen, -errno, "%s: cannot create: %s", path, strerror(errno));
        goto out;
    }
    /* mkstemp creates 0600; outputs are ordinary user files. */
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    f->stream = fdopen(fd, "w");
    if (!f->stream) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(f->tmp);
        goto out;
    }
out:
    if (rc < 0)
        free(f);
    else
        *out = f;
    return rc;
}

FILE *llc_afile_stream(struct llc_afile *f) { return f->stream; }

int llc_afile_commit(struct llc_afile *f, char *err, size_t errlen)
{
    int rc = 0;
    if (fflush(f->stream) != 0 || ferror(f->stream) || fsync(fileno(f->stream)) != 0) {
        rc = llc_errf(err, errlen, -EIO, "%s: write failed: %s", f->path, strerror(errno));
        fclose(f->stream);
        unlink(f->tmp);
        goto out;
    }
    if (fclose(f->stream) != 0) {
        rc = llc_errf(err, errlen, -EIO, "%s: write failed: %s", f->path, strerror(errno));
        unlink(f->tmp);
        goto out;
    }
    if (rename(f->tmp, f->path) != 0) {
        rc = llc_errf(err, errlen, -errno, "%s: cannot rename into place: %s", f->path,
                      strerror(errno));
        unlink(f->tmp);
    }
out:
    free(f);
    return rc;
}

void llc_afile_abort(struct llc_afile *f)
{
    if (!f)
        return;
    fclose(f->stream);
    unlink(f->tmp);
    free(f);
}

int llc_json_write_atomic(const char *path, const json_t *doc, char *err, size_t errlen)
{
    struct llc_afile *f = NULL;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    if (json_dumpf(doc, llc_afile_stream(f), JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 ||
        fputc('\n', llc_afile_stream(f)) == EOF) {
        llc_afile_abort(f);
        return llc_errf(err, errlen, -EIO, "%s: cannot write JSON", path);
    }
    return llc_afile_commit(f, err, errlen);
}

json_t *llc_json_doc_new(const char *format, int version)
{
    return json_pack("{s:s, s:i, s:s}", "format", format, "version", version, "tool",
                     "llcprobe " LLCPROBE_VERSION_STRING);
}
