/* The hardware backends' tests count this process's threads to check that
 * every probe, aggressor and co-runner thread is joined. */
#ifndef LLCPROBE_TESTS_MAPHW_THREADS_H
#define LLCPROBE_TESTS_MAPHW_THREADS_H

#include <dirent.h>
#include <time.h>

/* Threads of this process now (entries of /proc/self/task), -1 if unknown. */
static inline int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Threads of this process once they number `expected`, or the count after
 * 2 s.  pthread_join() returns when the kernel clears the thread's tid, which
 * is before the task leaves /proc/self/task, so a count taken right after a
 * join can still include the joined thread.  A thread that was never stopped
 * keeps running and is still counted after 2 s. */
static inline int threads_settled(int expected)
{
    const struct timespec nap = {0, 1000000};
    int n = threads_now();
    for (int i = 0; i < 2000 && n != expected; i++) {
        nanosleep(&nap, NULL);
        n = threads_now();
    }
    return n;
}

#endif
