/* lackey text → records. Lackey prints hundreds of millions of lines, so
 * each line is decoded by hand (table-driven hex, no sscanf). */
#include "trace/lackey.h"

#include <stdbool.h>
#include <string.h>

/* Value of a hex digit, or -1. */
static int hexval(unsigned char c)
{
    if ((unsigned)(c - '0') < 10u)
        return c - '0';
    c |= 0x20; /* lower case */
    if ((unsigned)(c - 'a') < 6u)
        return c - 'a' + 10;
    return -1;
}

/* "<hex>,<dec>" filling [s, e) exactly. */
static bool parse_addr_size(const char *s, const char *e, uint64_t *addr, uint32_t *size)
{
    uint64_t a = 0;
    int digits = 0;
    for (; s < e && *s != ','; s++, digits++) {
        const int v = hexval((unsigned char)*s);
        if (v < 0 || digits == 16)
            return false;
        a = a << 4 | (uint64_t)v;
    }
    if (digits == 0 || s == e)
        return false;
    s++;
    uint64_t n = 0;
    if (s == e)
        return false;
    for (; s < e; s++) {
        const unsigned d = (unsigned char)*s - '0';
        if (d > 9 || n > UINT32_MAX / 10)
            return false;
        n = n * 10 + d;
    }
    if (n > UINT32_MAX)
        return false;
    *addr = a;
    *size = (uint32_t)n;
    return true;
}

static int parse_line(struct llc_lackey_parser *p, const char *s, const char *e)
{
    p->lines++;
    if (e > s && e[-1] == '\r')
        e--;
    const size_t len = (size_t)(e - s);
    struct llc_trace_rec rec = {0};
    bool ok = false;
    if (len >= 4 && s[1] == ' ' && s[2] == ' ' && s[0] == 'I') {
        rec.kind = LLC_TRACE_INSTR;
        ok = parse_addr_size(s + 3, e, &rec.addr, &rec.size);
        if (ok)
            p->last_pc = rec.addr;
    } else if (len >= 4 && s[0] == ' ' && s[2] == ' ') {
        switch (s[1]) {
        case 'L':
            rec.kind = LLC_TRACE_LOAD;
            break;
        case 'S':
            rec.kind = LLC_TRACE_STORE;
            break;
        case 'M':
            rec.kind = LLC_TRACE_MODIFY;
            break;
        default:
            break;
        }
        ok = rec.kind != LLC_TRACE_INSTR && parse_addr_size(s + 3, e, &rec.addr, &rec.size);
        rec.pc = p->last_pc;
    } else if (len >= 2 && s[0] == s[1] && (s[0] == '=' || s[0] == '-' || s[0] == '*')) {
        p->valgrind_lines++;
        return 0;
    } else if (len == 0) {
        return 0;
    }
    if (!ok) {
        if (p->other_lines++ == 0) {
            const size_t n = len < sizeof(p->first_other) - 1 ? len : sizeof(p->first_other) - 1;
            memcpy(p->first_other, s, n);
            p->first_other[n] = '\0';
        }
        return 0;
    }
    p->records++;
    return p->emit(p->ctx, &rec);
}

void llc_lackey_init(struct llc_lackey_parser *p, llc_lackey_emit_fn emit, void *ctx)
{
    memset(p, 0, sizeof(*p));
    p->emit = emit;
    p->ctx = ctx;
}

/* Completes the carried line with [buf, nl) and parses it. */
static int finish_carry(struct llc_lackey_parser *p, const char *buf, const char *nl)
{
    const size_t add = (size_t)(nl - buf);
    int rc = 0;
    if (!p->carry_overflow && p->carry_len + add <= sizeof(p->carry)) {
        memcpy(p->carry + p->carry_len, buf, add);
        rc = parse_line(p, p->carry, p->carry + p->carry_len + add);
    } else {
        /* Lackey's lines are short: an overlong one is valgrind chatter. */
        p->lines++;
        p->other_lines++;
    }
    p->carry_len = 0;
    p->carry_overflow = 0;
    return rc;
}

int llc_lackey_feed(struct llc_lackey_parser *p, const char *buf, size_t len)
{
    const char *s = buf;
    const char *const end = buf + len;
    p->bytes += len;
    if (p->carry_len || p->carry_overflow) {
        const char *nl = memchr(s, '\n', len);
        if (!nl) {
            if (p->carry_len + len <= sizeof(p->carry)) {
                memcpy(p->carry + p->carry_len, s, len);
                p->carry_len += len;
            } else {
                p->carry_overflow = 1;
            }
            return 0;
        }
        const int rc = finish_carry(p, s, nl);
        if (rc < 0)
            return rc;
        s = nl + 1;
    }
    for (;;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl)
            break;
        const int rc = parse_line(p, s, nl);
        if (rc < 0)
            return rc;
        s = nl + 1;
    }
    const size_t rest = (size_t)(end - s);
    if (rest <= sizeof(p->carry)) {
        memcpy(p->carry, s, rest);
        p->carry_len = rest;
    } else {
        p->carry_overflow = 1;
    }
    return 0;
}

int llc_lackey_finish(struct llc_lackey_parser *p)
{
    if (!p->carry_len && !p->carry_overflow)
        return 0;
    const char *const end = p->carry + p->carry_len;
    return finish_carry(p, end, end);
}
