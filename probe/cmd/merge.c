/* llcprobe merge -o DIR SRC...: joins profile directories (per-task
 * outputs of a Slurm study, profiles made on other runs) into one. Every
 * profile is read and checked, and all are checked against the first
 * one's machine, before anything is copied: a refusal leaves DIR as it
 * was. Files are copied atomically; a name already in DIR with other
 * content is a conflict, with the same content it is skipped. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/study.h"
#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/identity.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: llcprobe merge -o DIR [--force] [--quiet] SRC...\n\n"
            "Joins the profiles (*.profile.json, with the .profile.csv and .log beside them)\n"
            "of the SRC directories into DIR (created), e.g. the per-task outputs of a\n"
            "'study --slurm' run on node-local disks, as one profile directory for 'study'.\n"
            "Every profile is read and checked first, and all must come from the machine of\n"
            "the first one (preset, or host and LLC geometry); a damaged profile, another\n"
            "machine (without --force) or a name already in DIR with other content is refused\n"
            "before anything is copied (one line, exit 1). Same content: skipped.\n\n"
            "  -o, --output DIR  the directory to merge into\n"
            "  --force           merge profiles of different machines\n"
            "  -q, --quiet       no summary line\n"
            "  -h, --help        this text\n\n"
            "exit status: 0 ok, 1 failure, 2 usage.\n");
}

/* Whole file into memory (*len bytes); NULL if it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    return buf;
}

/* Copies src to dst atomically. 1 = same content already there, 0 copied,
 * -EEXIST other content there, other negative: error in err. */
static int copy(const char *src, const char *dst, bool check_only, char *err, size_t errlen)
{
    size_t n, m;
    char *a = slurp(src, &n), *b = NULL;
    int rc = 0;
    if (!a) {
        rc = llc_errf(err, errlen, -EIO, "%s: cannot read", src);
        goto out;
    }
    if (access(dst, F_OK) == 0) {
        b = slurp(dst, &m);
        rc = b && m == n && memcmp(a, b, n) == 0 ? 1
                                                 : llc_errf(err, errlen, -EEXIST,
                                                            "%s: already there with other "
                                                            "content than %s",
                                                            dst, src);
        goto out;
    }
    if (check_only)
        goto out;
    struct llc_afile *f;
    if ((rc = llc_afile_open(dst, &f, err, errlen)) < 0)
        goto out;
    if (fwrite(a, 1, n, llc_afile_stream(f)) != n) {
        llc_afile_abort(f);
        rc = llc_errf(err, errlen, -EIO, "%s: write failed", dst);
        goto out;
    }
    rc = llc_afile_commit(f, err, errlen);
out:
    free(a);
    free(b);
    return rc;
}

/* The profile's companions: x.profile.json -> x.profile.csv, x.log. */
static void companion(const char *json, const char *suffix, char *out, size_t len)
{
    const size_t l = strlen(json) - strlen(".profile.json");
    snprintf(out, len, "%.*s%s", (int)l, json, suffix);
}

/* pass 0 checks everything, pass 1 copies. */
static int merge_pass(int pass, char **files, size_t n, const char *dir, size_t *copied, char *err,
                      size_t errlen)
{
    static const char *const sfx[] = {".profile.json", ".profile.csv", ".log"};
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(files[i], '/') + 1;
        for (size_t k = 0; pass == 0 && k < i; k++) /* one name, two contents among the sources */
            if (strcmp(strrchr(files[k], '/') + 1, base) == 0) {
                const int rc = copy(files[i], files[k], true, err, errlen);
                if (rc < 0)
                    return rc;
            }
        for (size_t k = 0; k < 3; k++) {
            char src[4200], dst[8400], name[4200];
            companion(files[i], sfx[k], src, sizeof(src));
            if (k && access(src, R_OK) != 0)
                continue;
            companion(base, sfx[k], name, sizeof(name));
            snprintf(dst, sizeof(dst), "%s/%s", dir, name);
            const int rc = copy(src, dst, pass == 0, err, errlen);
            if (rc < 0)
                return rc;
            *copied += pass == 1 && k == 0 && rc == 0;
        }
    }
    return 0;
}

int llc_cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    bool force = false, quiet = false;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o':
            out = optarg;
            break;
        case 'f':
            force = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_EXIT_OK;
        default:
            return llc_cli_usage("merge", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (!out || !*out)
        return llc_cli_usage("merge", "-o DIR is required");
    if (optind >= argc)
        return llc_cli_usage("merge", "give at least one SRC directory");
    char err[LLC_ERRLEN], **files = NULL;
    size_t n = 0, copied = 0;
    int rc = 0;
    struct llc_profile first;
    llc_profile_init(&first);
    for (int a = optind; rc == 0 && a < argc; a++) {
        char **f = NULL;
        size_t m = 0;
        if (study_list_profiles(argv[a], &f, &m, err, sizeof(err)) < 0) {
            rc = llc_cli_fail("merge", "%s", err);
            break;
        }
        char **nv = realloc(files, (n + m + 1) * sizeof(char *));
        if (!nv) {
            for (size_t i = 0; i < m; i++)
                free(f[i]);
            free(f);
            rc = llc_cli_fail("merge", "out of memory");
            break;
        }
        files = nv;
        memcpy(files + n, f, m * sizeof(char *));
        n += m;
        free(f);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct llc_profile p;
        char why[256];
        if (llc_profile_read(files[i], i ? &p : &first, err, sizeof(err)) < 0) {
            rc = llc_cli_fail("merge", "%s", err);
            break;
        }
        if (i == 0)
            continue;
        study_machine_differs(&p, &first, why, sizeof(why));
        llc_profile_free(&p);
        if (why[0] && !force)
            rc = llc_cli_fail("merge", "%s: machine: %s in %s (--force merges anyway)", files[i],
                              why, files[0]);
    }
    if (rc == 0 && llc_mkdir_as_invoker(out, 0777) < 0 && errno != EEXIST)
        rc = llc_cli_fail("merge", "%s: %s", out, strerror(errno));
    if (rc == 0 && (merge_pass(0, files, n, out, &copied, err, sizeof(err)) < 0 ||
                    merge_pass(1, files, n, out, &copied, err, sizeof(err)) < 0))
        rc = llc_cli_fail("merge", "%s", err);
    if (rc == 0 && !quiet)
        printf("merge: %zu profiles copied into %s, %zu already there\n", copied, out, n - copied);
    llc_profile_free(&first);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}
