/* Solving a linear (XOR) slice hash from congruence classes over GF(2).
 * Two congruent lines x, y have h(x) = h(y), so every mask is orthogonal to
 * x ^ y: the masks span the null space of all within-class differences.
 * When that space has exactly log2(slices) dimensions, any basis of it is
 * the hash up to an invertible relabelling of slices. Index bits never
 * differ within a class and only relabel the slices of one index, so they
 * are left out of the domain. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evset/evset_internal.h"
#include "llcprobe/common.h"

uint32_t llc_evset_hash_label(const struct llc_evset_hash *h, uint64_t paddr)
{
    uint32_t label = 0;
    for (unsigned b = 0; b < h->bits; b++)
        label |= (uint32_t)__builtin_parityll(paddr & h->masks[b]) << b;
    return label;
}

/* Row-echelon basis keyed by leading bit. */
struct gf2_basis {
    uint64_t row[64];
    unsigned rank;
};

static void basis_add(struct gf2_basis *b, uint64_t v)
{
    for (int bit = 63; bit >= 0 && v; bit--) {
        if (!(v >> bit & 1))
            continue;
        if (!b->row[bit]) {
            b->row[bit] = v;
            b->rank++;
            return;
        }
        v ^= b->row[bit];
    }
}

struct member {
    uint32_t cls;
    uint32_t index;
    uint32_t label;
    uint64_t paddr;
};

static int by_class(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return (x->cls > y->cls) - (x->cls < y->cls);
}

static int by_index_label(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->index != y->index)
        return (x->index > y->index) - (x->index < y->index);
    return (x->label > y->label) - (x->label < y->label);
}

int llc_evset_hash_solve(const uint64_t *paddrs, const uint32_t *class_of, size_t n,
                         unsigned line_size, unsigned sets_per_slice, unsigned slices,
                         uint64_t domain, struct llc_evset_hash *out, char *err, size_t errlen)
{
    if (!n || !line_size || !sets_per_slice || !slices || slices > (1u << LLC_EVSET_MAX_HASH_BITS))
        return llc_errf(err, errlen, -EINVAL, "hash solver: empty input or bad geometry");
    unsigned bits = 0;
    while ((1u << bits) < slices)
        bits++;
    const unsigned low = evset_log2(line_size) + evset_log2(sets_per_slice);
    const uint64_t above = low >= 64 ? 0 : ~((1ULL << low) - 1);
    const uint64_t index_mask = (uint64_t)sets_per_slice - 1;
    const unsigned line_bits = evset_log2(line_size);
    struct member *m = malloc(n * sizeof(*m));
    if (!m)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = 0;
    if (!domain)
        for (size_t i = 0; i < n; i++)
            domain |= (paddrs[i] ^ paddrs[0]) & above;
    domain &= above;
    for (size_t i = 0; i < n; i++)
        m[i] = (struct member){class_of[i], (uint32_t)((paddrs[i] >> line_bits) & index_mask), 0,
                               paddrs[i]};
    qsort(m, n, sizeof(*m), by_class);

    struct gf2_basis basis;
    memset(&basis, 0, sizeof(basis));
    size_t first = 0;
    for (size_t i = 1; i < n; i++) {
        if (m[i].cls != m[first].cls) {
            first = i;
            continue;
        }
        if (m[i].index != m[first].index) {
            rc = llc_errf(err, errlen, -EDOM, "class %u mixes indexes %u and %u", m[i].cls,
                          m[first].index, m[i].index);
            goto out;
        }
        basis_add(&basis, (m[i].paddr ^ m[first].paddr) & domain);
    }
    const unsigned dims = (unsigned)__builtin_popcountll(domain) - basis.rank;
    if (dims > bits) {
        rc = llc_errf(err, errlen, -EAGAIN,
                      "underdetermined: masks range over a %u-dimensional "
                      "space, %u bits wanted; more classes needed",
                      dims, bits);
        goto out;
    }
    if (dims < bits) {
        rc = llc_errf(err, errlen, -EDOM,
                      "no linear hash onto %u slices fits the classes "
                      "(solution space has %u of %u dimensions)",
                      slices, dims, bits);
        goto out;
    }
    /* Fully reduce, then each free column f gives the null vector with bit
     * f and, for every row that has f, that row's pivot bit. */
    for (int p = 63; p >= 0; p--) {
        if (!basis.row[p])
            continue;
        for (int q = 63; q >= 0; q--)
            if (q != p && basis.row[q] && (basis.row[q] >> p & 1))
                basis.row[q] ^= basis.row[p];
    }
    uint64_t pivots = 0;
    for (int p = 0; p < 64; p++)
        if (basis.row[p])
            pivots |= 1ULL << p;
    struct llc_evset_hash h;
    memset(&h, 0, sizeof(h));
    h.bits = bits;
    h.domain = domain;
    unsigned k = 0;
    for (int fcol = 0; fcol < 64 && k < bits; fcol++) {
        if (!(domain >> fcol & 1) || (pivots >> fcol & 1))
            continue;
        uint64_t v = 1ULL << fcol;
        for (int p = 0; p < 64; p++)
            if (basis.row[p] && (basis.row[p] >> fcol & 1))
                v |= 1ULL << p;
        h.masks[k++] = v;
    }
    /* The construction makes every class uniform; what can still fail is two
     * classes of one index landing on one label (a hash that is not linear,
     * or classes that are not distinct slices). */
    for (size_t i = 0; i < n; i++)
        m[i].label = llc_evset_hash_label(&h, m[i].paddr);
    for (size_t i = 1; i < n; i++)
        if (m[i].cls == m[i - 1].cls && m[i].label != m[i - 1].label) {
            rc = llc_errf(err, errlen, -EDOM, "class %u gets two labels", m[i].cls);
            goto out;
        }
    qsort(m, n, sizeof(*m), by_index_label);
    for (size_t i = 1; i < n; i++)
        if (m[i].index == m[i - 1].index && m[i].label == m[i - 1].label &&
            m[i].cls != m[i - 1].cls) {
            rc = llc_errf(err, errlen, -EDOM,
                          "classes %u and %u at index %u get the same slice "
                          "label %u: the hash is not linear",
                          m[i - 1].cls, m[i].cls, m[i].index, m[i].label);
            goto out;
        }
    *out = h;
out:
    free(m);
    return rc;
}
