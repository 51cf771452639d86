#include "util/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "util/identity.h"

struct llc_afile {
    FILE *stream;
    char tmp[PATH_MAX];
    char path[PATH_MAX];
};

int llc_afile_temp(const char *path, const char *suffix, char *tmp, size_t tmplen, char *err,
                   size_t errlen)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[8];
        if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
            return llc_errf(err, errlen, -EIO, "%s: no random bytes for a temporary name", path);
        char name[sizeof(r) + 1];
        for (size_t i = 0; i < sizeof(r); i++)
            name[i] = alphabet[r[i] % (sizeof(alphabet) - 1)];
        name[sizeof(r)] = '\0';
        if ((size_t)snprintf(tmp, tmplen, "%s.%s%s", path, name, suffix) >= tmplen)
            return llc_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
        /* 0666: the kernel applies the process's umask, no umask() call
         * (which would race with other threads creating files). */
        const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return llc_errf(err, errlen, -errno, "%s: cannot create: %s", path, strerror(errno));
    }
    return llc_errf(err, errlen, -EEXIST, "%s: no free temporary name after 100 tries", path);
}

int llc_afile_rename(const char *tmp, const char *path, char *err, size_t errlen)
{
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int rc = rename(tmp, path) == 0 ? 0 : -errno;
    llc_fs_restore(&id);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: cannot rename into place: %s", path, strerror(-rc));
    return 0;
}

int llc_tempdir_create(const char *prefix, char *dir, size_t dirlen, char *err, size_t errlen)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    if ((size_t)snprintf(dir, dirlen, "%s/%s-XXXXXX", base, prefix) >= dirlen)
        return llc_errf(err, errlen, -ENAMETOOLONG, "temporary directory name too long");
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int rc = mkdtemp(dir) ? 0 : -errno;
    llc_fs_restore(&id);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "cannot make a temporary directory in %s: %s", base,
                        strerror(-rc));
    return 0;
}

int llc_afile_open(const char *path, struct llc_afile **out, char *err, size_t errlen)
{
    *out = NULL;
    struct llc_afile *f = calloc(1, sizeof(*f));
    if (!f)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
    int rc = 0;
    if (snprintf(f->path, sizeof(f->path), "%s", path) >= (int)sizeof(f->path)) {
        rc = llc_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
        goto out;
    }
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int fd = rc = llc_afile_temp(path, ".tmp", f->tmp, sizeof(f->tmp), err, errlen);
    llc_fs_restore(&id);
    if (fd < 0)
        goto out;
    rc = 0;
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

FILE *llc_afile_stream(struct llc_afile *f)
{
    return f->stream;
}

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
    rc = llc_afile_rename(f->tmp, f->path, err, errlen);
    if (rc < 0)
        unlink(f->tmp);
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
