/* Exact set of touched cache lines: a bitmap per touched chunk of 2^18
 * lines (16 MiB of addresses, 32 KiB of bits), chunks in an
 * open-addressing table. Counts the distinct lines of a reference stream,
 * the cold misses of every cache size, so the curve's large-cache end
 * needs no dangling samples (docs/METHODS.md §7.2). Programs touch few chunks (heap,
 * stacks, libraries), so the lookup is nearly always a recent chunk's. */
#include <errno.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"

#define CHUNK_LOG2 18
#define CHUNK_WORDS ((size_t)1 << (CHUNK_LOG2 - 6))
#define RECENT 16 /* = 2^(64 - 60), recent_of's range */

struct llc_statmodel_lineset {
    uint64_t *key;   /* chunk + 1; 0 = empty */
    uint64_t **bits; /* the chunk's bitmap */
    uint64_t mask;   /* table size - 1 */
    unsigned shift;  /* 64 - log2(table size) */
    uint64_t chunks, lines;
    /* Chunks looked up lately, direct-mapped by key: a program's few
     * regions (heap, stack, data) alternate access by access. */
    struct {
        uint64_t key;
        uint64_t *bits;
    } recent[RECENT];
};

static uint64_t slot_of(const struct llc_statmodel_lineset *s, uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull) >> s->shift;
}

/* Hashed: regions far apart often share their low chunk bits. */
static unsigned recent_of(uint64_t key)
{
    return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 60);
}

static int alloc_table(struct llc_statmodel_lineset *s, unsigned bits)
{
    s->key = calloc((size_t)1 << bits, sizeof *s->key);
    s->bits = calloc((size_t)1 << bits, sizeof *s->bits);
    if (!s->key || !s->bits) {
        free(s->key);
        free(s->bits);
        return -ENOMEM;
    }
    s->mask = ((uint64_t)1 << bits) - 1;
    s->shift = 64 - bits;
    return 0;
}

int llc_statmodel_lineset_create(struct llc_statmodel_lineset **out, char *err, size_t errlen)
{
    struct llc_statmodel_lineset *s = calloc(1, sizeof *s);
    if (!s || alloc_table(s, 4) < 0) {
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
    for (uint64_t i = 0; i <= s->mask; i++)
        free(s->bits[i]);
    free(s->key);
    free(s->bits);
    free(s);
}

static uint64_t find(const struct llc_statmodel_lineset *s, uint64_t key)
{
    uint64_t j = slot_of(s, key);
    while (s->key[j] && s->key[j] != key)
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
        if (!old.key[i])
            continue;
        const uint64_t j = find(s, old.key[i]);
        s->key[j] = old.key[i];
        s->bits[j] = old.bits[i];
    }
    free(old.key);
    free(old.bits);
    return 0;
}

/* The bitmap of chunk key, created empty if new; NULL: out of memory. */
static uint64_t *chunk_of(struct llc_statmodel_lineset *s, uint64_t key)
{
    uint64_t j = find(s, key);
    if (!s->key[j]) {
        /* Load factor at most 1/2. */
        if (2 * (s->chunks + 1) > s->mask + 1) {
            if (grow(s) < 0)
                return NULL;
            j = find(s, key);
        }
        uint64_t *const b = calloc(CHUNK_WORDS, sizeof *b);
        if (!b)
            return NULL;
        s->key[j] = key;
        s->bits[j] = b;
        s->chunks++;
    }
    s->recent[recent_of(key)].key = key;
    s->recent[recent_of(key)].bits = s->bits[j];
    return s->bits[j];
}

int llc_statmodel_lineset_add(struct llc_statmodel_lineset *s, uint64_t line)
{
    const uint64_t key = (line >> CHUNK_LOG2) + 1;
    const unsigned r = recent_of(key);
    uint64_t *b = s->recent[r].bits;
    if (s->recent[r].key != key && !(b = chunk_of(s, key)))
        return -ENOMEM;
    const size_t i = (size_t)(line >> 6) & (CHUNK_WORDS - 1);
    const uint64_t bit = (uint64_t)1 << (line & 63);
    if (b[i] & bit)
        return 0;
    b[i] |= bit;
    s->lines++;
    return 1;
}

uint64_t llc_statmodel_lineset_count(const struct llc_statmodel_lineset *s)
{
    return s->lines;
}
