/* One or two threads (argv[1], default 1) each walking their own buffer of
 * 256 KiB argv[2] times (default 20), one read-modify-write per line: the
 * QEMU sampler samples each thread's stream; the QEMU trace recorder
 * refuses a second thread (one thread per trace). argv[1] "fork": one
 * thread, and a forked child that walks 10 times as often and exits
 * (the QEMU sampler records the parent only). argv[1] "shared": two
 * threads walking the same buffer (each samples its own stream; a line
 * both watch must stay watched for the one that has not reused it yet). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINES 4096

static int passes = 20;

static void *walk(void *arg)
{
    volatile char *buf = arg;
    for (int pass = 0; pass < passes; pass++)
        for (int i = 0; i < LINES; i++)
            buf[i * 64]++;
    return NULL;
}

int main(int argc, char **argv)
{
    const int shared = argc > 1 && strcmp(argv[1], "shared") == 0;
    const int two = shared || (argc > 1 && atoi(argv[1]) == 2);
    if (argc > 2)
        passes = atoi(argv[2]);
    char *a = calloc(LINES, 64), *b = calloc(LINES, 64);
    pthread_t t;
    if (!a || !b || (two && pthread_create(&t, NULL, walk, a) != 0))
        return 1;
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        const pid_t child = fork();
        if (child == 0) {
            passes *= 10;
            walk(a);
            _exit(0);
        }
        if (child < 0 || waitpid(child, NULL, 0) != child)
            return 1;
    }
    walk(shared ? a : b);
    if (two)
        pthread_join(t, NULL);
    printf("%d\n", a[0] + b[0]);
    free(a);
    free(b);
    return 0;
}
