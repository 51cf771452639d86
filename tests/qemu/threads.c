/* Two threads each walking their own buffer: the QEMU sampler samples each
 * thread's stream; the QEMU trace recorder refuses (one thread per trace). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define LINES 4096

static void *walk(void *arg)
{
    volatile char *buf = arg;
    for (int pass = 0; pass < 20; pass++)
        for (int i = 0; i < LINES; i++)
            buf[i * 64]++;
    return NULL;
}

int main(void)
{
    char *a = calloc(LINES, 64), *b = calloc(LINES, 64);
    pthread_t t;
    if (!a || !b || pthread_create(&t, NULL, walk, a) != 0)
        return 1;
    walk(b);
    pthread_join(t, NULL);
    printf("%d\n", a[0] + b[0]);
    free(a);
    free(b);
    return 0;
}
