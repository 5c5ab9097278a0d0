/*
 * The callout contract, checked the same way on every backing (CW_BACKING_LIST, _HASHED,
 * _WHEEL) on a table of one CPU and on CPU 1 of a table of two, with the
 * table's tick near 0, 2^32, 2^40, 2^63 and UINT64_MAX, at hz from 100 to 10^9:
 *
 *   T.1  next event in ticks: `first` is the earliest deadline, never a tick already passed;
 *        a tickless loop that follows it runs something at every interrupt, in deadline order.
 *   T.2  the table moves to any later tick in one step: a jump of 2^40 ticks (or to the last
 *        tick) over a pending callout, then one softclock, runs it (a cost that grew with the
 *        tick's value would not finish before the alarm below).
 *   T.3  the end of time: a deadline past UINT64_MAX is CW_ERANGE on every call that sets
 *        one, with nothing changed (at the last tick, an absolute time already passed too: it
 *        would run at the next tick); a deadline at UINT64_MAX is accepted and runs when the
 *        table reaches it.
 *   T.4  sbt to ticks is the exact ceiling of sbt * hz / 2^32 (relative to the current tick,
 *        or absolute), at least one tick ahead.
 *
 * Built and run by tests/c_api.rs (cargo test, plain and with sanitizers). Exits 0 when every
 * check passes; otherwise prints the failing line and exits 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callwheel.h"
#include "check.h"

#define EQ EQ_CODE

__extension__ typedef unsigned __int128 u128;

static const int backings[] = {CW_BACKING_LIST, CW_BACKING_HASHED, CW_BACKING_WHEEL};
static const char *const backing_names[] = {"list", "hashed", "wheel"};
static const uint64_t bases[] = {0, 1ull << 32, 1ull << 40, 1ull << 63, UINT64_MAX - 1000};
static const uint32_t rates[] = {100, 1000, 1000000, 1000000000};

/* One CPU's queue, whichever form holds it. The per-CPU form uses CPU 1 of 2. */
typedef struct {
    int percpu;
    cw_callouts *t;
    cw_callouts *p;
} queue;

enum { CPU = 1 };

static void q_new(queue *q, int backing, int percpu, uint32_t hz) {
    memset(q, 0, sizeof *q);
    q->percpu = percpu;
    if (percpu)
        EQ(cw_callouts_new_percpu(backing, 2, 16, 0, hz, &q->p), 0);
    else
        EQ(cw_callouts_new(backing, 16, 0, hz, &q->t), 0);
}

static void q_free(queue *q) {
    if (q->percpu)
        cw_callouts_free(q->p);
    else
        cw_callouts_free(q->t);
}

static int q_process(queue *q, uint64_t now) {
    return q->percpu ? cw_callout_process(q->p, CPU, now) : cw_callout_process(q->t, 0, now);
}

static int q_next(queue *q, uint64_t *first, uint64_t *last) {
    return q->percpu ? cw_callout_next_event(q->p, CPU, first, last)
                     : cw_callout_next_event(q->t, 0, first, last);
}

static int q_softclock(queue *q) {
    return q->percpu ? cw_softclock(q->p, CPU) : cw_softclock(q->t, 0);
}

static uint64_t q_ticks(queue *q) {
    uint64_t t = 0;
    if (q->percpu)
        EQ(cw_ticks(q->p, CPU, &t), 0);
    else
        EQ(cw_ticks(q->t, 0, &t), 0);
    return t;
}

static cw_handle q_init(queue *q) {
    cw_handle h;
    if (q->percpu)
        EQ(cw_callout_init(q->p, CPU, &h), 0);
    else
        EQ(cw_callout_init(q->t, -1, &h), 0);
    return h;
}

static int q_reset(queue *q, cw_handle h, int64_t ticks, cw_func f, void *arg) {
    return q->percpu ? cw_callout_reset_on(q->p, h, ticks, f, arg, -1)
                     : cw_callout_reset(q->t, h, ticks, f, arg);
}

static int q_reset_sbt(queue *q, cw_handle h, int64_t sbt, cw_func f, void *arg, int flags) {
    return q->percpu ? cw_callout_reset_sbt_on(q->p, h, sbt, 0, f, arg, -1, flags)
                     : cw_callout_reset_sbt_on(q->t, h, sbt, 0, f, arg, -1, flags);
}

static int q_pending(queue *q, cw_handle h) {
    return q->percpu ? cw_callout_pending(q->p, h) : cw_callout_pending(q->t, h);
}

/* The handlers' log: which callout ran (its index in the test) at which tick. */
static int ran_id[64];
static uint64_t ran_at[64];
static int nran;
static uint64_t clock_now;

static void note(void *arg) {
    CHECK(nran < 64);
    ran_id[nran] = (int)(intptr_t)arg;
    ran_at[nran] = clock_now;
    nran++;
}

/* Arms a new persistent callout `n` ticks ahead; returns whether the deadline fits. */
static int arm_in(queue *q, cw_handle *h, uint64_t base, uint64_t n, int id) {
    *h = q_init(q);
    int fits = n <= UINT64_MAX - base;
    EQ(q_reset(q, *h, (int64_t)n, note, (void *)(intptr_t)id), fits ? 0 : CW_ERANGE);
    return fits;
}

/* T.1 */
static void next_event_is_a_tick(int backing, int percpu, uint64_t base, uint32_t hz) {
    queue q;
    q_new(&q, backing, percpu, hz);
    uint64_t first = 7, last = 7;
    EQ(q_process(&q, base), 0);
    EQ(q_ticks(&q), base);
    EQ(q_next(&q, &first, &last), 0);
    /* Far apart, so each lands in its own bucket and level; pushed in reverse. */
    static const uint64_t ahead[] = {1000000, 1000, 7, 1};
    cw_handle h[4];
    uint64_t deadline[4];
    int armed = 0;
    for (int i = 0; i < 4; i++) {
        if (arm_in(&q, &h[i], base, ahead[i], i)) {
            deadline[i] = base + ahead[i];
            armed++;
        }
    }
    CHECK(armed == 4 || base == UINT64_MAX - 1000);
    nran = 0;
    int interrupts = 0;
    while (q_next(&q, &first, &last) == 1) {
        CHECK(first >= q_ticks(&q)); /* never a tick already passed */
        CHECK(last >= first);
        /* The earliest armed deadline, exactly. */
        uint64_t earliest = UINT64_MAX;
        for (int i = 0; i < 4; i++)
            if (q_pending(&q, h[i]) == 1 && deadline[i] < earliest)
                earliest = deadline[i];
        EQ(first, earliest);
        clock_now = first;
        q_process(&q, first);
        int before = nran;
        EQ(q_softclock(&q), 1); /* something ran at every interrupt */
        CHECK(nran == before + 1 && ran_at[before] == deadline[ran_id[before]]);
        CHECK(++interrupts <= 4);
    }
    EQ(interrupts, armed);
    for (int i = 1; i < nran; i++)
        CHECK(ran_at[i - 1] < ran_at[i]);
    q_free(&q);
}

/* T.2 */
static void one_step_to_any_tick(int backing, int percpu, uint64_t base, uint32_t hz) {
    queue q;
    q_new(&q, backing, percpu, hz);
    EQ(q_process(&q, base), 0);
    cw_handle h;
    if (!arm_in(&q, &h, base, 5, 1)) {
        q_free(&q);
        return;
    }
    uint64_t to = base <= UINT64_MAX - (1ull << 40) ? base + (1ull << 40) : UINT64_MAX;
    nran = 0;
    clock_now = to;
    EQ(q_process(&q, to), 1);
    EQ(q_softclock(&q), 1);
    EQ(nran, 1);
    uint64_t first, last;
    EQ(q_next(&q, &first, &last), 0);
    EQ(q_ticks(&q), to);
    /* And again from there: a callout a few ticks later (or refused at the last tick). */
    int fits = arm_in(&q, &h, to, 3, 2);
    CHECK(fits == (to < UINT64_MAX - 2));
    if (fits) {
        EQ(q_next(&q, &first, &last), 1);
        EQ(first, to + 3);
        clock_now = to + 3;
        EQ(q_process(&q, to + 3), 1);
        EQ(q_softclock(&q), 1);
        EQ(nran, 2);
    }
    q_free(&q);
}

/* T.3: only from a base near the end. */
static void end_of_time(int backing, int percpu, uint32_t hz) {
    queue q;
    q_new(&q, backing, percpu, hz);
    uint64_t base = UINT64_MAX - 10;
    EQ(q_process(&q, base), 0);
    cw_handle a = q_init(&q), b = q_init(&q), c = q_init(&q);
    /* Past the end: refused, nothing armed. */
    EQ(q_reset(&q, a, 11, note, (void *)1), CW_ERANGE);
    EQ(q_pending(&q, a), 0);
    EQ(q_reset(&q, a, INT64_MAX, note, (void *)1), CW_ERANGE);
    EQ(q_reset_sbt(&q, a, INT64_MAX, note, (void *)1, 0), CW_ERANGE);
    EQ(q_pending(&q, a), 0);
    if (!percpu) {
        EQ(cw_timeout(q.t, note, (void *)9, 11), CW_ERANGE);
        cw_handle s;
        EQ(cw_setcallout(q.t, note, (void *)9, 11, &s), CW_ERANGE);
    }
    /* A refused re-arm keeps the previous arming. */
    EQ(q_reset(&q, b, 4, note, (void *)2), 0);
    EQ(q_reset(&q, b, 100, note, (void *)2), CW_ERANGE);
    EQ(q_pending(&q, b), 1);
    /* At the last tick itself: accepted. */
    EQ(q_reset(&q, a, 10, note, (void *)1), 0);
    uint64_t first, last;
    EQ(q_next(&q, &first, &last), 1);
    EQ(first, base + 4);
    nran = 0;
    clock_now = UINT64_MAX;
    EQ(q_process(&q, UINT64_MAX), 1);
    EQ(q_softclock(&q), 2);
    CHECK(nran == 2 && ran_id[0] == 2 && ran_id[1] == 1);
    EQ(q_next(&q, &first, &last), 0);
    /* At the last tick: nothing can be set ahead of it ... */
    EQ(q_reset(&q, c, 1, note, (void *)3), CW_ERANGE);
    EQ(q_reset(&q, c, 0, note, (void *)3), CW_ERANGE);
    EQ(q_reset_sbt(&q, c, CW_SBT_1S, note, (void *)3, 0), CW_ERANGE);
    if (!percpu)
        EQ(cw_timeout(q.t, note, (void *)9, 1), CW_ERANGE);
    /* ... not even an absolute time already passed, which runs at the next tick. */
    EQ(q_reset_sbt(&q, c, 0, note, (void *)3, CW_C_ABSOLUTE), CW_ERANGE);
    EQ(q_pending(&q, c), 0);
    EQ(q_next(&q, &first, &last), 0);
    EQ(q_softclock(&q), 0);
    q_free(&q);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ceil(sbt * hz / 2^32), exact. */
static u128 exact_ticks(uint64_t sbt, uint32_t hz) {
    u128 p = (u128)sbt * hz;
    return (p >> 32) + ((p & 0xffffffffu) != 0);
}

/* T.4: a fresh table per sample, so that `first` is the deadline on every backing. */
static void rounding_is_exact(int backing, int percpu, uint64_t base, uint32_t hz, int samples) {
    for (int i = 0; i < samples; i++) {
        queue q;
        q_new(&q, backing, percpu, hz);
        EQ(q_process(&q, base), 0);
        cw_handle h = q_init(&q);
        /* Up to 2^(32 + k) sbt units for a random k up to 4: sub-tick fractions everywhere. */
        uint64_t sbt = next_random() >> (60 - (next_random() % 5));
        u128 ahead = exact_ticks(sbt, hz);
        if (ahead == 0)
            ahead = 1;
        u128 expected = (u128)base + ahead;
        int rc = q_reset_sbt(&q, h, (int64_t)sbt, note, NULL, 0);
        uint64_t first, last;
        if (expected > UINT64_MAX) {
            EQ(rc, CW_ERANGE);
            EQ(q_next(&q, &first, &last), 0);
        } else {
            EQ(rc, 0);
            EQ(q_next(&q, &first, &last), 1);
            EQ(first, (uint64_t)expected);
        }
        /* Absolute, when the table's time fits an sbt: the tick at or after it, at least the
         * next one. */
        if (base == 0) {
            uint64_t at = next_random() >> (60 - (next_random() % 5));
            q_process(&q, 3); /* the relative arming may be due by then: re-armed below */
            CHECK(q_reset_sbt(&q, h, (int64_t)at, note, NULL, CW_C_ABSOLUTE) >= 0);
            u128 tick = exact_ticks(at, hz);
            EQ(q_next(&q, &first, &last), 1);
            EQ(first, tick > 4 ? (uint64_t)tick : 4); /* at least the next tick */
        }
        q_free(&q);
    }
}

int main(void) {
    /* A cost that grew with the tick's value shows as a run that never ends: fail instead. */
    alarm(300);
    for (int f = 0; f < 2; f++) {
        for (size_t b = 0; b < sizeof backings / sizeof backings[0]; b++) {
            for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
                for (size_t t = 0; t < sizeof bases / sizeof bases[0]; t++) {
                    /* Read only when a check fails: which case it was. */
                    fprintf(stderr, "case: %s %s hz %u tick %llu\n", f ? "per-CPU" : "table",
                            backing_names[b], rates[r], (unsigned long long)bases[t]);
                    next_event_is_a_tick(backings[b], f, bases[t], rates[r]);
                    one_step_to_any_tick(backings[b], f, bases[t], rates[r]);
                    rounding_is_exact(backings[b], f, bases[t], rates[r],
                                      rates[r] == 1000000000 ? 100 : 20);
                }
                end_of_time(backings[b], f, rates[r]);
            }
            printf("test_callout_contract: ok %s %s\n", f ? "per-CPU" : "table",
                   backing_names[b]);
        }
    }
    printf("test_callout_contract: all %ld checks passed\n", (long)checks);
    return 0;
}
