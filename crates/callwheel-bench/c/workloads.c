/*
 * W1-W4 of docs/workloads.md written in C against the C API (cw_wheel_*), as a C program
 * drives the wheel: no adapter between the loop and the library, an event loop's pulls
 * (cw_wheel_advance to the time, then cw_wheel_get_many while batches come back full), and the
 * wheel's own wake-up query (cw_wheel_next_wakeup). Each function runs one repetition with a
 * fresh wheel and a generator seeded with `seed`, times only the region the workload marks timed
 * (CLOCK_MONOTONIC, the clock Rust's Instant reads), and reports what the Rust workloads
 * report; the Rust side (c_driver.rs) repeats them, checks the counts and builds the outcomes.
 *
 * Every workload function returns 0, or a negative code naming the step that failed (a
 * refusal of the library, or memory for the W2 queue); the figures are then not filled. The
 * two probes at the end, which `callwheel instructions` counts, return the library's codes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "callwheel.h"

/* The codes the functions return (see c_driver.rs, which names them). */
enum {
    CWB_OK = 0,
    CWB_NEW = -1,   /* cw_wheel_new refused */
    CWB_ADD = -2,   /* cw_wheel_add refused */
    CWB_ADVANCE = -3, /* cw_wheel_advance refused (the time or the batch) */
    CWB_QUEUE = -4, /* no memory for W2's queue of handles */
    CWB_COUNTS = -5, /* cw_wheel_counts refused */
    CWB_JUMPS = -6, /* W4 gave up after max_jumps jumps */
    CWB_PULL = -7,  /* cw_wheel_get_many or cw_wheel_next_wakeup refused */
};

/* SplitMix64 (Steele, Lea & Flood), step for step the generator of the Rust workloads. */
typedef struct {
    uint64_t state;
} rng;

static inline uint64_t rng_next(rng *r) {
    r->state += 0x9E3779B97F4A7C15ull;
    uint64_t z = r->state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* lo + next % (hi - lo), the workloads' definition (the slight modulo bias included). */
static inline uint64_t rng_range(rng *r, uint64_t lo, uint64_t hi) {
    return lo + rng_next(r) % (hi - lo);
}

static uint64_t clock_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Expiries pulled per cw_wheel_advance or cw_wheel_get_many call. */
#define BATCH 64

/*
 * Pulls every timer due by `now`, a batch at a time; returns how many. Forced inline: gcc kept
 * it out of line, which cost every pull a call and the set-up of its batch's frame (22
 * instructions per W4 jump, 24 per W3 tick).
 */
__attribute__((always_inline)) static inline uint64_t pull_due(cw_wheel *w, uint64_t now,
                                                               int *rc) {
    uint64_t n = 0;
    cw_expiry batch[BATCH];
    int got = cw_wheel_advance(w, now, batch, BATCH);
    if (got < 0) {
        *rc = CWB_ADVANCE;
        return 0;
    }
    n += (uint64_t)got;
    /* A short batch means nothing else is due. */
    while (got == BATCH) {
        got = cw_wheel_get_many(w, batch, BATCH);
        if (got < 0) {
            *rc = CWB_PULL;
            break;
        }
        n += (uint64_t)got;
    }
    return n;
}

/*
 * pull_due out of line, for a loop that pulls rarely (W2, once per 1000 steps): inlined there,
 * its batch and its loop took registers from the hot path (3.7 instructions per W2 step).
 */
static __attribute__((noinline)) uint64_t pull_due_cold(cw_wheel *w, uint64_t now, int *rc) {
    return pull_due(w, now, rc);
}

/*
 * A growing wheel at time 0, or NULL. The workloads keep the pointer in a variable whose
 * address is never taken, so the compiler may hold it in a register across the library's calls
 * (a variable handed to cw_wheel_new by address is reloaded after every call).
 */
static cw_wheel *new_wheel(void) {
    cw_wheel *w = NULL;
    return cw_wheel_new(0, 0, &w) == CW_OK ? w : NULL;
}

/* Adds `timers` timers with deadlines in [lo, hi), values 0, 1, ...: the workloads' fills. */
static inline int add_drawn(cw_wheel *w, rng *r, uint64_t timers, uint64_t lo, uint64_t hi) {
    for (uint64_t i = 0; i < timers; i++) {
        cw_handle h;
        if (cw_wheel_add(w, rng_range(r, lo, hi), 0, i, &h) != CW_OK)
            return CWB_ADD;
    }
    return CWB_OK;
}

/*
 * W1, set/cancel: n outstanding timers in [1e6, 2e6), one more in [2e6, 3e6), then `iters`
 * timed (delete + add) pairs on it. Out: elapsed ns, the bytes the wheel holds after the
 * setup, deletes that missed their timer, timers pending after the loop.
 */
int cwb_w1(uint64_t n, uint64_t iters, uint64_t seed, uint64_t *elapsed_ns, uint64_t *bytes,
           uint64_t *missed, uint64_t *pending) {
    rng r = {seed};
    cw_wheel *w = new_wheel();
    if (w == NULL)
        return CWB_NEW;
    int rc = add_drawn(w, &r, n, 1000000, 2000000);
    cw_handle h;
    if (rc == CWB_OK && cw_wheel_add(w, rng_range(&r, 2000000, 3000000), 0, n, &h) != CW_OK)
        rc = CWB_ADD;
    cw_wheel_info info;
    if (rc == CWB_OK && cw_wheel_counts(w, &info) != CW_OK)
        rc = CWB_COUNTS;
    if (rc != CWB_OK) {
        cw_wheel_free(w);
        return rc;
    }
    *bytes = info.bytes;
    uint64_t miss = 0;
    uint64_t begin = clock_ns();
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t e = rng_range(&r, 2000000, 3000000);
        miss += cw_wheel_del(w, h, NULL) != CW_OK;
        if (cw_wheel_add(w, e, 0, i, &h) != CW_OK) {
            rc = CWB_ADD;
            break;
        }
    }
    *elapsed_ns = clock_ns() - begin;
    if (rc == CWB_OK && cw_wheel_counts(w, &info) != CW_OK)
        rc = CWB_COUNTS;
    *missed = miss;
    *pending = info.pending;
    cw_wheel_free(w);
    return rc;
}

#define W2_DELAY_LO 200
#define W2_DELAY_HI 250
#define W2_STEPS_PER_TICK 1000
#define W2_CANCEL_PERCENT 95

/*
 * W2, churn: n timers in flight (untimed warm-up), then `steps` timed steps of add one / take
 * the oldest from a FIFO of handles / delete it 95 % of the time, the clock moving one tick
 * (and the due timers pulled) every 1000 steps. Out: elapsed ns, timers pulled in the timed
 * region, deletes that missed their timer.
 */
int cwb_w2(uint64_t n, uint64_t steps, uint64_t seed, uint64_t *elapsed_ns, uint64_t *expiries,
           uint64_t *missed) {
    rng r = {seed};
    cw_wheel *w = new_wheel();
    if (w == NULL)
        return CWB_NEW;
    /* A ring of n + 1 handles: at most n are queued between steps, n + 1 within one. */
    uint64_t cap = n + 1;
    cw_handle *fifo = malloc(cap * sizeof *fifo);
    if (fifo == NULL) {
        cw_wheel_free(w);
        return CWB_QUEUE;
    }
    uint64_t head = 0, len = 0, now = 0;
    int rc = CWB_OK;
    for (uint64_t i = 0; i < n && rc == CWB_OK; i++) {
        /* The warm-up fills the ring from its start. */
        if (cw_wheel_add(w, now + rng_range(&r, W2_DELAY_LO, W2_DELAY_HI), 0, i, &fifo[i])
            != CW_OK) {
            rc = CWB_ADD;
            break;
        }
        len++;
        if ((i + 1) % W2_STEPS_PER_TICK == 0)
            pull_due_cold(w, ++now, &rc);
    }
    uint64_t fired = 0, miss = 0;
    uint64_t begin = clock_ns();
    for (uint64_t i = 0; i < steps && rc == CWB_OK; i++) {
        /* The ring wraps by a compare, as a VecDeque does, not by a division. */
        uint64_t tail = head + len;
        if (tail >= cap)
            tail -= cap;
        /*
         * The handle goes straight into the ring. Through a local copied in after the call,
         * gcc moved it as one 16-byte load of the library's two 8-byte stores, which the CPU
         * cannot forward: the copy waited for the stores to retire.
         */
        if (cw_wheel_add(w, now + rng_range(&r, W2_DELAY_LO, W2_DELAY_HI), 0, n + i, &fifo[tail])
            != CW_OK) {
            rc = CWB_ADD;
            break;
        }
        cw_handle oldest = fifo[head];
        if (++head == cap)
            head = 0;
        if (rng_range(&r, 0, 100) < W2_CANCEL_PERCENT)
            miss += cw_wheel_del(w, oldest, NULL) != CW_OK;
        if ((i + 1) % W2_STEPS_PER_TICK == 0)
            fired += pull_due_cold(w, ++now, &rc);
    }
    *elapsed_ns = clock_ns() - begin;
    *expiries = fired;
    *missed = miss;
    free(fifo);
    cw_wheel_free(w);
    return rc;
}

/*
 * W3, expire: `timers` adds in [1, ticks), then the clock moved to every tick of 1..=ticks with
 * the due timers pulled, all timed. Out: elapsed ns, timers pulled within the ticks, timers
 * left after the last tick (pulled untimed at the wheel's wake-ups; 0 for an exact wheel).
 */
int cwb_w3(uint64_t timers, uint64_t ticks, uint64_t seed, uint64_t *elapsed_ns,
           uint64_t *fired, uint64_t *late) {
    rng r = {seed};
    cw_wheel *w = new_wheel();
    if (w == NULL)
        return CWB_NEW;
    uint64_t n = 0;
    uint64_t begin = clock_ns();
    int rc = add_drawn(w, &r, timers, 1, ticks);
    for (uint64_t now = 1; now <= ticks && rc == CWB_OK; now++)
        n += pull_due(w, now, &rc);
    *elapsed_ns = clock_ns() - begin;
    *fired = n;
    uint64_t rest = 0, at;
    int q = 0;
    while (rc == CWB_OK && (q = cw_wheel_next_wakeup(w, &at)) == 1)
        rest += pull_due(w, at, &rc);
    if (rc == CWB_OK && q < 0)
        rc = CWB_PULL;
    *late = rest;
    cw_wheel_free(w);
    return rc;
}

/*
 * W4, sparse advance: `timers` adds in [1, ticks), then the clock moved to each instant
 * cw_wheel_next_wakeup names, with the due timers pulled, until no timer is pending; all
 * timed. Out: elapsed ns, timers pulled, jumps made (at most max_jumps, or CWB_JUMPS).
 */
int cwb_w4(uint64_t timers, uint64_t ticks, uint64_t seed, uint64_t max_jumps,
           uint64_t *elapsed_ns, uint64_t *fired, uint64_t *jumps) {
    rng r = {seed};
    cw_wheel *w = new_wheel();
    if (w == NULL)
        return CWB_NEW;
    uint64_t n = 0, j = 0, at;
    uint64_t begin = clock_ns();
    int rc = add_drawn(w, &r, timers, 1, ticks);
    int q = 0;
    while (rc == CWB_OK && (q = cw_wheel_next_wakeup(w, &at)) == 1) {
        n += pull_due(w, at, &rc);
        if (++j > max_jumps)
            rc = CWB_JUMPS;
    }
    if (rc == CWB_OK && q < 0)
        rc = CWB_PULL;
    *elapsed_ns = clock_ns() - begin;
    *fired = n;
    *jumps = j;
    cw_wheel_free(w);
    return rc;
}

/*
 * The probes of `callwheel instructions` (callgrind collects only inside functions whose name
 * holds "instructions_probe"): a C caller's add and delete, with nothing around them, so the
 * count is what a C program pays per call, the call into the probe included.
 */
__attribute__((noinline)) int instructions_probe_start_c_wheel(cw_wheel *w, uint64_t deadline,
                                                               uint64_t value, cw_handle *out) {
    return cw_wheel_add(w, deadline, 0, value, out);
}

__attribute__((noinline)) int instructions_probe_stop_c_wheel(cw_wheel *w, cw_handle h) {
    return cw_wheel_del(w, h, NULL);
}
