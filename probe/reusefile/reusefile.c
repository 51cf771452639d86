/* The reuse profile file (llcprobe/reusefile.h): a few "key value" lines,
 * the histogram in statmodel's text form, and the windows. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llcprobe/common.h"
#include "llcprobe/reusefile.h"
#include "util/input.h"

void llc_reusefile_windows_free(struct llc_reusefile_windows *w)
{
    if (!w)
        return;
    free(w->windows);
    free(w->samples);
    *w = (struct llc_reusefile_windows){0};
}

static int write_windows(FILE *f, const struct llc_reusefile_windows *w)
{
    if (!w || !w->length)
        return fputs("windows off\n", f) < 0 ? -EIO : 0;
    if (fprintf(f, "windows %" PRIu64 " %" PRIu32 " %zu %zu %s\n", w->length, w->pcs_per_window,
                w->n_windows, w->n_samples, w->complete ? "complete" : "truncated") < 0)
        return -EIO;
    for (size_t i = 0; i < w->n_windows; i++) {
        const struct llc_reusefile_window *x = &w->windows[i];
        if (fprintf(f, "w %" PRIu32 " %" PRIu64 " %" PRIu32, x->thread, x->refs, x->pcs) < 0)
            return -EIO;
        for (unsigned b = 0; b < LLC_PHASE_BUCKETS; b++)
            if (fprintf(f, " %" PRIu32, x->counts[b]) < 0)
                return -EIO;
        if (fputc('\n', f) == EOF)
            return -EIO;
    }
    for (size_t i = 0; i < w->n_samples; i++) {
        const struct llc_reusefile_sample *x = &w->samples[i];
        const int n = x->distance == LLC_REUSEFILE_NEVER_REUSED
                          ? fprintf(f, "s %" PRIu64 " inf\n", x->window)
                          : fprintf(f, "s %" PRIu64 " %" PRIu64 "\n", x->window, x->distance);
        if (n < 0)
            return -EIO;
    }
    return 0;
}

int llc_reusefile_write(FILE *f, const struct llc_reusefile_info *info,
                        const struct llc_statmodel_hist *h, const struct llc_reusefile_windows *w,
                        char *err, size_t errlen)
{
    const int len = llc_statmodel_hist_format(h, NULL, 0, err, errlen);
    if (len < 0)
        return len;
    char *text = malloc((size_t)len + 1);
    if (!text)
        return llc_errf(err, errlen, -ENOMEM, "profile: out of memory");
    int rc = llc_statmodel_hist_format(h, text, (size_t)len + 1, err, errlen);
    if (rc < 0)
        goto out;
    /* The command is one line: newlines in arguments would break the format. */
    char command[sizeof info->command];
    snprintf(command, sizeof command, "%s", info->command);
    for (char *c = command; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    char lines[40] = "";
    if (info->lines)
        snprintf(lines, sizeof lines, "lines %" PRIu64 "\n", info->lines);
    if (fprintf(f,
                LLC_REUSEFILE_MAGIC "\nrate %.17g\nseed %" PRIu64 "\nrefs %" PRIu64
                                    "\nsamples %" PRIu64 "\n%sthreads %" PRIu64
                                    "\ncommand %s\n%s\n",
                info->rate, info->seed, info->refs, info->samples, lines, info->threads, command,
                text) < 0 ||
        write_windows(f, w) < 0 || fflush(f) != 0)
        rc = llc_errf(err, errlen, -EIO, "profile: write failed: %s", strerror(errno));
    else
        rc = 0;
out:
    free(text);
    return rc;
}

/* Next line of *cursor, NUL-terminated in place; NULL at the end. */
static char *next_line(char **cursor)
{
    char *line = *cursor;
    if (!line || !*line)
        return NULL;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = line + strlen(line);
    }
    return line;
}

static int parse_u64_field(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -EINVAL;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -EINVAL;
    *out = v;
    return 0;
}

/* " <digits>" at *p, advancing past it. */
static int take_u64(const char **p, uint64_t *out)
{
    if (**p != ' ')
        return -EINVAL;
    (*p)++;
    if (**p < '0' || **p > '9')
        return -EINVAL;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(*p, &end, 10);
    if (errno)
        return -EINVAL;
    *out = v;
    *p = end;
    return 0;
}

static int parse_window_line(const char *line, struct llc_reusefile_window *w, uint64_t threads)
{
    const char *p = line + 1;
    uint64_t thread, refs, pcs, sum = 0;
    if (line[0] != 'w' || take_u64(&p, &thread) || take_u64(&p, &refs) || take_u64(&p, &pcs) ||
        thread >= threads || refs == 0 || pcs > UINT32_MAX)
        return -EINVAL;
    *w = (struct llc_reusefile_window){
        .thread = (uint32_t)thread, .pcs = (uint32_t)pcs, .refs = refs};
    for (unsigned b = 0; b < LLC_PHASE_BUCKETS; b++) {
        uint64_t c;
        if (take_u64(&p, &c) || c > pcs)
            return -EINVAL;
        w->counts[b] = (uint32_t)c;
        sum += c;
    }
    return *p || sum != pcs ? -EINVAL : 0;
}

static int parse_sample_line(const char *line, struct llc_reusefile_sample *x, size_t n_windows)
{
    const char *p = line + 1;
    if (line[0] != 's' || take_u64(&p, &x->window) || x->window >= n_windows)
        return -EINVAL;
    if (strcmp(p, " inf") == 0) {
        x->distance = LLC_REUSEFILE_NEVER_REUSED;
        return 0;
    }
    return take_u64(&p, &x->distance) || *p || x->distance == LLC_REUSEFILE_NEVER_REUSED ? -EINVAL
                                                                                         : 0;
}

/* The windows part of a version 2 profile, from the line after the
 * histogram (line number lineno) on. */
static int parse_windows(char **cursor, unsigned lineno, const char *name,
                         const struct llc_reusefile_info *info, struct llc_reusefile_windows *w,
                         char *err, size_t errlen)
{
    const char *line = next_line(cursor);
    if (!line || strncmp(line, "windows ", 8) != 0)
        return llc_errf(err, errlen, -EINVAL, "%s: line %u: expected \"windows ...\"", name,
                        lineno);
    if (strcmp(line, "windows off") == 0)
        return **cursor ? llc_errf(err, errlen, -EINVAL, "%s: text after \"windows off\"", name)
                        : 0;
    const char *p = line + 7;
    uint64_t length, pcs, n_windows, n_samples;
    const size_t text_left = strlen(*cursor);
    if (take_u64(&p, &length) || take_u64(&p, &pcs) || take_u64(&p, &n_windows) ||
        take_u64(&p, &n_samples) || length == 0 || pcs > UINT32_MAX ||
        (strcmp(p, " complete") != 0 && strcmp(p, " truncated") != 0) ||
        /* every record takes a few bytes: bounds the allocations below */
        n_windows > text_left / 4 || n_samples > text_left / 4)
        return llc_errf(err, errlen, -EINVAL, "%s: line %u: bad windows line '%s'", name, lineno,
                        llc_escape(line, strlen(line), (char[96]){0}, 96));
    w->length = length;
    w->pcs_per_window = (uint32_t)pcs;
    w->complete = strcmp(p, " complete") == 0;
    w->windows = calloc(n_windows ? n_windows : 1, sizeof *w->windows);
    w->samples = calloc(n_samples ? n_samples : 1, sizeof *w->samples);
    if (!w->windows || !w->samples)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", name);
    uint64_t refs = 0;
    for (w->n_windows = 0; w->n_windows < n_windows; w->n_windows++) {
        line = next_line(cursor);
        lineno++;
        if (!line || parse_window_line(line, &w->windows[w->n_windows], info->threads) < 0)
            return llc_errf(err, errlen, -EINVAL,
                            "%s: line %u: expected \"w THREAD REFS PCS\" "
                            "and %d bucket counts summing to PCS",
                            name, lineno, LLC_PHASE_BUCKETS);
        refs += w->windows[w->n_windows].refs;
    }
    for (w->n_samples = 0; w->n_samples < n_samples; w->n_samples++) {
        line = next_line(cursor);
        lineno++;
        if (!line || parse_sample_line(line, &w->samples[w->n_samples], w->n_windows) < 0)
            return llc_errf(err, errlen, -EINVAL,
                            "%s: line %u: expected \"s WINDOW DISTANCE\" "
                            "(a window index below %zu, a distance or inf)",
                            name, lineno, w->n_windows);
    }
    if (**cursor)
        return llc_errf(err, errlen, -EINVAL, "%s: text after the %zu sample lines", name,
                        w->n_samples);
    if (w->complete && (refs != info->refs || n_samples != info->samples))
        return llc_errf(err, errlen, -EINVAL,
                        "%s: the windows hold %" PRIu64 " references and %" PRIu64
                        " samples but the header says %" PRIu64 " and %" PRIu64,
                        name, refs, n_samples, info->refs, info->samples);
    return 0;
}

int llc_reusefile_parse(const char *text, const char *name, struct llc_reusefile_info *info,
                        struct llc_statmodel_hist *h, struct llc_reusefile_windows *w, char *err,
                        size_t errlen)
{
    static const char *const keys[] = {"rate", "seed", "refs", "samples", "threads", "command"};
    struct llc_reusefile_windows windows = {0};
    char *copy = strdup(text);
    if (!copy)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", name);
    char *cursor = copy;
    int rc = 0;
    *info = (struct llc_reusefile_info){0};
    llc_statmodel_hist_clear(h);
    char *line = next_line(&cursor);
    if (line && strcmp(line, LLC_REUSEFILE_MAGIC_V1) == 0)
        info->version = 1;
    else if (line && strcmp(line, LLC_REUSEFILE_MAGIC) == 0)
        info->version = 2;
    else {
        rc = llc_errf(err, errlen, -EINVAL,
                      "%s: not an llcprobe-rt profile (first line is not \"%s\" or \"%s\")", name,
                      LLC_REUSEFILE_MAGIC, LLC_REUSEFILE_MAGIC_V1);
        goto out;
    }
    unsigned extra = 0; /* the optional lines line */
    for (size_t k = 0; k < LLC_ARRAY_LEN(keys); k++) {
        if (k == 4 && strncmp(cursor, "lines ", 6) == 0) {
            line = next_line(&cursor);
            extra = 1;
            if (parse_u64_field(line + 6, &info->lines) || info->lines == 0 ||
                info->lines > info->refs) {
                rc = llc_errf(err, errlen, -EINVAL,
                              "%s: line 6: bad lines value '%s' (1 to refs distinct lines)", name,
                              line + 6);
                goto out;
            }
        }
        const unsigned lineno = (unsigned)k + 2 + extra;
        line = next_line(&cursor);
        const size_t klen = strlen(keys[k]);
        if (!line || strncmp(line, keys[k], klen) != 0 || line[klen] != ' ') {
            rc = llc_errf(err, errlen, -EINVAL, "%s: line %u: expected \"%s <value>\"", name,
                          lineno, keys[k]);
            goto out;
        }
        const char *value = line + klen + 1;
        int bad = 0;
        switch (k) {
        case 0: {
            char *end;
            info->rate = strtod(value, &end);
            bad = *end || end == value || !(info->rate > 0 && info->rate <= 1);
            break;
        }
        case 1:
            bad = parse_u64_field(value, &info->seed);
            break;
        case 2:
            bad = parse_u64_field(value, &info->refs);
            break;
        case 3:
            bad = parse_u64_field(value, &info->samples);
            break;
        case 4:
            bad = parse_u64_field(value, &info->threads);
            break;
        default:
            snprintf(info->command, sizeof info->command, "%s", value);
            break;
        }
        if (bad) {
            rc = llc_errf(err, errlen, -EINVAL, "%s: line %u: bad %s value '%s'", name, lineno,
                          keys[k], llc_escape(value, strlen(value), (char[96]){0}, 96));
            goto out;
        }
    }
    line = next_line(&cursor);
    if (!line) {
        rc = llc_errf(err, errlen, -EINVAL, "%s: line %u: the histogram line is missing", name,
                      8 + extra);
        goto out;
    }
    char why[LLC_ERRLEN];
    rc = llc_statmodel_hist_parse(line, h, why, sizeof why);
    if (rc < 0) {
        llc_errf(err, errlen, rc, "%s: line %u: %s", name, 8 + extra, why);
        goto out;
    }
    if (info->version == 1 && *cursor) {
        rc = llc_errf(err, errlen, -EINVAL, "%s: text after the histogram line", name);
        goto out;
    }
    if (fabs(llc_statmodel_hist_total(h) - (double)info->samples) > 0.5) {
        rc = llc_errf(err, errlen, -EINVAL,
                      "%s: the histogram holds %.0f samples but the header says %" PRIu64, name,
                      llc_statmodel_hist_total(h), info->samples);
        goto out;
    }
    if (info->version == 2)
        rc = parse_windows(&cursor, 9 + extra, name, info, &windows, err, errlen);
out:
    if (rc < 0) {
        llc_statmodel_hist_clear(h);
        llc_reusefile_windows_free(&windows);
    }
    if (w)
        *w = windows;
    else
        llc_reusefile_windows_free(&windows);
    free(copy);
    return rc;
}

/* Profiles are small (a few kilobytes, plus about 15 bytes per sample and
 * 100 per window with windows): read whole. */
#define PROFILE_MAX_BYTES (512u << 20)

int llc_reusefile_read(const char *path, struct llc_reusefile_info *info,
                       struct llc_statmodel_hist *h, struct llc_reusefile_windows *w, char *err,
                       size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    char *text = NULL;
    int rc = 0;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
        goto out;
    }
    /* Sized by the file (a regular one; else the cap), read up to one past the cap. */
    const size_t cap = S_ISREG(st.st_mode) && (uint64_t)st.st_size < PROFILE_MAX_BYTES
                           ? (size_t)st.st_size + 1
                           : PROFILE_MAX_BYTES + 1;
    text = malloc(cap + 1);
    if (!text) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    const size_t n = fread(text, 1, cap, f);
    if (ferror(f)) {
        rc = llc_errf(err, errlen, -EIO, "%s: read failed", path);
        goto out;
    }
    if (n > PROFILE_MAX_BYTES) {
        rc = llc_errf(err, errlen, -EFBIG, "%s: larger than a profile can be (%u MiB)", path,
                      PROFILE_MAX_BYTES >> 20);
        goto out;
    }
    if (memchr(text, '\0', n)) {
        rc = llc_errf(err, errlen, -EINVAL, "%s: not an llcprobe-rt profile (binary data)", path);
        goto out;
    }
    text[n] = '\0';
    rc = llc_reusefile_parse(text, path, info, h, w, err, errlen);
out:
    free(text);
    fclose(f);
    return rc;
}
