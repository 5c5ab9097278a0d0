/*
 * Timer sets from C: every bullet of Costello and Varghese's Figures 6 (setitimer) and 7
 * (getitimer) with ITIMER_MULTIREAL as its own named check, on the process-wide set through
 * cw_setitimer / cw_getitimer exactly as the paper's calls; then the clean API, bad input,
 * the quota, the descriptor with poll(), wait, callback, signal, missed periods and isolation
 * between two sets. Built and run by tests/c_api.rs against the static and the shared library.
 *
 * Timers are real (CLOCK_MONOTONIC) and short (milliseconds); waits are generous (seconds) and
 * no check depends on how late a timer fires. Exits 0 when every check passes; otherwise
 * prints the failing line and exits 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "callwheel.h"
#include "check.h"

#define EQ(actual, expected)                                                            \
    do {                                                                                \
        long long a_ = (long long)(actual), e_ = (long long)(expected);                 \
        checks++;                                                                       \
        if (a_ != e_) {                                                                 \
            fprintf(stderr, "%s:%d: %s is %lld, expected %s = %lld (errno %d)\n",       \
                    __FILE__, __LINE__, #actual, a_, #expected, e_, errno);             \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* A call of the compatibility surface that must fail with -1 and this errno. */
#define FAILS(call, err)                                                                \
    do {                                                                                \
        errno = 0;                                                                      \
        EQ((call), -1);                                                                 \
        EQ(errno, (err));                                                               \
    } while (0)

#define MS 1000000ull /* nanoseconds */

/* Generous bound for anything to happen (never a latency assertion). */
#define PATIENCE_MS 5000

static const struct timeval MINUS_ONE = {-1, -1};
static const struct timeval ZERO = {0, 0};

static struct timeval tv(long sec, long usec) {
    struct timeval t;
    memset(&t, 0, sizeof t);
    t.tv_sec = sec;
    t.tv_usec = usec;
    return t;
}

static struct timeval ms(long n) { return tv(n / 1000, n % 1000 * 1000); }

static struct itimerval itv(struct timeval value, struct timeval interval) {
    struct itimerval v;
    memset(&v, 0, sizeof v);
    v.it_value = value;
    v.it_interval = interval;
    return v;
}

static int same_tv(struct timeval a, struct timeval b) {
    return a.tv_sec == b.tv_sec && a.tv_usec == b.tv_usec;
}

static int same(const struct itimerval *a, const struct itimerval *b) {
    return same_tv(a->it_value, b->it_value) && same_tv(a->it_interval, b->it_interval);
}

static long long usec_of(struct timeval t) { return (long long)t.tv_sec * 1000000 + t.tv_usec; }

/* A label (or any 64 bits) as a timeval, and back. */
static struct timeval label(uint64_t bits) {
    struct timeval t;
    EQ(cw_timeval_from_bits(bits, &t), CW_OK);
    return t;
}

static uint64_t bits_of(struct timeval t) {
    uint64_t b = 0;
    EQ(cw_timeval_to_bits(&t, &b), CW_OK);
    return b;
}

static void pause_ms(long n) {
    struct timespec ts = {n / 1000, n % 1000 * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Whether `fd` is readable within `timeout_ms` (0: right now). */
static int readable(int fd, int timeout_ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    int n;
    do {
        n = poll(&p, 1, timeout_ms);
    } while (n < 0 && errno == EINTR);
    CHECK(n >= 0);
    return n == 1 && (p.revents & POLLIN);
}

/* The process-wide set's calls, exactly as the paper's. */
static int mr_set(const struct itimerval *value, struct itimerval *ovalue) {
    return cw_setitimer(CW_ITIMER_MULTIREAL, value, ovalue);
}

static int mr_get(struct itimerval *value) { return cw_getitimer(CW_ITIMER_MULTIREAL, value); }

/* Figure 6's create on the process-wide set: returns the handle. */
static struct timeval mr_create(struct timeval value, struct timeval interval, uint64_t lab) {
    struct itimerval v = itv(value, interval), o = itv(MINUS_ONE, label(lab));
    EQ(mr_set(&v, &o), 0);
    return o.it_value;
}

/* Figure 6's cancel on the process-wide set. */
static void mr_cancel(struct timeval handle) {
    struct itimerval v = itv(ZERO, ZERO), o = itv(handle, ZERO);
    EQ(mr_set(&v, &o), 0);
}

/* Waits until the process-wide set's queue is non-empty (its descriptor is readable). */
static void mr_wait_expiry(void) { CHECK(readable(cw_multireal_fd(), PATIENCE_MS)); }

/* Every check leaves the process-wide set empty: nothing running, nothing queued. */
static void mr_expect_empty(void) {
    size_t running = 99, queued = 99;
    EQ(cw_timerset_counts(cw_multireal_set(), &running, &queued), CW_OK);
    EQ(running, 0);
    EQ(queued, 0);
    CHECK(!readable(cw_multireal_fd(), 0));
}

static cw_timerset *make_set(size_t quota) {
    cw_timerset *s = NULL;
    EQ(cw_timerset_new(quota, CW_MISSED_BURST, &s), CW_OK);
    CHECK(s != NULL);
    return s;
}

/* ---- Figure 6: setitimer(ITIMER_MULTIREAL, value, ovalue) ---------------------------------- */

/* "ovalue must not be NULL; it must point to a struct itimerval." */
static void f6_ovalue_must_not_be_null(void) {
    struct itimerval v = itv(ms(10), ZERO);
    FAILS(mr_set(&v, NULL), EINVAL);
    struct itimerval o = itv(MINUS_ONE, label(1)), before = o;
    FAILS(mr_set(NULL, &o), EINVAL);
    CHECK(same(&o, &before));
    mr_expect_empty();
}

/* "If value->it_value is not zero, and ovalue->it_value is {-1, -1}, this is a
 * create-new-timer operation": the label comes from ovalue->it_interval, the kernel-chosen
 * handle is written to ovalue->it_value, the timer is initialised with value. */
static void f6_create(void) {
    struct itimerval v = itv(ms(20), ZERO), o = itv(MINUS_ONE, label(0x1234));
    EQ(mr_set(&v, &o), 0);
    struct timeval h = o.it_value;
    CHECK(!same_tv(h, MINUS_ONE));
    CHECK(!same_tv(h, ZERO));
    EQ(h.tv_usec, 0);
    CHECK(same_tv(o.it_interval, label(0x1234))); /* the label stays */
    struct itimerval g = itv(h, ZERO);
    EQ(mr_get(&g), 0);
    CHECK(usec_of(g.it_value) >= 0 && usec_of(g.it_value) <= 20000);
    CHECK(same_tv(g.it_interval, ZERO));
    mr_wait_expiry();
    struct itimerval r = itv(MINUS_ONE, ZERO);
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, h));
    EQ(bits_of(r.it_interval), 0x1234);
    mr_expect_empty();
}

/* "If value->it_value is not zero, and ovalue->it_value is not {-1, -1}, this is a
 * reset-existing-timer operation": the label may differ; value and label are overwritten;
 * ovalue is overwritten with the former value of the timer. */
static void f6_reset(void) {
    struct timeval h = mr_create(tv(10, 0), tv(3, 0), 1);
    struct itimerval v = itv(ms(15), ZERO), o = itv(h, label(2));
    EQ(mr_set(&v, &o), 0);
    /* The former value: up to 10 s remaining (some of it has passed), a 3 s interval. */
    CHECK(usec_of(o.it_value) > 0 && usec_of(o.it_value) <= 10000000);
    CHECK(same_tv(o.it_interval, tv(3, 0)));
    struct itimerval g = itv(h, ZERO);
    EQ(mr_get(&g), 0);
    CHECK(usec_of(g.it_value) <= 15000);
    CHECK(same_tv(g.it_interval, ZERO));
    mr_wait_expiry();
    struct itimerval r = itv(MINUS_ONE, ZERO);
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, h)); /* the timer kept its handle */
    EQ(bits_of(r.it_interval), 2); /* and has its new label */
    mr_expect_empty();
}

/* "The existing timer is removed from the expired timer queue (see getitimer()) if
 * necessary." */
static void f6_reset_removes_from_the_expired_queue(void) {
    struct timeval h = mr_create(ms(2), ZERO, 5);
    mr_wait_expiry();
    struct itimerval v = itv(tv(10, 0), ZERO), o = itv(h, label(6));
    EQ(mr_set(&v, &o), 0);
    CHECK(same_tv(o.it_value, ZERO)); /* it was queued: nothing remained */
    CHECK(!readable(cw_multireal_fd(), 0));
    struct itimerval r = itv(MINUS_ONE, ZERO);
    FAILS(mr_get(&r), EAGAIN);
    mr_cancel(h);
    mr_expect_empty();
}

/* "If the handle in ovalue->it_value did not refer to an existing timer, -1 is returned and
 * errno is set to EINVAL." */
static void f6_reset_of_a_bad_handle(void) {
    struct timeval live = mr_create(tv(10, 0), ZERO, 1);
    struct timeval gone = mr_create(tv(10, 0), ZERO, 2);
    mr_cancel(gone);
    cw_timerset *other = make_set(4);
    struct itimerval ov = itv(tv(10, 0), ZERO), oo = itv(MINUS_ONE, label(3));
    EQ(cw_setitimer_on(other, &ov, &oo), 0);
    struct timeval foreign = oo.it_value;
    struct timeval bad[] = {gone, foreign, tv(12345, 0), tv(live.tv_sec, 1), ZERO};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct itimerval v = itv(ms(5), ZERO), o = itv(bad[i], label(9)), before = o;
        FAILS(mr_set(&v, &o), EINVAL);
        CHECK(same(&o, &before));
    }
    struct itimerval g = itv(live, ZERO);
    EQ(mr_get(&g), 0);
    CHECK(g.it_value.tv_sec >= 8); /* untouched */
    g = itv(foreign, ZERO);
    EQ(cw_getitimer_on(other, &g), 0);
    CHECK(g.it_value.tv_sec >= 8);
    mr_cancel(live);
    EQ(cw_timerset_free(other), CW_OK);
    mr_expect_empty();
}

/* "If value->it_value is zero, this is a cancel-timer operation. value->it_interval and
 * ovalue->it_interval are ignored. [...] it is destroyed, and its final value is stored in
 * ovalue." */
static void f6_cancel(void) {
    struct timeval h = mr_create(tv(10, 0), tv(3, 0), 1);
    struct itimerval v = itv(ZERO, tv(77, 77)), o = itv(h, tv(-5, 123));
    EQ(mr_set(&v, &o), 0);
    CHECK(usec_of(o.it_value) > 0 && usec_of(o.it_value) <= 10000000);
    CHECK(same_tv(o.it_interval, tv(3, 0)));
    struct itimerval g = itv(h, ZERO);
    FAILS(mr_get(&g), EINVAL); /* destroyed */
    mr_expect_empty();
}

/* "Note that timers in the expired queue (see getitimer()) are still considered to exist." */
static void f6_cancel_of_a_queued_timer(void) {
    struct timeval h = mr_create(ms(2), ms(500), 1);
    mr_wait_expiry();
    struct itimerval g = itv(h, ZERO);
    EQ(mr_get(&g), 0); /* it exists */
    CHECK(same_tv(g.it_value, ZERO));
    struct itimerval v = itv(ZERO, ZERO), o = itv(h, ZERO);
    EQ(mr_set(&v, &o), 0);
    CHECK(same_tv(o.it_value, ZERO));
    CHECK(same_tv(o.it_interval, ms(500)));
    CHECK(!readable(cw_multireal_fd(), 0));
    struct itimerval r = itv(MINUS_ONE, ZERO);
    FAILS(mr_get(&r), EAGAIN); /* a cancelled timer is never reaped */
    mr_expect_empty();
}

/* "Otherwise, -1 is returned and errno is set to EINVAL." (cancel of a bad handle) */
static void f6_cancel_of_a_bad_handle(void) {
    struct timeval h = mr_create(tv(10, 0), ZERO, 1);
    mr_cancel(h);
    struct timeval bad[] = {h, MINUS_ONE, ZERO, tv(999, 0)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct itimerval v = itv(ZERO, ZERO), o = itv(bad[i], ZERO), before = o;
        FAILS(mr_set(&v, &o), EINVAL);
        CHECK(same(&o, &before));
    }
    mr_expect_empty();
}

/* ---- Figure 7: getitimer(ITIMER_MULTIREAL, value) ------------------------------------------ */

/* "value->it_value must be set by the user before the call. value->it_interval is
 * ignored." */
static void f7_it_interval_is_ignored(void) {
    struct timeval h = mr_create(tv(10, 0), tv(2, 0), 1);
    struct timeval garbage[] = {MINUS_ONE, tv(3, 4), tv(-8, 2000000)};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        struct itimerval g = itv(h, garbage[i]);
        EQ(mr_get(&g), 0);
        CHECK(g.it_value.tv_sec >= 8 && usec_of(g.it_value) <= 10000000);
        CHECK(same_tv(g.it_interval, tv(2, 0)));
    }
    mr_cancel(h);
    mr_expect_empty();
}

/* "If value->it_value is {-1, -1}, this is a reap-expired-timer operation. [...] This call
 * removes the timer at the head of the queue, writes its handle into value->it_value, and
 * writes its label into value->it_interval." Timers are queued in expiry order. */
static void f7_reap(void) {
    struct timeval late = mr_create(ms(30), ZERO, 300);
    struct timeval early = mr_create(ms(10), ZERO, 100);
    size_t queued = 0;
    for (int i = 0; i < PATIENCE_MS && queued < 2; i++) {
        pause_ms(1);
        EQ(cw_timerset_counts(cw_multireal_set(), NULL, &queued), CW_OK);
    }
    EQ(queued, 2);
    struct itimerval r = itv(MINUS_ONE, tv(5, 5));
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, early));
    EQ(bits_of(r.it_interval), 100);
    r = itv(MINUS_ONE, ZERO);
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, late));
    EQ(bits_of(r.it_interval), 300);
    mr_expect_empty();
}

/* "If the timer is not set up to reload, it is destroyed." */
static void f7_reap_destroys_a_one_shot_timer(void) {
    struct timeval h = mr_create(ms(2), ZERO, 1);
    mr_wait_expiry();
    struct itimerval r = itv(MINUS_ONE, ZERO);
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, h));
    struct itimerval g = itv(h, ZERO);
    FAILS(mr_get(&g), EINVAL);
    mr_expect_empty();
}

/* "otherwise it starts running again (its next expire time is based on its last expire time,
 * not on the time at which it was reaped)." Reaped at least 12 ms after an expiry, a 20 ms
 * timer has at most 8 ms left; restarted from the reap it would have about 20 ms. */
static void f7_reap_restarts_a_periodic_timer_from_its_last_expiry(void) {
    struct timeval h = mr_create(ms(20), ms(20), 7);
    mr_wait_expiry();
    pause_ms(12);
    struct itimerval r = itv(MINUS_ONE, ZERO);
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, h));
    EQ(bits_of(r.it_interval), 7);
    struct itimerval g = itv(h, ZERO);
    EQ(mr_get(&g), 0); /* it still exists */
    CHECK(usec_of(g.it_value) < 15000);
    CHECK(same_tv(g.it_interval, ms(20)));
    mr_cancel(h);
    mr_expect_empty();
}

/* "If the queue is empty, -1 is returned and errno is set to EAGAIN." */
static void f7_reap_of_an_empty_queue(void) {
    struct timeval h = mr_create(tv(10, 0), ZERO, 1); /* running, not queued */
    struct itimerval r = itv(MINUS_ONE, tv(4, 4)), before = r;
    FAILS(mr_get(&r), EAGAIN);
    CHECK(same(&r, &before));
    mr_cancel(h);
    mr_expect_empty();
}

/* "In all other cases, value->it_value is interpreted as a timer handle. If the handle is
 * valid and the timer exists, value is overwritten with the current timer value." */
static void f7_get(void) {
    struct timeval h = mr_create(tv(10, 0), ms(250), 1);
    struct itimerval g = itv(h, ZERO);
    EQ(mr_get(&g), 0);
    CHECK(usec_of(g.it_value) > 9000000 && usec_of(g.it_value) <= 10000000);
    CHECK(same_tv(g.it_interval, ms(250)));
    mr_cancel(h);
    /* A queued timer reads zero remaining. */
    h = mr_create(ms(2), ms(250), 2);
    mr_wait_expiry();
    g = itv(h, ZERO);
    EQ(mr_get(&g), 0);
    CHECK(same_tv(g.it_value, ZERO));
    CHECK(same_tv(g.it_interval, ms(250)));
    mr_cancel(h);
    mr_expect_empty();
}

/* "Otherwise, it is left untouched, -1 is returned, and errno is set to EINVAL." */
static void f7_get_of_a_bad_handle(void) {
    struct timeval h = mr_create(tv(10, 0), ZERO, 1);
    struct timeval bad[] = {tv(h.tv_sec, 1), tv(h.tv_sec + 1, 0), ZERO, tv(-1, 0), tv(42, 0)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct itimerval g = itv(bad[i], tv(8, 8)), before = g;
        FAILS(mr_get(&g), EINVAL);
        CHECK(memcmp(&g, &before, sizeof g) == 0);
    }
    mr_cancel(h);
    mr_expect_empty();
}

/* "When a process exits, all of its running and queued timers are destroyed." A set's owner
 * is its cw_timerset: freeing it destroys its running and queued timers and closes its
 * descriptor. (The process-wide set ends with the process: this program exits with timers in
 * it, see main.) */
static void f7_destroying_the_owner_destroys_its_timers(void) {
    cw_timerset *s = make_set(8);
    uint64_t h;
    EQ(cw_timer_create(s, 1 * MS, 0, 1, &h), CW_OK);              /* will be queued */
    EQ(cw_timer_create(s, 10000 * MS, 5 * MS, 2, &h), CW_OK);     /* running */
    int fd = cw_timerset_fd(s);
    CHECK(fd >= 0);
    CHECK(readable(fd, PATIENCE_MS));
    size_t running = 0, queued = 0;
    EQ(cw_timerset_counts(s, &running, &queued), CW_OK);
    EQ(running, 1);
    EQ(queued, 1);
    EQ(cw_timerset_free(s), CW_OK);
    errno = 0;
    EQ(fcntl(fd, F_GETFD), -1); /* the eventfd went with the set */
    EQ(errno, EBADF);
}

/* ---- The encoding, the process-wide set, libc ---------------------------------------------- */

static void handles_in_a_timeval(void) {
    CHECK(CW_ITIMER_MULTIREAL != ITIMER_REAL);
    CHECK(CW_ITIMER_MULTIREAL != ITIMER_VIRTUAL);
    CHECK(CW_ITIMER_MULTIREAL != ITIMER_PROF);
    if (sizeof(time_t) == 8) {
        struct timeval t = label(0x8000000000000005ull);
        CHECK(t.tv_sec == (time_t)0x8000000000000005ull && t.tv_usec == 0);
    }
    uint64_t samples[] = {0, 1, 0x123456789abcdefull, UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        EQ(bits_of(label(samples[i])), samples[i]);
    uint64_t b;
    struct timeval odd = tv(5, 1);
    if (sizeof(time_t) == 8)
        EQ(cw_timeval_to_bits(&odd, &b), CW_EINVAL);
    EQ(cw_timeval_to_bits(NULL, &b), CW_EINVAL);
    EQ(cw_timeval_from_bits(1, NULL), CW_EINVAL);
}

static void process_wide_set(void) {
    cw_timerset *s = cw_multireal_set();
    CHECK(s != NULL);
    CHECK(cw_multireal_set() == s);
    EQ(cw_timerset_free(s), CW_EINVAL); /* lives as long as the process */
    EQ(cw_multireal_init(16), CW_EBUSY);
    EQ(cw_multireal_fd(), cw_timerset_fd(s));
    /* Its clean-API handles and its setitimer handles are the same handles. */
    uint64_t h;
    EQ(cw_timer_create(s, 10000 * MS, 0, 55, &h), CW_OK);
    struct itimerval g = itv(label(h), ZERO);
    EQ(mr_get(&g), 0);
    CHECK(g.it_value.tv_sec >= 8);
    struct timeval t = mr_create(tv(10, 0), ZERO, 56);
    cw_timer_value v;
    EQ(cw_timer_get(s, bits_of(t), &v), CW_OK);
    CHECK(v.value_ns > 8000 * MS);
    EQ(cw_timer_cancel(s, h, NULL), CW_OK);
    EQ(cw_timer_cancel(s, bits_of(t), NULL), CW_OK);
    mr_expect_empty();
}

static void other_which_values_go_to_libc(void) {
    struct itimerval v = itv(MINUS_ONE, MINUS_ONE);
    EQ(cw_getitimer(ITIMER_REAL, &v), 0);
    CHECK(same_tv(v.it_value, ZERO)); /* nobody armed the real timer */
    struct itimerval far = itv(tv(3600, 0), ZERO), old = itv(MINUS_ONE, MINUS_ONE);
    EQ(cw_setitimer(ITIMER_REAL, &far, &old), 0);
    CHECK(same_tv(old.it_value, ZERO));
    EQ(cw_getitimer(ITIMER_REAL, &v), 0);
    CHECK(v.it_value.tv_sec > 3000);
    struct itimerval off = itv(ZERO, ZERO);
    EQ(cw_setitimer(ITIMER_REAL, &off, NULL), 0); /* disarmed before it could fire */
    FAILS(cw_getitimer(12345, &v), EINVAL);
}

static void itimer_bad_times_and_quota(void) {
    cw_timerset *s = make_set(1);
    struct timeval bad[] = {tv(-1, 0), tv(0, 1000000), tv(0, -1)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct itimerval v = itv(bad[i], ZERO), o = itv(MINUS_ONE, ZERO);
        FAILS(cw_setitimer_on(s, &v, &o), EINVAL);
        v = itv(ms(5), bad[i]);
        FAILS(cw_setitimer_on(s, &v, &o), EINVAL);
    }
    struct itimerval v = itv(tv(10, 0), ZERO), o = itv(MINUS_ONE, ZERO);
    if (sizeof(time_t) == 8) {
        o.it_interval = tv(5, 1); /* no label */
        FAILS(cw_setitimer_on(s, &v, &o), EINVAL);
        o.it_interval = ZERO;
    }
    EQ(cw_setitimer_on(s, &v, &o), 0);
    o = itv(MINUS_ONE, ZERO);
    FAILS(cw_setitimer_on(s, &v, &o), EAGAIN); /* the quota of 1 is used */
    FAILS(cw_setitimer_on(NULL, &v, &o), EINVAL);
    FAILS(cw_getitimer_on(NULL, &o), EINVAL);
    EQ(cw_timerset_free(s), CW_OK);
}

/* ---- The clean API ------------------------------------------------------------------------- */

static void clean_api_round_trip(void) {
    cw_timerset *s = make_set(0);
    uint64_t h = 0, got = 0, lab = 0;
    EQ(cw_timer_reap(s, &got, &lab), 0); /* empty */
    EQ(cw_timer_create(s, 10000 * MS, 2 * MS, 0xfeedull, &h), CW_OK);
    CHECK(h != 0 && h != UINT64_MAX);
    cw_timer_value v;
    EQ(cw_timer_get(s, h, &v), CW_OK);
    CHECK(v.value_ns > 9000 * MS && v.value_ns <= 10000 * MS);
    EQ(v.interval_ns, 2 * MS);
    cw_timer_value old;
    EQ(cw_timer_reset(s, h, 3 * MS, 0, 0xbeefull, &old), CW_OK);
    CHECK(old.value_ns > 9000 * MS);
    EQ(old.interval_ns, 2 * MS);
    EQ(cw_timerset_wait(s, PATIENCE_MS * (int64_t)MS), 1);
    EQ(cw_timer_reap(s, &got, &lab), 1);
    EQ(got, h);
    EQ(lab, 0xbeefull);
    EQ(cw_timer_get(s, h, &v), CW_EINVAL); /* a reaped one-shot is gone */
    EQ(cw_timer_reap(s, &got, NULL), 0);
    /* Cancel reports the final value. */
    EQ(cw_timer_create(s, 10000 * MS, 0, 1, &h), CW_OK);
    cw_timer_value last;
    EQ(cw_timer_cancel(s, h, &last), CW_OK);
    CHECK(last.value_ns > 9000 * MS);
    EQ(cw_timer_cancel(s, h, &last), CW_EINVAL);
    EQ(cw_timerset_free(s), CW_OK);
}

static void clean_api_bad_input(void) {
    cw_timerset *s = make_set(8), *other = make_set(8);
    uint64_t h, foreign, got;
    cw_timer_value v;
    EQ(cw_timer_create(s, 10000 * MS, 0, 1, &h), CW_OK);
    EQ(cw_timer_create(other, 10000 * MS, 0, 1, &foreign), CW_OK);
    /* NULL sets and out-pointers */
    EQ(cw_timerset_new(0, CW_MISSED_BURST, NULL), CW_EINVAL);
    EQ(cw_timer_create(NULL, MS, 0, 1, &got), CW_EINVAL);
    EQ(cw_timer_create(s, MS, 0, 1, NULL), CW_EINVAL);
    EQ(cw_timer_get(NULL, h, &v), CW_EINVAL);
    EQ(cw_timer_get(s, h, NULL), CW_EINVAL);
    EQ(cw_timer_reap(NULL, &got, NULL), CW_EINVAL);
    EQ(cw_timer_reap(s, NULL, NULL), CW_EINVAL);
    EQ(cw_timerset_fd(NULL), CW_EINVAL);
    EQ(cw_timerset_wait(NULL, 0), CW_EINVAL);
    EQ(cw_timerset_free(NULL), CW_OK);
    /* bad arguments */
    cw_timerset *none = (cw_timerset *)&none;
    EQ(cw_timerset_new(CW_TIMERSET_MAX_QUOTA + 1, CW_MISSED_BURST, &none), CW_EINVAL);
    CHECK(none == NULL);
    EQ(cw_timerset_new(4, 99, &none), CW_EINVAL);
    EQ(cw_timer_create(s, 0, MS, 1, &got), CW_EINVAL); /* zero value */
    EQ(cw_timer_create(s, UINT64_MAX, 0, 1, &got), CW_EINVAL);
    EQ(cw_timer_reset(s, h, 0, 0, 1, NULL), CW_EINVAL);
    EQ(cw_timer_set_missed(s, h, 42), CW_EINVAL);
    EQ(cw_timerset_set_signal(s, -3), CW_EINVAL);
    /* a handle of another set, and made-up handles */
    uint64_t bad[] = {foreign, 0, UINT64_MAX, h ^ (1ull << 40), h ^ (1ull << 39), 12345};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EQ(cw_timer_get(s, bad[i], &v), CW_EINVAL);
        EQ(cw_timer_reset(s, bad[i], MS, 0, 1, NULL), CW_EINVAL);
        EQ(cw_timer_cancel(s, bad[i], NULL), CW_EINVAL);
        EQ(cw_timer_set_missed(s, bad[i], CW_MISSED_SKIP), CW_EINVAL);
        EQ(cw_timer_overruns(s, bad[i], &got), CW_EINVAL);
    }
    EQ(cw_timer_get(s, h, &v), CW_OK);
    CHECK(v.value_ns > 9000 * MS);
    EQ(cw_timer_get(other, foreign, &v), CW_OK);
    CHECK(v.value_ns > 9000 * MS);
    size_t running, queued;
    EQ(cw_timerset_counts(s, &running, &queued), CW_OK);
    EQ(running, 1);
    EQ(cw_timerset_counts(other, &running, &queued), CW_OK);
    EQ(running, 1);
    EQ(cw_timerset_free(s), CW_OK);
    EQ(cw_timerset_free(other), CW_OK);
}

static void clean_api_quota(void) {
    cw_timerset *s = make_set(2);
    uint64_t a, b, c;
    EQ(cw_timer_create(s, 2 * MS, 0, 1, &a), CW_OK);
    EQ(cw_timer_create(s, 10000 * MS, 0, 2, &b), CW_OK);
    EQ(cw_timer_create(s, MS, 0, 3, &c), CW_ENOSPC);
    EQ(cw_timerset_wait(s, PATIENCE_MS * (int64_t)MS), 1);
    EQ(cw_timer_create(s, MS, 0, 3, &c), CW_ENOSPC); /* a queued timer still counts */
    uint64_t got;
    EQ(cw_timer_reap(s, &got, NULL), 1);
    EQ(got, a);
    EQ(cw_timer_create(s, MS, 0, 3, &c), CW_OK); /* reaping made room */
    EQ(cw_timerset_free(s), CW_OK);
}

static void clean_api_fd_with_poll(void) {
    cw_timerset *s = make_set(8);
    int fd = cw_timerset_fd(s);
    CHECK(fd >= 0);
    CHECK(!readable(fd, 0));
    uint64_t h, got;
    EQ(cw_timer_create(s, 5 * MS, 0, 1, &h), CW_OK);
    CHECK(readable(fd, PATIENCE_MS));
    CHECK(readable(fd, 0)); /* level: stays readable until reaped */
    EQ(cw_timer_reap(s, &got, NULL), 1);
    CHECK(!readable(fd, 0));
    EQ(cw_timerset_free(s), CW_OK);
}

static void clean_api_wait(void) {
    cw_timerset *s = make_set(8);
    EQ(cw_timerset_wait(s, 0), 0);
    EQ(cw_timerset_wait(s, 2 * (int64_t)MS), 0); /* times out */
    uint64_t h;
    EQ(cw_timer_create(s, 5 * MS, 0, 1, &h), CW_OK);
    EQ(cw_timerset_wait(s, -1), 1); /* no limit */
    EQ(cw_timerset_wait(s, 0), 1);
    EQ(cw_timerset_free(s), CW_OK);
}

static atomic_int callbacks;

static void on_expiry(void *arg) {
    CHECK(arg == &callbacks);
    atomic_fetch_add(&callbacks, 1);
}

static void clean_api_callback(void) {
    cw_timerset *s = make_set(8);
    EQ(cw_timerset_set_callback(s, on_expiry, &callbacks), CW_OK);
    uint64_t h;
    EQ(cw_timer_create(s, 3 * MS, 0, 1, &h), CW_OK);
    for (int i = 0; i < PATIENCE_MS && atomic_load(&callbacks) == 0; i++)
        pause_ms(1);
    EQ(atomic_load(&callbacks), 1);
    EQ(cw_timerset_set_callback(s, NULL, NULL), CW_OK);
    EQ(cw_timerset_free(s), CW_OK);
}

static volatile sig_atomic_t signalled;

static void on_signal(int signo) { signalled = signo; }

static void multireal_signal(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    EQ(cw_multireal_signal(-1), CW_EINVAL);
    EQ(cw_multireal_signal(SIGUSR1), CW_OK);
    struct timeval h = mr_create(ms(3), ZERO, 1);
    for (int i = 0; i < PATIENCE_MS && !signalled; i++)
        pause_ms(1);
    EQ(signalled, SIGUSR1);
    EQ(cw_multireal_signal(0), CW_OK);
    struct itimerval r = itv(MINUS_ONE, ZERO);
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, h));
    mr_expect_empty();
}

/* The sigwait idiom: the program blocks the signal (after the library's threads exist) and
 * waits for it. The signal must stay pending for the program, not be delivered to a thread of
 * the library, where the default action of SIGUSR2 would end the process. */
static void multireal_signal_with_sigwait(void) {
    sigset_t usr2, old;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    EQ(pthread_sigmask(SIG_BLOCK, &usr2, &old), 0);
    EQ(cw_multireal_signal(SIGUSR2), CW_OK);
    struct timeval h = mr_create(ms(2), ZERO, 1);
    mr_wait_expiry();
    pause_ms(20); /* the signal is sent before this program waits for it */
    struct timespec patience = {PATIENCE_MS / 1000, 0};
    EQ(sigtimedwait(&usr2, NULL, &patience), SIGUSR2);
    EQ(cw_multireal_signal(0), CW_OK);
    EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    struct itimerval r = itv(MINUS_ONE, ZERO);
    EQ(mr_get(&r), 0);
    CHECK(same_tv(r.it_value, h));
    mr_expect_empty();
}

static void clean_api_missed_periods(void) {
    cw_timerset *s = make_set(8);
    uint64_t h, got, n = 99;
    EQ(cw_timer_create(s, 5 * MS, 5 * MS, 1, &h), CW_OK);
    EQ(cw_timer_overruns(s, h, &n), CW_OK);
    EQ(n, 0);
    EQ(cw_timer_set_missed(s, h, CW_MISSED_SKIP), CW_OK);
    pause_ms(30); /* deadlines at 5, 10, 15, ... ms pass unreaped */
    EQ(cw_timer_reap(s, &got, NULL), 1);
    EQ(got, h);
    EQ(cw_timer_overruns(s, h, &n), CW_OK);
    CHECK(n >= 1); /* skipped, and counted */
    cw_timer_value v;
    EQ(cw_timer_get(s, h, &v), CW_OK);
    EQ(v.interval_ns, 5 * MS);
    EQ(cw_timerset_free(s), CW_OK);
}

/* Two owners: one's timers are never seen or touched through the other. */
static void isolation_between_two_sets(void) {
    cw_timerset *a = make_set(8), *b = make_set(8);
    uint64_t ha, hb, got, lab;
    EQ(cw_timer_create(a, 3 * MS, 0, 7, &ha), CW_OK);
    EQ(cw_timer_create(b, 3 * MS, 10000 * MS, 7, &hb), CW_OK);
    CHECK(ha != hb);
    EQ(cw_timerset_wait(a, PATIENCE_MS * (int64_t)MS), 1);
    EQ(cw_timerset_wait(b, PATIENCE_MS * (int64_t)MS), 1);
    /* Cross calls fail and change nothing, through both layers. */
    EQ(cw_timer_cancel(a, hb, NULL), CW_EINVAL);
    EQ(cw_timer_reset(b, ha, MS, 0, 1, NULL), CW_EINVAL);
    struct itimerval g = itv(label(hb), ZERO);
    FAILS(cw_getitimer_on(a, &g), EINVAL);
    struct itimerval v = itv(ZERO, ZERO), o = itv(label(ha), ZERO);
    FAILS(cw_setitimer_on(b, &v, &o), EINVAL);
    /* Each queue holds its own timer only. */
    EQ(cw_timer_reap(a, &got, &lab), 1);
    EQ(got, ha);
    EQ(cw_timer_reap(a, &got, &lab), 0);
    CHECK(readable(cw_timerset_fd(b), 0)); /* reaping a left b's queue alone */
    /* Freeing a leaves b alone. */
    EQ(cw_timerset_free(a), CW_OK);
    EQ(cw_timer_reap(b, &got, &lab), 1);
    EQ(got, hb);
    cw_timer_value val;
    EQ(cw_timer_get(b, hb, &val), CW_OK); /* periodic: running again */
    EQ(val.interval_ns, 10000 * MS);
    EQ(cw_timerset_free(b), CW_OK);
}

/* Several threads create timers on one set while the main thread reaps: every timer is
 * reaped exactly once, with its own label. */
#define THREADS 4
#define PER_THREAD 50

struct creator {
    cw_timerset *set;
    int index;
};

static void *create_many(void *arg) {
    const struct creator *c = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        uint64_t h;
        uint64_t lab = (uint64_t)(c->index * PER_THREAD + i);
        EQ(cw_timer_create(c->set, (uint64_t)(i % 5 + 1) * MS, 0, lab, &h), CW_OK);
    }
    return NULL;
}

static void threads_share_a_set(void) {
    cw_timerset *s = make_set(THREADS * PER_THREAD);
    static int seen[THREADS * PER_THREAD];
    memset(seen, 0, sizeof seen);
    pthread_t t[THREADS];
    struct creator c[THREADS];
    for (int i = 0; i < THREADS; i++) {
        c[i].set = s;
        c[i].index = i;
        EQ(pthread_create(&t[i], NULL, create_many, &c[i]), 0);
    }
    int reaped = 0;
    while (reaped < THREADS * PER_THREAD) {
        EQ(cw_timerset_wait(s, PATIENCE_MS * (int64_t)MS), 1);
        uint64_t h, lab;
        while (cw_timer_reap(s, &h, &lab) == 1) {
            CHECK(lab < THREADS * PER_THREAD);
            EQ(seen[lab], 0);
            seen[lab] = 1;
            reaped++;
        }
    }
    for (int i = 0; i < THREADS; i++)
        EQ(pthread_join(t[i], NULL), 0);
    size_t running = 99, queued = 99;
    EQ(cw_timerset_counts(s, &running, &queued), CW_OK);
    EQ(running + queued, 0);
    EQ(cw_timerset_free(s), CW_OK);
}

/* A fork: the child's copies of the parent's sets take no call that would arm, reap or wait
 * (CW_ESHUTDOWN, nothing reaped, no wait) and leave the parent's descriptor as it is; sets made
 * in the child, and its process-wide set, run on a runtime of the child's own; the parent's
 * timers keep firing. */
static void fork_gives_the_child_sets_of_its_own(void) {
    cw_timerset *s = make_set(0);
    uint64_t queued, pending, got, lab;
    EQ(cw_timer_create(s, MS, 0, 1, &queued), CW_OK);
    EQ(cw_timerset_wait(s, PATIENCE_MS * (int64_t)MS), 1); /* queued: the descriptor is up */
    EQ(cw_timer_create(s, 100 * MS, 0, 2, &pending), CW_OK);
    cw_timerset *parents_mr = cw_multireal_set();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(10); /* a lost wake-up ends the child with SIGALRM */
        uint64_t h;
        EQ(cw_timer_create(s, MS, 0, 3, &h), CW_ESHUTDOWN);
        EQ(cw_timer_reap(s, &got, &lab), 0);
        EQ(cw_timerset_wait(s, 0), 0);
        cw_timerset *mine = make_set(0);
        EQ(cw_timer_create(mine, 2 * MS, 0, 4, &h), CW_OK);
        EQ(cw_timerset_wait(mine, PATIENCE_MS * (int64_t)MS), 1);
        EQ(cw_timer_reap(mine, &got, &lab), 1);
        EQ(got, h);
        EQ(lab, 4);
        EQ(cw_timerset_free(mine), CW_OK);
        /* The child's process-wide set is its own, as setitimer's timers are not inherited. */
        cw_timerset *mr = cw_multireal_set();
        CHECK(mr != NULL && mr != parents_mr);
        mr_create(ms(2), ZERO, 5);
        mr_wait_expiry();
        struct itimerval g = itv(MINUS_ONE, ZERO);
        EQ(mr_get(&g), 0);
        EQ(bits_of(g.it_interval), 5);
        _exit(0);
    }
    int status = 0;
    EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The child left the parent's descriptor up, and the parent's timers fire. */
    CHECK(readable(cw_timerset_fd(s), 0));
    EQ(cw_timer_reap(s, &got, &lab), 1);
    EQ(got, queued);
    EQ(cw_timerset_wait(s, PATIENCE_MS * (int64_t)MS), 1);
    EQ(cw_timer_reap(s, &got, &lab), 1);
    EQ(got, pending);
    EQ(cw_timerset_free(s), CW_OK);
}

struct check {
    const char *id;
    const char *name;
    void (*run)(void);
};

static const struct check all[] = {
    {"F6.1", "setitimer: ovalue must not be NULL", f6_ovalue_must_not_be_null},
    {"F6.2", "setitimer: value non-zero and ovalue->it_value {-1,-1} creates (label from "
             "ovalue->it_interval, handle to ovalue->it_value)", f6_create},
    {"F6.3", "setitimer: value non-zero and ovalue->it_value a handle resets value and label, "
             "ovalue gets the former value", f6_reset},
    {"F6.4", "setitimer: reset removes the timer from the expired queue",
     f6_reset_removes_from_the_expired_queue},
    {"F6.5", "setitimer: reset of a handle that is no timer is -1/EINVAL",
     f6_reset_of_a_bad_handle},
    {"F6.6", "setitimer: value zero cancels (intervals ignored), final value into ovalue",
     f6_cancel},
    {"F6.7", "setitimer: queued timers still exist: cancel works on one",
     f6_cancel_of_a_queued_timer},
    {"F6.8", "setitimer: cancel of a handle that is no timer is -1/EINVAL",
     f6_cancel_of_a_bad_handle},
    {"F7.1", "getitimer: value->it_interval is ignored", f7_it_interval_is_ignored},
    {"F7.2", "getitimer: value->it_value {-1,-1} reaps the queue head (handle to it_value, "
             "label to it_interval)", f7_reap},
    {"F7.3", "getitimer: a reaped one-shot timer is destroyed",
     f7_reap_destroys_a_one_shot_timer},
    {"F7.4", "getitimer: a reaped periodic timer restarts from its last expiry, not the reap",
     f7_reap_restarts_a_periodic_timer_from_its_last_expiry},
    {"F7.5", "getitimer: reap of an empty queue is -1/EAGAIN", f7_reap_of_an_empty_queue},
    {"F7.6", "getitimer: a handle reads the timer's current value", f7_get},
    {"F7.7", "getitimer: a handle that is no timer is -1/EINVAL, value untouched",
     f7_get_of_a_bad_handle},
    {"F7.8", "getitimer: destroying the owner destroys its running and queued timers",
     f7_destroying_the_owner_destroys_its_timers},
    {"E.1", "handles and labels in a struct timeval", handles_in_a_timeval},
    {"E.2", "the process-wide set", process_wide_set},
    {"E.3", "other which values go to libc", other_which_values_go_to_libc},
    {"E.4", "setitimer_on: bad times, bad labels, the quota (EAGAIN), NULL sets",
     itimer_bad_times_and_quota},
    {"E.5", "SIGUSR1 when the process-wide queue becomes non-empty", multireal_signal},
    {"E.6", "the signal waits for a program that blocks it (sigtimedwait), no library thread "
            "takes it", multireal_signal_with_sigwait},
    {"C.1", "clean API: create, get, reset, wait, reap, cancel", clean_api_round_trip},
    {"C.2", "clean API: NULL, bad arguments, foreign and made-up handles", clean_api_bad_input},
    {"C.3", "clean API: the quota is CW_ENOSPC and queued timers count", clean_api_quota},
    {"C.4", "clean API: the descriptor with poll()", clean_api_fd_with_poll},
    {"C.5", "clean API: wait", clean_api_wait},
    {"C.6", "clean API: callback", clean_api_callback},
    {"C.7", "clean API: missed periods and overruns", clean_api_missed_periods},
    {"C.8", "isolation between two sets", isolation_between_two_sets},
    {"C.9", "threads creating on one set while another reaps: each timer reaped once",
     threads_share_a_set},
    {"C.10", "a fork: the parent's sets are copies in the child (CW_ESHUTDOWN), the child's own "
             "sets and process-wide set work, the parent's timers fire",
     fork_gives_the_child_sets_of_its_own},
};

int main(void) {
    EQ(CW_ENOSPC, -ENOSPC);
    EQ(CW_EINVAL, -EINVAL);
    EQ(CW_ESHUTDOWN, -ESHUTDOWN);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        all[i].run();
        printf("test_timerset: ok %s %s\n", all[i].id, all[i].name);
        fflush(stdout);
    }
    /* Exit with timers in the process-wide set, running and queued: they end with the process,
     * as the paper's end at exit(). */
    mr_create(ms(1), ZERO, 1);
    mr_create(tv(100, 0), ZERO, 2);
    mr_wait_expiry();
    printf("test_timerset: all %ld checks passed\n", (long)atomic_load(&checks));
    return 0;
}
