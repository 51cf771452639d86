/* libllcprobe-rt: libc's memory and string functions, interposed.
 *
 * clang's load/store callbacks see only the program's own code; the bytes
 * memcpy, strlen and the like read and write inside libc are references
 * too, and in string-heavy programs most of them. The program links this
 * archive before libc, so its calls (and those of any shared library, when
 * the executable exports the names) reach these wrappers, which feed the
 * ranges to the sampler, one access per cache line (rt_range), and then
 * call libc's function, found with dlsym in libc.so.6.
 *
 * Not seen: libc's calls to itself (printf's strlen, fread's memcpy:
 * bound inside libc), copies the compiler expands inline (small fixed
 * sizes: those are plain loads/stores, seen when clang instruments them,
 * not when the backend expands them), and the functions not listed here
 * (docs/RUNTIME-coverage.md).
 *
 * Calls before libc's function is found (or while dlsym itself runs) use
 * byte loops below; calls from inside the runtime are not fed (rt_hot.busy). */
#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dlfcn.h>
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "llcprobe/trace.h"
#include "rt/rt.h"

#define EXPORT __attribute__((visibility("default")))
#define PC() ((uint64_t)(uintptr_t)__builtin_return_address(0))
#define LD LLC_TRACE_LOAD
#define ST LLC_TRACE_STORE

/* Named by llcprobe-cc, like llc_rt_linked in rt.c: the program's own
 * copy of these functions, whatever a shared library exports. */
const char llc_rt_libc_linked = 1;

/* The fortified entry points (-D_FORTIFY_SOURCE, Debian's default). */
void *__memcpy_chk(void *d, const void *s, size_t n, size_t dn);
void *__memmove_chk(void *d, const void *s, size_t n, size_t dn);
void *__mempcpy_chk(void *d, const void *s, size_t n, size_t dn);
void *__memset_chk(void *d, int c, size_t n, size_t dn);
char *__strcpy_chk(char *d, const char *s, size_t dn);
char *__stpcpy_chk(char *d, const char *s, size_t dn);
char *__strncpy_chk(char *d, const char *s, size_t n, size_t dn);
char *__strcat_chk(char *d, const char *s, size_t dn);

static __thread unsigned resolving __attribute__((tls_model("initial-exec")));

/* From libc itself, not RTLD_NEXT: the next object may be a shared
 * library built with llcprobe-cc, whose copy of these wrappers would feed
 * the same bytes again. */
static void *resolve(const char *name)
{
    resolving++;
    void *f = NULL;
    void *const libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc) {
        f = dlsym(libc, name);
        dlclose(libc);
    }
    resolving--;
    return f;
}

/* libc's function, or NULL while it cannot be had (use the fallback). */
#define REAL(name)                                                             \
    static __typeof__(name) *real_##name;                                      \
    static __typeof__(name) *get_##name(void)                                  \
    {                                                                          \
        __typeof__(name) *f = __atomic_load_n(&real_##name, __ATOMIC_RELAXED); \
        if (!f && !resolving) {                                                \
            f = (__typeof__(name) *)resolve(#name);                            \
            __atomic_store_n(&real_##name, f, __ATOMIC_RELAXED);               \
        }                                                                      \
        return f;                                                              \
    }

REAL(memcpy)
REAL(memmove)
REAL(mempcpy)
REAL(memset)
REAL(memcmp)
REAL(bcmp)
REAL(memchr)
REAL(strlen)
REAL(strnlen)
REAL(strcmp)
REAL(strncmp)
REAL(strchr)
REAL(strrchr)
REAL(strcpy)
REAL(stpcpy)
REAL(strncpy)
REAL(strcat)
REAL(strncat)
REAL(memrchr)
REAL(rawmemchr)
REAL(strchrnul)
REAL(strspn)
REAL(strcspn)
REAL(strpbrk)
REAL(strstr)
REAL(memmem)
REAL(strcasecmp)
REAL(strncasecmp)
REAL(strdup)
REAL(strndup)
REAL(__memcpy_chk)
REAL(__memmove_chk)
REAL(__mempcpy_chk)
REAL(__memset_chk)
REAL(__strcpy_chk)
REAL(__stpcpy_chk)
REAL(__strncpy_chk)
REAL(__strcat_chk)

/* Byte loops for the fallbacks and for the extents; libc.c is compiled
 * with -fno-tree-loop-distribute-patterns so they do not become calls to
 * the functions they stand in for. */
static size_t bytes_len(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

static size_t bytes_nlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

static void bytes_move(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp < sp)
        for (size_t i = 0; i < n; i++)
            dp[i] = sp[i];
    else
        for (size_t i = n; i-- > 0;)
            dp[i] = sp[i];
}

/* Bytes memcmp(a, b, n) reads: up to and including the first difference. */
static size_t mem_extent(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    size_t i = 0;
    while (i < n && x[i] == y[i])
        i++;
    return i < n ? i + 1 : n;
}

static int fold_case(char c, bool fold)
{
    return fold ? tolower((unsigned char)c) : (unsigned char)c;
}

/* Bytes strncmp(a, b, max) (fold: strncasecmp) reads from each string. */
static size_t str_extent(const char *a, const char *b, size_t max, bool fold)
{
    size_t i = 0;
    while (i < max && a[i] && fold_case(a[i], fold) == fold_case(b[i], fold))
        i++;
    return i < max ? i + 1 : max;
}

static int bytes_cmp(const void *a, const void *b, size_t n)
{
    const size_t k = mem_extent(a, b, n);
    if (k == 0)
        return 0;
    const unsigned char x = ((const unsigned char *)a)[k - 1],
                        y = ((const unsigned char *)b)[k - 1];
    return x - y;
}

static int str_cmp(const char *a, const char *b, size_t max, bool fold)
{
    const size_t k = str_extent(a, b, max, fold);
    return k == 0 ? 0 : fold_case(a[k - 1], fold) - fold_case(b[k - 1], fold);
}

/* The bytes a string comparison reads, fed. */
static void str_feed(const char *a, const char *b, size_t max, bool fold, uint64_t pc)
{
    rt_range(a, LD, b, LD, str_extent(a, b, max, fold), pc);
}

static void copy(void *d, const void *s, size_t n, uint64_t pc)
{
    rt_range(s, LD, d, ST, n, pc);
}

EXPORT void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
    copy(d, s, n, PC());
    __typeof__(memcpy) *f = get_memcpy();
    if (f)
        return f(d, s, n);
    bytes_move(d, s, n);
    return d;
}

EXPORT void *memmove(void *d, const void *s, size_t n)
{
    copy(d, s, n, PC());
    __typeof__(memmove) *f = get_memmove();
    if (f)
        return f(d, s, n);
    bytes_move(d, s, n);
    return d;
}

EXPORT void *mempcpy(void *restrict d, const void *restrict s, size_t n)
{
    copy(d, s, n, PC());
    __typeof__(mempcpy) *f = get_mempcpy();
    if (f)
        return f(d, s, n);
    bytes_move(d, s, n);
    return (char *)d + n;
}

EXPORT void *memset(void *d, int c, size_t n)
{
    rt_range(d, ST, NULL, 0, n, PC());
    __typeof__(memset) *f = get_memset();
    if (f)
        return f(d, c, n);
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)d)[i] = (unsigned char)c;
    return d;
}

static int compare(const void *a, const void *b, size_t n,
                   int (*f)(const void *, const void *, size_t), uint64_t pc)
{
    const size_t k = mem_extent(a, b, n);
    rt_range(a, LD, b, LD, k, pc);
    return f ? f(a, b, n) : bytes_cmp(a, b, n);
}

EXPORT int memcmp(const void *a, const void *b, size_t n)
{
    return compare(a, b, n, get_memcmp(), PC());
}

/* clang turns memcmp(...) == 0 into bcmp. */
EXPORT int bcmp(const void *a, const void *b, size_t n)
{
    return compare(a, b, n, get_bcmp(), PC());
}

EXPORT void *memchr(const void *s, int c, size_t n)
{
    __typeof__(memchr) *f = get_memchr();
    const unsigned char *r = NULL;
    if (f)
        r = f(s, c, n);
    else
        for (size_t i = 0; i < n && !r; i++)
            if (((const unsigned char *)s)[i] == (unsigned char)c)
                r = (const unsigned char *)s + i;
    rt_range(s, LD, NULL, 0, r ? (size_t)(r - (const unsigned char *)s) + 1 : n, PC());
    return (void *)r;
}

EXPORT size_t strlen(const char *s)
{
    __typeof__(strlen) *f = get_strlen();
    const size_t n = f ? f(s) : bytes_len(s);
    rt_range(s, LD, NULL, 0, n + 1, PC());
    return n;
}

EXPORT size_t strnlen(const char *s, size_t max)
{
    __typeof__(strnlen) *f = get_strnlen();
    const size_t n = f ? f(s, max) : bytes_nlen(s, max);
    rt_range(s, LD, NULL, 0, n < max ? n + 1 : max, PC());
    return n;
}

EXPORT int strcmp(const char *a, const char *b)
{
    str_feed(a, b, SIZE_MAX, false, PC());
    __typeof__(strcmp) *f = get_strcmp();
    return f ? f(a, b) : str_cmp(a, b, SIZE_MAX, false);
}

EXPORT int strncmp(const char *a, const char *b, size_t max)
{
    str_feed(a, b, max, false, PC());
    __typeof__(strncmp) *f = get_strncmp();
    return f ? f(a, b, max) : str_cmp(a, b, max, false);
}

EXPORT char *strchr(const char *s, int c)
{
    __typeof__(strchr) *f = get_strchr();
    const char *r;
    if (f)
        r = f(s, c);
    else {
        r = s;
        while (*r != (char)c && *r)
            r++;
        if (*r != (char)c)
            r = NULL;
    }
    rt_range(s, LD, NULL, 0, r ? (size_t)(r - s) + 1 : bytes_len(s) + 1, PC());
    return (char *)r;
}

EXPORT char *strrchr(const char *s, int c)
{
    const size_t n = bytes_len(s);
    rt_range(s, LD, NULL, 0, n + 1, PC());
    __typeof__(strrchr) *f = get_strrchr();
    if (f)
        return f(s, c);
    for (size_t i = n + 1; i-- > 0;)
        if (s[i] == (char)c)
            return (char *)s + i;
    return NULL;
}

EXPORT char *strcpy(char *restrict d, const char *restrict s)
{
    const size_t n = bytes_len(s) + 1;
    copy(d, s, n, PC());
    __typeof__(strcpy) *f = get_strcpy();
    if (f)
        return f(d, s);
    bytes_move(d, s, n);
    return d;
}

EXPORT char *stpcpy(char *restrict d, const char *restrict s)
{
    const size_t n = bytes_len(s) + 1;
    copy(d, s, n, PC());
    __typeof__(stpcpy) *f = get_stpcpy();
    if (f)
        return f(d, s);
    bytes_move(d, s, n);
    return d + n - 1;
}

/* strncpy reads up to max bytes of s and writes exactly max bytes of d. */
static void ncopy(char *d, const char *s, size_t max, uint64_t pc)
{
    const size_t k = bytes_nlen(s, max);
    const size_t r = k < max ? k + 1 : max;
    copy(d, s, r, pc);
    rt_range(d + r, ST, NULL, 0, max - r, pc);
}

EXPORT char *strncpy(char *restrict d, const char *restrict s, size_t max)
{
    ncopy(d, s, max, PC());
    __typeof__(strncpy) *f = get_strncpy();
    if (f)
        return f(d, s, max);
    const size_t k = bytes_nlen(s, max);
    bytes_move(d, s, k);
    for (size_t i = k; i < max; i++)
        d[i] = '\0';
    return d;
}

/* strcat reads d to its end, then copies s (max bytes at most) there. */
static size_t cat(char *d, const char *s, size_t max, uint64_t pc)
{
    const size_t ld = bytes_len(d), ls = bytes_nlen(s, max);
    rt_range(d, LD, NULL, 0, ld, pc);
    copy(d + ld, s, ls < max ? ls + 1 : max, pc);
    rt_range(d + ld + ls, ST, NULL, 0, ls < max ? 0 : 1, pc);
    return ld;
}

EXPORT char *strcat(char *restrict d, const char *restrict s)
{
    const size_t ld = cat(d, s, SIZE_MAX, PC());
    __typeof__(strcat) *f = get_strcat();
    if (f)
        return f(d, s);
    bytes_move(d + ld, s, bytes_len(s) + 1);
    return d;
}

EXPORT char *strncat(char *restrict d, const char *restrict s, size_t max)
{
    const size_t ld = cat(d, s, max, PC());
    __typeof__(strncat) *f = get_strncat();
    if (f)
        return f(d, s, max);
    const size_t k = bytes_nlen(s, max);
    bytes_move(d + ld, s, k);
    d[ld + k] = '\0';
    return d;
}

/* Fortified forms: fed the same way, then libc's checking function (no
 * fallback: libc is loaded by the time a program calls them). */
EXPORT void *__memcpy_chk(void *d, const void *s, size_t n, size_t dn)
{
    copy(d, s, n, PC());
    return get___memcpy_chk()(d, s, n, dn);
}

EXPORT void *__memmove_chk(void *d, const void *s, size_t n, size_t dn)
{
    copy(d, s, n, PC());
    return get___memmove_chk()(d, s, n, dn);
}

EXPORT void *__mempcpy_chk(void *d, const void *s, size_t n, size_t dn)
{
    copy(d, s, n, PC());
    return get___mempcpy_chk()(d, s, n, dn);
}

EXPORT void *__memset_chk(void *d, int c, size_t n, size_t dn)
{
    rt_range(d, ST, NULL, 0, n, PC());
    return get___memset_chk()(d, c, n, dn);
}

EXPORT char *__strcpy_chk(char *d, const char *s, size_t dn)
{
    copy(d, s, bytes_len(s) + 1, PC());
    return get___strcpy_chk()(d, s, dn);
}

EXPORT char *__stpcpy_chk(char *d, const char *s, size_t dn)
{
    copy(d, s, bytes_len(s) + 1, PC());
    return get___stpcpy_chk()(d, s, dn);
}

EXPORT char *__strncpy_chk(char *d, const char *s, size_t n, size_t dn)
{
    ncopy(d, s, n, PC());
    return get___strncpy_chk()(d, s, n, dn);
}

EXPORT char *__strcat_chk(char *d, const char *s, size_t dn)
{
    cat(d, s, SIZE_MAX, PC());
    return get___strcat_chk()(d, s, dn);
}

/* ---- searches, case-blind comparisons and duplicates ------------------- */

EXPORT void *memrchr(const void *s, int c, size_t n)
{
    __typeof__(memrchr) *f = get_memrchr();
    const unsigned char *const p = s, *r = NULL;
    if (f)
        r = f(s, c, n);
    else
        for (size_t i = n; i-- > 0 && !r;)
            if (p[i] == (unsigned char)c)
                r = p + i;
    /* From the end back to the match. */
    const size_t from = r ? (size_t)(r - p) : 0;
    rt_range(p + from, LD, NULL, 0, n - from, PC());
    return (void *)r;
}

EXPORT void *rawmemchr(const void *s, int c)
{
    __typeof__(rawmemchr) *f = get_rawmemchr();
    const unsigned char *r = s;
    if (f)
        r = f(s, c);
    else
        while (*r != (unsigned char)c)
            r++;
    rt_range(s, LD, NULL, 0, (size_t)(r - (const unsigned char *)s) + 1, PC());
    return (void *)r;
}

EXPORT char *strchrnul(const char *s, int c)
{
    __typeof__(strchrnul) *f = get_strchrnul();
    const char *r = s;
    if (f)
        r = f(s, c);
    else
        while (*r != (char)c && *r)
            r++;
    rt_range(s, LD, NULL, 0, (size_t)(r - s) + 1, PC());
    return (char *)r;
}

/* strspn, strcspn and strpbrk read the set whole and s up to and including
 * the byte that ends the span. */
static void span(const char *s, size_t k, const char *set, uint64_t pc)
{
    rt_range(s, LD, NULL, 0, k + 1, pc);
    rt_range(set, LD, NULL, 0, bytes_len(set) + 1, pc);
}

static int in_set(const char *set, char ch)
{
    for (; *set; set++)
        if (*set == ch)
            return 1;
    return 0;
}

EXPORT size_t strspn(const char *s, const char *accept)
{
    __typeof__(strspn) *f = get_strspn();
    size_t k = 0;
    if (f)
        k = f(s, accept);
    else
        while (s[k] && in_set(accept, s[k]))
            k++;
    span(s, k, accept, PC());
    return k;
}

EXPORT size_t strcspn(const char *s, const char *reject)
{
    __typeof__(strcspn) *f = get_strcspn();
    size_t k = 0;
    if (f)
        k = f(s, reject);
    else
        while (s[k] && !in_set(reject, s[k]))
            k++;
    span(s, k, reject, PC());
    return k;
}

EXPORT char *strpbrk(const char *s, const char *accept)
{
    __typeof__(strpbrk) *f = get_strpbrk();
    const char *r = NULL;
    if (f)
        r = f(s, accept);
    else
        for (const char *p = s; *p && !r; p++)
            if (in_set(accept, *p))
                r = p;
    span(s, r ? (size_t)(r - s) : bytes_len(s), accept, PC());
    return (char *)r;
}

/* n bytes at a and b equal (the fallbacks' searches). */
static int same(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return 0;
    return 1;
}

/* Searches: the needle whole, the haystack to the end of the match (or
 * whole). libc's two-way search may skip bytes in between; a line it
 * skips entirely is fed anyway (a small overcount, never a line it did
 * not need to reach). */
EXPORT char *strstr(const char *h, const char *n)
{
    __typeof__(strstr) *f = get_strstr();
    const size_t ln = bytes_len(n), lh = bytes_len(h);
    const char *r = NULL;
    if (f)
        r = f(h, n);
    else
        for (size_t i = 0; ln <= lh && i <= lh - ln && !r; i++)
            if (same(h + i, n, ln))
                r = h + i;
    rt_range(n, LD, NULL, 0, ln + 1, PC());
    rt_range(h, LD, NULL, 0, r ? (size_t)(r - h) + ln : lh + 1, PC());
    return (char *)r;
}

EXPORT void *memmem(const void *h, size_t hl, const void *n, size_t nl)
{
    __typeof__(memmem) *f = get_memmem();
    const unsigned char *const hp = h, *r = NULL;
    if (f)
        r = f(h, hl, n, nl);
    else
        for (size_t i = 0; nl <= hl && i <= hl - nl && !r; i++)
            if (same(hp + i, n, nl))
                r = hp + i;
    rt_range(n, LD, NULL, 0, nl, PC());
    rt_range(h, LD, NULL, 0, r ? (size_t)(r - hp) + nl : hl, PC());
    return (void *)r;
}

EXPORT int strcasecmp(const char *a, const char *b)
{
    str_feed(a, b, SIZE_MAX, true, PC());
    __typeof__(strcasecmp) *f = get_strcasecmp();
    return f ? f(a, b) : str_cmp(a, b, SIZE_MAX, true);
}

EXPORT int strncasecmp(const char *a, const char *b, size_t max)
{
    str_feed(a, b, max, true, PC());
    __typeof__(strncasecmp) *f = get_strncasecmp();
    return f ? f(a, b, max) : str_cmp(a, b, max, true);
}

/* libc's strdup copies with its own memcpy, which no wrapper sees: the
 * copy is fed here. No fallback: malloc is libc's by the time a program
 * duplicates a string. */
EXPORT char *strdup(const char *s)
{
    char *const d = get_strdup()(s);
    if (d)
        copy(d, s, bytes_len(s) + 1, PC());
    return d;
}

EXPORT char *strndup(const char *s, size_t max)
{
    char *const d = get_strndup()(s, max);
    if (d) {
        const size_t k = bytes_nlen(s, max);
        copy(d, s, k, PC());
        rt_range(d + k, ST, NULL, 0, 1, PC());
    }
    return d;
}

/* ---- the allocator's copy --------------------------------------------- */

/* realloc that moves a block copies it inside libc, where no wrapper sees
 * it: min(the old block's usable size, n) bytes, read from the old block
 * and written to the new one (glibc's _int_realloc). A block glibc mapped
 * by itself (bit 2 of the size word before it) moves with mremap: the
 * kernel remaps the pages, nothing is copied. Only with glibc's allocator
 * (malloc as the program sees it is libc's): with another one the next
 * realloc in the search order is called and nothing is fed. Weak: a
 * program that defines realloc itself keeps its own. */
void *__libc_malloc(size_t n);
void *__libc_realloc(void *p, size_t n);

static void *(*real_realloc)(void *, size_t);

static void *(*realloc_fn(void))(void *, size_t)
{
    void *(*f)(void *, size_t) = __atomic_load_n(&real_realloc, __ATOMIC_RELAXED);
    if (f)
        return f;
    if (resolving) /* dlsym allocating: glibc's allocator is the only one that early */
        return __libc_realloc;
    resolving++;
    if (dlsym(RTLD_DEFAULT, "malloc") == (void *)__libc_malloc)
        f = __libc_realloc;
    else
        f = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    resolving--;
    __atomic_store_n(&real_realloc, f ? f : __libc_realloc, __ATOMIC_RELAXED);
    return f ? f : __libc_realloc;
}

__attribute__((weak)) EXPORT void *realloc(void *p, size_t n)
{
    void *(*const f)(void *, size_t) = realloc_fn();
    const bool glibc = f == __libc_realloc;
    const bool copies = p && glibc && !(((const size_t *)p)[-1] & 2);
    const size_t old = copies ? malloc_usable_size(p) : 0;
    void *const q = f(p, n);
    if (copies && q && q != p)
        copy(q, p, old < n ? old : n, PC());
    return q;
}
