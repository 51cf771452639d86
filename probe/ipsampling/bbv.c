/* valgrind exp-bbv output as dense per-window vectors: the reference the
 * sampled signatures are compared against (the ScarPhase paper §5.1). */
#include "ipsampling/sampling_internal.h"

#include "llcprobe/common.h"
#include "util/input.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds: what real exp-bbv runs need, far below what a damaged or hostile
 * file (or /dev/zero) would make us allocate. */
#define BBV_MAX_LINE (16u << 20)   /* bytes in one interval's line */
#define BBV_MAX_ENTRIES (1u << 25) /* id:count pairs in the file */
#define BBV_PC_MAX_LINE (64u << 10)

struct entry {
    size_t window, id;
    double count;
};

static int push(struct entry **v, size_t *n, size_t *cap, struct entry e)
{
    if (*n == *cap) {
        const size_t c = *cap ? 2 * *cap : 4096;
        struct entry *p = realloc(*v, c * sizeof(*p));
        if (!p)
            return -ENOMEM;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = e;
    return 0;
}

/* One "T:id:count :id:count ..." line into entries of window w. */
static int parse_line(const char *path, char *line, size_t w, size_t lineno, struct entry **v,
                      size_t *n, size_t *cap, size_t *dim, char *err, size_t errlen)
{
    char *p = line + 1;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\0')
            return 0;
        char *end;
        if (*p != ':')
            goto bad;
        const unsigned long long id = strtoull(p + 1, &end, 10);
        if (end == p + 1 || *end != ':' || id == 0)
            goto bad;
        /* exp-bbv numbers blocks from 1 as it meets them; the matrix is dense in ids. */
        p = end + 1;
        const unsigned long long count = strtoull(p, &end, 10);
        if (end == p)
            goto bad;
        p = end;
        if (id > LLC_SAMPLING_BBV_MAX_ID)
            return llc_errf(err, errlen, -E2BIG,
                            "%s: line %zu: block id %llu is over the "
                            "limit of %u",
                            path, lineno, id, LLC_SAMPLING_BBV_MAX_ID);
        if (*n >= BBV_MAX_ENTRIES)
            return llc_errf(err, errlen, -E2BIG,
                            "%s: line %zu: more than %u block counts in "
                            "the file",
                            path, lineno, BBV_MAX_ENTRIES);
        if (push(v, n, cap, (struct entry){w, (size_t)id, (double)count}) < 0)
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        if (id > *dim)
            *dim = (size_t)id;
    }
bad:
    return llc_errf(err, errlen, -EPROTO,
                    "%s: line %zu: not exp-bbv output (expected "
                    "\"T:id:count ...\")",
                    path, lineno);
}

int llc_sampling_bbv_read(const char *path, struct llc_sampling_bbv *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    struct llc_lines in;
    int rc = llc_lines_open(&in, path, BBV_MAX_LINE, err, errlen);
    if (rc < 0)
        return rc;
    struct entry *v = NULL;
    size_t n = 0, cap = 0, dim = 0, windows = 0;
    char *line;
    while ((rc = llc_lines_next(&in, &line, err, errlen)) == 1) {
        if (line[0] != 'T')
            continue; /* blank lines, or per-thread markers of other versions */
        rc = parse_line(path, line, windows++, in.lineno, &v, &n, &cap, &dim, err, errlen);
        if (rc < 0)
            goto out;
    }
    if (rc < 0)
        goto out;
    if (windows == 0 || dim == 0) {
        rc = llc_errf(err, errlen, -EPROTO, "%s: no exp-bbv intervals in it", path);
        goto out;
    }
    if (windows > LLC_SAMPLING_BBV_MAX_CELLS / dim) {
        rc = llc_errf(err, errlen, -E2BIG, "%s: %zu windows x %zu blocks is over the limit of %zu",
                      path, windows, dim, LLC_SAMPLING_BBV_MAX_CELLS);
        goto out;
    }
    out->rows = calloc(windows * dim, sizeof(double));
    if (!out->rows) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu x %zu BBV matrix", windows, dim);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        out->rows[v[i].window * dim + v[i].id - 1] += v[i].count;
    out->windows = windows;
    out->dim = dim;
out:
    free(v);
    llc_lines_close(&in);
    return rc;
}

int llc_sampling_bbv_read_pcs(const char *path, struct llc_sampling_bbv *b, char *err,
                              size_t errlen)
{
    struct llc_lines in;
    int rc = llc_lines_open(&in, path, BBV_PC_MAX_LINE, err, errlen);
    if (rc < 0)
        return rc;
    char *line;
    free(b->addr);
    b->addr = calloc(b->dim ? b->dim : 1, sizeof(*b->addr));
    if (!b->addr) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    while ((rc = llc_lines_next(&in, &line, err, errlen)) == 1) {
        const size_t lineno = in.lineno;
        if (line[0] != 'F')
            continue;
        char *end;
        const unsigned long long id = strtoull(line + 2, &end, 10);
        if (line[1] != ':' || end == line + 2 || *end != ':' || id == 0) {
            rc = llc_errf(err, errlen, -EPROTO,
                          "%s: line %zu: not an exp-bbv pc file "
                          "(expected \"F:id:address:function\")",
                          path, lineno);
            goto out;
        }
        char *aend;
        const unsigned long long a = strtoull(end + 1, &aend, 16);
        if (aend == end + 1) {
            rc = llc_errf(err, errlen, -EPROTO, "%s: line %zu: block %llu has no address", path,
                          lineno, id);
            goto out;
        }
        if (id <= b->dim)
            b->addr[id - 1] = a;
    }
    if (rc < 0)
        goto out;
    for (size_t j = 0; j < b->dim; j++) {
        if (b->addr[j] != 0)
            continue;
        bool used = false;
        for (size_t w = 0; w < b->windows && !used; w++)
            used = b->rows[w * b->dim + j] != 0;
        if (used) {
            rc = llc_errf(err, errlen, -EPROTO,
                          "%s: block %zu of the BBV file has no address "
                          "(not the pc file of the same run?)",
                          path, j + 1);
            goto out;
        }
    }
out:
    llc_lines_close(&in);
    return rc;
}

void llc_sampling_bbv_free(struct llc_sampling_bbv *b)
{
    free(b->rows);
    free(b->addr);
    memset(b, 0, sizeof(*b));
}
