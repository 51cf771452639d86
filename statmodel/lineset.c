/* Exact set of touched cache lines: one 64-bit bitmap per touched 4 KiB
 * page (64 lines), pages in an open-addressing table. Counts the distinct
 * lines of a reference stream, the cold misses of every cache size, so
 * the curve's large-cache end needs no dangling samples (spec §3.2). */
#include <errno.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"

struct llc_statmodel_lineset {
    uint64_t *page;  /* page + 1; 0 = empty */
    uint64_t *bits;  /* line bitmap of the page */
    uint64_t mask;   /* table size - 1 */
    unsigned shift;  /* 64 - log2(table size) */
    uint64_t pages, lines;
    uint64_t last;   /* slot of the last page looked up (streams stay in a page) */
};

static uint64_t slot_of(const struct llc_statmodel_lineset *s, uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull) >> s->shift;
}

static int alloc_table(struct llc_statmodel_lineset *s, unsigned bits)
{
    s->page = calloc((size_t)1 << bits, sizeof *s->page);
    s->bits = calloc((size_t)1 << bits, sizeof *s->bits);
    if (!s->page || !s->bits) {
        free(s->page);
        free(s->bits);
        return -ENOMEM;
    }
    s->mask = ((uint64_t)1 << bits) - 1;
    s->shift = 64 - bits;
    s->last = 0;
    return 0;
}

int llc_statmodel_lineset_create(struct llc_statmodel_lineset **out, char *err, size_t errlen)
{
    struct llc_statmodel_lineset *s = calloc(1, sizeof *s);
    if (!s || alloc_table(s, 10) < 0) {
        free(s);
        return llc_errf(err, errlen, -ENOMEM, "line set: out of memory");
    }
    *out = s;
    return 0;
}

void llc_statmodel_lineset_destroy(struct llc_statmodel_lineset *s)
{
    if (!s)
        return;
    free(s->page);
    free(s->bits);
    free(s);
}

static uint64_t find(const struct llc_statmodel_lineset *s, uint64_t key)
{
    uint64_t j = slot_of(s, key);
    while (s->page[j] && s->page[j] != key)
        j = (j + 1) & s->mask;
    return j;
}

static int grow(struct llc_statmodel_lineset *s)
{
    struct llc_statmodel_lineset old = *s;
    if (alloc_table(s, 64 - s->shift + 1) < 0) {
        *s = old;
        return -ENOMEM;
    }
    for (uint64_t i = 0; i <= old.mask; i++) {
        if (!old.page[i])
            continue;
        const uint64_t j = find(s, old.page[i]);
        s->page[j] = old.page[i];
        s->bits[j] = old.bits[i];
    }
    free(old.page);
    free(old.bits);
    return 0;
}

int llc_statmodel_lineset_add(struct llc_statmodel_lineset *s, uint64_t line)
{
    const uint64_t key = (line >> 6) + 1, bit = (uint64_t)1 << (line & 63);
    uint64_t j = s->last;
    if (s->page[j] != key) {
        j = find(s, key);
        if (!s->page[j]) {
            /* Load factor at most 1/2. */
            if (2 * (s->pages + 1) > s->mask + 1) {
                if (grow(s) < 0)
                    return -ENOMEM;
                j = find(s, key);
            }
            s->page[j] = key;
            s->pages++;
        }
        s->last = j;
    }
    if (s->bits[j] & bit)
        return 0;
    s->bits[j] |= bit;
    s->lines++;
    return 1;
}

uint64_t llc_statmodel_lineset_count(const struct llc_statmodel_lineset *s)
{
    return s->lines;
}
