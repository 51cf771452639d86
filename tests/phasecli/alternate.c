/* Two phases in turn, for the offline phase tests on real recorders (the
 * clang runtime's trace, the qemu recorder's, exp-bbv's vectors):
 *   alternate LEN RUNS
 * RUNS runs of LEN iterations, even runs in phase_a (sums a 4 KiB array:
 * one load per iteration), odd runs in phase_b (a random walk over a 4 MiB
 * table: a load and a store per iteration). The two loops are separate
 * functions, so their code addresses differ. Built non-PIE by the tests so
 * that the addresses, and the signature buckets they hash to, are the same
 * in every run. */
#include <stdio.h>
#include <stdlib.h>

#define SMALL 1024
#define LARGE (1 << 20)

static __attribute__((noinline)) long phase_a(volatile int *a, long len)
{
    long s = 0;
    for (long i = 0; i < len; i++)
        s += a[i & (SMALL - 1)] ^ (s >> 3);
    return s;
}

static __attribute__((noinline)) long phase_b(volatile int *t, long len)
{
    unsigned long x = 1;
    long s = 0;
    for (long i = 0; i < len; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        const unsigned long k = (x >> 40) & (LARGE - 1);
        s += t[k];
        t[k] = (int)(s * 3 + (long)k);
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: alternate LEN RUNS\n");
        return 2;
    }
    const long len = atol(argv[1]), runs = atol(argv[2]);
    int *a = calloc(SMALL, sizeof *a), *t = calloc(LARGE, sizeof *t);
    if (!a || !t)
        return 1;
    long s = 0;
    for (long r = 0; r < runs; r++)
        s += r % 2 ? phase_b(t, len) : phase_a(a, len);
    printf("%ld\n", s);
    free(a);
    free(t);
    return 0;
}
