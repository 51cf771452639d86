/* A target with two distinct phases for the phase CLI tests: integer
 * hashing code and floating-point code, each run for a given CPU time,
 * alternating A B A B ... Options (argv): per-phase milliseconds, rounds,
 * and a mode: "plain", "fork" (each phase in a forked child, the second in
 * an exec'd copy of this program), "exit" (exit after the first 5 ms). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile uint64_t sink_u;
static volatile double sink_d;

/* Phase A: integer mixing in a tight loop of its own. */
static __attribute__((noinline)) void phase_a(double ms)
{
    const double end = cpu_ms() + ms;
    uint64_t x = 88172645463325252ULL;
    while (cpu_ms() < end)
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (x & 1)
                x += 0x9E3779B97F4A7C15ULL;
        }
    sink_u = x;
}

/* Phase B: floating point over a small array, different code entirely. */
static __attribute__((noinline)) void phase_b(double ms)
{
    static double v[4096];
    const double end = cpu_ms() + ms;
    double acc = 0;
    for (int i = 0; i < 4096; i++)
        v[i] = i * 0.5;
    while (cpu_ms() < end)
        for (int r = 0; r < 4; r++)
            for (int i = 1; i < 4096; i++) {
                v[i] = sqrt(v[i] * 1.0001 + v[i - 1] * 0.25);
                acc += v[i];
            }
    sink_d = acc;
}

int main(int argc, char **argv)
{
    const double ms = argc > 1 ? atof(argv[1]) : 300;
    const int rounds = argc > 2 ? atoi(argv[2]) : 2;
    const char *mode = argc > 3 ? argv[3] : "plain";
    if (strcmp(mode, "exit") == 0) {
        phase_a(5);
        return 3;
    }
    if (strcmp(mode, "b-only") == 0) {
        phase_b(ms);
        return 0;
    }
    for (int r = 0; r < rounds; r++) {
        if (strcmp(mode, "fork") == 0) {
            /* A in a forked child, B in an exec'd copy: both must be seen. */
            pid_t p = fork();
            if (p == 0) {
                phase_a(ms);
                _exit(0);
            }
            waitpid(p, NULL, 0);
            p = fork();
            if (p == 0) {
                char arg[32];
                snprintf(arg, sizeof(arg), "%g", ms);
                execl("/proc/self/exe", argv[0], arg, "1", "b-only", (char *)NULL);
                _exit(127);
            }
            waitpid(p, NULL, 0);
        } else {
            phase_a(ms);
            phase_b(ms);
        }
    }
    return 0;
}
