#include "util/input.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llcprobe/common.h"

FILE *llc_input_fopen(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        errno = EISDIR;
        llc_errf(err, errlen, -EISDIR, "%s: is a directory", path);
        return NULL;
    }
    return f;
}

int llc_lines_open(struct llc_lines *r, const char *path, size_t max_len, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    r->path = path;
    r->max_len = max_len;
    r->f = llc_input_fopen(path, err, errlen);
    return r->f ? 0 : -errno;
}

int llc_lines_next(struct llc_lines *r, char **line, char *err, size_t errlen)
{
    /* Byte by byte, so NUL bytes (a damaged file, /dev/zero) count
     * towards the limit like any other. */
    size_t len = 0;
    int c;
    while ((c = getc_unlocked(r->f)) != EOF && c != '\n') {
        if (len == r->max_len)
            return llc_errf(err, errlen, -E2BIG, "%s: line %zu: longer than %zu bytes", r->path,
                            r->lineno + 1, r->max_len);
        if (len + 1 >= r->cap) {
            size_t want = r->cap ? 2 * r->cap : 4096;
            if (want > r->max_len + 1)
                want = r->max_len + 1;
            char *b = realloc(r->buf, want);
            if (!b)
                return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", r->path);
            r->buf = b;
            r->cap = want;
        }
        r->buf[len++] = (char)c;
    }
    if (ferror(r->f))
        return llc_errf(err, errlen, -EIO, "%s: line %zu: read error", r->path, r->lineno + 1);
    if (c == EOF && len == 0)
        return 0;
    if (!r->buf) {
        r->buf = malloc(1);
        if (!r->buf)
            return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", r->path);
        r->cap = 1;
    }
    r->buf[len] = '\0';
    r->lineno++;
    *line = r->buf;
    return 1;
}

void llc_lines_close(struct llc_lines *r)
{
    if (r->f)
        fclose(r->f);
    free(r->buf);
    memset(r, 0, sizeof(*r));
}

/* Non-seekable inputs already read, by path. A few per run at most. */
struct drained {
    char *path, *data;
    size_t len;
};
static struct drained drained[8];
static pthread_mutex_t drained_lock = PTHREAD_MUTEX_INITIALIZER;

static int copy_out(const char *data, size_t len, char **out, size_t *outlen, const char *path,
                    char *err, size_t errlen)
{
    *out = malloc(len + 1);
    if (!*out)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
    memcpy(*out, data, len);
    (*out)[len] = '\0';
    *outlen = len;
    return 0;
}

int llc_input_slurp(const char *path, size_t max_bytes, char **out, size_t *len, char *err,
                    size_t errlen)
{
    *out = NULL;
    *len = 0;
    int rc = 0;
    pthread_mutex_lock(&drained_lock);
    for (size_t i = 0; i < LLC_ARRAY_LEN(drained); i++)
        if (drained[i].path && strcmp(drained[i].path, path) == 0) {
            rc = copy_out(drained[i].data, drained[i].len, out, len, path, err, errlen);
            pthread_mutex_unlock(&drained_lock);
            return rc;
        }
    pthread_mutex_unlock(&drained_lock);
    FILE *f = llc_input_fopen(path, err, errlen);
    if (!f)
        return -errno;
    struct stat st;
    const bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n + 1 >= cap) {
            const size_t c = cap ? 2 * cap : 65536;
            char *b = realloc(buf, c);
            if (!b) {
                rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
                goto out;
            }
            buf = b;
            cap = c;
        }
        const size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n > max_bytes) {
            rc = llc_errf(err, errlen, -E2BIG, "%s: larger than %zu bytes", path, max_bytes);
            goto out;
        }
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        rc = llc_errf(err, errlen, -EIO, "%s: read error", path);
        goto out;
    }
    buf[n] = '\0';
    if (!regular) {
        pthread_mutex_lock(&drained_lock);
        for (size_t i = 0; i < LLC_ARRAY_LEN(drained); i++)
            if (!drained[i].path) {
                char *p = strdup(path), *d = malloc(n + 1);
                if (p && d) {
                    memcpy(d, buf, n + 1);
                    drained[i] = (struct drained){p, d, n};
                } else {
                    free(p);
                    free(d);
                }
                break;
            }
        pthread_mutex_unlock(&drained_lock);
    }
    *out = buf;
    *len = n;
    buf = NULL;
out:
    free(buf);
    fclose(f);
    return rc;
}

const char *llc_escape(const char *s, size_t n, char *out, size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!outlen)
        return out;
    for (size_t i = 0; i < n && s[i]; i++) {
        const unsigned char c = (unsigned char)s[i];
        const bool plain = c >= 0x20 && c < 0x7f && c != '\\';
        const size_t need = plain ? 1 : c == '\\' ? 2 : 4;
        if (o + need + 4 > outlen) {
            if (o + 4 <= outlen) {
                memcpy(out + o, "...", 3);
                o += 3;
            }
            break;
        }
        if (plain) {
            out[o++] = (char)c;
        } else if (c == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}
