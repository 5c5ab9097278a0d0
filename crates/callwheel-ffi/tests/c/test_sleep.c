/*
 * Sleeping with precision from C: cw_sleep_sbt (relative, absolute, CW_C_PREL) never returns
 * early, and the condition variable (cw_cv_*) wakes on a signal, a broadcast or its timeout,
 * with every documented error: NULL pointers, an unlocked mutex, negative times, unknown
 * flags, freeing a condition variable a thread is blocked on.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "callwheel.h"
#include "check.h"

static int64_t now_ns(void) {
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A CLOCK_MONOTONIC time in nanoseconds as sbt (rounded up, never early). */
static int64_t sbt_of_ns(int64_t ns) {
    uint64_t frac = (uint64_t)(ns % 1000000000) << 32; /* < 2^62: no overflow */
    return (ns / 1000000000) * CW_SBT_1S + (int64_t)((frac + 999999999) / 1000000000);
}

static void ok(const char *id, const char *what) { printf("test_sleep: ok %s %s\n", id, what); }

static void sleeps(void) {
    int64_t t0 = now_ns();
    EQ_CODE(cw_sleep_sbt(2 * CW_SBT_1MS, 0, 0), CW_OK);
    CHECK(now_ns() - t0 >= 2000000);
    t0 = now_ns();
    EQ_CODE(cw_sleep_sbt(3 * CW_SBT_1MS, CW_SBT_1MS, CW_C_PREL(2)), CW_OK);
    CHECK(now_ns() - t0 >= 3000000);
    ok("S.1", "relative sleeps, exact and with precision, never return early");

    int64_t until = now_ns() + 2000000;
    EQ_CODE(cw_sleep_sbt(sbt_of_ns(until), 0, CW_C_ABSOLUTE), CW_OK);
    CHECK(now_ns() >= until);
    t0 = now_ns();
    EQ_CODE(cw_sleep_sbt(sbt_of_ns(t0 - 1000000), 0, CW_C_ABSOLUTE | CW_C_PREL(1)), CW_OK);
    EQ_CODE(cw_sleep_sbt(0, 0, 0), CW_OK);
    ok("S.2", "absolute sleeps wait for their time; a time passed returns at once");

    EQ_CODE(cw_sleep_sbt(-1, 0, 0), CW_EINVAL);
    EQ_CODE(cw_sleep_sbt(CW_SBT_1MS, -1, 0), CW_EINVAL);
    EQ_CODE(cw_sleep_sbt(CW_SBT_1MS, 0, 0x4000), CW_EINVAL);
    EQ_CODE(cw_sleep_sbt(CW_SBT_1MS, 0, -1), CW_EINVAL);
    ok("S.3", "negative times and unknown flags are CW_EINVAL");
}

struct shared {
    pthread_mutex_t m;
    cw_cv *cv;
    int ready;
    int timed;
    int entered;
    int results[4];
};

/* Waits for `ready`, with a 10 s timeout when `timed` is set, else with none; records what the
 * last wait returned. */
static void *waiter(void *arg) {
    struct shared *s = arg;
    CHECK(pthread_mutex_lock(&s->m) == 0);
    int idx = s->entered++;
    int rc = CW_OK;
    while (!s->ready && rc == CW_OK)
        rc = s->timed ? cw_cv_timedwait_sbt(s->cv, &s->m, 10 * CW_SBT_1S, 0, 0)
                      : cw_cv_wait(s->cv, &s->m);
    s->results[idx] = rc;
    CHECK(pthread_mutex_unlock(&s->m) == 0);
    return NULL;
}

/* Blocks until `n` threads have entered their wait (they queue before releasing the mutex,
 * so once the count is seen under it, all of them are blocked). */
static void await_entered(struct shared *s, int n) {
    for (;;) {
        CHECK(pthread_mutex_lock(&s->m) == 0);
        int e = s->entered;
        CHECK(pthread_mutex_unlock(&s->m) == 0);
        if (e >= n)
            return;
        EQ_CODE(cw_sleep_sbt(CW_SBT_1MS / 10, 0, 0), CW_OK);
    }
}

static void condition_variables(void) {
    struct shared s = {.m = PTHREAD_MUTEX_INITIALIZER};
    EQ_CODE(cw_cv_new(NULL), CW_EINVAL);
    EQ_CODE(cw_cv_new(&s.cv), CW_OK);
    EQ_CODE(cw_cv_signal(s.cv), 0);
    EQ_CODE(cw_cv_broadcast(s.cv), 0);
    EQ_CODE(cw_cv_free(NULL), CW_OK);
    ok("C.1", "a new condition variable has no waiters");

    CHECK(pthread_mutex_lock(&s.m) == 0);
    int64_t t0 = now_ns();
    EQ_CODE(cw_cv_timedwait_sbt(s.cv, &s.m, 2 * CW_SBT_1MS, 0, CW_C_PREL(3)), CW_ETIMEDOUT);
    CHECK(now_ns() - t0 >= 2000000);
    CHECK(pthread_mutex_trylock(&s.m) == EBUSY); /* locked again */
    EQ_CODE(cw_cv_timedwait_sbt(s.cv, &s.m, sbt_of_ns(now_ns() - 1), 0, CW_C_ABSOLUTE),
            CW_ETIMEDOUT);
    CHECK(pthread_mutex_trylock(&s.m) == EBUSY);
    CHECK(pthread_mutex_unlock(&s.m) == 0);
    ok("C.2", "a timed wait times out no earlier than its time, the mutex locked again");

    pthread_t t;
    s.timed = 1;
    CHECK(pthread_create(&t, NULL, waiter, &s) == 0);
    await_entered(&s, 1);
    CHECK(pthread_mutex_lock(&s.m) == 0);
    s.ready = 1;
    CHECK(pthread_mutex_unlock(&s.m) == 0);
    EQ_CODE(cw_cv_signal(s.cv), 1);
    CHECK(pthread_join(t, NULL) == 0);
    EQ_CODE(s.results[0], CW_OK);
    ok("C.3", "a signal ends a timed wait before its timeout");

    s.ready = 0;
    s.timed = 0;
    s.entered = 0;
    pthread_t ts[3];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&ts[i], NULL, waiter, &s) == 0);
    await_entered(&s, 3);
    EQ_CODE(cw_cv_free(s.cv), CW_EBUSY); /* threads are blocked on it: nothing freed */
    CHECK(pthread_mutex_lock(&s.m) == 0);
    s.ready = 1;
    CHECK(pthread_mutex_unlock(&s.m) == 0);
    EQ_CODE(cw_cv_broadcast(s.cv), 3);
    for (int i = 0; i < 3; i++) {
        CHECK(pthread_join(ts[i], NULL) == 0);
        EQ_CODE(s.results[i], CW_OK);
    }
    ok("C.4", "a broadcast wakes every waiter; freeing while they wait is CW_EBUSY");

    EQ_CODE(cw_cv_wait(NULL, &s.m), CW_EINVAL);
    EQ_CODE(cw_cv_wait(s.cv, NULL), CW_EINVAL);
    EQ_CODE(cw_cv_wait(s.cv, &s.m), CW_EINVAL); /* not locked */
    EQ_CODE(cw_cv_timedwait_sbt(s.cv, &s.m, CW_SBT_1MS, 0, 0), CW_EINVAL);
    CHECK(pthread_mutex_trylock(&s.m) == 0); /* still unlocked, and now ours */
    EQ_CODE(cw_cv_timedwait_sbt(s.cv, &s.m, -1, 0, 0), CW_EINVAL);
    EQ_CODE(cw_cv_timedwait_sbt(s.cv, &s.m, CW_SBT_1MS, -1, 0), CW_EINVAL);
    EQ_CODE(cw_cv_timedwait_sbt(s.cv, &s.m, CW_SBT_1MS, 0, 0x4000), CW_EINVAL);
    CHECK(pthread_mutex_trylock(&s.m) == EBUSY); /* an error leaves it held */
    CHECK(pthread_mutex_unlock(&s.m) == 0);
    EQ_CODE(cw_cv_signal(NULL), CW_EINVAL);
    EQ_CODE(cw_cv_broadcast(NULL), CW_EINVAL);
    ok("C.5", "NULL pointers, an unlocked mutex, bad times and flags are CW_EINVAL");

    EQ_CODE(cw_cv_free(s.cv), CW_OK);
    CHECK(pthread_mutex_destroy(&s.m) == 0);
}

int main(void) {
    sleeps();
    condition_variables();
    printf("test_sleep: all %ld checks passed\n", (long)checks);
    return 0;
}
