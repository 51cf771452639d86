/* The lackey text parser on a fixture from a real run (plus hand-written
 * edge cases), fed whole and in chunks of every awkward size, against an
 * independent sscanf reading of the same file. */
#include "trace/lackey.h"
#include "trace_test.h"

#define MAX_RECS 4096

struct collected {
    struct llc_trace_rec recs[MAX_RECS];
    size_t n;
};

static int collect(void *ctx, const struct llc_trace_rec *rec)
{
    struct collected *c = ctx;
    if (c->n == MAX_RECS)
        return -1;
    c->recs[c->n++] = *rec;
    return 0;
}

static char *read_fixture(size_t *len)
{
    const char *dir = getenv("LLCPROBE_FIXTURES");
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/lackey/small.txt", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *text = malloc(1 << 16);
    assert_non_null(text);
    *len = fread(text, 1, 1 << 16, f);
    fclose(f);
    text[*len] = '\0';
    return text;
}

/* The slow, obvious reading of lackey's format. */
static size_t reference_parse(const char *text, struct llc_trace_rec *out, size_t *valgrind_lines)
{
    size_t n = 0;
    uint64_t pc = 0;
    *valgrind_lines = 0;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        const size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[256] = "";
        memcpy(buf, line, len < 255 ? len : 255);
        unsigned long long addr;
        unsigned size;
        char kind, tail;
        if (sscanf(buf, "I  %llx,%u%c", &addr, &size, &tail) == 2) {
            out[n++] = (struct llc_trace_rec){.kind = LLC_TRACE_INSTR, .addr = addr, .size = size};
            pc = addr;
        } else if (sscanf(buf, " %c %llx,%u%c", &kind, &addr, &size, &tail) == 3 && buf[0] == ' ') {
            const uint8_t k = kind == 'L'   ? LLC_TRACE_LOAD
                              : kind == 'S' ? LLC_TRACE_STORE
                                            : LLC_TRACE_MODIFY;
            out[n++] = (struct llc_trace_rec){.kind = k, .addr = addr, .size = size, .pc = pc};
        } else if (buf[0] == buf[1] && (buf[0] == '=' || buf[0] == '-')) {
            (*valgrind_lines)++;
        }
        line += len + (nl ? 1 : 0);
    }
    return n;
}

static void parse_in_chunks(const char *text, size_t len, size_t chunk, struct collected *c,
                            struct llc_lackey_parser *p)
{
    c->n = 0;
    llc_lackey_init(p, collect, c);
    for (size_t at = 0; at < len; at += chunk)
        assert_int_equal(llc_lackey_feed(p, text + at, len - at < chunk ? len - at : chunk), 0);
    assert_int_equal(llc_lackey_finish(p), 0);
}

static void test_fixture_any_chunking(void **state)
{
    (void)state;
    size_t len, vg;
    char *text = read_fixture(&len);
    static struct llc_trace_rec want[MAX_RECS];
    const size_t n = reference_parse(text, want, &vg);
    assert_true(n > 50);
    static struct collected c;
    const size_t chunks[] = {1, 2, 3, 7, 13, 64, 4096, 1 << 20};
    for (size_t i = 0; i < LLC_ARRAY_LEN(chunks); i++) {
        struct llc_lackey_parser p;
        parse_in_chunks(text, len, chunks[i], &c, &p);
        assert_int_equal(c.n, n);
        for (size_t k = 0; k < n; k++)
            if (!trace_test_rec_equal(&c.recs[k], &want[k]) || c.recs[k].pc != want[k].pc)
                fail_msg("chunk %zu: record %zu differs", chunks[i], k);
        assert_int_equal(p.records, n);
        assert_int_equal(p.valgrind_lines, vg);
        assert_int_equal(p.other_lines, 1);
        assert_string_equal(p.first_other, "garbage line the parser must count but not trust");
        assert_int_equal(p.bytes, len);
    }
    free(text);
}

static const struct llc_trace_rec *find(const struct collected *c, uint64_t addr)
{
    for (size_t k = 0; k < c->n; k++)
        if (c->recs[k].addr == addr)
            return &c->recs[k];
    fail_msg("no record at 0x%llx", (unsigned long long)addr);
    return NULL;
}

/* The hand-written lines of the fixture, checked value by value. */
static void test_fixture_values(void **state)
{
    (void)state;
    size_t len;
    char *text = read_fixture(&len);
    static struct collected c;
    struct llc_lackey_parser p;
    parse_in_chunks(text, len, len, &c, &p);
    assert_int_equal(c.recs[0].kind, LLC_TRACE_INSTR);
    assert_int_equal(c.recs[0].addr, 0x0401ab70);
    assert_int_equal(c.recs[0].size, 3);
    const struct llc_trace_rec *r = find(&c, 0x7ffffffffffff000ull);
    assert_int_equal(r->kind, LLC_TRACE_LOAD);
    assert_int_equal(r->size, 10);
    assert_int_equal(r->pc, 0x0401b7a7);
    r = find(&c, 0);
    assert_int_equal(r->kind, LLC_TRACE_STORE);
    assert_int_equal(r->size, 512);
    r = find(&c, 0xabcdef);
    assert_int_equal(r->kind, LLC_TRACE_MODIFY);
    r = find(&c, 0xffffffffffffff00ull);
    assert_int_equal(r->kind, LLC_TRACE_INSTR);
    assert_int_equal(r->size, 15);
    r = find(&c, 0x1fff000678ull);
    assert_int_equal(r->size, 8); /* the first, real, one */
    free(text);
}

static void test_edge_lines(void **state)
{
    (void)state;
    static struct collected c;
    struct llc_lackey_parser p;
    const char *bad[] = {"I  xyz,3\n",  "I  0401,\n",
                         "I  ,4\n",     " L 12345678901234567,8\n",
                         " X 1000,8\n", "I  1000,99999999999\n",
                         "I 1000,4\n",  "hello\n"};
    for (size_t i = 0; i < LLC_ARRAY_LEN(bad); i++) {
        parse_in_chunks(bad[i], strlen(bad[i]), 1, &c, &p);
        if (c.n != 0 || p.other_lines != 1)
            fail_msg("'%s' was accepted", bad[i]);
    }
    /* CRLF, blank lines, and a last line without a newline. */
    const char ok[] = "I  10,4\r\n\n L 20,8\nI  ABCDEF0123456789,1";
    parse_in_chunks(ok, strlen(ok), 5, &c, &p);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.recs[1].pc, 0x10);
    assert_int_equal(c.recs[2].addr, 0xABCDEF0123456789ull);
    assert_int_equal(p.other_lines, 0);

    /* A line longer than the carry buffer, split across feeds, is skipped
     * without disturbing its neighbours. */
    char *longline = malloc(5000);
    assert_non_null(longline);
    memset(longline, 'x', 4000);
    strcpy(longline + 4000, "\nI  30,2\n");
    parse_in_chunks(longline, strlen(longline), 700, &c, &p);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.recs[0].addr, 0x30);
    assert_int_equal(p.other_lines, 1);
    free(longline);

    /* The sink's error stops the parse. */
    llc_lackey_init(&p, collect, &c);
    c.n = MAX_RECS;
    assert_int_equal(llc_lackey_feed(&p, "I  10,4\n", 8), -1);
}

static int put(void *ctx, const struct llc_trace_rec *rec)
{
    return llc_trace_writer_put(ctx, rec);
}

/* Fixture → trace file → records identical to the parser's. */
static void test_fixture_to_trace(void **state)
{
    (void)state;
    size_t len;
    char *text = read_fixture(&len);
    static struct collected c;
    struct llc_lackey_parser p;
    parse_in_chunks(text, len, len, &c, &p);

    char dir[64], path[128], err[LLC_ERRLEN];
    trace_test_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/small.trace", dir);
    struct llc_trace_info info = {.recorder = "lackey", .page_size = 4096};
    struct llc_trace_writer *w = NULL;
    assert_int_equal(llc_trace_writer_open(path, &info, &w, err, sizeof(err)), 0);
    llc_lackey_init(&p, put, w);
    assert_int_equal(llc_lackey_feed(&p, text, len), 0);
    assert_int_equal(llc_lackey_finish(&p), 0);
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof(err)), 0);
    size_t got;
    assert_int_equal(trace_test_read(path, c.recs, c.n, &got, err, sizeof(err)), 0);
    assert_int_equal(got, c.n);
    trace_test_rmdir(dir);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_any_chunking),
        cmocka_unit_test(test_fixture_values),
        cmocka_unit_test(test_edge_lines),
        cmocka_unit_test(test_fixture_to_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
