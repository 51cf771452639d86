/* The bundled demo workload: a small program with two distinct phases of
 * cache behaviour, short enough to trace under valgrind in seconds.
 *   phase A: streaming passes over a large array (no reuse within the LLC
 *            of a small cache, perfect spatial locality);
 *   phase B: random lookups in a hash table of a few hundred KiB (high reuse).
 * Usage: demo_app [scale [block]]   (scale 1 ~ 2 M memory references)
 * block: rounds of each phase run back to back (default 1: A B A B ...);
 * a large block makes each phase last long enough for live phase detection,
 * whose windows are tenths of a second of CPU time. Same checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    const long scale = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
    const long block = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if (scale < 1 || scale > 100000 || block < 1 || block > 100000) {
        fprintf(stderr, "demo_app: scale must be 1..100000, block 1..100000\n");
        return 2;
    }
    const size_t stream_len = (size_t)4 << 20; /* 4 MiB of bytes, read as 64-bit words */
    const size_t table_len = (size_t)48 << 10; /* 48 Ki entries x 8 B = 384 KiB */
    uint64_t *stream = malloc(stream_len);
    uint64_t *table = malloc(table_len * sizeof(uint64_t));
    if (!stream || !table) {
        fprintf(stderr, "demo_app: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < stream_len / 8; i++)
        stream[i] = i;
    for (size_t i = 0; i < table_len; i++)
        table[i] = i * 7;

    uint64_t sum = 0, seed = 42;
    for (long done = 0; done < 2 * scale; done += block) {
        const long n = 2 * scale - done < block ? 2 * scale - done : block;
        /* phase A: streaming passes, every 8th word (one per line) */
        for (long r = 0; r < n; r++)
            for (size_t i = 0; i < stream_len / 8; i += 8)
                sum += stream[i];
        /* phase B: random lookups */
        for (long r = 0; r < n; r++)
            for (int i = 0; i < 150000; i++)
                sum += table[next_random(&seed) % table_len];
    }
    printf("demo_app: checksum %llu\n", (unsigned long long)sum);
    free(stream);
    free(table);
    return 0;
}
