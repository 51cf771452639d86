/* The workload spec parser: strict, with messages that name the offending
 * part, because specs are typed by hand on the command line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "llcprobe/common.h"
#include "parse/parse.h"
#include "model/workload/wl_internal.h"

/* Bit per key, so each kind lists what it accepts and what it requires. */
enum {
    K_SIZE = 1 << 0,
    K_STRIDE = 1 << 1,
    K_ALPHA = 1 << 2,
    K_FRAC = 1 << 3,
    K_WEIGHT = 1 << 4,
    K_CV = 1 << 5,
    K_WRITE = 1 << 6,
};

static const char *const key_names[] = {"size", "stride", "alpha", "frac", "weight", "cv", "write"};

static const struct {
    const char *name;
    enum wl_kind kind;
    unsigned allowed, required;
} kinds[] = {
    {"uniform", WL_UNIFORM, K_SIZE | K_WRITE, K_SIZE},
    {"stream", WL_STREAM, K_SIZE | K_STRIDE | K_WRITE, K_SIZE},
    {"zipf", WL_ZIPF, K_SIZE | K_ALPHA | K_WRITE, K_SIZE | K_ALPHA},
    {"hotsets", WL_HOTSETS, K_SIZE | K_FRAC | K_WEIGHT | K_WRITE, K_SIZE | K_FRAC | K_WEIGHT},
    {"gaussian", WL_GAUSSIAN, K_SIZE | K_CV | K_WRITE, K_SIZE | K_CV},
};

#define KINDS_LIST "uniform, stream, zipf, hotsets, gaussian, phased"

const char *wl_kind_name(enum wl_kind k)
{
    for (size_t i = 0; i < LLC_ARRAY_LEN(kinds); i++)
        if (kinds[i].kind == k)
            return kinds[i].name;
    return "phased";
}

static void list_keys(unsigned mask, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t used = 0;
    for (size_t b = 0; b < LLC_ARRAY_LEN(key_names); b++) {
        if (!(mask & (1u << b)))
            continue;
        const int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", key_names[b]);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
}

static int parse_real(const char *kind, const char *key, const char *val, double lo, double hi,
                      bool lo_open, double *out, char *err, size_t errlen)
{
    double v;
    if (llc_parse_double(val, &v) < 0)
        return llc_errf(err, errlen, -EINVAL, "%s: %s='%s' is not a number", kind, key, val);
    if (v > hi || v < lo || (lo_open && v == lo))
        return llc_errf(err, errlen, -EINVAL, "%s: %s=%s out of range (%s%g, %g]", kind, key, val,
                        lo_open ? "(" : "[", lo, hi);
    *out = v;
    return 0;
}

static int parse_value(struct wl_params *p, const char *kind, unsigned bit, const char *val,
                       char *err, size_t errlen)
{
    const char *key = key_names[__builtin_ctz(bit)];
    switch (bit) {
    case K_SIZE:
    case K_STRIDE: {
        uint64_t v;
        if (llc_parse_size(val, &v) < 0)
            return llc_errf(err, errlen, -EINVAL, "%s: %s='%s' is not a size (e.g. 64, 4K, 16M)",
                            kind, key, val);
        if (v == 0 || v > LLC_WORKLOAD_MAX_BYTES)
            return llc_errf(err, errlen, -EINVAL, "%s: %s=%s out of range (1 B .. 64 GiB)", kind,
                            key, val);
        if (bit == K_SIZE)
            p->size = v;
        else
            p->stride = v;
        return 0;
    }
    case K_ALPHA:
        return parse_real(kind, key, val, 0, 10, true, &p->alpha, err, errlen);
    case K_FRAC:
        return parse_real(kind, key, val, 0, 1, true, &p->frac, err, errlen);
    case K_WEIGHT:
        return parse_real(kind, key, val, 0, 1, false, &p->weight, err, errlen);
    case K_CV:
        return parse_real(kind, key, val, 0, 0.7, false, &p->cv, err, errlen);
    case K_WRITE:
        return parse_real(kind, key, val, 0, 1, false, &p->write, err, errlen);
    }
    return llc_errf(err, errlen, -EINVAL, "%s: internal: unknown key", kind);
}

/* Parses one "kind:k=v,k=v" (not phased) from s[0..len). */
static int parse_leaf(const char *s, size_t len, struct wl_params *p, char *err, size_t errlen)
{
    char buf[512];
    if (len >= sizeof(buf))
        return llc_errf(err, errlen, -EINVAL, "workload spec too long");
    memcpy(buf, s, len);
    buf[len] = '\0';
    memset(p, 0, sizeof(*p));

    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    size_t ki = 0;
    while (ki < LLC_ARRAY_LEN(kinds) && strcmp(kinds[ki].name, buf) != 0)
        ki++;
    if (ki == LLC_ARRAY_LEN(kinds)) {
        if (strcmp(buf, "phased") == 0)
            return llc_errf(err, errlen, -EINVAL, "phased: phases cannot be phased themselves");
        return llc_errf(err, errlen, -EINVAL, "unknown workload kind '%s' (kinds: " KINDS_LIST ")",
                        buf);
    }
    const char *kind = kinds[ki].name;
    char keys[128];
    list_keys(kinds[ki].allowed, keys, sizeof(keys));
    p->kind = kinds[ki].kind;
    p->stride = 64;
    if (!colon || colon[1] == '\0')
        return llc_errf(err, errlen, -EINVAL, "%s: needs parameters, e.g. '%s:size=16M' (keys: %s)",
                        kind, kind, keys);

    /* strtok_r skips empty fields; a stray comma is still a typo worth naming. */
    if (strstr(colon + 1, ",,") || buf[len - 1] == ',' || colon[1] == ',')
        return llc_errf(err, errlen, -EINVAL, "%s: empty parameter (stray comma)", kind);

    unsigned seen = 0;
    char *save = NULL;
    for (char *item = colon + 1;; item = NULL) {
        char *tok = strtok_r(item, ",", &save);
        if (!tok)
            break;
        char *eq = strchr(tok, '=');
        if (!eq)
            return llc_errf(err, errlen, -EINVAL, "%s: '%s' is not key=value (keys: %s)", kind, tok,
                            keys);
        *eq = '\0';
        unsigned bit = 0;
        for (size_t b = 0; b < LLC_ARRAY_LEN(key_names); b++)
            if (strcmp(key_names[b], tok) == 0)
                bit = 1u << b;
        if (!(bit & kinds[ki].allowed))
            return llc_errf(err, errlen, -EINVAL, "%s: unknown key '%s' (keys: %s)", kind, tok,
                            keys);
        if (seen & bit)
            return llc_errf(err, errlen, -EINVAL, "%s: %s given twice", kind, tok);
        seen |= bit;
        const int rc = parse_value(p, kind, bit, eq + 1, err, errlen);
        if (rc < 0)
            return rc;
    }
    const unsigned missing = kinds[ki].required & ~seen;
    if (missing) {
        char names[128];
        list_keys(missing, names, sizeof(names));
        return llc_errf(err, errlen, -EINVAL, "%s: missing %s", kind, names);
    }
    if (p->size < 64)
        return llc_errf(err, errlen, -EINVAL, "%s: size must be at least one 64-byte line", kind);
    if (p->kind == WL_STREAM && p->stride >= p->size)
        return llc_errf(err, errlen, -EINVAL, "%s: stride must be smaller than size", kind);
    if (wl_kind_is_set_shaped(p->kind) && p->size > LLC_WORKLOAD_MAX_SET_SHAPED_BYTES)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: size above the 1 GiB limit of set-shaped "
                        "workloads",
                        kind);
    return 0;
}

static int parse_phased(const char *body, struct wl_spec *out, char *err, size_t errlen)
{
    if (*body == '\0')
        return llc_errf(err, errlen, -EINVAL,
                        "phased: needs phases, e.g. 'phased:uniform:size=1M@2e6;zipf:size=32M,"
                        "alpha=1@1e6'");
    out->nphases = 0;
    const char *p = body;
    for (;;) {
        const char *end = strchr(p, ';');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (out->nphases == LLC_WORKLOAD_MAX_PHASES)
            return llc_errf(err, errlen, -EINVAL, "phased: more than %d phases",
                            LLC_WORKLOAD_MAX_PHASES);
        const unsigned i = out->nphases;
        const char *at = NULL;
        for (size_t k = 0; k < len; k++)
            if (p[k] == '@')
                at = p + k;
        if (!at)
            return llc_errf(err, errlen, -EINVAL, "phased: phase %u has no '@length' (accesses)",
                            i + 1);
        char num[64];
        const size_t nlen = len - (size_t)(at + 1 - p);
        if (nlen == 0 || nlen >= sizeof(num))
            return llc_errf(err, errlen, -EINVAL, "phased: phase %u: bad length", i + 1);
        memcpy(num, at + 1, nlen);
        num[nlen] = '\0';
        if (llc_parse_u64(num, &out->length[i]) < 0 || out->length[i] == 0)
            return llc_errf(err, errlen, -EINVAL,
                            "phased: phase %u: length '%s' is not a positive whole number", i + 1,
                            num);
        char sub[LLC_ERRLEN];
        const int rc = parse_leaf(p, (size_t)(at - p), &out->phase[i], sub, sizeof(sub));
        if (rc < 0)
            return llc_errf(err, errlen, rc, "phased: phase %u: %s", i + 1, sub);
        if (i > 0 &&
            wl_kind_is_set_shaped(out->phase[i].kind) != wl_kind_is_set_shaped(out->phase[0].kind))
            return llc_errf(err, errlen, -EINVAL,
                            "phased: phase %u: cannot mix set-shaped (physical) and virtual "
                            "workloads",
                            i + 1);
        out->nphases++;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

int wl_spec_parse(const char *spec, struct wl_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!spec || *spec == '\0')
        return llc_errf(err, errlen, -EINVAL, "empty workload spec (kinds: " KINDS_LIST ")");
    if (strncmp(spec, "phased:", 7) == 0) {
        out->top.kind = WL_PHASED;
        return parse_phased(spec + 7, out, err, errlen);
    }
    if (strcmp(spec, "phased") == 0)
        return parse_phased("", out, err, errlen);
    return parse_leaf(spec, strlen(spec), &out->top, err, errlen);
}

int llc_workload_check(const char *spec, char *err, size_t errlen)
{
    struct wl_spec s;
    return wl_spec_parse(spec, &s, err, errlen);
}

const char *llc_workload_help(void)
{
    return "workload specs (sizes take K/M/G; every kind also takes write=W, the\n"
           "probability that an access is a write, default 0):\n"
           "  uniform:size=S                 every 64-byte line of S bytes equally likely\n"
           "  stream:size=S[,stride=B]       sequential sweep B bytes apart (default 64),\n"
           "                                 wrapping around modulo S\n"
           "  zipf:size=S,alpha=A            line of popularity rank k with probability\n"
           "                                 ~ 1/k^A (0 < A <= 10), ranks scattered over S\n"
           "  hotsets:size=S,frac=F,weight=P a random fraction F of the LLC sets gets a\n"
           "                                 fraction P of the accesses (set-shaped)\n"
           "  gaussian:size=S,cv=C           per-set intensity drawn from a Gaussian (cut at\n"
           "                                 0, spread calibrated) so that per-set access\n"
           "                                 counts have CV C (set-shaped, 0 <= C <= 0.7)\n"
           "  phased:SPEC@N;SPEC@N;...       phases of N accesses each, in order, repeating\n"
           "                                 (e.g. phased:uniform:size=1M@2e6;zipf:size=32M,\n"
           "                                 alpha=1@1e6); each phase has its own data\n"
           "uniform, stream and zipf use virtual addresses (mapped to frames by the\n"
           "simulated OS). Set-shaped kinds emit physical addresses chosen through the\n"
           "cache geometry, S spread evenly over all LLC sets (at least one line per\n"
           "set), so their per-set shape holds for any page size.\n";
}
