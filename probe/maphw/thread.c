/* The pinned probe thread that runs every measurement, and the self-test's
 * aggressor thread. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "util/tsc.h"

struct llc_maphw_worker {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int cpu;
    int pin_rc; /* 0, or -errno of sched_setaffinity */
    bool started, quit;
    int (*fn)(void *); /* pending call, NULL when idle */
    void *arg;
    int result;
    bool done;
};

static int pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((unsigned)cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : -errno;
}

static void *worker_main(void *p)
{
    struct llc_maphw_worker *w = p;
    const int pin = pin_self(w->cpu);
    pthread_mutex_lock(&w->mu);
    w->pin_rc = pin;
    w->started = true;
    pthread_cond_broadcast(&w->cv);
    while (pin == 0 && !w->quit) {
        if (!w->fn) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        int (*fn)(void *) = w->fn;
        void *arg = w->arg;
        pthread_mutex_unlock(&w->mu);
        const int r = fn(arg);
        pthread_mutex_lock(&w->mu);
        w->fn = NULL;
        w->result = r;
        w->done = true;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int llc_maphw_worker_start(int cpu, struct llc_maphw_worker **out, char *err, size_t errlen)
{
    *out = NULL;
    struct llc_maphw_worker *w = calloc(1, sizeof(*w));
    if (!w)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    w->cpu = cpu;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    int rc = pthread_create(&w->thread, NULL, worker_main, w);
    if (rc != 0) {
        rc = llc_errf(err, errlen, -rc, "cannot start the probe thread: %s", strerror(rc));
        goto fail;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->started)
        pthread_cond_wait(&w->cv, &w->mu);
    rc = w->pin_rc;
    pthread_mutex_unlock(&w->mu);
    if (rc < 0) {
        pthread_join(w->thread, NULL);
        rc = llc_errf(err, errlen, rc, "cannot pin the probe thread to CPU %d: %s", cpu,
                      strerror(-rc));
        goto fail;
    }
    *out = w;
    return 0;
fail:
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return rc;
}

int llc_maphw_worker_call(struct llc_maphw_worker *w, int (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&w->mu);
    w->fn = fn;
    w->arg = arg;
    w->done = false;
    pthread_cond_broadcast(&w->cv);
    while (!w->done)
        pthread_cond_wait(&w->cv, &w->mu);
    const int r = w->result;
    pthread_mutex_unlock(&w->mu);
    return r;
}

void llc_maphw_worker_stop(struct llc_maphw_worker *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

struct llc_maphw_aggressor {
    pthread_t thread;
    int cpu;
    void *head;
    double period; /* TSC ticks per access, 0 = flat out */
    atomic_bool stop;
    atomic_int pin_rc; /* 1 = not yet known */
    uint64_t accesses;
};

/* One access per period: the co-runner's lines are touched at a known
 * rate, which the calibration curve is measured against. A late access
 * (the thread was switched out) goes at once; the schedule is kept, so
 * the mean rate holds. */
static uint64_t paced_chase(struct llc_maphw_aggressor *a, void *q)
{
    uint64_t n = 0;
#if LLC_HAVE_TSC
    struct llc_maphw_pace pace = {.start = llc_tsc_end(), .period = a->period};
    while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
        const uint64_t due = llc_maphw_pace_deadline(&pace, n);
        while (llc_tsc_end() < due)
            if (atomic_load_explicit(&a->stop, memory_order_relaxed))
                return n;
        q = *(void *const volatile *)q;
        n++;
    }
#else
    (void)a, (void)q; /* refused at start */
#endif
    return n;
}

static void *aggressor_main(void *p)
{
    struct llc_maphw_aggressor *a = p;
    const int pin = pin_self(a->cpu);
    atomic_store(&a->pin_rc, pin);
    if (pin < 0)
        return NULL;
    void *q = a->head;
    uint64_t n = 0;
    if (a->period > 0) {
        a->accesses = paced_chase(a, q);
        return NULL;
    }
    while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
        for (int k = 0; k < 64; k++)
            q = *(void *const volatile *)q;
        n += 64;
    }
    a->accesses = n;
    return NULL;
}

int llc_maphw_aggressor_start(int cpu, void *head, double period, struct llc_maphw_aggressor **out,
                              char *err, size_t errlen)
{
    *out = NULL;
    if (!(period >= 0) || (period > 0 && !LLC_HAVE_TSC))
        return llc_errf(err, errlen, -EINVAL, "a paced chase needs x86-64's TSC and a period >= 0");
    struct llc_maphw_aggressor *a = calloc(1, sizeof(*a));
    if (!a)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    a->cpu = cpu;
    a->head = head;
    a->period = period;
    atomic_init(&a->stop, false);
    atomic_init(&a->pin_rc, 1);
    int rc = pthread_create(&a->thread, NULL, aggressor_main, a);
    if (rc != 0) {
        free(a);
        return llc_errf(err, errlen, -rc, "cannot start the aggressor thread: %s", strerror(rc));
    }
    while ((rc = atomic_load(&a->pin_rc)) == 1)
        sched_yield();
    if (rc < 0) {
        pthread_join(a->thread, NULL);
        free(a);
        return llc_errf(err, errlen, rc, "cannot pin the aggressor thread to CPU %d: %s", cpu,
                        strerror(-rc));
    }
    *out = a;
    return 0;
}

uint64_t llc_maphw_aggressor_stop(struct llc_maphw_aggressor *a)
{
    if (!a)
        return 0;
    atomic_store(&a->stop, true);
    pthread_join(a->thread, NULL);
    const uint64_t n = a->accesses;
    free(a);
    return n;
}
