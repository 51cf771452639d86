/* The instrumented runtime's profile file: a few "key value" lines and the
 * histogram in statmodel's text form (mrc.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "mrc/mrc.h"

int llc_mrc_profile_write(FILE *f, const struct llc_mrc_profile_info *info,
                          const struct llc_statmodel_hist *h, char *err, size_t errlen)
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
    if (fprintf(f,
                LLC_MRC_PROFILE_MAGIC "\nrate %.17g\nseed %" PRIu64 "\nrefs %" PRIu64
                                      "\nsamples %" PRIu64 "\nthreads %" PRIu64
                                      "\ncommand %s\n%s\n",
                info->rate, info->seed, info->refs, info->samples, info->threads, command,
                text) < 0 ||
        fflush(f) != 0)
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

int llc_mrc_profile_parse(const char *text, const char *name, struct llc_mrc_profile_info *info,
                          struct llc_statmodel_hist *h, char *err, size_t errlen)
{
    static const char *const keys[] = {"rate", "seed", "refs", "samples", "threads", "command"};
    char *copy = strdup(text);
    if (!copy)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", name);
    char *cursor = copy;
    int rc = 0;
    *info = (struct llc_mrc_profile_info){0};
    llc_statmodel_hist_clear(h);
    char *line = next_line(&cursor);
    if (!line || strcmp(line, LLC_MRC_PROFILE_MAGIC) != 0) {
        rc = llc_errf(err, errlen, -EINVAL,
                      "%s: not an llcprobe-rt profile (first line is not \"%s\")", name,
                      LLC_MRC_PROFILE_MAGIC);
        goto out;
    }
    for (size_t k = 0; k < LLC_ARRAY_LEN(keys); k++) {
        const unsigned lineno = (unsigned)k + 2;
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
        case 1: bad = parse_u64_field(value, &info->seed); break;
        case 2: bad = parse_u64_field(value, &info->refs); break;
        case 3: bad = parse_u64_field(value, &info->samples); break;
        case 4: bad = parse_u64_field(value, &info->threads); break;
        default: snprintf(info->command, sizeof info->command, "%s", value); break;
        }
        if (bad) {
            rc = llc_errf(err, errlen, -EINVAL, "%s: line %u: bad %s value '%s'", name, lineno,
                          keys[k], value);
            goto out;
        }
    }
    line = next_line(&cursor);
    if (!line) {
        rc = llc_errf(err, errlen, -EINVAL, "%s: line 8: the histogram line is missing", name);
        goto out;
    }
    char why[LLC_ERRLEN];
    rc = llc_statmodel_hist_parse(line, h, why, sizeof why);
    if (rc < 0) {
        llc_errf(err, errlen, rc, "%s: line 8: %s", name, why);
        goto out;
    }
    if (*cursor) {
        rc = llc_errf(err, errlen, -EINVAL, "%s: text after the histogram line", name);
        goto out;
    }
    if (fabs(llc_statmodel_hist_total(h) - (double)info->samples) > 0.5) {
        rc = llc_errf(err, errlen, -EINVAL,
                      "%s: the histogram holds %.0f samples but the header says %" PRIu64, name,
                      llc_statmodel_hist_total(h), info->samples);
        goto out;
    }
out:
    if (rc < 0)
        llc_statmodel_hist_clear(h);
    free(copy);
    return rc;
}

/* Profiles are small (a few kilobytes): read whole. */
#define PROFILE_MAX_BYTES (16u << 20)

int llc_mrc_profile_read(const char *path, struct llc_mrc_profile_info *info,
                         struct llc_statmodel_hist *h, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    char *text = malloc(PROFILE_MAX_BYTES + 1);
    int rc = 0;
    if (!text) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    const size_t n = fread(text, 1, PROFILE_MAX_BYTES + 1, f);
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
    rc = llc_mrc_profile_parse(text, path, info, h, err, errlen);
out:
    free(text);
    fclose(f);
    return rc;
}
