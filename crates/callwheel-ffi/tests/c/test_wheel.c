/*
 * The caller-driven wheel (cw_wheel_*) from C: every function with good and bad input, the
 * order and windows of expiries, handles of other wheels, a full fixed capacity, memory
 * refused under RLIMIT_AS, a fork, an epoll-shaped loop on CLOCK_MONOTONIC, and a random run
 * against a brute-force model. Built and run by tests/c_api.rs against the static and the
 * shared library. Exits 0 when every check passes; otherwise prints the failing line, exits 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "callwheel.h"
#include "check.h"

/* AddressSanitizer reserves terabytes of shadow memory: no RLIMIT_AS test under it. */
#if defined(__SANITIZE_ADDRESS__)
#define RLIMIT_TESTS 0
#else
#define RLIMIT_TESTS 1
#endif

#define EQ EQ_CODE

static cw_wheel *make(size_t capacity, uint64_t now) {
    cw_wheel *w = NULL;
    EQ(cw_wheel_new(capacity, now, &w), CW_OK);
    CHECK(w != NULL);
    return w;
}

static void expect_valid(cw_wheel *w) {
    char why[128] = "";
    EQ(cw_wheel_check(w, why, sizeof why), CW_OK);
}

/* Pulls everything due and checks the values come out as `values` (n of them). */
static void expect_pull(int line, cw_wheel *w, int n, const uint64_t *values) {
    cw_expiry e;
    for (int i = 0; i < n; i++) {
        if (cw_wheel_get(w, &e) != 1 || e.value != values[i]) {
            fprintf(stderr, "line %d: expiry %d is not value %llu\n", line, i,
                    (unsigned long long)values[i]);
            exit(1);
        }
        checks++;
    }
    EQ(cw_wheel_get(w, &e), 0);
    expect_valid(w);
}
#define PULL(w, ...)                                                                    \
    do {                                                                                \
        const uint64_t v_[] = {__VA_ARGS__};                                            \
        expect_pull(__LINE__, w, (int)(sizeof v_ / sizeof v_[0]), v_);                  \
    } while (0)

static void test_null_arguments(void) {
    cw_wheel *w = make(0, 0);
    cw_handle h = {0, 0};
    cw_expiry e;
    cw_wheel_info info;
    uint64_t t;
    EQ(cw_wheel_new(0, 0, NULL), CW_EINVAL);
    EQ(cw_wheel_add(NULL, 1, 0, 0, &h), CW_EINVAL);
    EQ(cw_wheel_add(w, 1, 0, 0, NULL), CW_EINVAL);
    EQ(cw_wheel_add_in(NULL, 1, 0, 0, &h), CW_EINVAL);
    EQ(cw_wheel_add_in(w, 1, 0, 0, NULL), CW_EINVAL);
    EQ(cw_wheel_add_periodic(NULL, 1, 1, 0, CW_MISSED_BURST, 0, &h), CW_EINVAL);
    EQ(cw_wheel_add_periodic(w, 1, 1, 0, CW_MISSED_BURST, 0, NULL), CW_EINVAL);
    EQ(cw_wheel_del(NULL, h, NULL), CW_EINVAL);
    EQ(cw_wheel_reset(NULL, h, 1, 0), CW_EINVAL);
    EQ(cw_wheel_reset_in(NULL, h, 1, 0), CW_EINVAL);
    EQ(cw_wheel_pending(NULL, h, NULL), CW_EINVAL);
    EQ(cw_wheel_update(NULL, 1), CW_EINVAL);
    EQ(cw_wheel_get(NULL, &e), CW_EINVAL);
    EQ(cw_wheel_get(w, NULL), CW_EINVAL);
    EQ(cw_wheel_expire(NULL, 1, NULL, NULL, 0), CW_EINVAL);
    EQ(cw_wheel_expire(w, 1, NULL, NULL, 0), CW_EINVAL);
    EQ(cw_wheel_next_wakeup(NULL, &t), CW_EINVAL);
    EQ(cw_wheel_next_wakeup(w, NULL), CW_EINVAL);
    EQ(cw_wheel_timeout(NULL, &t), CW_EINVAL);
    EQ(cw_wheel_timeout(w, NULL), CW_EINVAL);
    EQ(cw_wheel_counts(NULL, &info), CW_EINVAL);
    EQ(cw_wheel_counts(w, NULL), CW_EINVAL);
    EQ(cw_wheel_check(NULL, NULL, 0), CW_EINVAL);
    EQ(cw_wheel_check(w, NULL, 0), CW_OK);
    EQ(cw_wheel_reserve(NULL, 1), CW_EINVAL);
    /* Nothing above changed the wheel. */
    EQ(cw_wheel_counts(w, &info), CW_OK);
    EQ(info.pending, 0);
    EQ(info.added, 0);
    cw_wheel_free(NULL);
    cw_wheel_free(w);
    /* A capacity the index space cannot hold. */
    cw_wheel *bad = (cw_wheel *)1;
    EQ(cw_wheel_new((size_t)1 << 40, 0, &bad), CW_EINVAL);
    CHECK(bad == NULL);
    CHECK(strlen(cw_strerror(CW_EINVARIANT)) > 0);
}

static void test_order_and_windows(void) {
    cw_wheel *w = make(0, 1000);
    cw_handle h[4];
    uint64_t t = 0;
    EQ(cw_wheel_next_wakeup(w, &t), 0);
    EQ(cw_wheel_timeout(w, &t), 0);
    EQ(cw_wheel_add(w, 1300, 0, 3, &h[0]), CW_OK);
    EQ(cw_wheel_add(w, 1200, 0, 1, &h[1]), CW_OK);
    EQ(cw_wheel_add(w, 1200, 0, 2, &h[2]), CW_OK); /* equal deadline: after value 1 */
    EQ(cw_wheel_add_in(w, 500, 0, 4, &h[3]), CW_OK); /* due at 1500 */
    EQ(cw_wheel_pending(w, h[3], &t), 1);
    EQ(t, 1500);
    EQ(cw_wheel_next_wakeup(w, &t), 1);
    EQ(t, 1200);
    EQ(cw_wheel_timeout(w, &t), 1);
    EQ(t, 200);
    EQ(cw_wheel_update(w, 1199), CW_OK);
    expect_pull(__LINE__, w, 0, NULL); /* nothing due before 1200 */
    EQ(cw_wheel_update(w, 1100), CW_ERANGE); /* time never goes back */
    EQ(cw_wheel_update(w, 1300), CW_OK);
    PULL(w, 1, 2, 3);
    EQ(cw_wheel_pending(w, h[1], NULL), 0);
    EQ(cw_wheel_timeout(w, &t), 1);
    EQ(t, 200);
    /* A deadline already passed fires at the next pull. */
    cw_handle late;
    EQ(cw_wheel_add(w, 5, 0, 9, &late), CW_OK);
    EQ(cw_wheel_timeout(w, &t), 1);
    EQ(t, 0);
    PULL(w, 9);
    /* Windows: the wake-up is the earliest window end, and every timer whose deadline it
     * reaches fires there: three timers share one wake-up. */
    cw_handle a, b, c;
    EQ(cw_wheel_add(w, 2000, 1000, 10, &a), CW_OK); /* [2000, 3000] */
    EQ(cw_wheel_add(w, 2500, 200, 11, &b), CW_OK);  /* [2500, 2700] */
    EQ(cw_wheel_add(w, 2600, 1000, 12, &c), CW_OK); /* [2600, 3600] */
    EQ(cw_wheel_next_wakeup(w, &t), 1);
    CHECK(t <= 2700);
    CHECK(t >= 1500); /* h[3] at 1500 is still pending */
    EQ(cw_wheel_del(w, h[3], NULL), CW_OK);
    EQ(cw_wheel_next_wakeup(w, &t), 1);
    CHECK(t >= 2600 && t <= 2700);
    EQ(cw_wheel_update(w, t), CW_OK);
    PULL(w, 10, 11, 12);
    /* Relative times count from the latest update; past the end of time is CW_ERANGE. */
    cw_handle r;
    EQ(cw_wheel_add_in(w, UINT64_MAX, 0, 0, &r), CW_ERANGE);
    EQ(cw_wheel_add(w, UINT64_MAX, UINT64_MAX, 13, &r), CW_OK); /* the window saturates */
    EQ(cw_wheel_reset_in(w, r, UINT64_MAX, 0), CW_ERANGE);
    EQ(cw_wheel_pending(w, r, &t), 1);
    EQ(t, UINT64_MAX);
    EQ(cw_wheel_reset_in(w, r, 100, 0), CW_OK);
    EQ(cw_wheel_pending(w, r, &t), 1);
    cw_wheel_info info;
    EQ(cw_wheel_counts(w, &info), CW_OK);
    EQ(t, info.now + 100);
    EQ(info.pending, 1);
    EQ(info.added, 9);
    EQ(info.deleted, 1);
    EQ(info.fired, 7);
    CHECK(info.bytes > 0);
    EQ(cw_wheel_update(w, UINT64_MAX), CW_OK);
    PULL(w, 13);
    cw_wheel_free(w);
}

static void test_handles(void) {
    cw_wheel *w = make(0, 0), *other = make(0, 0);
    cw_handle h, g, forged = {12345, 678};
    uint64_t v = 0;
    EQ(cw_wheel_add(w, 10, 0, 77, &h), CW_OK);
    EQ(cw_wheel_add(other, 10, 0, 88, &g), CW_OK);
    /* Both wheels issued slot 0; the owners differ. */
    EQ(h.id, g.id);
    CHECK(h.owner != g.owner && h.owner != 0);
    /* Another wheel's handle, a made-up one: refused, nothing changes. */
    EQ(cw_wheel_del(w, g, &v), CW_ESTALE);
    EQ(cw_wheel_reset(w, g, 50, 0), CW_ESTALE);
    EQ(cw_wheel_pending(w, g, NULL), 0);
    EQ(cw_wheel_del(w, forged, NULL), CW_ESTALE);
    EQ(cw_wheel_reset(other, h, 50, 0), CW_ESTALE);
    EQ(v, 0);
    EQ(cw_wheel_pending(w, h, NULL), 1);
    EQ(cw_wheel_pending(other, g, NULL), 1);
    /* Delete hands back the value; the handle is then stale, and stays stale when its slot
     * is reused. */
    EQ(cw_wheel_del(w, h, &v), CW_OK);
    EQ(v, 77);
    EQ(cw_wheel_del(w, h, &v), CW_ESTALE);
    cw_handle again;
    EQ(cw_wheel_add(w, 10, 0, 99, &again), CW_OK);
    CHECK(again.id != h.id); /* same slot, new generation */
    EQ(cw_wheel_del(w, h, NULL), CW_ESTALE);
    EQ(cw_wheel_reset(w, h, 5, 0), CW_ESTALE);
    EQ(cw_wheel_update(w, 10), CW_OK);
    PULL(w, 99);
    EQ(cw_wheel_del(w, again, NULL), CW_ESTALE); /* fired: stale */
    EQ(cw_wheel_update(other, 10), CW_OK);
    PULL(other, 88);
    cw_wheel_free(w);
    cw_wheel_free(other);
}

static void test_periodic(void) {
    cw_wheel *w = make(0, 0);
    cw_handle h, bad;
    cw_expiry e;
    EQ(cw_wheel_add_periodic(w, 100, 0, 0, CW_MISSED_BURST, 1, &bad), CW_EINVAL);
    EQ(cw_wheel_add_periodic(w, 100, 10, 0, 42, 1, &bad), CW_EINVAL);
    EQ(cw_wheel_add_periodic(w, 100, 30, 0, CW_MISSED_SKIP, 5, &h), CW_OK);
    EQ(cw_wheel_update(w, 100), CW_OK);
    EQ(cw_wheel_get(w, &e), 1);
    EQ(e.deadline, 100);
    EQ(e.overruns, 0);
    EQ(e.value, 5);
    CHECK(e.handle.id == h.id && e.handle.owner == h.owner);
    EQ(cw_wheel_pending(w, h, NULL), 1); /* re-armed, same handle */
    /* Handled at 200: 130, 160 and 190 were missed; Skip moves to 220. */
    EQ(cw_wheel_update(w, 200), CW_OK);
    EQ(cw_wheel_get(w, &e), 1);
    EQ(e.deadline, 130);
    EQ(e.overruns, 2);
    EQ(cw_wheel_get(w, &e), 0);
    uint64_t t;
    EQ(cw_wheel_pending(w, h, &t), 1);
    EQ(t, 220);
    EQ(cw_wheel_del(w, h, NULL), CW_OK);
    /* Burst replays every missed period. */
    EQ(cw_wheel_add_periodic(w, 300, 10, 0, CW_MISSED_BURST, 6, &h), CW_OK);
    EQ(cw_wheel_update(w, 335), CW_OK);
    PULL(w, 6, 6, 6, 6);
    EQ(cw_wheel_del(w, h, NULL), CW_OK);
    /* The last firing before the end of time reports what it missed, and the timer is gone. */
    EQ(cw_wheel_add_periodic(w, UINT64_MAX - 100, 30, 0, CW_MISSED_DELAY, 7, &h), CW_OK);
    EQ(cw_wheel_update(w, UINT64_MAX), CW_OK);
    EQ(cw_wheel_get(w, &e), 1);
    EQ(e.overruns, 3);
    EQ(cw_wheel_get(w, &e), 0);
    EQ(cw_wheel_pending(w, h, NULL), 0);
    expect_valid(w);
    cw_wheel_free(w);
}

/* A CW_MISSED_BURST timer far behind replays each missed period, one per pull, and 0 comes
 * only once it has caught up; a due timer makes the wake-up the wheel's time at once, before
 * any pull (the wheel's time is the latest update). */
static void test_catching_up(void) {
    cw_wheel *w = make(0, 100);
    cw_handle h, late;
    cw_expiry e;
    uint64_t t;
    EQ(cw_wheel_add_periodic(w, 50, 1, 0, CW_MISSED_BURST, 1, &h), CW_OK);
    uint64_t expected = 50;
    while (cw_wheel_get(w, &e) == 1) {
        EQ(e.deadline, expected);
        expected++;
    }
    EQ(expected, 101); /* 50, 51, ..., 100 */
    EQ(cw_wheel_pending(w, h, &t), 1);
    EQ(t, 101);
    EQ(cw_wheel_del(w, h, NULL), CW_OK);
    EQ(cw_wheel_add(w, 150, 1000, 2, &late), CW_OK); /* window [150, 1150] */
    EQ(cw_wheel_next_wakeup(w, &t), 1);
    EQ(t, 1150);
    EQ(cw_wheel_update(w, 200), CW_OK);
    EQ(cw_wheel_next_wakeup(w, &t), 1);
    EQ(t, 200); /* due now: pull */
    EQ(cw_wheel_timeout(w, &t), 1);
    EQ(t, 0);
    PULL(w, 2);
    /* Timers added already overdue come out first in, first out. */
    EQ(cw_wheel_add(w, 190, 0, 3, &h), CW_OK);
    EQ(cw_wheel_add(w, 180, 0, 4, &h), CW_OK);
    PULL(w, 3, 4);
    cw_wheel_free(w);
}

/* cw_wheel_get_many: cw_wheel_get's timers and order, a batch at a time. */
static void test_get_many(void) {
    cw_wheel *w = make(0, 100);
    cw_handle h, first;
    cw_expiry batch[8];
    uint64_t t;
    EQ(cw_wheel_get_many(NULL, batch, 8), CW_EINVAL);
    EQ(cw_wheel_get_many(w, NULL, 8), CW_EINVAL);
    EQ(cw_wheel_get_many(w, batch, 0), CW_EINVAL);
    EQ(cw_wheel_get_many(w, batch, 8), 0); /* nothing pending */
    /* A periodic timer 51 periods behind catches up in deadline order, 8 per call. */
    EQ(cw_wheel_add_periodic(w, 50, 1, 0, CW_MISSED_BURST, 1, &h), CW_OK);
    uint64_t expected = 50;
    int got;
    do {
        got = cw_wheel_get_many(w, batch, 8);
        CHECK(got >= 0 && got <= 8);
        for (int k = 0; k < got; k++)
            EQ(batch[k].deadline, expected++);
    } while (got == 8);
    EQ(expected, 101); /* 50, 51, ..., 100; the short batch was the last */
    EQ(cw_wheel_get_many(w, batch, 8), 0);
    EQ(cw_wheel_pending(w, h, &t), 1);
    EQ(t, 101);
    EQ(cw_wheel_del(w, h, NULL), CW_OK);
    /* Deadline order, start order among equals; a one-shot timer returned has fired. */
    EQ(cw_wheel_add(w, 300, 0, 3, &h), CW_OK);
    EQ(cw_wheel_add(w, 200, 0, 1, &first), CW_OK);
    EQ(cw_wheel_add(w, 300, 0, 4, &h), CW_OK);
    EQ(cw_wheel_add(w, 250, 0, 2, &h), CW_OK);
    EQ(cw_wheel_add(w, 400, 0, 5, &h), CW_OK);
    EQ(cw_wheel_update(w, 300), CW_OK);
    EQ(cw_wheel_get_many(w, batch, 3), 3);
    EQ(batch[0].value, 1);
    EQ(batch[1].value, 2);
    EQ(batch[2].value, 3);
    EQ(cw_wheel_del(w, first, NULL), CW_ESTALE);
    /* A timer added overdue between calls comes out in the same run of batches (where among
       the other due timers is not specified), and the batch is short only when all are out. */
    EQ(cw_wheel_add(w, 10, 0, 6, &h), CW_OK);
    EQ(cw_wheel_get_many(w, batch, 8), 2);
    CHECK(batch[0].value + batch[1].value == 10 && (batch[0].value == 4 || batch[0].value == 6));
    EQ(cw_wheel_get_many(w, batch, 8), 0);
    EQ(cw_wheel_next_wakeup(w, &t), 1);
    EQ(t, 400);
    EQ(cw_wheel_update(w, 400), CW_OK);
    EQ(cw_wheel_get_many(w, batch, 1), 1);
    EQ(batch[0].value, 5);
    EQ(cw_wheel_get_many(w, batch, 1), 0);
    expect_valid(w);
    cw_wheel_free(w);
}

/* cw_wheel_advance: an update and a get_many in one call; a refused call moves no time. */
static void test_advance(void) {
    cw_wheel *w = make(0, 100);
    cw_handle h;
    cw_expiry batch[4];
    uint64_t t;
    for (uint64_t i = 0; i < 6; i++)
        EQ(cw_wheel_add(w, 200 + 10 * i, 0, i, &h), CW_OK);
    EQ(cw_wheel_advance(NULL, 300, batch, 4), CW_EINVAL);
    EQ(cw_wheel_advance(w, 300, NULL, 4), CW_EINVAL);
    EQ(cw_wheel_advance(w, 300, batch, 0), CW_EINVAL);
    EQ(cw_wheel_advance(w, 99, batch, 4), CW_ERANGE); /* time never goes back */
    EQ(cw_wheel_timeout(w, &t), 1);
    EQ(t, 100); /* none of the refused calls moved the wheel's time */
    EQ(cw_wheel_advance(w, 150, batch, 4), 0); /* nothing due yet */
    /* Up to 225: three due, in deadline order; the batch is short, so nothing else is. */
    EQ(cw_wheel_advance(w, 225, batch, 4), 3);
    EQ(batch[0].value, 0);
    EQ(batch[1].value, 1);
    EQ(batch[2].value, 2);
    EQ(batch[2].deadline, 220);
    EQ(cw_wheel_next_wakeup(w, &t), 1);
    EQ(t, 230);
    /* Up to 1000: a full batch of three of the rest (equal deadlines in start order)... */
    EQ(cw_wheel_add(w, 240, 0, 9, &h), CW_OK);
    EQ(cw_wheel_advance(w, 1000, batch, 3), 3);
    EQ(batch[0].value, 3);
    EQ(batch[0].deadline, 230);
    EQ(batch[1].value, 4);
    EQ(batch[2].value, 9);
    /* ...and the same time again pulls what is left, as cw_wheel_get_many would. */
    EQ(cw_wheel_advance(w, 1000, batch, 3), 1);
    EQ(batch[0].value, 5);
    EQ(cw_wheel_advance(w, 1000, batch, 4), 0);
    EQ(cw_wheel_next_wakeup(w, &t), 0);
    expect_valid(w);
    cw_wheel_free(w);
}

/* cw_wheel_expire's callback may call back into its wheel: it re-adds, deletes, resets. */
struct ctx {
    cw_wheel *w;
    cw_handle victim;
    int calls;
    uint64_t seen[16];
};

static void on_expire(void *arg, const cw_expiry *e) {
    struct ctx *c = arg;
    CHECK(c->calls < 16);
    c->seen[c->calls++] = e->value;
    if (e->value == 1) {
        cw_handle h;
        EQ(cw_wheel_add_in(c->w, 0, 0, 100, &h), CW_OK); /* due at the wheel's time: this call */
        EQ(cw_wheel_del(c->w, c->victim, NULL), CW_OK);   /* value 2 never fires */
    }
}

static void always_due(void *arg, const cw_expiry *e) {
    struct ctx *c = arg;
    cw_handle h;
    c->calls++;
    EQ(cw_wheel_add(c->w, e->deadline, 0, e->value, &h), CW_OK);
}

static void test_expire(void) {
    struct ctx c = {0};
    c.w = make(0, 0);
    cw_handle h;
    EQ(cw_wheel_add(c.w, 10, 0, 1, &h), CW_OK);
    EQ(cw_wheel_add(c.w, 20, 0, 2, &c.victim), CW_OK);
    EQ(cw_wheel_add(c.w, 30, 0, 3, &h), CW_OK);
    EQ(cw_wheel_expire(c.w, 5, on_expire, &c, 0), 0);
    EQ(cw_wheel_expire(c.w, 4, on_expire, &c, 0), CW_ERANGE);
    EQ(cw_wheel_expire(c.w, 40, on_expire, &c, 0), 3);
    EQ(c.calls, 3);
    EQ(c.seen[0], 1);
    EQ(c.seen[1], 3);   /* due at 30 */
    EQ(c.seen[2], 100); /* added at the wheel's time, 40, from the first callback */
    expect_valid(c.w);
    /* A callback that always re-adds a due timer: `max` bounds the call. */
    c.calls = 0;
    EQ(cw_wheel_add(c.w, 40, 0, 5, &h), CW_OK);
    EQ(cw_wheel_expire(c.w, 40, always_due, &c, 1000), 1000);
    EQ(c.calls, 1000);
    cw_wheel_info info;
    EQ(cw_wheel_counts(c.w, &info), CW_OK);
    EQ(info.pending, 1);
    expect_valid(c.w);
    cw_wheel_free(c.w);
}

static void test_fixed_capacity(void) {
    cw_wheel *w = make(3, 0);
    cw_handle h[3], extra;
    for (int i = 0; i < 3; i++)
        EQ(cw_wheel_add(w, 10 + (uint64_t)i, 0, (uint64_t)i, &h[i]), CW_OK);
    EQ(cw_wheel_add(w, 5, 0, 9, &extra), CW_ENOMEM);
    EQ(cw_wheel_add_periodic(w, 5, 5, 0, CW_MISSED_BURST, 9, &extra), CW_ENOMEM);
    EQ(cw_wheel_update(w, 20), CW_OK);
    PULL(w, 0, 1, 2); /* the refused adds changed nothing */
    EQ(cw_wheel_add(w, 25, 0, 4, &extra), CW_OK); /* room again */
    cw_wheel_free(w);
}

/* cw_wheel_reserve: exact room, so the adds after it allocate nothing; what cannot fit is
 * CW_ENOMEM with nothing changed. */
static void test_reserve(void) {
    cw_wheel *w = make(0, 0);
    cw_wheel_info before, after;
    EQ(cw_wheel_counts(w, &before), CW_OK);
    EQ(cw_wheel_reserve(w, 1000), CW_OK);
    EQ(cw_wheel_counts(w, &after), CW_OK);
    /* 1000 entries of 24 bytes and their 8 bytes of links, no doubling margin. */
    EQ(after.bytes - before.bytes, 1000 * 32);
    cw_handle h;
    for (uint64_t i = 0; i < 1000; i++)
        EQ(cw_wheel_add(w, 10 + i, 0, i, &h), CW_OK);
    cw_wheel_info full;
    EQ(cw_wheel_counts(w, &full), CW_OK);
    EQ(full.bytes, after.bytes);
    EQ(cw_wheel_reserve(w, SIZE_MAX), CW_ENOMEM);
    EQ(cw_wheel_reserve(w, (size_t)1 << 40), CW_ENOMEM);
    EQ(cw_wheel_counts(w, &full), CW_OK);
    EQ(full.bytes, after.bytes);
    EQ(full.pending, 1000);
    expect_valid(w);
    cw_wheel_free(w);
    /* A fixed capacity: room for what fits, CW_ENOMEM beyond. */
    w = make(10, 0);
    EQ(cw_wheel_add(w, 5, 0, 0, &h), CW_OK);
    EQ(cw_wheel_reserve(w, 9), CW_OK);
    EQ(cw_wheel_reserve(w, 10), CW_ENOMEM);
    cw_wheel_free(w);
}

#ifdef __linux__
/* In a child with its address space capped: a growing wheel is filled until it reports
 * CW_ENOMEM (not an abort); every timer added before is still there and fires once. */
static void test_out_of_memory(void) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        cw_wheel *w = make(0, 0);
        unsigned long long limit = address_space_in_use() + (64ull << 20);
        struct rlimit rl = {limit, limit};
        EQ(setrlimit(RLIMIT_AS, &rl), 0);
        uint64_t added = 0;
        int rc;
        cw_handle h;
        for (;;) {
            rc = added % 7 == 0
                     ? cw_wheel_add_periodic(w, added % 1000 + 1, 1u << 20, 0, CW_MISSED_SKIP,
                                             added, &h)
                     : cw_wheel_add(w, added % 1000 + 1, 0, added, &h);
            if (rc != CW_OK)
                break;
            added++;
        }
        EQ(rc, CW_ENOMEM);
        CHECK(added > 100000);
        EQ(cw_wheel_update(w, 1000), CW_OK);
        uint64_t fired = 0;
        cw_expiry e;
        while (cw_wheel_get(w, &e) == 1)
            fired++;
        EQ(fired, added);
        cw_wheel_free(w);
        _exit(0);
    }
    int status = 0;
    EQ(waitpid(pid, &status, 0), pid);
    CHECK(!WIFSIGNALED(status)); /* not killed: no abort on a refused allocation */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* No thread and no global state: a wheel keeps working in a forked child. */
static void test_fork(void) {
    cw_wheel *w = make(0, 0);
    cw_handle h;
    EQ(cw_wheel_add(w, 10, 0, 1, &h), CW_OK);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        EQ(cw_wheel_add(w, 20, 0, 2, &h), CW_OK);
        EQ(cw_wheel_update(w, 30), CW_OK);
        PULL(w, 1, 2);
        cw_wheel_free(w);
        _exit(0);
    }
    int status = 0;
    EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EQ(cw_wheel_update(w, 30), CW_OK);
    PULL(w, 1); /* the parent's wheel is its own */
    cw_wheel_free(w);
}
#endif

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An event loop on CLOCK_MONOTONIC: sleep for cw_wheel_timeout, update, pull. Every timer
 * fires once, never before its deadline. */
static void test_event_loop(void) {
    uint64_t start = now_ns();
    cw_wheel *w = make(0, start);
    cw_handle h;
    for (uint64_t i = 0; i < 20; i++)
        EQ(cw_wheel_add_in(w, (i % 5 + 1) * 1000000, 200000, start + (i % 5 + 1) * 1000000, &h),
           CW_OK);
    int fired = 0;
    uint64_t ns;
    while (cw_wheel_timeout(w, &ns) == 1) {
        struct timespec d = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        nanosleep(&d, NULL);
        uint64_t now = now_ns();
        EQ(cw_wheel_update(w, now), CW_OK);
        cw_expiry e;
        while (cw_wheel_get(w, &e) == 1) {
            CHECK(now >= e.value); /* the value is the deadline: never early */
            fired++;
        }
    }
    EQ(fired, 20);
    cw_wheel_free(w);
}

/* Random operations against a brute-force model: pending timers in an array, pulled in
 * (deadline, insertion) order. Exact timers, so the order is fully determined. */
#define MODEL_MAX 512
static struct {
    int live;
    uint64_t deadline, seq, value;
    cw_handle h;
} model[MODEL_MAX];

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_against_model(void) {
    cw_wheel *w = make(0, 0), *other = make(0, 0);
    uint64_t now = 0, seq = 0;
    for (long step = 0; step < 200000; step++) {
        uint64_t r = next_random();
        int i = (int)(r % MODEL_MAX);
        switch ((r >> 20) % 6) {
        case 0:
        case 1: /* add: near deadlines, far ones, past ones */
            if (!model[i].live) {
                uint64_t span = (r >> 30) % 3 == 0 ? 1u << 30 : 5000;
                uint64_t d = now + (r >> 34) % span;
                if ((r >> 33) % 17 == 0)
                    d = now > 100 ? now - 100 : 0;
                EQ(cw_wheel_add(w, d, 0, (uint64_t)i, &model[i].h), CW_OK);
                model[i].live = 1;
                model[i].deadline = d;
                model[i].seq = seq++;
                model[i].value = (uint64_t)i;
            }
            break;
        case 2: /* delete: a live one, or a stale one (refused) */
            if (model[i].live) {
                uint64_t v;
                EQ(cw_wheel_del(w, model[i].h, &v), CW_OK);
                EQ(v, (uint64_t)i);
                model[i].live = 0;
            } else {
                EQ(cw_wheel_del(w, model[i].h, NULL), CW_ESTALE);
            }
            break;
        case 3: /* reset */
            if (model[i].live) {
                uint64_t d = now + (r >> 34) % 5000;
                EQ(cw_wheel_reset(w, model[i].h, d, 0), CW_OK);
                model[i].deadline = d;
                model[i].seq = seq++;
            }
            break;
        case 4: { /* advance and pull: one at a time, or in batches of 1 to 7 */
            now += (r >> 34) % 3000;
            EQ(cw_wheel_update(w, now), CW_OK);
            cw_expiry batch[7];
            int max = (r >> 50) & 1 ? 1 + (int)((r >> 51) % 7) : 0;
            for (;;) {
                int got = max ? cw_wheel_get_many(w, batch, (size_t)max)
                              : cw_wheel_get(w, &batch[0]);
                CHECK(got >= 0 && got <= (max ? max : 1));
                for (int k = 0; k < got; k++) {
                    const cw_expiry *e = &batch[k];
                    int best = -1;
                    for (int j = 0; j < MODEL_MAX; j++)
                        if (model[j].live && model[j].deadline <= now &&
                            (best < 0 || model[j].deadline < model[best].deadline ||
                             (model[j].deadline == model[best].deadline &&
                              model[j].seq < model[best].seq)))
                            best = j;
                    CHECK(best >= 0);
                    EQ(e->value, model[best].value);
                    EQ(e->deadline, model[best].deadline);
                    model[best].live = 0;
                }
                /* cw_wheel_get's 0, or a short batch: nothing else is due (checked below). */
                if (got == 0 || (max && got < max))
                    break;
            }
            for (int j = 0; j < MODEL_MAX; j++)
                CHECK(!(model[j].live && model[j].deadline <= now));
            break;
        }
        default: { /* the other wheel's handles never act here */
            cw_handle g;
            EQ(cw_wheel_add(other, now + 1000, 0, 0, &g), CW_OK);
            EQ(cw_wheel_del(w, g, NULL), CW_ESTALE);
            EQ(cw_wheel_del(other, g, NULL), CW_OK);
            uint64_t t;
            int pending = 0;
            uint64_t earliest = UINT64_MAX;
            for (int j = 0; j < MODEL_MAX; j++)
                if (model[j].live) {
                    pending = 1;
                    if (model[j].deadline < earliest)
                        earliest = model[j].deadline;
                }
            EQ(cw_wheel_next_wakeup(w, &t), pending);
            if (pending)
                CHECK(t <= (earliest > now ? earliest : now));
            break;
        }
        }
        if (step % 4096 == 0)
            expect_valid(w);
    }
    expect_valid(w);
    cw_wheel_free(w);
    cw_wheel_free(other);
}

/* What users of libuv and wahern/timeout look for: a periodic timer's period read and changed,
 * every pending timer walked, a relative step, whether a timer is due and not yet pulled. */
static void test_periods_walks_and_steps(void) {
    cw_wheel *w = make(0, 1000), *other = make(0, 0);
    cw_handle p, o, gone;
    uint64_t period = 0;
    int policy = -1;
    EQ(cw_wheel_add_periodic(w, 1100, 50, 0, CW_MISSED_DELAY, 1, &p), CW_OK);
    EQ(cw_wheel_add(w, 1300, 0, 2, &o), CW_OK);
    EQ(cw_wheel_add(w, 1200, 0, 3, &gone), CW_OK);
    EQ(cw_wheel_del(w, gone, NULL), CW_OK);
    /* The period: read, changed from the next firing on, refused for a one-shot. */
    EQ(cw_wheel_period(w, p, &period, &policy), 1);
    CHECK(period == 50 && policy == CW_MISSED_DELAY);
    EQ(cw_wheel_period(w, p, NULL, NULL), 1);
    EQ(cw_wheel_period(w, o, &period, &policy), 0);
    EQ(cw_wheel_period(w, gone, &period, &policy), CW_ESTALE);
    EQ(cw_wheel_period(NULL, p, &period, &policy), CW_EINVAL);
    EQ(cw_wheel_set_period(w, p, 0), CW_EINVAL);
    EQ(cw_wheel_set_period(w, o, 10), CW_EINVAL);
    EQ(cw_wheel_set_period(w, gone, 10), CW_ESTALE);
    EQ(cw_wheel_set_period(NULL, p, 10), CW_EINVAL);
    EQ(cw_wheel_set_period(w, p, 200), CW_OK);
    EQ(cw_wheel_period(w, p, &period, NULL), 1);
    EQ(period, 200);
    uint64_t at;
    EQ(cw_wheel_pending(w, p, &at), 1);
    EQ(at, 1100); /* the pending deadline stays */
    /* The walk: each pending timer once, with its value and deadline; none deleted. */
    size_t cursor = 0;
    cw_expiry e;
    int seen = 0;
    uint64_t values = 0;
    while (cw_wheel_next_pending(w, &cursor, &e) == 1) {
        seen++;
        values += e.value;
        CHECK((e.value == 1 && e.deadline == 1100) || (e.value == 2 && e.deadline == 1300));
        EQ(cw_wheel_pending(w, e.handle, NULL), 1);
    }
    CHECK(seen == 2 && values == 3);
    EQ(cw_wheel_next_pending(w, &cursor, &e), 0); /* stays at the end */
    EQ(cw_wheel_next_pending(NULL, &cursor, &e), CW_EINVAL);
    EQ(cw_wheel_next_pending(w, NULL, &e), CW_EINVAL);
    EQ(cw_wheel_next_pending(w, &cursor, NULL), CW_EINVAL);
    seen = 0;
    CW_WHEEL_FOREACH(w, pos, e)
        seen++;
    EQ(seen, 2);
    CW_WHEEL_FOREACH(other, pos, e)
        CHECK(0); /* an empty wheel: the body never runs */
    /* A step, then what is due and not yet pulled. */
    EQ(cw_wheel_expired(w), 0);
    EQ(cw_wheel_step(w, 100), CW_OK);
    cw_wheel_info info;
    EQ(cw_wheel_counts(w, &info), CW_OK);
    EQ(info.now, 1100);
    EQ(cw_wheel_expired(w), 1);
    EQ(cw_wheel_get(w, &e), 1);
    CHECK(e.value == 1 && e.deadline == 1100);
    EQ(cw_wheel_get(w, &e), 0);
    EQ(cw_wheel_expired(w), 0); /* exact once a pull found nothing */
    EQ(cw_wheel_pending(w, p, &at), 1);
    EQ(at, 1300); /* re-armed with the new period */
    EQ(cw_wheel_step(w, UINT64_MAX), CW_ERANGE); /* past the end of time: nothing changes */
    EQ(cw_wheel_counts(w, &info), CW_OK);
    EQ(info.now, 1100);
    EQ(cw_wheel_step(NULL, 1), CW_EINVAL);
    EQ(cw_wheel_expired(NULL), CW_EINVAL);
    /* Another wheel's handle names nothing there. */
    EQ(cw_wheel_period(other, p, &period, &policy), CW_ESTALE);
    EQ(cw_wheel_set_period(other, p, 10), CW_ESTALE);
    expect_valid(w);
    cw_wheel_free(w);
    cw_wheel_free(other);
}

/* The version macros and functions agree, and each error text fits the interface. */
static void test_version_and_texts(void) {
    EQ(cw_version(), CW_VERSION);
    EQ(CW_VERSION, CW_VERSION_MAJOR * 65536 + CW_VERSION_MINOR * 256 + CW_VERSION_PATCH);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", CW_VERSION_MAJOR, CW_VERSION_MINOR,
             CW_VERSION_PATCH);
    CHECK(strcmp(cw_version_string(), expected) == 0);
    CHECK(strstr(cw_wheel_strerror(CW_ENOMEM), "wheel") != NULL);
    CHECK(strstr(cw_wheel_strerror(CW_ENOMEM), "callout") == NULL);
    CHECK(strstr(cw_wheel_strerror(CW_ERANGE), "wheel's time") != NULL);
    CHECK(strstr(cw_callout_strerror(CW_ENOMEM), "callout") != NULL);
    CHECK(strstr(cw_strerror(CW_ENOMEM), "callout") == NULL);
    CHECK(strstr(cw_strerror(CW_ESTALE), "callout handle") == NULL);
    CHECK(strstr(cw_timerset_strerror(CW_ENOSPC), "quota") != NULL);
    CHECK(strstr(cw_sleep_strerror(CW_ETIMEDOUT), "condition variable") != NULL);
    CHECK(cw_wheel_strerror(-123456) != NULL);
}

int main(void) {
    test_null_arguments();
    test_order_and_windows();
    test_handles();
    test_periodic();
    test_catching_up();
    test_expire();
    test_get_many();
    test_advance();
    test_fixed_capacity();
    test_reserve();
#ifdef __linux__
    if (RLIMIT_TESTS)
        test_out_of_memory();
    test_fork();
#endif
    test_event_loop();
    test_against_model();
    test_periods_walks_and_steps();
    test_version_and_texts();
    printf("test_wheel: all %ld checks passed\n", (long)atomic_load(&checks));
    return 0;
}
