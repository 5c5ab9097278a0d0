/*
 * The C API checked against the words of its header, function by function: every error code
 * each comment names, NULL pointers and stale or foreign handles, edge values (0, UINT64_MAX,
 * negative ints), and the firing order and windows the comments promise. Time is the caller's
 * (the wheel), explicit ticks (the callout tables) or, for the timer sets and sleeps, short
 * real timers whose waits are all bounded; no check measures how long something took.
 *
 * Each group runs in a child process of its own, so that a crash in one is reported with the
 * group's name and the others still run. A failed check prints its line and values and the
 * group goes on; the program fails if any check failed.
 */
#include <errno.h>
#include <limits.h>
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

/* ------------------------------------------------------------------------------------------ */
/* Checks that report and go on                                                                */

static int failures;

#define EXPECT(cond)                                                                    \
    do {                                                                                \
        checks++;                                                                       \
        if (!(cond)) {                                                                  \
            failures++;                                                                 \
            printf("test_documented: FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
            fflush(stdout);                                                             \
        }                                                                               \
    } while (0)

#define EXPECT_EQ(actual, expected)                                                     \
    do {                                                                                \
        long long a_ = (long long)(actual), e_ = (long long)(expected);                 \
        checks++;                                                                       \
        if (a_ != e_) {                                                                 \
            failures++;                                                                 \
            printf("test_documented: FAIL %s:%d: %s is %lld (%s), expected %s = %lld\n", \
                   __FILE__, __LINE__, #actual, a_,                                     \
                   a_ < 0 ? cw_strerror((int)a_) : "not an error", #expected, e_);      \
            fflush(stdout);                                                             \
        }                                                                               \
    } while (0)

#define EXPECT_U64(actual, expected)                                                    \
    do {                                                                                \
        unsigned long long a_ = (unsigned long long)(actual);                           \
        unsigned long long e_ = (unsigned long long)(expected);                         \
        checks++;                                                                       \
        if (a_ != e_) {                                                                 \
            failures++;                                                                 \
            printf("test_documented: FAIL %s:%d: %s is %llu, expected %s = %llu\n",     \
                   __FILE__, __LINE__, #actual, a_, #expected, e_);                     \
            fflush(stdout);                                                             \
        }                                                                               \
    } while (0)

/* A -1/errno result of the setitimer-shaped calls. */
#define EXPECT_ERRNO(call, err)                                                         \
    do {                                                                                \
        errno = 0;                                                                      \
        int r_ = (call);                                                                \
        int e_ = errno;                                                                 \
        checks++;                                                                       \
        if (r_ != -1 || e_ != (err)) {                                                  \
            failures++;                                                                 \
            printf("test_documented: FAIL %s:%d: %s gave %d errno %d (%s), expected -1 " \
                   "errno %s\n", __FILE__, __LINE__, #call, r_, e_, strerror(e_), #err); \
            fflush(stdout);                                                             \
        }                                                                               \
    } while (0)

static uint64_t mono_ns(void) {
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int same_handle(cw_handle a, cw_handle b) { return a.id == b.id && a.owner == b.owner; }

static cw_handle forge(uint64_t id, uint64_t owner) {
    cw_handle h = {id, owner};
    return h;
}

/* ------------------------------------------------------------------------------------------ */
/* Versions, codes and texts                                                                   */

static void group_general(void) {
    /* cw_version: "as CW_VERSION packs it: compare with CW_VERSION". */
    EXPECT_EQ(cw_version(), CW_VERSION);
    /* cw_version_string: "a static NUL-terminated string ("0.1.0")" with the same numbers. */
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", CW_VERSION_MAJOR, CW_VERSION_MINOR,
             CW_VERSION_PATCH);
    EXPECT(cw_version_string() != NULL && strcmp(cw_version_string(), expected) == 0);

    /* The CW_E* codes: "Equal to -EINVAL on Linux" and so on for each errno-shaped code. */
    EXPECT_EQ(CW_EINVAL, -EINVAL);
    EXPECT_EQ(CW_ENOMEM, -ENOMEM);
    EXPECT_EQ(CW_ESTALE, -ESTALE);
    EXPECT_EQ(CW_EDEADLK, -EDEADLK);
    EXPECT_EQ(CW_EBUSY, -EBUSY);
    EXPECT_EQ(CW_ERANGE, -ERANGE);
    EXPECT_EQ(CW_ENOSPC, -ENOSPC);
    EXPECT_EQ(CW_ETIMEDOUT, -ETIMEDOUT);

    /* cw_strerror and the interfaces' texts: "Never NULL; unknown codes get a generic text". */
    const int codes[] = {0,         1,         INT_MAX,   INT_MIN,       -1,
                         -9999,     CW_EINVAL, CW_ENOMEM, CW_ESTALE,     CW_EDEADLK,
                         CW_EBUSY,  CW_ERANGE, CW_EPANIC, CW_EINVARIANT, CW_ENOSPC,
                         CW_ETIMEDOUT};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        int c = codes[i];
        EXPECT(cw_strerror(c) != NULL && cw_strerror(c)[0] != '\0');
        EXPECT(cw_wheel_strerror(c) != NULL);
        EXPECT(cw_callout_strerror(c) != NULL);
        EXPECT(cw_timerset_strerror(c) != NULL);
        EXPECT(cw_sleep_strerror(c) != NULL);
    }
    /* cw_strerror: "any non-negative value is a success": a count reads as success too. */
    EXPECT(strcmp(cw_strerror(5), cw_strerror(0)) == 0);
    EXPECT(strcmp(cw_strerror(CW_EINVAL), cw_strerror(0)) != 0);

    /* cw_c_prel: "the same value as cw_c_prel(n)" for n from 0 to CW_C_PREL_MAX. */
    for (int n = 0; n <= CW_C_PREL_MAX; n++)
        EXPECT_EQ(cw_c_prel(n), CW_C_PREL(n));
    /* cw_c_prel: "any other n gives CW_EINVAL". */
    EXPECT_EQ(cw_c_prel(-1), CW_EINVAL);
    EXPECT_EQ(cw_c_prel(CW_C_PREL_MAX + 1), CW_EINVAL);
    EXPECT_EQ(cw_c_prel(INT_MIN), CW_EINVAL);
    EXPECT_EQ(cw_c_prel(INT_MAX), CW_EINVAL);

    /* The sbt constants: "SBT_1S / 1000, truncated" and so on. */
    EXPECT_EQ(CW_SBT_1S, (int64_t)1 << 32);
    EXPECT_EQ(CW_SBT_1MS, CW_SBT_1S / 1000);
    EXPECT_EQ(CW_SBT_1US, CW_SBT_1S / 1000000);
    EXPECT_EQ(CW_SBT_1NS, CW_SBT_1S / 1000000000);
}

/* ------------------------------------------------------------------------------------------ */
/* The caller-driven wheel                                                                     */

static cw_wheel *wheel_at(size_t capacity, uint64_t now) {
    cw_wheel *w = NULL;
    CHECK(cw_wheel_new(capacity, now, &w) == 0 && w != NULL);
    return w;
}

static cw_wheel_info info_of(const cw_wheel *w) {
    cw_wheel_info i;
    CHECK(cw_wheel_counts(w, &i) == 0);
    return i;
}

static void wheel_new_and_reserve(void) {
    cw_wheel *w = (cw_wheel *)&w;
    /* cw_wheel_new: "CW_EINVAL (NULL `out`, capacity too large)". */
    EXPECT_EQ(cw_wheel_new(0, 0, NULL), CW_EINVAL);
    /* cw_wheel_new: capacity "below 2^32 - 707": that value itself is too large; "`out`:
     * receives the wheel, or NULL on failure". */
    EXPECT_EQ(cw_wheel_new((size_t)4294967296u - 707, 0, &w), CW_EINVAL);
    EXPECT(w == NULL);
    w = (cw_wheel *)&w;
    EXPECT_EQ(cw_wheel_new(SIZE_MAX, 0, &w), CW_EINVAL);
    EXPECT(w == NULL);
    /* cw_wheel_new: "time starts at `now`", any value of the caller's clock. */
    w = wheel_at(0, UINT64_MAX);
    EXPECT_U64(info_of(w).now, UINT64_MAX);
    cw_wheel_free(w);

    /* cw_wheel_free: "NULL is ignored". */
    cw_wheel_free(NULL);

    /* cw_wheel_reserve: "CW_EINVAL for NULL `w`". */
    EXPECT_EQ(cw_wheel_reserve(NULL, 1), CW_EINVAL);
    /* cw_wheel_reserve: "On a wheel of fixed capacity it checks that they fit". */
    w = wheel_at(4, 0);
    EXPECT_EQ(cw_wheel_reserve(w, 0), 0);
    EXPECT_EQ(cw_wheel_reserve(w, 4), 0);
    EXPECT_EQ(cw_wheel_reserve(w, 5), CW_ENOMEM);
    cw_handle h;
    EXPECT_EQ(cw_wheel_add(w, 10, 0, 1, &h), 0);
    EXPECT_EQ(cw_wheel_add(w, 20, 0, 2, &h), 0);
    /* cw_wheel_reserve: room for `additional` more "than are pending". */
    EXPECT_EQ(cw_wheel_reserve(w, 2), 0);
    EXPECT_EQ(cw_wheel_reserve(w, 3), CW_ENOMEM);
    /* cw_wheel_add: "CW_ENOMEM (a fixed capacity is full ...: nothing changed)". */
    EXPECT_EQ(cw_wheel_add(w, 30, 0, 3, &h), 0);
    EXPECT_EQ(cw_wheel_add(w, 40, 0, 4, &h), 0);
    cw_handle kept = h;
    cw_handle untouched = forge(77, 77);
    EXPECT_EQ(cw_wheel_add(w, 50, 0, 5, &untouched), CW_ENOMEM);
    EXPECT_EQ(cw_wheel_add_in(w, 50, 0, 5, &untouched), CW_ENOMEM);
    EXPECT_EQ(cw_wheel_add_periodic(w, 50, 5, 0, CW_MISSED_BURST, 5, &untouched), CW_ENOMEM);
    EXPECT_EQ(info_of(w).pending, 4);
    EXPECT_EQ(cw_wheel_pending(w, kept, NULL), 1);
    cw_wheel_free(w);

    /* cw_wheel_reserve: CW_ENOMEM past "the wheel's index space of 2^32 - 707 timers". */
    w = wheel_at(0, 0);
    EXPECT_EQ(cw_wheel_reserve(w, (size_t)4294967296u), CW_ENOMEM);
    EXPECT_EQ(cw_wheel_reserve(w, SIZE_MAX), CW_ENOMEM);
    EXPECT_EQ(cw_wheel_check(w, NULL, 0), 0);
    cw_wheel_free(w);
}

static void wheel_null_and_handles(void) {
    cw_wheel *w = wheel_at(0, 100);
    cw_wheel *other = wheel_at(0, 100);
    cw_handle h, o;
    cw_expiry e;
    cw_wheel_info inf;
    uint64_t u = 0;
    size_t cursor = 0;
    int pol = 0;

    /* Every wheel function: "CW_EINVAL for NULL `w`" (and for each NULL out-pointer named). */
    EXPECT_EQ(cw_wheel_add(NULL, 1, 0, 0, &h), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add(w, 1, 0, 0, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add_in(NULL, 1, 0, 0, &h), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add_in(w, 1, 0, 0, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add_periodic(NULL, 1, 1, 0, CW_MISSED_BURST, 0, &h), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add_periodic(w, 1, 1, 0, CW_MISSED_BURST, 0, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_del(NULL, h, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_reset(NULL, h, 1, 0), CW_EINVAL);
    EXPECT_EQ(cw_wheel_reset_in(NULL, h, 1, 0), CW_EINVAL);
    EXPECT_EQ(cw_wheel_pending(NULL, h, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_update(NULL, 1), CW_EINVAL);
    EXPECT_EQ(cw_wheel_counts(NULL, &inf), CW_EINVAL);
    EXPECT_EQ(cw_wheel_counts(w, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_check(NULL, NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_wheel_get(NULL, &e), CW_EINVAL);
    EXPECT_EQ(cw_wheel_get(w, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_get_many(NULL, &e, 1), CW_EINVAL);
    EXPECT_EQ(cw_wheel_get_many(w, NULL, 1), CW_EINVAL);
    EXPECT_EQ(cw_wheel_advance(NULL, 200, &e, 1), CW_EINVAL);
    EXPECT_EQ(cw_wheel_expire(NULL, 200, NULL, NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_wheel_next_wakeup(NULL, &u), CW_EINVAL);
    EXPECT_EQ(cw_wheel_next_wakeup(w, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_timeout(NULL, &u), CW_EINVAL);
    EXPECT_EQ(cw_wheel_timeout(w, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_period(NULL, h, &u, &pol), CW_EINVAL);
    EXPECT_EQ(cw_wheel_set_period(NULL, h, 5), CW_EINVAL);
    EXPECT_EQ(cw_wheel_next_pending(NULL, &cursor, &e), CW_EINVAL);
    EXPECT_EQ(cw_wheel_next_pending(w, NULL, &e), CW_EINVAL);
    EXPECT_EQ(cw_wheel_next_pending(w, &cursor, NULL), CW_EINVAL);
    EXPECT_EQ(cw_wheel_step(NULL, 1), CW_EINVAL);
    EXPECT_EQ(cw_wheel_expired(NULL), CW_EINVAL);
    /* Each refused call above: "a negative CW_E* code on failure, and then nothing changed". */
    inf = info_of(w);
    EXPECT_EQ(inf.pending, 0);
    EXPECT_EQ(inf.added, 0);
    EXPECT_U64(inf.now, 100);

    EXPECT_EQ(cw_wheel_add(w, 500, 0, 42, &h), 0);
    EXPECT_EQ(cw_wheel_add(other, 500, 0, 43, &o), 0);
    /* cw_handle: owner is "never 0 for an issued handle". */
    EXPECT(h.owner != 0 && o.owner != 0);
    /* cw_handle: two wheels' handles differ ("compare both to tell two handles apart"). */
    EXPECT(!same_handle(h, o));

    /* CW_ESTALE: a handle "issued by another wheel ... or made up. Nothing changed." */
    const cw_handle bad[] = {
        o,
        forge(h.id, o.owner),
        forge(h.id, 0),
        forge(0, 0),
        forge(UINT64_MAX, UINT64_MAX),
        forge(h.id, UINT64_MAX),
        forge(h.id + ((uint64_t)1 << 32), h.owner), /* the same index, a later generation */
        forge(h.id ^ 1, h.owner),                   /* a neighbouring index */
        forge(UINT64_MAX, h.owner),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* Skip a forgery that happens to be h itself. */
        if (same_handle(bad[i], h))
            continue;
        u = 12345;
        EXPECT_EQ(cw_wheel_del(w, bad[i], &u), CW_ESTALE);
        EXPECT_U64(u, 12345);
        EXPECT_EQ(cw_wheel_reset(w, bad[i], 50, 0), CW_ESTALE);
        EXPECT_EQ(cw_wheel_reset_in(w, bad[i], 50, 0), CW_ESTALE);
        /* cw_wheel_pending: "Whether `handle` names a pending timer of this wheel: 1 ... or 0". */
        EXPECT_EQ(cw_wheel_pending(w, bad[i], &u), 0);
        EXPECT_EQ(cw_wheel_period(w, bad[i], &u, &pol), CW_ESTALE);
        EXPECT_EQ(cw_wheel_set_period(w, bad[i], 5), CW_ESTALE);
    }
    /* ... and nothing changed: both timers still pending at their deadlines. */
    EXPECT_EQ(cw_wheel_pending(w, h, &u), 1);
    EXPECT_U64(u, 500);
    EXPECT_EQ(cw_wheel_pending(other, o, &u), 1);
    EXPECT_U64(u, 500);
    inf = info_of(w);
    EXPECT_EQ(inf.pending, 1);
    EXPECT_EQ(inf.deleted, 0);
    EXPECT_EQ(inf.reset, 0);

    /* cw_wheel_del: "`value` (may be NULL) receives the value it carried". */
    EXPECT_EQ(cw_wheel_del(w, h, &u), 0);
    EXPECT_U64(u, 42);
    /* A deleted timer's handle: "CW_ESTALE ... (it fired, was deleted ...)": double delete. */
    EXPECT_EQ(cw_wheel_del(w, h, NULL), CW_ESTALE);
    EXPECT_EQ(cw_wheel_reset(w, h, 600, 0), CW_ESTALE);
    EXPECT_EQ(cw_wheel_pending(w, h, NULL), 0);
    /* A new timer reusing the slot does not revive the old handle. */
    cw_handle h2;
    EXPECT_EQ(cw_wheel_add(w, 700, 0, 44, &h2), 0);
    EXPECT(!same_handle(h, h2));
    EXPECT_EQ(cw_wheel_del(w, h, NULL), CW_ESTALE);
    EXPECT_EQ(cw_wheel_pending(w, h2, NULL), 1);

    /* cw_expiry.handle: "A one-shot timer's is already stale". */
    EXPECT_EQ(cw_wheel_update(w, 700), 0);
    EXPECT_EQ(cw_wheel_get(w, &e), 1);
    EXPECT(same_handle(e.handle, h2));
    EXPECT_U64(e.value, 44);
    EXPECT_U64(e.deadline, 700);
    EXPECT_U64(e.overruns, 0);
    EXPECT_EQ(cw_wheel_del(w, h2, NULL), CW_ESTALE);
    EXPECT_EQ(cw_wheel_pending(w, h2, NULL), 0);
    EXPECT_EQ(cw_wheel_period(w, h2, NULL, NULL), CW_ESTALE);

    /* cw_wheel_check: "Returns 0 when every invariant holds"; `buf` may be NULL. */
    char buf[64];
    EXPECT_EQ(cw_wheel_check(w, buf, sizeof buf), 0);
    EXPECT_EQ(cw_wheel_check(w, NULL, 0), 0);
    EXPECT_EQ(cw_wheel_check(other, buf, 0), 0);
    cw_wheel_free(w);
    cw_wheel_free(other);
}

static void wheel_time_edges(void) {
    cw_wheel *w = wheel_at(0, 1000);
    cw_handle h;
    cw_expiry e[4];
    uint64_t u;

    /* cw_wheel_update: "CW_ERANGE when `now` is earlier than the wheel's time ... nothing
     * changes". */
    EXPECT_EQ(cw_wheel_update(w, 999), CW_ERANGE);
    EXPECT_U64(info_of(w).now, 1000);
    EXPECT_EQ(cw_wheel_update(w, 1000), 0);

    /* cw_wheel_add_in: "CW_ERANGE when the deadline would pass UINT64_MAX" (nothing added). */
    EXPECT_EQ(cw_wheel_add_in(w, UINT64_MAX - 999, 0, 1, &h), CW_ERANGE);
    EXPECT_EQ(cw_wheel_add_in(w, UINT64_MAX, 0, 1, &h), CW_ERANGE);
    EXPECT_EQ(info_of(w).pending, 0);
    EXPECT_EQ(info_of(w).added, 0);
    /* ... and a deadline of exactly UINT64_MAX does not pass it. */
    EXPECT_EQ(cw_wheel_add_in(w, UINT64_MAX - 1000, 0, 1, &h), 0);
    EXPECT_EQ(cw_wheel_pending(w, h, &u), 1);
    EXPECT_U64(u, UINT64_MAX);

    /* cw_wheel_reset_in: "CW_ERANGE when the deadline would pass UINT64_MAX" (the timer keeps
     * its deadline). */
    EXPECT_EQ(cw_wheel_reset_in(w, h, UINT64_MAX, 0), CW_ERANGE);
    EXPECT_EQ(cw_wheel_pending(w, h, &u), 1);
    EXPECT_U64(u, UINT64_MAX);
    /* cw_wheel_reset_in: "to `delay` nanoseconds after the wheel's time". */
    EXPECT_EQ(cw_wheel_reset_in(w, h, 5, 0), 0);
    EXPECT_EQ(cw_wheel_pending(w, h, &u), 1);
    EXPECT_U64(u, 1005);

    /* cw_wheel_step: "CW_ERANGE when that passes the end of time, UINT64_MAX (nothing
     * changes)". */
    EXPECT_EQ(cw_wheel_step(w, UINT64_MAX), CW_ERANGE);
    EXPECT_EQ(cw_wheel_step(w, UINT64_MAX - 999), CW_ERANGE);
    EXPECT_U64(info_of(w).now, 1000);
    EXPECT_EQ(cw_wheel_step(w, 0), 0);
    EXPECT_EQ(cw_wheel_step(w, 4), 0);
    EXPECT_U64(info_of(w).now, 1004);
    EXPECT_EQ(cw_wheel_get(w, e), 0);
    EXPECT_EQ(cw_wheel_step(w, 1), 0);
    EXPECT_EQ(cw_wheel_get(w, e), 1);
    EXPECT_U64(e[0].deadline, 1005);

    /* cw_wheel_advance: "Every argument is checked before the wheel's time moves, so a refused
     * call changes nothing" (NULL `out`, `max` 0, an earlier `now`). */
    EXPECT_EQ(cw_wheel_add(w, 1100, 0, 7, &h), 0);
    EXPECT_EQ(cw_wheel_advance(w, 2000, NULL, 4), CW_EINVAL);
    EXPECT_U64(info_of(w).now, 1005);
    EXPECT_EQ(cw_wheel_advance(w, 2000, e, 0), CW_EINVAL);
    EXPECT_U64(info_of(w).now, 1005);
    EXPECT_EQ(cw_wheel_advance(w, 1004, e, 4), CW_ERANGE);
    EXPECT_U64(info_of(w).now, 1005);
    EXPECT_EQ(cw_wheel_pending(w, h, NULL), 1);
    /* cw_wheel_get_many: "CW_EINVAL for ... a `max` of 0". */
    EXPECT_EQ(cw_wheel_get_many(w, e, 0), CW_EINVAL);

    /* cw_wheel_expire: "CW_EINVAL for NULL `w` or `fn`" — and, as every refused call,
     * "nothing changed": the time has not moved. */
    EXPECT_EQ(cw_wheel_expire(w, 2000, NULL, NULL, 0), CW_EINVAL);
    EXPECT_U64(info_of(w).now, 1005);
    EXPECT_EQ(cw_wheel_pending(w, h, NULL), 1);
    cw_wheel_free(w);

    /* The end of time: a wheel at UINT64_MAX. cw_wheel_step(0) is no change; one more
     * nanosecond "passes the end of time". */
    w = wheel_at(0, UINT64_MAX);
    EXPECT_EQ(cw_wheel_step(w, 0), 0);
    EXPECT_EQ(cw_wheel_step(w, 1), CW_ERANGE);
    EXPECT_EQ(cw_wheel_update(w, UINT64_MAX), 0);
    EXPECT_EQ(cw_wheel_add_in(w, 1, 0, 1, &h), CW_ERANGE);
    EXPECT_EQ(cw_wheel_add_in(w, 0, UINT64_MAX, 1, &h), 0);
    /* cw_wheel_add: "one at or before the wheel's time fires at the next cw_wheel_get". */
    EXPECT_EQ(cw_wheel_add(w, 0, 0, 2, &h), 0);
    EXPECT_EQ(cw_wheel_get_many(w, e, 4), 2);
    EXPECT_U64(e[0].value, 1);
    EXPECT_U64(e[1].value, 2);
    EXPECT_EQ(cw_wheel_get(w, e), 0);
    cw_wheel_free(w);
}

/* The firing instant of a timer (deadline d, tolerance tol) found by pulls on fresh wheels:
 * the least wheel time at which cw_wheel_get returns it. UINT64_MAX if it never fires by the
 * end of its window. */
static int fires_by(uint64_t d, uint64_t tol, uint64_t t) {
    cw_wheel *w = wheel_at(0, 0);
    cw_handle h;
    cw_expiry e;
    CHECK(cw_wheel_add(w, d, tol, 1, &h) == 0);
    CHECK(cw_wheel_update(w, t) == 0);
    int got = cw_wheel_get(w, &e);
    CHECK(got == 0 || got == 1);
    cw_wheel_free(w);
    return got;
}

static uint64_t window_end(uint64_t d, uint64_t tol) {
    uint64_t kept = tol;
    if (tol >= ((uint64_t)1 << 30)) {
        /* "kept to 25 significant bits, rounded down" */
        int top = 63 - __builtin_clzll(tol);
        kept = tol & ~((((uint64_t)1) << (top - 24)) - 1);
    }
    return d > UINT64_MAX - kept ? UINT64_MAX : d + kept;
}

static uint64_t firing_instant(uint64_t d, uint64_t tol) {
    uint64_t hi = window_end(d, tol);
    if (!fires_by(d, tol, hi))
        return UINT64_MAX;
    uint64_t lo = 0; /* d > 0 in every use: nothing fires at 0 */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (fires_by(d, tol, mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void wheel_windows_and_order(void) {
    /* cw_wheel_get: a timer with tolerance 0 is due at "its deadline". */
    EXPECT(!fires_by(1000, 0, 999));
    EXPECT(fires_by(1000, 0, 1000));

    /* cw_wheel_get: with a window, "never before its deadline, never after its window", at a
     * multiple of 64^l "in the window's first eighth, or the deadline". */
    const uint64_t ds[] = {1, 63, 64, 1000, 4096 + 1, 1000000007, 5000000000000ull,
                           ((uint64_t)1 << 40) + 3};
    const uint64_t tols[] = {1, 7, 8, 63, 64, 511, 512, 4096, 100000, 1000000,
                             ((uint64_t)1 << 30) + 12345, 123456789012ull};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        for (size_t j = 0; j < sizeof tols / sizeof tols[0]; j++) {
            uint64_t d = ds[i], tol = tols[j];
            uint64_t at = firing_instant(d, tol);
            uint64_t end = window_end(d, tol);
            checks++;
            if (at < d || at > end || at > d + (end - d) / 8 + 1 || (at != d && at % 64 != 0)) {
                failures++;
                printf("test_documented: FAIL %s:%d: deadline %llu tolerance %llu fires at %llu "
                       "(window end %llu)\n",
                       __FILE__, __LINE__, (unsigned long long)d, (unsigned long long)tol,
                       (unsigned long long)at, (unsigned long long)end);
            }
        }
    }

    /* cw_wheel_add: "the end saturates at UINT64_MAX"; cw_wheel_next_wakeup: "the earliest
     * window end among the pending timers". */
    cw_wheel *w = wheel_at(0, 10);
    cw_handle h;
    cw_expiry e[64];
    uint64_t u;
    EXPECT_EQ(cw_wheel_get(w, e), 0);
    EXPECT_EQ(cw_wheel_add(w, UINT64_MAX - 10, 100, 1, &h), 0);
    EXPECT_EQ(cw_wheel_next_wakeup(w, &u), 1);
    EXPECT(u >= UINT64_MAX - 10);
    /* cw_wheel_add: a tolerance of 2^30 or more "is kept to 25 significant bits, rounded
     * down, so the end is earlier by less than 2^-24 of it, never later". */
    uint64_t big = ((uint64_t)1 << 40) + 0xffffff;
    EXPECT_EQ(cw_wheel_add(w, 1000, big, 2, &h), 0);
    EXPECT_EQ(cw_wheel_next_wakeup(w, &u), 1);
    EXPECT(u <= 1000 + big);
    EXPECT(u > 1000 + big - (big >> 24));
    /* cw_wheel_timeout: "cw_wheel_next_wakeup relative to the wheel's time". */
    uint64_t ns;
    EXPECT_EQ(cw_wheel_timeout(w, &ns), 1);
    EXPECT_U64(ns, u - 10);
    cw_wheel_free(w);

    /* cw_wheel_next_wakeup / cw_wheel_timeout: "0 when no timer is pending". */
    w = wheel_at(0, 0);
    u = 77;
    EXPECT_EQ(cw_wheel_next_wakeup(w, &u), 0);
    EXPECT_EQ(cw_wheel_timeout(w, &u), 0);
    /* cw_wheel_expired: 0 with nothing armed. */
    EXPECT_EQ(cw_wheel_expired(w), 0);
    /* cw_wheel_next_wakeup: "the wheel's time when timers are already due"; cw_wheel_timeout
     * "0 when timers are due"; cw_wheel_expired "never 0 while one is". */
    EXPECT_EQ(cw_wheel_add(w, 50, 0, 1, &h), 0);
    EXPECT_EQ(cw_wheel_update(w, 60), 0);
    EXPECT_EQ(cw_wheel_next_wakeup(w, &u), 1);
    EXPECT_U64(u, 60);
    EXPECT_EQ(cw_wheel_timeout(w, &ns), 1);
    EXPECT_U64(ns, 0);
    EXPECT_EQ(cw_wheel_expired(w), 1);
    /* cw_wheel_next_pending: "Timers due but not yet pulled are pending". */
    size_t cursor = 0;
    EXPECT_EQ(cw_wheel_next_pending(w, &cursor, e), 1);
    EXPECT_U64(e[0].value, 1);
    EXPECT_EQ(cw_wheel_next_pending(w, &cursor, e), 0);
    /* cw_wheel_next_pending: a cursor past every position is "past the last pending timer". */
    cursor = SIZE_MAX;
    EXPECT_EQ(cw_wheel_next_pending(w, &cursor, e), 0);
    EXPECT_EQ(cw_wheel_get(w, e), 1);
    /* cw_wheel_expired: "0 after a pull that found nothing". */
    EXPECT_EQ(cw_wheel_get(w, e), 0);
    EXPECT_EQ(cw_wheel_expired(w), 0);
    cw_wheel_free(w);

    /* cw_wheel_get: "Order: by firing instant, timers with equal instants in the order they
     * were armed" — many windows at once, against the instants found above one by one. */
    enum { N = 40 };
    uint64_t d[N], tol[N], inst[N];
    w = wheel_at(0, 0);
    for (int i = 0; i < N; i++) {
        d[i] = 1 + rnd() % 20000;
        tol[i] = (i % 3 == 0) ? 0 : rnd() % 5000;
        if (i % 7 == 0 && i > 0) { /* repeats, to exercise equal instants */
            d[i] = d[i - 1];
            tol[i] = tol[i - 1];
        }
        inst[i] = firing_instant(d[i], tol[i]);
        EXPECT_EQ(cw_wheel_add(w, d[i], tol[i], (uint64_t)i, &h), 0);
    }
    EXPECT_EQ(cw_wheel_update(w, 30000), 0);
    int got = cw_wheel_get_many(w, e, 64);
    EXPECT_EQ(got, N);
    for (int k = 1; k < got; k++) {
        uint64_t a = e[k - 1].value, b = e[k].value;
        checks++;
        if (!(inst[a] < inst[b] || (inst[a] == inst[b] && a < b))) {
            failures++;
            printf("test_documented: FAIL %s:%d: pull %d: timer %llu (instant %llu) before "
                   "timer %llu (instant %llu)\n",
                   __FILE__, __LINE__, k, (unsigned long long)a, (unsigned long long)inst[a],
                   (unsigned long long)b, (unsigned long long)inst[b]);
        }
    }
    cw_wheel_free(w);

    /* cw_wheel_get: "Overdue timers armed by add or reset come out in the order they were
     * armed", and each "never before its deadline". */
    w = wheel_at(0, 1000);
    EXPECT_EQ(cw_wheel_get(w, e), 0); /* the pulls have reached the wheel's time */
    EXPECT_EQ(cw_wheel_add(w, 500, 0, 1, &h), 0);
    EXPECT_EQ(cw_wheel_add(w, 200, 0, 2, &h), 0);
    EXPECT_EQ(cw_wheel_add(w, 900, 0, 3, &h), 0);
    EXPECT_EQ(cw_wheel_add(w, 1000, 0, 4, &h), 0);
    EXPECT_EQ(cw_wheel_add(w, 1001, 0, 5, &h), 0);
    EXPECT_EQ(cw_wheel_get_many(w, e, 8), 4);
    for (int k = 0; k < 4; k++)
        EXPECT_U64(e[k].value, (uint64_t)k + 1);
    /* cw_wheel_get_many: "fewer than `max` only when no other timer is due". */
    EXPECT_EQ(cw_wheel_get(w, e), 0);
    EXPECT_EQ(cw_wheel_pending(w, h, NULL), 1);
    cw_wheel_free(w);

    /* cw_wheel_get_many: "every timer it returns has fired, so deleting one of them ... is
     * CW_ESTALE". */
    w = wheel_at(0, 0);
    cw_handle hs[3];
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(cw_wheel_add(w, 10, 0, (uint64_t)i, &hs[i]), 0);
    EXPECT_EQ(cw_wheel_advance(w, 10, e, 2), 2);
    EXPECT_EQ(cw_wheel_del(w, hs[0], NULL), CW_ESTALE);
    EXPECT_EQ(cw_wheel_del(w, hs[1], NULL), CW_ESTALE);
    EXPECT_EQ(cw_wheel_pending(w, hs[2], NULL), 1);
    /* cw_wheel_reset keeps "its handle and value". */
    EXPECT_EQ(cw_wheel_reset(w, hs[2], 20, 0), 0);
    EXPECT_EQ(cw_wheel_advance(w, 20, e, 4), 1);
    EXPECT(same_handle(e[0].handle, hs[2]));
    EXPECT_U64(e[0].value, 2);
    EXPECT_U64(e[0].deadline, 20);
    cw_wheel_free(w);
}

static void wheel_periodic(void) {
    cw_wheel *w = wheel_at(0, 0);
    cw_handle h;
    cw_expiry e[8];
    uint64_t per = 0;
    int pol = -5;

    /* cw_wheel_add_periodic: "CW_EINVAL (NULL `w` or `out`, a zero period, an unknown
     * `missed`)", nothing added. */
    EXPECT_EQ(cw_wheel_add_periodic(w, 100, 0, 0, CW_MISSED_BURST, 1, &h), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add_periodic(w, 100, 10, 0, 3, 1, &h), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add_periodic(w, 100, 10, 0, -1, 1, &h), CW_EINVAL);
    EXPECT_EQ(cw_wheel_add_periodic(w, 100, 10, 0, INT_MIN, 1, &h), CW_EINVAL);
    EXPECT_EQ(info_of(w).added, 0);

    /* "every `period` nanoseconds after its previous deadline (never drifting with late
     * pulls)"; "Its handle stays valid across firings". */
    EXPECT_EQ(cw_wheel_add_periodic(w, 100, 10, 0, CW_MISSED_BURST, 9, &h), 0);
    EXPECT_EQ(cw_wheel_advance(w, 105, e, 8), 1);
    EXPECT_U64(e[0].deadline, 100);
    EXPECT(same_handle(e[0].handle, h));
    EXPECT_EQ(cw_wheel_advance(w, 117, e, 8), 1);
    EXPECT_U64(e[0].deadline, 110);
    EXPECT_EQ(cw_wheel_pending(w, h, &per), 1);
    EXPECT_U64(per, 120);
    /* cw_wheel_period: "1 with `period` ... and `missed_policy` ... filled". */
    EXPECT_EQ(cw_wheel_period(w, h, &per, &pol), 1);
    EXPECT_U64(per, 10);
    EXPECT_EQ(pol, CW_MISSED_BURST);
    EXPECT_EQ(cw_wheel_period(w, h, NULL, NULL), 1);
    /* CW_MISSED_BURST: "one period per pull" while catching up. */
    EXPECT_EQ(cw_wheel_update(w, 145), 0);
    uint64_t want = 120;
    for (int k = 0; k < 3; k++) {
        EXPECT_EQ(cw_wheel_get(w, e), 1);
        EXPECT_U64(e[0].deadline, want);
        want += 10;
    }
    EXPECT_EQ(cw_wheel_get(w, e), 0);

    /* cw_wheel_set_period: "the deadline it is armed for now stays". */
    EXPECT_EQ(cw_wheel_set_period(w, h, 100), 0);
    EXPECT_EQ(cw_wheel_pending(w, h, &per), 1);
    EXPECT_U64(per, 150);
    EXPECT_EQ(cw_wheel_advance(w, 150, e, 8), 1);
    EXPECT_EQ(cw_wheel_pending(w, h, &per), 1);
    EXPECT_U64(per, 250);
    /* cw_wheel_set_period: "CW_EINVAL (... a zero period ...; nothing changes)". */
    EXPECT_EQ(cw_wheel_set_period(w, h, 0), CW_EINVAL);
    EXPECT_EQ(cw_wheel_period(w, h, &per, NULL), 1);
    EXPECT_U64(per, 100);
    /* cw_wheel_reset: "a periodic timer keeps its period". */
    EXPECT_EQ(cw_wheel_reset(w, h, 300, 0), 0);
    EXPECT_EQ(cw_wheel_period(w, h, &per, NULL), 1);
    EXPECT_U64(per, 100);
    EXPECT_EQ(cw_wheel_advance(w, 300, e, 8), 1);
    EXPECT_EQ(cw_wheel_pending(w, h, &per), 1);
    EXPECT_U64(per, 400);

    /* cw_wheel_period on a one-shot: "0 for a pending one-shot timer (nothing written)";
     * cw_wheel_set_period: "CW_EINVAL (... `handle` names a one-shot timer; nothing
     * changes)". */
    cw_handle one;
    EXPECT_EQ(cw_wheel_add(w, 1000, 0, 1, &one), 0);
    per = 4242;
    pol = 4242;
    EXPECT_EQ(cw_wheel_period(w, one, &per, &pol), 0);
    EXPECT_U64(per, 4242);
    EXPECT_EQ(pol, 4242);
    EXPECT_EQ(cw_wheel_set_period(w, one, 50), CW_EINVAL);
    EXPECT_EQ(cw_wheel_pending(w, one, &per), 1);
    EXPECT_U64(per, 1000);

    /* cw_wheel_del stops a periodic timer; its handle is then stale. */
    EXPECT_EQ(cw_wheel_del(w, h, NULL), 0);
    EXPECT_EQ(cw_wheel_period(w, h, NULL, NULL), CW_ESTALE);
    EXPECT_EQ(cw_wheel_set_period(w, h, 5), CW_ESTALE);
    cw_wheel_free(w);

    /* CW_MISSED_SKIP: "the next deadline is the first multiple of the interval, counted from
     * its first deadline, after the reap"; "each expiry reports the periods it missed". */
    w = wheel_at(0, 0);
    EXPECT_EQ(cw_wheel_add_periodic(w, 100, 10, 0, CW_MISSED_SKIP, 1, &h), 0);
    EXPECT_EQ(cw_wheel_advance(w, 135, e, 8), 1);
    EXPECT_U64(e[0].deadline, 100);
    EXPECT_U64(e[0].overruns, 3);
    EXPECT_EQ(cw_wheel_pending(w, h, &per), 1);
    EXPECT_U64(per, 140);
    EXPECT_EQ(cw_wheel_period(w, h, NULL, &pol), 1);
    EXPECT_EQ(pol, CW_MISSED_SKIP);
    cw_wheel_free(w);

    /* CW_MISSED_DELAY: "the next period starts at the reap; missed periods are dropped and
     * counted". */
    w = wheel_at(0, 0);
    EXPECT_EQ(cw_wheel_add_periodic(w, 100, 10, 0, CW_MISSED_DELAY, 1, &h), 0);
    EXPECT_EQ(cw_wheel_advance(w, 135, e, 8), 1);
    EXPECT_U64(e[0].deadline, 100);
    EXPECT_U64(e[0].overruns, 3);
    EXPECT_EQ(cw_wheel_pending(w, h, &per), 1);
    EXPECT_U64(per, 145);
    cw_wheel_free(w);

    /* cw_wheel_add_periodic: "A timer whose next deadline would pass UINT64_MAX fires its last
     * time and is gone". */
    w = wheel_at(0, 0);
    EXPECT_EQ(cw_wheel_add_periodic(w, UINT64_MAX - 5, 10, 0, CW_MISSED_BURST, 1, &h), 0);
    EXPECT_EQ(cw_wheel_advance(w, UINT64_MAX, e, 8), 1);
    EXPECT_U64(e[0].deadline, UINT64_MAX - 5);
    EXPECT_EQ(cw_wheel_pending(w, h, NULL), 0);
    EXPECT_EQ(cw_wheel_del(w, h, NULL), CW_ESTALE);
    EXPECT_EQ(cw_wheel_get(w, e), 0);
    EXPECT_EQ(info_of(w).pending, 0);
    /* ... and a period of UINT64_MAX from a small first deadline is the same. */
    cw_wheel_free(w);
    w = wheel_at(0, 0);
    EXPECT_EQ(cw_wheel_add_periodic(w, 5, UINT64_MAX, 0, CW_MISSED_SKIP, 1, &h), 0);
    EXPECT_EQ(cw_wheel_advance(w, 5, e, 8), 1);
    EXPECT_EQ(cw_wheel_pending(w, h, NULL), 0);
    cw_wheel_free(w);

    /* cw_wheel_counts: "Timers fired (periodic ones once per firing), ever", added, deleted,
     * reset. */
    w = wheel_at(0, 0);
    EXPECT_EQ(cw_wheel_add_periodic(w, 10, 10, 0, CW_MISSED_BURST, 1, &h), 0);
    EXPECT_EQ(cw_wheel_add(w, 1000, 0, 2, &one), 0);
    EXPECT_EQ(cw_wheel_reset(w, one, 2000, 0), 0);
    EXPECT_EQ(cw_wheel_advance(w, 10, e, 8), 1);
    EXPECT_EQ(cw_wheel_advance(w, 20, e, 8), 1);
    EXPECT_EQ(cw_wheel_del(w, one, NULL), 0);
    cw_wheel_info inf = info_of(w);
    EXPECT_EQ(inf.pending, 1);
    EXPECT_U64(inf.added, 2);
    EXPECT_U64(inf.deleted, 1);
    EXPECT_U64(inf.reset, 1);
    EXPECT_U64(inf.fired, 2);
    EXPECT_U64(inf.now, 20);
    cw_wheel_free(w);
}

struct expire_ctx {
    cw_wheel *w;
    int calls;
    uint64_t values[16];
    cw_handle victim;
    int del_rc;
};

static void on_expiry(void *arg, const cw_expiry *e) {
    struct expire_ctx *c = arg;
    if (c->calls < 16)
        c->values[c->calls] = e->value;
    c->calls++;
    /* "it may call any function on this wheel but cw_wheel_free" */
    if (e->value == 1)
        c->del_rc = cw_wheel_del(c->w, c->victim, NULL);
}

static void wheel_expire(void) {
    struct expire_ctx c = {0};
    c.w = wheel_at(0, 0);
    cw_handle h;
    for (uint64_t v = 1; v <= 5; v++)
        EXPECT_EQ(cw_wheel_add(c.w, 10 * v, 0, v, &h), 0);
    c.victim = h; /* value 5 */
    /* cw_wheel_expire: "CW_ERANGE for a `now` earlier than the wheel's time (nothing
     * fires)". */
    EXPECT_EQ(cw_wheel_update(c.w, 5), 0);
    EXPECT_EQ(cw_wheel_expire(c.w, 4, on_expiry, &c, 0), CW_ERANGE);
    EXPECT_EQ(c.calls, 0);
    /* cw_wheel_expire: "until none is due or `max` calls were made". */
    EXPECT_EQ(cw_wheel_expire(c.w, 100, on_expiry, &c, 2), 2);
    EXPECT_EQ(c.calls, 2);
    EXPECT_U64(c.values[0], 1);
    EXPECT_U64(c.values[1], 2);
    EXPECT_EQ(c.del_rc, 0); /* value 1's callback deleted value 5 */
    /* "in the order cw_wheel_get would return them"; 0: no limit. */
    EXPECT_EQ(cw_wheel_expire(c.w, 100, on_expiry, &c, 0), 2);
    EXPECT_EQ(c.calls, 4);
    EXPECT_U64(c.values[2], 3);
    EXPECT_U64(c.values[3], 4);
    EXPECT_EQ(info_of(c.w).pending, 0);
    cw_wheel_free(c.w);
}

static void group_wheel(void) {
    wheel_new_and_reserve();
    wheel_null_and_handles();
    wheel_time_edges();
    wheel_windows_and_order();
    wheel_periodic();
    wheel_expire();
}

/* ------------------------------------------------------------------------------------------ */
/* Timer sets (clean names)                                                                    */

/* Waits (at most 10 s) until the set has at least `n` queued timers; returns the count. */
static size_t await_queued(const cw_timerset *set, size_t n) {
    uint64_t give_up = mono_ns() + 10000000000ull;
    size_t queued = 0;
    for (;;) {
        CHECK(cw_timerset_counts(set, NULL, &queued) == 0);
        if (queued >= n || mono_ns() > give_up)
            return queued;
        int rc = cw_timerset_wait(set, 5000000);
        CHECK(rc == 0 || rc == 1);
        if (rc == 1) {
            CHECK(cw_timerset_counts(set, NULL, &queued) == 0);
            if (queued >= n)
                return queued;
            pause_ms(1);
        }
    }
}

static int fd_readable(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc = poll(&p, 1, 0);
    CHECK(rc >= 0);
    return rc == 1 && (p.revents & POLLIN);
}

static atomic_int callback_calls;
static atomic_int callback_sleep_rc;
static atomic_int callback_cv_rc;
static cw_cv *callback_cv;
static pthread_mutex_t callback_m = PTHREAD_MUTEX_INITIALIZER;

static void count_callback(void *arg) {
    (void)arg;
    atomic_fetch_add(&callback_calls, 1);
}

/* A set callback runs on the runtime's driver: sleeping there would wait for itself. */
static void sleeping_callback(void *arg) {
    (void)arg;
    atomic_store(&callback_sleep_rc, cw_sleep_sbt(CW_SBT_1MS, 0, 0));
    CHECK(pthread_mutex_lock(&callback_m) == 0);
    atomic_store(&callback_cv_rc, cw_cv_timedwait_sbt(callback_cv, &callback_m, CW_SBT_1MS, 0, 0));
    CHECK(pthread_mutex_unlock(&callback_m) == 0);
    atomic_fetch_add(&callback_calls, 1);
}

static void group_timerset(void) {
    cw_timerset *set = (cw_timerset *)&set, *other = NULL;
    uint64_t h = 0, h2 = 0, label = 0, u = 0;
    size_t running = 0, queued = 0;
    cw_timer_value v;

    /* cw_timerset_new: "CW_EINVAL (NULL `out`, quota above the maximum, unknown policy)";
     * "`out`: receives the set, or NULL on failure". */
    EXPECT_EQ(cw_timerset_new(0, CW_MISSED_BURST, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timerset_new(CW_TIMERSET_MAX_QUOTA + 1, CW_MISSED_BURST, &set), CW_EINVAL);
    EXPECT(set == NULL);
    set = (cw_timerset *)&set;
    EXPECT_EQ(cw_timerset_new(SIZE_MAX, CW_MISSED_BURST, &set), CW_EINVAL);
    EXPECT(set == NULL);
    set = (cw_timerset *)&set;
    EXPECT_EQ(cw_timerset_new(0, 3, &set), CW_EINVAL);
    EXPECT(set == NULL);
    EXPECT_EQ(cw_timerset_new(0, -1, &set), CW_EINVAL);
    /* ... "at most CW_TIMERSET_MAX_QUOTA": the maximum itself is accepted. */
    EXPECT_EQ(cw_timerset_new(CW_TIMERSET_MAX_QUOTA, CW_MISSED_SKIP, &set), 0);
    EXPECT_EQ(cw_timerset_free(set), 0);
    /* cw_timerset_free: "NULL is ignored" (and "Returns 0"). */
    EXPECT_EQ(cw_timerset_free(NULL), 0);
    /* cw_timerset_free: "CW_EINVAL for the process-wide set of cw_multireal_set". */
    cw_timerset *mr = cw_multireal_set();
    EXPECT(mr != NULL);
    EXPECT_EQ(cw_timerset_free(mr), CW_EINVAL);
    /* cw_multireal_set: the same set every call. */
    EXPECT(cw_multireal_set() == mr);
    /* cw_multireal_fd: "cw_timerset_fd of cw_multireal_set". */
    EXPECT_EQ(cw_multireal_fd(), cw_timerset_fd(mr));

    EXPECT_EQ(cw_timerset_new(2, CW_MISSED_BURST, &set), 0);
    EXPECT_EQ(cw_timerset_new(0, CW_MISSED_BURST, &other), 0);

    /* Every cw_timer_* / cw_timerset_* function: "CW_EINVAL for NULL". */
    EXPECT_EQ(cw_timer_create(NULL, 1000000, 0, 1, &h), CW_EINVAL);
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timer_reset(NULL, 1, 1000000, 0, 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timer_cancel(NULL, 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timer_get(NULL, 1, &v), CW_EINVAL);
    EXPECT_EQ(cw_timer_reap(NULL, &h, &label), CW_EINVAL);
    EXPECT_EQ(cw_timer_reap(set, NULL, &label), CW_EINVAL);
    EXPECT_EQ(cw_timer_set_missed(NULL, 1, CW_MISSED_BURST), CW_EINVAL);
    EXPECT_EQ(cw_timer_overruns(NULL, 1, &u), CW_EINVAL);
    EXPECT_EQ(cw_timerset_counts(NULL, &running, &queued), CW_EINVAL);
    EXPECT_EQ(cw_timerset_fd(NULL), CW_EINVAL);
    EXPECT_EQ(cw_timerset_wait(NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_timerset_set_callback(NULL, count_callback, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timerset_set_signal(NULL, 0), CW_EINVAL);
    /* cw_timerset_counts: "(either may be NULL)". */
    EXPECT_EQ(cw_timerset_counts(set, NULL, NULL), 0);

    /* cw_timer_create: "CW_EINVAL for ... a `value_ns` of 0, or a deadline ... beyond the
     * clock's 64-bit nanoseconds. On failure nothing is created and `*handle` is
     * untouched." */
    h = 4242;
    EXPECT_EQ(cw_timer_create(set, 0, 0, 1, &h), CW_EINVAL);
    EXPECT_EQ(cw_timer_create(set, UINT64_MAX, 0, 1, &h), CW_EINVAL);
    EXPECT_EQ(cw_timer_create(set, 0, 1000, 1, &h), CW_EINVAL);
    EXPECT_U64(h, 4242);
    EXPECT_EQ(cw_timerset_counts(set, &running, &queued), 0);
    EXPECT_EQ(running, 0);
    EXPECT_EQ(queued, 0);

    /* cw_timer_create: the handle is "never 0 and never UINT64_MAX ... and accepted by this
     * set only". */
    EXPECT_EQ(cw_timer_create(set, 10000000000ull, 0, 11, &h), 0);
    EXPECT(h != 0 && h != UINT64_MAX);
    uint64_t ho = 0;
    EXPECT_EQ(cw_timer_create(other, 10000000000ull, 5000000000ull, 12, &ho), 0);
    EXPECT(ho != 0 && ho != UINT64_MAX && ho != h);
    /* cw_timer_get: "the nanoseconds until it expires ... and its interval". */
    EXPECT_EQ(cw_timer_get(set, h, &v), 0);
    EXPECT(v.value_ns > 0 && v.value_ns <= 10000000000ull);
    EXPECT_U64(v.interval_ns, 0);
    EXPECT_EQ(cw_timer_get(other, ho, &v), 0);
    EXPECT_U64(v.interval_ns, 5000000000ull);
    /* cw_timer_get: "CW_EINVAL for a NULL argument". */
    EXPECT_EQ(cw_timer_get(set, h, NULL), CW_EINVAL);
    /* cw_timer_overruns: "CW_EINVAL for a NULL argument"; "0 before its first reap". */
    EXPECT_EQ(cw_timer_overruns(set, h, NULL), CW_EINVAL);
    u = 99;
    EXPECT_EQ(cw_timer_overruns(other, ho, &u), 0);
    EXPECT_U64(u, 0);

    /* Clean names: "CW_EINVAL for ... any handle that names none of the set's timers
     * (another set's, a destroyed timer's, a made-up number: nothing changes)". */
    const uint64_t bad[] = {ho, 0, UINT64_MAX, h + 1, h ^ ((uint64_t)1 << 40), h - 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i] == h)
            continue;
        cw_timer_value untouched = {777, 888};
        EXPECT_EQ(cw_timer_get(set, bad[i], &untouched), CW_EINVAL);
        EXPECT_U64(untouched.value_ns, 777);
        EXPECT_EQ(cw_timer_reset(set, bad[i], 1000000, 0, 1, &untouched), CW_EINVAL);
        EXPECT_U64(untouched.interval_ns, 888);
        EXPECT_EQ(cw_timer_cancel(set, bad[i], &untouched), CW_EINVAL);
        EXPECT_U64(untouched.value_ns, 777);
        EXPECT_EQ(cw_timer_set_missed(set, bad[i], CW_MISSED_SKIP), CW_EINVAL);
        u = 5;
        EXPECT_EQ(cw_timer_overruns(set, bad[i], &u), CW_EINVAL);
        EXPECT_U64(u, 5);
    }
    /* ... nothing changed in either set: the other set's timer still runs as it was. */
    EXPECT_EQ(cw_timer_get(other, ho, &v), 0);
    EXPECT_U64(v.interval_ns, 5000000000ull);
    EXPECT(v.value_ns > 1000000);

    /* cw_timer_set_missed: "CW_EINVAL for ... an unknown policy". */
    EXPECT_EQ(cw_timer_set_missed(set, h, 3), CW_EINVAL);
    EXPECT_EQ(cw_timer_set_missed(set, h, -1), CW_EINVAL);
    EXPECT_EQ(cw_timer_set_missed(set, h, CW_MISSED_DELAY), 0);

    /* cw_timer_reset: "CW_EINVAL for ... a `value_ns` of 0 ... or a value out of range. On
     * failure nothing changes." */
    EXPECT_EQ(cw_timer_reset(set, h, 0, 0, 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timer_reset(set, h, UINT64_MAX, 0, 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timer_get(set, h, &v), 0);
    EXPECT(v.value_ns > 1000000000ull);
    EXPECT_U64(v.interval_ns, 0);

    /* cw_timer_create: "CW_ENOSPC when the set holds its quota (queued timers count)"; the
     * handle untouched. */
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 22, &h2), 0);
    u = 4343;
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 33, &u), CW_ENOSPC);
    EXPECT_U64(u, 4343);
    EXPECT_EQ(await_queued(set, 1), 1);
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 33, &u), CW_ENOSPC);
    EXPECT_U64(u, 4343);
    /* cw_timerset_fd: "readable exactly while the expired queue is non-empty". */
    int fd = cw_timerset_fd(set);
    EXPECT(fd >= 0);
    EXPECT(fd_readable(fd));
    /* cw_timer_get: "0 while it waits on the expired queue". */
    EXPECT_EQ(cw_timer_get(set, h2, &v), 0);
    EXPECT_U64(v.value_ns, 0);
    /* cw_timerset_wait: "Returns 1 if the queue is non-empty"; a negative timeout "waits
     * without a limit" (the queue is non-empty: it returns at once). */
    EXPECT_EQ(cw_timerset_wait(set, 0), 1);
    EXPECT_EQ(cw_timerset_wait(set, -1), 1);
    EXPECT_EQ(cw_timerset_wait(set, INT64_MIN), 1);
    /* cw_timer_reap: "Returns 1 when a timer was reaped"; label NULL allowed. */
    EXPECT_EQ(cw_timer_reap(set, &u, NULL), 1);
    EXPECT_U64(u, h2);
    /* "A one-shot timer is destroyed": its handle names nothing. */
    EXPECT_EQ(cw_timer_get(set, h2, &v), CW_EINVAL);
    EXPECT_EQ(cw_timer_cancel(set, h2, NULL), CW_EINVAL);
    /* cw_timer_reap: "0 when the queue is empty (... nothing is written)". */
    u = 5151;
    label = 6161;
    EXPECT_EQ(cw_timer_reap(set, &u, &label), 0);
    EXPECT_U64(u, 5151);
    EXPECT_U64(label, 6161);
    EXPECT(!fd_readable(fd));
    /* cw_timerset_wait: "0 on timeout", "0 only looks". */
    EXPECT_EQ(cw_timerset_wait(set, 0), 0);
    EXPECT_EQ(cw_timerset_wait(set, 1000000), 0);
    /* A reaped one-shot frees its place in the quota. */
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 44, &h2), 0);
    EXPECT_EQ(await_queued(set, 1), 1);

    /* cw_timer_reset: "A timer waiting on the expired queue leaves the queue first"; the
     * former value "0 ns remaining if it was queued". */
    cw_timer_value old = {1, 1};
    EXPECT_EQ(cw_timer_reset(set, h2, 10000000000ull, 0, 45, &old), 0);
    EXPECT_U64(old.value_ns, 0);
    EXPECT_EQ(cw_timerset_counts(set, &running, &queued), 0);
    EXPECT_EQ(queued, 0);
    EXPECT_EQ(running, 2);
    EXPECT(!fd_readable(fd));
    /* cw_timer_cancel: "The handle is never valid again". */
    EXPECT_EQ(cw_timer_cancel(set, h2, &old), 0);
    EXPECT(old.value_ns > 0);
    EXPECT_EQ(cw_timer_cancel(set, h2, &old), CW_EINVAL);
    EXPECT_EQ(cw_timer_get(set, h2, &v), CW_EINVAL);
    EXPECT_EQ(cw_timer_reset(set, h2, 1000000, 0, 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timer_cancel(set, h, NULL), 0);

    /* cw_timer_cancel: a queued timer's "final value (0 ns remaining if it was queued)". */
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 55, &h2), 0);
    EXPECT_EQ(await_queued(set, 1), 1);
    old.value_ns = 9;
    EXPECT_EQ(cw_timer_cancel(set, h2, &old), 0);
    EXPECT_U64(old.value_ns, 0);
    EXPECT_EQ(cw_timer_reap(set, &u, &label), 0);
    EXPECT(!fd_readable(fd));
    EXPECT_EQ(cw_timerset_free(set), 0);

    /* cw_timer_reap: "timers are queued in expiry order" (created out of order). */
    EXPECT_EQ(cw_timerset_new(0, CW_MISSED_BURST, &set), 0);
    const uint64_t after_ms[] = {40, 10, 30, 20, 50};
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(cw_timer_create(set, after_ms[i] * 1000000, 0, after_ms[i], &u), 0);
    EXPECT_EQ(await_queued(set, 5), 5);
    for (uint64_t want = 10; want <= 50; want += 10) {
        EXPECT_EQ(cw_timer_reap(set, &u, &label), 1);
        EXPECT_U64(label, want);
    }
    EXPECT_EQ(cw_timerset_free(set), 0);

    /* A periodic timer: "runs again from the deadline it expired for"; after a reap,
     * cw_timer_overruns counts the periods dropped (CW_MISSED_SKIP). */
    EXPECT_EQ(cw_timerset_new(0, CW_MISSED_SKIP, &set), 0);
    EXPECT_EQ(cw_timer_create(set, 2000000, 2000000, 7, &h), 0);
    EXPECT_EQ(await_queued(set, 1), 1);
    pause_ms(12); /* several further periods come due before the reap */
    EXPECT_EQ(cw_timer_reap(set, &u, &label), 1);
    EXPECT_U64(u, h);
    EXPECT_U64(label, 7);
    EXPECT_EQ(cw_timer_overruns(set, h, &u), 0);
    EXPECT(u >= 1);
    /* cw_timer_overruns: 0 "after a reset". */
    EXPECT_EQ(cw_timer_reset(set, h, 10000000000ull, 0, 8, NULL), 0);
    EXPECT_EQ(cw_timer_overruns(set, h, &u), 0);
    EXPECT_U64(u, 0);

    /* cw_timerset_set_callback: "called each time the set's expired queue goes from empty to
     * non-empty"; "A NULL `func` removes the callback". */
    EXPECT_EQ(cw_timerset_set_callback(set, count_callback, NULL), 0);
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 1, &u), 0);
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 2, &u), 0);
    EXPECT_EQ(await_queued(set, 2), 2);
    for (int i = 0; i < 1000 && atomic_load(&callback_calls) == 0; i++)
        pause_ms(1);
    EXPECT_EQ(atomic_load(&callback_calls), 1);
    while (cw_timer_reap(set, &u, &label) == 1)
        ;
    EXPECT_EQ(cw_timerset_set_callback(set, NULL, NULL), 0);
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 3, &u), 0);
    EXPECT_EQ(await_queued(set, 1), 1);
    pause_ms(5);
    EXPECT_EQ(atomic_load(&callback_calls), 1);
    while (cw_timer_reap(set, &u, &label) == 1)
        ;

    /* cw_sleep_sbt: "CW_EDEADLK from a callback of a timer set on the process-wide runtime";
     * cw_cv_timedwait_sbt: "CW_EDEADLK on the process-wide runtime's driver thread". */
    CHECK(cw_cv_new(&callback_cv) == 0);
    atomic_store(&callback_calls, 0);
    atomic_store(&callback_sleep_rc, 12345);
    atomic_store(&callback_cv_rc, 12345);
    EXPECT_EQ(cw_timerset_set_callback(set, sleeping_callback, NULL), 0);
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 4, &u), 0);
    for (int i = 0; i < 5000 && atomic_load(&callback_calls) == 0; i++)
        pause_ms(1);
    EXPECT_EQ(atomic_load(&callback_calls), 1);
    EXPECT_EQ(atomic_load(&callback_sleep_rc), CW_EDEADLK);
    EXPECT_EQ(atomic_load(&callback_cv_rc), CW_EDEADLK);
    EXPECT_EQ(cw_timerset_set_callback(set, NULL, NULL), 0);

    /* cw_timerset_set_signal: "CW_EINVAL for a NULL set or a `signo` outside
     * 0..=SIGRTMAX"; 0 stops the signals. */
    EXPECT_EQ(cw_timerset_set_signal(set, -1), CW_EINVAL);
    EXPECT_EQ(cw_timerset_set_signal(set, SIGRTMAX + 1), CW_EINVAL);
    EXPECT_EQ(cw_timerset_set_signal(set, INT_MIN), CW_EINVAL);
    EXPECT_EQ(cw_timerset_set_signal(set, SIGRTMAX), 0);
    EXPECT_EQ(cw_timerset_set_signal(set, 0), 0);
    /* cw_multireal_signal: the same range. */
    EXPECT_EQ(cw_multireal_signal(-1), CW_EINVAL);
    EXPECT_EQ(cw_multireal_signal(SIGRTMAX + 1), CW_EINVAL);
    EXPECT_EQ(cw_multireal_signal(0), 0);

    /* cw_timerset_set_signal: "Sends the signal `signo` ... each time the set's expired queue
     * goes from empty to non-empty" (taken here with sigtimedwait, bounded). */
    sigset_t usr;
    sigemptyset(&usr);
    sigaddset(&usr, SIGUSR1);
    CHECK(pthread_sigmask(SIG_BLOCK, &usr, NULL) == 0);
    while (cw_timer_reap(set, &u, &label) == 1)
        ;
    EXPECT_EQ(cw_timerset_set_signal(set, SIGUSR1), 0);
    EXPECT_EQ(cw_timer_create(set, 1000000, 0, 5, &u), 0);
    struct timespec limit = {10, 0};
    EXPECT_EQ(sigtimedwait(&usr, NULL, &limit), SIGUSR1);
    EXPECT_EQ(cw_timerset_set_signal(set, 0), 0);

    EXPECT_EQ(cw_timerset_free(set), 0);
    EXPECT_EQ(cw_timerset_free(other), 0);
    cw_cv_free(callback_cv);
}

/* ------------------------------------------------------------------------------------------ */
/* The setitimer-shaped surface                                                                */

static struct timeval tv_of(long sec, long usec) {
    struct timeval t;
    t.tv_sec = sec;
    t.tv_usec = usec;
    return t;
}

static struct timeval bits_tv(uint64_t bits) {
    struct timeval t;
    CHECK(cw_timeval_from_bits(bits, &t) == 0);
    return t;
}

static uint64_t tv_bits(struct timeval t) {
    uint64_t b = 0;
    CHECK(cw_timeval_to_bits(&t, &b) == 0);
    return b;
}

static int same_itv(const struct itimerval *a, const struct itimerval *b) {
    return memcmp(a, b, sizeof *a) == 0;
}

static void group_itimer(void) {
    /* cw_multireal_init: "CW_EINVAL for a quota above CW_TIMERSET_MAX_QUOTA" (and the set is
     * not made by the refused call); then "CW_EBUSY if the set already exists". */
    EXPECT_EQ(cw_multireal_init(CW_TIMERSET_MAX_QUOTA + 1), CW_EINVAL);
    EXPECT_EQ(cw_multireal_init(SIZE_MAX), CW_EINVAL);
    EXPECT_EQ(cw_multireal_init(3), 0);
    EXPECT_EQ(cw_multireal_init(3), CW_EBUSY);
    EXPECT_EQ(cw_multireal_init(0), CW_EBUSY);

    /* cw_timeval_from_bits / cw_timeval_to_bits: "Returns 0, or CW_EINVAL for a NULL". */
    struct timeval t;
    uint64_t b;
    EXPECT_EQ(cw_timeval_from_bits(1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_timeval_to_bits(NULL, &b), CW_EINVAL);
    EXPECT_EQ(cw_timeval_to_bits(&t, NULL), CW_EINVAL);
    /* "{ (time_t)bits, 0 } where time_t has 64 bits". */
    const uint64_t samples[] = {0, 1, 12345, UINT64_MAX, (uint64_t)1 << 63, 0x0123456789abcdefull};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        EXPECT_EQ(cw_timeval_from_bits(samples[i], &t), 0);
        if (sizeof(time_t) == 8) {
            EXPECT_U64((uint64_t)t.tv_sec, samples[i]);
            EXPECT_EQ(t.tv_usec, 0);
        }
        b = 0;
        EXPECT_EQ(cw_timeval_to_bits(&t, &b), 0);
        EXPECT_U64(b, samples[i]);
    }
    /* cw_timeval_to_bits: "CW_EINVAL for ... a timeval that carries no 64 bits (`tv_usec`
     * not 0 ...)"; `*bits` untouched. */
    if (sizeof(time_t) == 8) {
        b = 31;
        t = tv_of(5, 1);
        EXPECT_EQ(cw_timeval_to_bits(&t, &b), CW_EINVAL);
        t = tv_of(5, -1);
        EXPECT_EQ(cw_timeval_to_bits(&t, &b), CW_EINVAL);
        EXPECT_U64(b, 31);
    }

    struct itimerval val, ov, keep;
    const struct timeval create = tv_of(-1, -1);

    /* cw_setitimer: "`ovalue` must not be NULL (EINVAL); nor may `value`". */
    val.it_value = tv_of(1, 0);
    val.it_interval = tv_of(0, 0);
    EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, &val, NULL), EINVAL);
    ov.it_value = create;
    ov.it_interval = bits_tv(9);
    EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, NULL, &ov), EINVAL);
    /* cw_setitimer: "Times must have `tv_sec >= 0` and `0 <= tv_usec < 1000000` ... EINVAL
     * otherwise"; "On failure `*ovalue` is unchanged". */
    const struct timeval bad_times[] = {tv_of(0, 1000000), tv_of(0, -1), tv_of(-1, 0),
                                        tv_of(1, 1000000), tv_of(LONG_MAX, 0)};
    for (size_t i = 0; i < sizeof bad_times / sizeof bad_times[0]; i++) {
        val.it_value = bad_times[i];
        val.it_interval = tv_of(0, 0);
        ov.it_value = create;
        ov.it_interval = bits_tv(9);
        keep = ov;
        EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), EINVAL);
        EXPECT(same_itv(&ov, &keep));
        /* ... and as an interval. */
        val.it_value = tv_of(1, 0);
        val.it_interval = bad_times[i];
        EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), EINVAL);
        EXPECT(same_itv(&ov, &keep));
    }
    /* "a deadline must fit the clock's 64-bit nanoseconds (about 584 years)". */
    val.it_value = tv_of(600L * 365 * 24 * 3600, 0);
    val.it_interval = tv_of(0, 0);
    EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), EINVAL);
    EXPECT(same_itv(&ov, &keep));

    /* Create: "the new timer's handle is written to `ovalue->it_value` (`ovalue->it_interval`
     * keeps the label)"; handles are "never {0, 0} nor {-1, -1}". */
    val.it_value = tv_of(100, 0);
    val.it_interval = tv_of(0, 0);
    ov.it_value = create;
    ov.it_interval = bits_tv(9);
    EXPECT_EQ(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), 0);
    uint64_t h1 = tv_bits(ov.it_value);
    EXPECT_U64(tv_bits(ov.it_interval), 9);
    EXPECT(!(ov.it_value.tv_sec == 0 && ov.it_value.tv_usec == 0));
    EXPECT(!(ov.it_value.tv_sec == -1 && ov.it_value.tv_usec == -1));
    /* cw_multireal_set: "Handles of cw_timer_create on it work with cw_setitimer, and the
     * other way round". */
    cw_timer_value cv;
    EXPECT_EQ(cw_timer_get(cw_multireal_set(), h1, &cv), 0);
    EXPECT(cv.value_ns > 90000000000ull);
    uint64_t h2 = 0, h3 = 0;
    EXPECT_EQ(cw_timer_create(cw_multireal_set(), 200000000000ull, 0, 10, &h2), 0);
    struct itimerval g;
    g.it_value = bits_tv(h2);
    g.it_interval = tv_of(0, 0);
    EXPECT_EQ(cw_getitimer(CW_ITIMER_MULTIREAL, &g), 0);
    EXPECT(g.it_value.tv_sec >= 190 && g.it_value.tv_sec <= 200);
    /* cw_multireal_init(3): "EAGAIN when the set holds its quota". */
    EXPECT_EQ(cw_timer_create(cw_multireal_set(), 300000000000ull, 0, 11, &h3), 0);
    ov.it_value = create;
    ov.it_interval = bits_tv(12);
    keep = ov;
    EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), EAGAIN);
    EXPECT(same_itv(&ov, &keep));
    EXPECT_EQ(cw_timer_create(cw_multireal_set(), 1000000, 0, 13, &h3), CW_ENOSPC);

    /* Reset with a handle that names no timer: "EINVAL if the handle names no timer of the
     * set"; cancel likewise. */
    const uint64_t bad_handles[] = {h1 + 1000, 0x7777, ((uint64_t)1 << 62) + 3};
    for (size_t i = 0; i < sizeof bad_handles / sizeof bad_handles[0]; i++) {
        if (bad_handles[i] == h1 || bad_handles[i] == h2 || bad_handles[i] == h3)
            continue;
        val.it_value = tv_of(1, 0);
        ov.it_value = bits_tv(bad_handles[i]);
        ov.it_interval = bits_tv(1);
        keep = ov;
        EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), EINVAL);
        EXPECT(same_itv(&ov, &keep));
        val.it_value = tv_of(0, 0);
        EXPECT_ERRNO(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), EINVAL);
        EXPECT(same_itv(&ov, &keep));
        /* cw_getitimer: "EINVAL if the handle names no timer"; "`*value` is left
         * untouched". */
        g.it_value = bits_tv(bad_handles[i]);
        g.it_interval = tv_of(3, 3);
        struct itimerval gk = g;
        EXPECT_ERRNO(cw_getitimer(CW_ITIMER_MULTIREAL, &g), EINVAL);
        EXPECT(same_itv(&g, &gk));
    }

    /* Reset: "`ovalue` is overwritten with its former value". */
    val.it_value = tv_of(50, 0);
    val.it_interval = tv_of(5, 0);
    ov.it_value = bits_tv(h1);
    ov.it_interval = bits_tv(21);
    EXPECT_EQ(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), 0);
    EXPECT(ov.it_value.tv_sec >= 90 && ov.it_value.tv_sec <= 100);
    EXPECT(ov.it_interval.tv_sec == 0 && ov.it_interval.tv_usec == 0);
    EXPECT_EQ(cw_timer_get(cw_multireal_set(), h1, &cv), 0);
    EXPECT_U64(cv.interval_ns, 5000000000ull);
    /* Cancel: "`value->it_interval` and `ovalue->it_interval` are ignored"; the final value
     * is stored in `ovalue`. */
    val.it_value = tv_of(0, 0);
    val.it_interval = tv_of(-7, -7);
    ov.it_value = bits_tv(h1);
    ov.it_interval = tv_of(-7, 9999999);
    EXPECT_EQ(cw_setitimer(CW_ITIMER_MULTIREAL, &val, &ov), 0);
    EXPECT(ov.it_value.tv_sec >= 40 && ov.it_value.tv_sec <= 50);
    EXPECT_EQ(ov.it_interval.tv_sec, 5);
    EXPECT_EQ(cw_timer_get(cw_multireal_set(), h1, &cv), CW_EINVAL);

    /* cw_getitimer: "EINVAL also for a NULL `value`"; reap of an empty queue: "EAGAIN if the
     * queue is empty", `*value` untouched. */
    EXPECT_ERRNO(cw_getitimer(CW_ITIMER_MULTIREAL, NULL), EINVAL);
    g.it_value = create;
    g.it_interval = tv_of(4, 4);
    struct itimerval gk = g;
    EXPECT_ERRNO(cw_getitimer(CW_ITIMER_MULTIREAL, &g), EAGAIN);
    EXPECT(same_itv(&g, &gk));

    /* The _on variants: "EINVAL also for a NULL set". */
    val.it_value = tv_of(1, 0);
    ov.it_value = create;
    EXPECT_ERRNO(cw_setitimer_on(NULL, &val, &ov), EINVAL);
    EXPECT_ERRNO(cw_getitimer_on(NULL, &g), EINVAL);
    /* ... and a set of its own: reap "The timer at the head of the expired queue": handle in
     * it_value, label in it_interval; a one-shot is destroyed. */
    cw_timerset *set;
    EXPECT_EQ(cw_timerset_new(0, CW_MISSED_BURST, &set), 0);
    val.it_value = tv_of(0, 2000);
    val.it_interval = tv_of(0, 0);
    ov.it_value = create;
    ov.it_interval = bits_tv(0xabcdef);
    EXPECT_EQ(cw_setitimer_on(set, &val, &ov), 0);
    uint64_t hs = tv_bits(ov.it_value);
    /* A handle of the process-wide set is not this set's. */
    g.it_value = bits_tv(h2);
    EXPECT_ERRNO(cw_getitimer_on(set, &g), EINVAL);
    EXPECT_EQ(await_queued(set, 1), 1);
    g.it_value = create;
    g.it_interval = tv_of(0, 0);
    EXPECT_EQ(cw_getitimer_on(set, &g), 0);
    EXPECT_U64(tv_bits(g.it_value), hs);
    EXPECT_U64(tv_bits(g.it_interval), 0xabcdef);
    g.it_value = bits_tv(hs);
    EXPECT_ERRNO(cw_getitimer_on(set, &g), EINVAL);
    EXPECT_EQ(cw_timerset_free(set), 0);

    /* "With any other `which` this is the libc setitimer, unchanged." */
    struct itimerval zero = {{0, 0}, {0, 0}}, lo;
    EXPECT_EQ(cw_setitimer(ITIMER_REAL, &zero, &lo), 0);
    EXPECT_EQ(cw_getitimer(ITIMER_REAL, &lo), 0);
    EXPECT_EQ(lo.it_value.tv_sec, 0);
    EXPECT_EQ(lo.it_value.tv_usec, 0);
    EXPECT_ERRNO(cw_setitimer(12345, &zero, &lo), EINVAL);
    EXPECT_ERRNO(cw_getitimer(12345, &lo), EINVAL);
}

/* ------------------------------------------------------------------------------------------ */
/* Sleeping with precision                                                                     */

struct cv_waiter {
    cw_cv *cv;
    pthread_mutex_t *m;
    atomic_int entered;
    int rc;
};

static void *cv_wait_thread(void *arg) {
    struct cv_waiter *w = arg;
    CHECK(pthread_mutex_lock(w->m) == 0);
    atomic_store(&w->entered, 1);
    w->rc = cw_cv_timedwait_sbt(w->cv, w->m, 10 * CW_SBT_1S, 0, 0);
    CHECK(pthread_mutex_unlock(w->m) == 0);
    return NULL;
}

static void group_sleep(void) {
    /* cw_sleep_sbt: "CW_EINVAL (a negative `sbt` or `precision`, unknown flags)". */
    EXPECT_EQ(cw_sleep_sbt(-1, 0, 0), CW_EINVAL);
    EXPECT_EQ(cw_sleep_sbt(INT64_MIN, 0, 0), CW_EINVAL);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, -1, 0), CW_EINVAL);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, INT64_MIN, 0), CW_EINVAL);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, 0, 0x400), CW_EINVAL);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, 0, 1 << 20), CW_EINVAL);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, 0, -1), CW_EINVAL);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, 0, INT_MIN), CW_EINVAL);
    /* cw_sleep_sbt: "CW_C_DIRECT_EXEC and CW_C_HARDCLOCK are accepted and change nothing";
     * CW_C_PREL(n) is a precision. */
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, 0, CW_C_DIRECT_EXEC | CW_C_HARDCLOCK), 0);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, 0, CW_C_PREL(CW_C_PREL_MAX)), 0);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1US, CW_SBT_1MS, CW_C_PREL(0)), 0);
    /* cw_sleep_sbt: "A time already passed returns at once" (absolute 0 and a 0 delay). */
    EXPECT_EQ(cw_sleep_sbt(0, 0, CW_C_ABSOLUTE), 0);
    EXPECT_EQ(cw_sleep_sbt(CW_SBT_1S, 0, CW_C_ABSOLUTE), 0); /* the clock is past 1 s */
    EXPECT_EQ(cw_sleep_sbt(0, 0, 0), 0);
    EXPECT_EQ(cw_sleep_sbt(0, INT64_MAX, 0), 0);
    /* cw_sleep_sbt: "never earlier". */
    uint64_t t0 = mono_ns();
    EXPECT_EQ(cw_sleep_sbt(3 * CW_SBT_1MS, 0, 0), 0);
    EXPECT(mono_ns() - t0 >= 2999999);

    /* cw_cv_new: "CW_EINVAL for NULL `out`"; cw_cv_free: "Returns 0 (also for NULL)". */
    EXPECT_EQ(cw_cv_new(NULL), CW_EINVAL);
    EXPECT_EQ(cw_cv_free(NULL), 0);
    cw_cv *cv = NULL;
    EXPECT_EQ(cw_cv_new(&cv), 0);
    CHECK(cv != NULL);
    /* cw_cv_signal: "0 if none waited"; cw_cv_broadcast: "how many were woken"; both
     * "CW_EINVAL for NULL `cv`". */
    EXPECT_EQ(cw_cv_signal(cv), 0);
    EXPECT_EQ(cw_cv_broadcast(cv), 0);
    EXPECT_EQ(cw_cv_signal(NULL), CW_EINVAL);
    EXPECT_EQ(cw_cv_broadcast(NULL), CW_EINVAL);

    pthread_mutexattr_t attr;
    pthread_mutex_t m;
    CHECK(pthread_mutexattr_init(&attr) == 0);
    CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
    CHECK(pthread_mutex_init(&m, &attr) == 0);
    /* cw_cv_wait: "CW_EINVAL (NULL `cv` or `m`, or `m` not locked: nothing happens)". */
    EXPECT_EQ(cw_cv_wait(NULL, &m), CW_EINVAL);
    EXPECT_EQ(cw_cv_wait(cv, NULL), CW_EINVAL);
    EXPECT_EQ(cw_cv_wait(cv, &m), CW_EINVAL);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, CW_SBT_1MS, 0, 0), CW_EINVAL);
    /* ... nothing happened: the mutex is still unlocked (locking it succeeds). */
    EXPECT_EQ(pthread_mutex_trylock(&m), 0);
    /* cw_cv_timedwait_sbt: "CW_EINVAL (NULL `cv` or `m`, ..., a negative `sbt` or
     * `precision`, unknown flags: nothing happens)" — the mutex stays held. */
    EXPECT_EQ(cw_cv_timedwait_sbt(NULL, &m, CW_SBT_1MS, 0, 0), CW_EINVAL);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, NULL, CW_SBT_1MS, 0, 0), CW_EINVAL);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, -1, 0, 0), CW_EINVAL);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, CW_SBT_1MS, -1, 0), CW_EINVAL);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, CW_SBT_1MS, 0, 0x400), CW_EINVAL);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, CW_SBT_1MS, 0, -1), CW_EINVAL);
    /* cw_cv_timedwait_sbt: "CW_ETIMEDOUT when the timeout came first"; "`m` is locked again
     * in every case but an error"; an absolute time passed times out too. */
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, CW_SBT_1MS, 0, 0), CW_ETIMEDOUT);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, 0, 0, 0), CW_ETIMEDOUT);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, 0, 0, CW_C_ABSOLUTE), CW_ETIMEDOUT);
    EXPECT_EQ(cw_cv_timedwait_sbt(cv, &m, CW_SBT_1MS, 0, CW_C_PREL(3) | CW_C_DIRECT_EXEC),
              CW_ETIMEDOUT);
    /* The error-checking mutex is held by this thread: unlocking it succeeds. */
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);

    /* cw_cv_free: "CW_EBUSY, freeing nothing, while a thread is blocked on it"; cw_cv_signal:
     * "1 if a thread was woken". */
    struct cv_waiter w = {cv, &m, 0, 99};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cv_wait_thread, &w) == 0);
    for (int i = 0; i < 10000 && !atomic_load(&w.entered); i++)
        pause_ms(1);
    /* Once the waiter has released the mutex, it is blocked on cv. */
    CHECK(pthread_mutex_lock(&m) == 0);
    EXPECT_EQ(cw_cv_free(cv), CW_EBUSY);
    EXPECT_EQ(cw_cv_signal(cv), 1);
    CHECK(pthread_mutex_unlock(&m) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    EXPECT_EQ(w.rc, 0);
    EXPECT_EQ(cw_cv_free(cv), 0);
    pthread_mutex_destroy(&m);
    pthread_mutexattr_destroy(&attr);
}

/* ------------------------------------------------------------------------------------------ */
/* Callout tables                                                                              */

static const int backings[] = {CW_BACKING_LIST, CW_BACKING_HASHED, CW_BACKING_WHEEL};
static const char *const backing_names[] = {"list", "hashed", "wheel"};

static int logv[256];
static int nlog;

static void record(void *arg) {
    if (nlog < 256)
        logv[nlog] = (int)(intptr_t)arg;
    nlog++;
}

static void *tag(int n) { return (void *)(intptr_t)n; }

static void clear_log(void) { nlog = 0; }

/* Compares the handlers run since clear_log with `want` (n tags). */
static int log_is(int n, const int *want) {
    if (nlog != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (logv[i] != want[i])
            return 0;
    return 1;
}

#define EXPECT_LOG(...)                                                                 \
    do {                                                                                \
        const int want_[] = {__VA_ARGS__};                                              \
        int n_ = (int)(sizeof want_ / sizeof want_[0]);                                 \
        checks++;                                                                       \
        if (!log_is(n_, want_)) {                                                       \
            failures++;                                                                 \
            printf("test_documented: FAIL %s:%d: [%s] ran", __FILE__, __LINE__, backing_now); \
            for (int i_ = 0; i_ < nlog && i_ < 256; i_++)                               \
                printf(" %d", logv[i_]);                                                \
            printf(", expected {%s}\n", #__VA_ARGS__);                                  \
            fflush(stdout);                                                             \
        }                                                                               \
    } while (0)

#define EXPECT_NOTHING_RAN()                                                            \
    do {                                                                                \
        checks++;                                                                       \
        if (nlog != 0) {                                                                \
            failures++;                                                                 \
            printf("test_documented: FAIL %s:%d: [%s] %d handler(s) ran, first %d\n",    \
                   __FILE__, __LINE__, backing_now, nlog, logv[0]);                     \
            fflush(stdout);                                                             \
        }                                                                               \
    } while (0)

static const char *backing_now = "";

/* cw_callout_next_event's first value after a re-arming: the deadline, except that "on
 * CW_BACKING_WHEEL, after callouts were stopped or re-armed it may be earlier than that
 * deadline, never later". */
#define EXPECT_FIRST(got, want)                                                         \
    do {                                                                                \
        if (backing == CW_BACKING_WHEEL)                                                \
            EXPECT((got) <= (want));                                                    \
        else                                                                            \
            EXPECT_U64(got, want);                                                      \
    } while (0)

static cw_callouts *table(int backing, int ncpu, size_t calloutsize, int fixed, uint32_t hz) {
    cw_callouts *cw = NULL;
    int rc = ncpu == 1 ? cw_callouts_new(backing, calloutsize, fixed, hz, &cw)
                       : cw_callouts_new_percpu(backing, ncpu, calloutsize, fixed, hz, &cw);
    CHECK(rc == 0 && cw != NULL);
    return cw;
}

static uint64_t ticks_on(const cw_callouts *cw, int cpu) {
    uint64_t t = 0;
    CHECK(cw_ticks(cw, cpu, &t) == 0);
    return t;
}

/* One clock interrupt and software interrupt on `cpu`. cw_hardclock: "0 if not (when nothing
 * is due ...)", so a 0 there leaves cw_softclock nothing to run. Returns the handlers run. */
static int tick(cw_callouts *cw, int cpu) {
    int hard = cw_hardclock(cw, cpu);
    EXPECT(hard == 0 || hard == 1);
    int soft = cw_softclock(cw, cpu);
    EXPECT(soft >= 0);
    if (hard == 0) {
        checks++;
        if (soft != 0) {
            failures++;
            printf("test_documented: FAIL [%s] cw_hardclock said 0 but cw_softclock ran %d\n",
                   backing_now, soft);
        }
    }
    return soft;
}

static void ticks_n(cw_callouts *cw, int cpu, int n) {
    for (int i = 0; i < n; i++)
        tick(cw, cpu);
}

/* Moves `cpu` to tick `now` and runs what is due there. */
static int jump(cw_callouts *cw, int cpu, uint64_t now) {
    int rc = cw_callout_process(cw, cpu, now);
    EXPECT(rc == 0 || rc == 1);
    int soft = cw_softclock(cw, cpu);
    EXPECT(soft >= 0);
    return soft;
}

static void callouts_construction(int ncpu) {
    cw_callouts *cw = (cw_callouts *)&cw;
#define NEW(backing, size, fixed, hz, out)                                               \
    (ncpu == 1 ? cw_callouts_new((backing), (size), (fixed), (hz), (out))                \
               : cw_callouts_new_percpu((backing), ncpu, (size), (fixed), (hz), (out)))
    /* cw_callouts_new(_percpu): "CW_EINVAL (NULL `out`, unknown backing, ... hz of 0, fixed
     * pool of 0 records, calloutsize above CW_CALLOUTSIZE_MAX)"; "`out`: receives the table,
     * or NULL on failure". */
    EXPECT_EQ(NEW(CW_BACKING_WHEEL, 16, 0, 1000, NULL), CW_EINVAL);
    const int bad_backings[] = {3, -1, INT_MIN, INT_MAX};
    for (size_t i = 0; i < 4; i++) {
        cw = (cw_callouts *)&cw;
        EXPECT_EQ(NEW(bad_backings[i], 16, 0, 1000, &cw), CW_EINVAL);
        EXPECT(cw == NULL);
    }
    cw = (cw_callouts *)&cw;
    EXPECT_EQ(NEW(CW_BACKING_WHEEL, 16, 0, 0, &cw), CW_EINVAL);
    EXPECT(cw == NULL);
    cw = (cw_callouts *)&cw;
    EXPECT_EQ(NEW(CW_BACKING_LIST, 0, 1, 1000, &cw), CW_EINVAL);
    EXPECT(cw == NULL);
    cw = (cw_callouts *)&cw;
    EXPECT_EQ(NEW(CW_BACKING_HASHED, (size_t)CW_CALLOUTSIZE_MAX + 1, 0, 1000, &cw), CW_EINVAL);
    EXPECT(cw == NULL);
    EXPECT_EQ(NEW(CW_BACKING_HASHED, SIZE_MAX, 1, 1000, &cw), CW_EINVAL);
    /* "calloutsize ... 0 to CW_CALLOUTSIZE_MAX": both ends accepted (a growing pool of 0). */
    for (int b = 0; b < 3; b++) {
        cw = NULL;
        EXPECT_EQ(NEW(backings[b], 0, 0, 1, &cw), 0);
        /* cw_callouts_ncpu: "How many CPUs the table has". */
        EXPECT_EQ(cw_callouts_ncpu(cw), ncpu);
        cw_handle h;
        EXPECT_EQ(cw_setcallout(cw, record, tag(1), 1, &h), 0);
        cw_callouts_free(cw);
    }
    if (ncpu == 1) {
        cw = NULL;
        EXPECT_EQ(NEW(CW_BACKING_WHEEL, (size_t)CW_CALLOUTSIZE_MAX, 0, UINT32_MAX, &cw), 0);
        cw_callouts_free(cw);
    }
#undef NEW
    if (ncpu > 1) {
        /* cw_callouts_new_percpu: "ncpu outside 1 to CW_NCPU_MAX" is CW_EINVAL. */
        const int bad_ncpu[] = {0, -1, CW_NCPU_MAX + 1, INT_MIN, INT_MAX};
        for (size_t i = 0; i < 5; i++) {
            cw = (cw_callouts *)&cw;
            EXPECT_EQ(cw_callouts_new_percpu(CW_BACKING_WHEEL, bad_ncpu[i], 4, 0, 1000, &cw),
                      CW_EINVAL);
            EXPECT(cw == NULL);
        }
        cw = NULL;
        EXPECT_EQ(cw_callouts_new_percpu(CW_BACKING_LIST, CW_NCPU_MAX, 1, 0, 1000, &cw), 0);
        EXPECT_EQ(cw_callouts_ncpu(cw), CW_NCPU_MAX);
        cw_callouts_free(cw);
        cw = NULL;
        EXPECT_EQ(cw_callouts_new_percpu(CW_BACKING_LIST, 1, 1, 0, 1000, &cw), 0);
        EXPECT_EQ(cw_callouts_ncpu(cw), 1);
        cw_callouts_free(cw);
    }
    /* cw_callouts_ncpu: "CW_EINVAL for NULL"; cw_callouts_set_deviation: "CW_EINVAL for NULL
     * or a `percent` above 100"; cw_callouts_free: "NULL is ignored". */
    EXPECT_EQ(cw_callouts_ncpu(NULL), CW_EINVAL);
    EXPECT_EQ(cw_callouts_set_deviation(NULL, 5), CW_EINVAL);
    cw = table(CW_BACKING_WHEEL, ncpu, 4, 0, 1000);
    EXPECT_EQ(cw_callouts_set_deviation(cw, 101), CW_EINVAL);
    EXPECT_EQ(cw_callouts_set_deviation(cw, UINT32_MAX), CW_EINVAL);
    EXPECT_EQ(cw_callouts_set_deviation(cw, 100), 0);
    EXPECT_EQ(cw_callouts_set_deviation(cw, 0), 0);
    cw_callouts_free(cw);
    cw_callouts_free(NULL);
}

/* Every call with a NULL table, NULL pointers and CPUs outside the table. */
static void callouts_null_and_cpus(cw_callouts *cw, int ncpu) {
    cw_handle h, s;
    uint64_t a, b;
    EXPECT_EQ(cw_callout_init(cw, -1, &h), 0);
    EXPECT_EQ(cw_setcallout(cw, record, tag(1), 100, &s), 0);

    /* "Pointer arguments are checked for NULL (CW_EINVAL), and so are function pointers." */
    EXPECT_EQ(cw_timeout(NULL, record, NULL, 1), CW_EINVAL);
    EXPECT_EQ(cw_timeout(cw, NULL, NULL, 1), CW_EINVAL);
    EXPECT_EQ(cw_untimeout(NULL, record, NULL), CW_EINVAL);
    EXPECT_EQ(cw_untimeout(cw, NULL, NULL), CW_EINVAL);
    EXPECT_EQ(cw_setcallout(NULL, record, NULL, 1, &s), CW_EINVAL);
    EXPECT_EQ(cw_setcallout(cw, NULL, NULL, 1, &s), CW_EINVAL);
    EXPECT_EQ(cw_setcallout(cw, record, NULL, 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_unsetcallout(NULL, s), CW_EINVAL);
    EXPECT_EQ(cw_hardclock(NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_callout_process(NULL, 0, 5), CW_EINVAL);
    EXPECT_EQ(cw_callout_next_event(NULL, 0, &a, &b), CW_EINVAL);
    EXPECT_EQ(cw_callout_next_event(cw, 0, NULL, &b), CW_EINVAL);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &a, NULL), CW_EINVAL);
    EXPECT_EQ(cw_softclock(NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_ticks(NULL, 0, &a), CW_EINVAL);
    EXPECT_EQ(cw_ticks(cw, 0, NULL), CW_EINVAL);
    EXPECT_EQ(cw_softticks(NULL, 0, &a), CW_EINVAL);
    EXPECT_EQ(cw_softticks(cw, 0, NULL), CW_EINVAL);
    EXPECT_EQ(cw_callout_init(NULL, 0, &h), CW_EINVAL);
    EXPECT_EQ(cw_callout_init(cw, 0, NULL), CW_EINVAL);
    EXPECT_EQ(cw_callout_free(NULL, h), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset(NULL, h, 1, record, NULL), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset(cw, h, 1, NULL, NULL), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_on(NULL, h, 1, record, NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_on(cw, h, 1, NULL, NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_sbt_on(NULL, h, 1, 0, record, NULL, -1, 0), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h, 1, 0, NULL, NULL, -1, 0), CW_EINVAL);
    EXPECT_EQ(cw_callout_stop(NULL, h), CW_EINVAL);
    EXPECT_EQ(cw_callout_drain(NULL, h), CW_EINVAL);
    EXPECT_EQ(cw_callout_async_drain(NULL, h, record), CW_EINVAL);
    EXPECT_EQ(cw_callout_async_drain(cw, h, NULL), CW_EINVAL);
    EXPECT_EQ(cw_callout_pending(NULL, h), CW_EINVAL);
    EXPECT_EQ(cw_callout_active(NULL, h), CW_EINVAL);
    EXPECT_EQ(cw_callout_deactivate(NULL, h), CW_EINVAL);
    EXPECT_EQ(cw_callout_cpu(NULL, h), CW_EINVAL);

    /* "A CPU outside the table is CW_EINVAL" for every call that names one. */
    const int bad_cpus[] = {-1, ncpu, ncpu + 1, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof bad_cpus / sizeof bad_cpus[0]; i++) {
        int c = bad_cpus[i];
        EXPECT_EQ(cw_hardclock(cw, c), CW_EINVAL);
        EXPECT_EQ(cw_callout_process(cw, c, 10), CW_EINVAL);
        EXPECT_EQ(cw_callout_next_event(cw, c, &a, &b), CW_EINVAL);
        EXPECT_EQ(cw_softclock(cw, c), CW_EINVAL);
        EXPECT_EQ(cw_ticks(cw, c, &a), CW_EINVAL);
        EXPECT_EQ(cw_softticks(cw, c, &a), CW_EINVAL);
        if (c != -1) {
            cw_handle x = forge(7, 7);
            /* cw_callout_init: "(0 to ncpu - 1; -1 for CPU 0 ...)"; a CPU outside: CW_EINVAL. */
            EXPECT_EQ(cw_callout_init(cw, c, &x), CW_EINVAL);
            /* cw_callout_reset_on / _sbt_on: "a CPU outside the table", "On failure nothing
             * changes". */
            EXPECT_EQ(cw_callout_reset_on(cw, h, 5, record, tag(2), c), CW_EINVAL);
            EXPECT_EQ(cw_callout_reset_sbt_on(cw, h, 5, 0, record, tag(2), c, 0), CW_EINVAL);
        }
    }
    EXPECT_EQ(cw_callout_init(cw, -2, &h), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_on(cw, h, 5, record, tag(2), -2), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h, 5, 0, record, tag(2), -2, 0), CW_EINVAL);
    /* ... nothing changed: h is still idle and on CPU 0, no clock moved. */
    EXPECT_EQ(cw_callout_pending(cw, h), 0);
    EXPECT_EQ(cw_callout_cpu(cw, h), 0);
    for (int c = 0; c < ncpu; c++)
        EXPECT_U64(ticks_on(cw, c), 0);

    /* cw_setcallout handles on the callout_* calls: "CW_EINVAL (..., cw_setcallout handle)";
     * a cw_callout_init handle on cw_unsetcallout: "CW_EINVAL for ... a cw_callout_init
     * handle". */
    EXPECT_EQ(cw_callout_stop(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_callout_drain(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_callout_async_drain(cw, s, record), CW_EINVAL);
    EXPECT_EQ(cw_callout_pending(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_callout_active(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_callout_deactivate(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_callout_cpu(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_callout_free(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset(cw, s, 1, record, NULL), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_on(cw, s, 1, record, NULL, 0), CW_EINVAL);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, s, 1, 0, record, NULL, 0, 0), CW_EINVAL);
    EXPECT_EQ(cw_unsetcallout(cw, h), CW_EINVAL);
    /* ... nothing changed: the setcallout is still pending. */
    EXPECT_EQ(cw_unsetcallout(cw, s), 1);
    EXPECT_EQ(cw_callout_free(cw, h), 0);
}

static cw_callouts *handler_cw;
static int handler_cpu;
static cw_handle handler_h, handler_other;
static int handler_rc[8];
static int drains;

static void self_unset(void *arg) {
    (void)arg;
    /* cw_setcallout: "The handle goes stale when the callout fires (before its handler
     * runs)". */
    handler_rc[0] = cw_unsetcallout(handler_cw, handler_h);
    record(tag(90));
}

static void self_clocks(void *arg) {
    (void)arg;
    /* cw_softclock / cw_hardclock: "CW_EBUSY if another thread (or this one, from a handler)
     * is ... running that CPU's handlers"; cw_hardclock: "the tick still advanced". */
    handler_rc[0] = cw_softclock(handler_cw, handler_cpu);
    handler_rc[1] = cw_hardclock(handler_cw, handler_cpu);
    handler_rc[2] = cw_callout_process(handler_cw, handler_cpu, UINT64_MAX / 2);
    record(tag(91));
}

static void self_drain(void *arg) {
    (void)arg;
    /* cw_callout_drain / cw_callout_free: "CW_EDEADLK from the callout's own handler (nothing
     * changes)". */
    handler_rc[0] = cw_callout_drain(handler_cw, handler_h);
    handler_rc[1] = cw_callout_free(handler_cw, handler_h);
    handler_rc[2] = cw_callout_active(handler_cw, handler_h);
    /* cw_callout_pending: "armed and its handler has not been started". */
    handler_rc[3] = cw_callout_pending(handler_cw, handler_h);
    record(tag(92));
}

static void drain_fn(void *arg) {
    drains++;
    /* cw_callout_async_drain: "when `drain` runs the callout is neither pending nor running:
     * `drain` may cw_callout_free it", with "the argument the callout was last armed with". */
    handler_rc[5] = (int)(intptr_t)arg;
    handler_rc[6] = cw_callout_free(handler_cw, handler_h);
}

static void self_async_drain(void *arg) {
    (void)arg;
    /* cw_callout_async_drain from the handler itself: "CW_ASYNC_DRAIN_PENDING (0) when `drain`
     * will be called"; again: "CW_EBUSY when a drain already waits"; a reset meanwhile is
     * "ignored and returns 0". */
    handler_rc[0] = cw_callout_async_drain(handler_cw, handler_h, drain_fn);
    handler_rc[1] = cw_callout_async_drain(handler_cw, handler_h, drain_fn);
    handler_rc[2] = cw_callout_reset(handler_cw, handler_h, 1, record, tag(93));
    handler_rc[3] = cw_callout_pending(handler_cw, handler_h);
    handler_rc[4] = drains;
    record(tag(94));
}

static void stop_other(void *arg) {
    /* cw_softclock: "a cancelled callout that has not started never runs". */
    handler_rc[0] = cw_callout_stop(handler_cw, handler_other);
    record(arg);
}

static void callouts_one_backing(int backing, int ncpu) {
    backing_now = backing_names[backing];
    const uint32_t hz = 1024; /* one tick is 2^22 sbt exactly */
    const int64_t T = (int64_t)1 << 22;
    cw_callouts *cw = table(backing, ncpu, 64, 0, hz);
    cw_callouts *other = table(backing, ncpu, 64, 0, hz);
    cw_handle h, h2, s, o;
    uint64_t first = 0, last = 0;

    callouts_null_and_cpus(cw, ncpu);

    /* cw_callout_next_event: "0 when nothing is pending there". */
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 0);
    /* cw_hardclock on an empty CPU: "0 if not". */
    EXPECT_EQ(cw_hardclock(cw, 0), 0);
    EXPECT_EQ(cw_softclock(cw, 0), 0);
    EXPECT_U64(ticks_on(cw, 0), 1);

    /* cw_timeout: "`ticks` <= 0 counts as 1"; "Equal expiries run in the order they were
     * set". */
    clear_log();
    EXPECT_EQ(cw_timeout(cw, record, tag(1), 0), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(2), -5), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(3), INT64_MIN), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(4), 1), 0);
    EXPECT_EQ(cw_softclock(cw, 0), 0);
    EXPECT_NOTHING_RAN();
    /* cw_callout_next_event: "the earliest deadline in ticks". */
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_U64(first, 2);
    /* cw_hardclock: "1 if cw_softclock may have work ... (always when a callout is due)". */
    EXPECT_EQ(cw_hardclock(cw, 0), 1);
    /* cw_callout_next_event: "(current tick, current tick) when work is due now". */
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_U64(first, 2);
    EXPECT_U64(last, 2);
    /* cw_softticks: "equal to cw_ticks when caught up" — not yet. */
    uint64_t st = 99;
    EXPECT_EQ(cw_softticks(cw, 0, &st), 0);
    EXPECT(st <= 2);
    /* cw_softclock: "Returns the number of handlers ... run". */
    EXPECT_EQ(cw_softclock(cw, 0), 4);
    EXPECT_LOG(1, 2, 3, 4);
    EXPECT_EQ(cw_softticks(cw, 0, &st), 0);
    EXPECT_U64(st, 2);

    /* "A callout set for n ticks at tick t runs in the first cw_softclock after the interrupt
     * that reaches tick t + n". */
    clear_log();
    EXPECT_EQ(cw_timeout(cw, record, tag(5), 3), 0);
    ticks_n(cw, 0, 2);
    EXPECT_NOTHING_RAN();
    ticks_n(cw, 0, 1);
    EXPECT_LOG(5);

    /* "Equal expiries run in the order they were set", across the BSD and FreeBSD calls. */
    clear_log();
    EXPECT_EQ(cw_callout_init(cw, 0, &h), 0);
    EXPECT_EQ(cw_callout_init(cw, 0, &h2), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(10), 2), 0);
    EXPECT_EQ(cw_setcallout(cw, record, tag(11), 2, &s), 0);
    EXPECT_EQ(cw_callout_reset(cw, h, 2, record, tag(12)), 0);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, 2 * T, 0, record, tag(13), -1, 0), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(14), 2), 0);
    ticks_n(cw, 0, 2);
    EXPECT_LOG(10, 11, 12, 13, 14);
    /* cw_unsetcallout: "CW_ESTALE if it already fired". */
    EXPECT_EQ(cw_unsetcallout(cw, s), CW_ESTALE);
    /* cw_callout_pending after firing: 0; cw_callout_active: "running does not clear it". */
    EXPECT_EQ(cw_callout_pending(cw, h), 0);
    EXPECT_EQ(cw_callout_active(cw, h), 1);
    EXPECT_EQ(cw_callout_free(cw, h), 0);
    EXPECT_EQ(cw_callout_free(cw, h2), 0);

    /* cw_untimeout: "0 if none was pending"; on the list "the one due first", on the hashed
     * and wheel backings "the oldest (set first)". */
    clear_log();
    EXPECT_EQ(cw_untimeout(cw, record, tag(20)), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(20), 10), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(20), 5), 0);
    EXPECT_EQ(cw_untimeout(cw, record, tag(21)), 0);
    EXPECT_EQ(cw_untimeout(cw, record, tag(20)), 1);
    ticks_n(cw, 0, 5);
    if (backing == CW_BACKING_LIST) {
        EXPECT_NOTHING_RAN();
        ticks_n(cw, 0, 5);
        EXPECT_LOG(20);
    } else {
        EXPECT_LOG(20);
        ticks_n(cw, 0, 5);
        EXPECT_LOG(20);
    }

    /* cw_setcallout: "CW_EINVAL for a NULL ... `handle_out` (nothing is set)"; the handle
     * cancels "this callout and no other". */
    clear_log();
    EXPECT_EQ(cw_setcallout(cw, record, tag(30), 1, NULL), CW_EINVAL);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 0);
    EXPECT_EQ(cw_setcallout(cw, record, tag(31), 1, &s), 0);
    cw_handle s2;
    EXPECT_EQ(cw_setcallout(cw, record, tag(31), 1, &s2), 0);
    EXPECT(!same_handle(s, s2));
    EXPECT_EQ(cw_unsetcallout(cw, s2), 1);
    /* cw_unsetcallout: "CW_ESTALE if it already ... was cancelled, or the handle was never
     * issued by this table". */
    EXPECT_EQ(cw_unsetcallout(cw, s2), CW_ESTALE);
    EXPECT_EQ(cw_unsetcallout(other, s), CW_ESTALE);
    EXPECT_EQ(cw_unsetcallout(cw, forge(s.id + ((uint64_t)1 << 32), s.owner)), CW_ESTALE);
    EXPECT_EQ(cw_unsetcallout(cw, forge(UINT64_MAX, s.owner)), CW_ESTALE);
    ticks_n(cw, 0, 1);
    EXPECT_LOG(31);
    /* A handler cancelling its own setcallout: stale before the handler runs. */
    clear_log();
    handler_cw = cw;
    handler_rc[0] = 12345;
    EXPECT_EQ(cw_setcallout(cw, self_unset, NULL, 1, &handler_h), 0);
    ticks_n(cw, 0, 1);
    EXPECT_LOG(90);
    EXPECT_EQ(handler_rc[0], CW_ESTALE);

    /* cw_callout_init with -1: "for CPU 0"; "idle and inactive". */
    EXPECT_EQ(cw_callout_init(cw, -1, &h), 0);
    EXPECT(h.owner != 0);
    EXPECT_EQ(cw_callout_cpu(cw, h), 0);
    EXPECT_EQ(cw_callout_pending(cw, h), 0);
    EXPECT_EQ(cw_callout_active(cw, h), 0);
    /* cw_callout_stop on an idle callout: "0 if not"; cw_callout_drain likewise. */
    EXPECT_EQ(cw_callout_stop(cw, h), 0);
    EXPECT_EQ(cw_callout_drain(cw, h), 0);
    /* cw_callout_reset: "1 if the callout was pending ..., 0 if not". */
    clear_log();
    EXPECT_EQ(cw_callout_reset(cw, h, 4, record, tag(40)), 0);
    EXPECT_EQ(cw_callout_pending(cw, h), 1);
    EXPECT_EQ(cw_callout_active(cw, h), 1);
    EXPECT_EQ(cw_callout_reset(cw, h, 2, record, tag(41)), 1);
    /* cw_callout_reset: "CW_EINVAL (NULL ... `func` ...). On failure the callout keeps its
     * previous arming." */
    EXPECT_EQ(cw_callout_reset(cw, h, 9, NULL, tag(42)), CW_EINVAL);
    EXPECT_EQ(cw_callout_pending(cw, h), 1);
    ticks_n(cw, 0, 2);
    EXPECT_LOG(41);
    /* cw_callout_deactivate: "clears the active flag". */
    EXPECT_EQ(cw_callout_deactivate(cw, h), 0);
    EXPECT_EQ(cw_callout_active(cw, h), 0);
    /* cw_callout_stop: "1 if it was pending"; "clears its active flag". */
    EXPECT_EQ(cw_callout_reset(cw, h, 3, record, tag(43)), 0);
    EXPECT_EQ(cw_callout_stop(cw, h), 1);
    EXPECT_EQ(cw_callout_active(cw, h), 0);
    EXPECT_EQ(cw_callout_pending(cw, h), 0);
    EXPECT_EQ(cw_callout_stop(cw, h), 0);
    /* cw_callout_drain: "1 if the callout was pending". */
    EXPECT_EQ(cw_callout_reset(cw, h, 3, record, tag(44)), 0);
    EXPECT_EQ(cw_callout_drain(cw, h), 1);
    clear_log();
    ticks_n(cw, 0, 5);
    EXPECT_NOTHING_RAN();

    /* cw_callout_async_drain when not running: "CW_ASYNC_DRAIN_CANCELLED (1) ... a pending
     * firing was cancelled"; "CW_ASYNC_DRAIN_IDLE (2) when ... nothing was pending". */
    EXPECT_EQ(cw_callout_reset(cw, h, 2, record, tag(45)), 0);
    drains = 0;
    EXPECT_EQ(cw_callout_async_drain(cw, h, drain_fn), CW_ASYNC_DRAIN_CANCELLED);
    EXPECT_EQ(cw_callout_async_drain(cw, h, drain_fn), CW_ASYNC_DRAIN_IDLE);
    ticks_n(cw, 0, 3);
    EXPECT_NOTHING_RAN();
    EXPECT_EQ(drains, 0);

    /* Foreign and made-up handles: "a handle of another table, a freed or made-up one,
     * CW_ESTALE". */
    EXPECT_EQ(cw_callout_init(other, 0, &o), 0);
    const cw_handle bad[] = {o, forge(h.id, o.owner), forge(0, 0), forge(UINT64_MAX, UINT64_MAX),
                             forge(h.id + ((uint64_t)1 << 32), h.owner),
                             forge(UINT64_MAX, h.owner)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cw_handle x = bad[i];
        EXPECT_EQ(cw_callout_stop(cw, x), CW_ESTALE);
        EXPECT_EQ(cw_callout_drain(cw, x), CW_ESTALE);
        EXPECT_EQ(cw_callout_async_drain(cw, x, drain_fn), CW_ESTALE);
        EXPECT_EQ(cw_callout_pending(cw, x), CW_ESTALE);
        EXPECT_EQ(cw_callout_active(cw, x), CW_ESTALE);
        EXPECT_EQ(cw_callout_deactivate(cw, x), CW_ESTALE);
        EXPECT_EQ(cw_callout_cpu(cw, x), CW_ESTALE);
        EXPECT_EQ(cw_callout_reset(cw, x, 1, record, NULL), CW_ESTALE);
        EXPECT_EQ(cw_callout_reset_on(cw, x, 1, record, NULL, 0), CW_ESTALE);
        EXPECT_EQ(cw_callout_reset_sbt_on(cw, x, T, 0, record, NULL, -1, 0), CW_ESTALE);
        EXPECT_EQ(cw_callout_free(cw, x), CW_ESTALE);
        EXPECT_EQ(cw_unsetcallout(cw, x), CW_ESTALE);
    }
    EXPECT_EQ(cw_callout_pending(other, o), 0);
    EXPECT_EQ(cw_callout_free(other, o), 0);

    /* cw_callout_free: "The handle goes stale" — a second free, and every call, CW_ESTALE. */
    EXPECT_EQ(cw_callout_reset(cw, h, 2, record, tag(46)), 0);
    EXPECT_EQ(cw_callout_free(cw, h), 0);
    EXPECT_EQ(cw_callout_free(cw, h), CW_ESTALE);
    EXPECT_EQ(cw_callout_pending(cw, h), CW_ESTALE);
    EXPECT_EQ(cw_callout_reset(cw, h, 1, record, NULL), CW_ESTALE);
    EXPECT_EQ(cw_callout_cpu(cw, h), CW_ESTALE);
    /* A record reused by a new callout does not revive the old handle. */
    EXPECT_EQ(cw_callout_init(cw, 0, &h2), 0);
    EXPECT_EQ(cw_callout_pending(cw, h), CW_ESTALE);
    EXPECT_EQ(cw_callout_stop(cw, h), CW_ESTALE);
    clear_log();
    ticks_n(cw, 0, 3);
    EXPECT_NOTHING_RAN(); /* "cancelling it if pending" */

    /* cw_callout_reset_sbt_on: "`flags`: ... any other bit is CW_EINVAL", also cw_c_prel's
     * CW_EINVAL given as a flag; "On failure nothing changes". */
    EXPECT_EQ(cw_callout_reset(cw, h2, 5, record, tag(50)), 0);
    const int bad_flags[] = {0x400, 1 << 20, 1 << 30, INT_MIN, -1, CW_EINVAL, 0x404};
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++)
        EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, T, 0, record, tag(51), -1, bad_flags[i]),
                  CW_EINVAL);
    EXPECT_EQ(cw_callout_pending(cw, h2), 1);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_FIRST(first, ticks_on(cw, 0) + 5);
    /* Accepted flags: CW_C_HARDCLOCK "accepted, no effect". */
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, 3 * T, 0, record, tag(52), -1, CW_C_HARDCLOCK), 1);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_FIRST(first, ticks_on(cw, 0) + 3);
    EXPECT_U64(last, first);

    /* "An sbt time is rounded up to a tick exactly (the ceiling of sbt * hz / 2^32)"; "a
     * relative time of 0 or less ... means the next tick". */
    const struct {
        int64_t sbt;
        uint64_t ticks;
    } rounding[] = {{1, 1}, {T - 1, 1}, {T, 1}, {T + 1, 2}, {0, 1}, {-1, 1}, {INT64_MIN, 1},
                    {1000 * T, 1000}, {CW_SBT_1S, 1024}, {CW_SBT_1S + 1, 1025},
                    {INT64_MAX, ((uint64_t)INT64_MAX >> 22) + 1}};
    /* (A fresh table for each: on CW_BACKING_WHEEL, "after callouts were stopped or re-armed
     * it may be earlier than that deadline".) */
    for (size_t i = 0; i < sizeof rounding / sizeof rounding[0]; i++) {
        cw_callouts *fresh = table(backing, ncpu, 4, 0, hz);
        cw_handle r;
        EXPECT_EQ(cw_callout_init(fresh, 0, &r), 0);
        EXPECT_EQ(jump(fresh, 0, 1000), 0);
        EXPECT_EQ(cw_callout_reset_sbt_on(fresh, r, rounding[i].sbt, 0, record, tag(53), -1, 0),
                  0);
        EXPECT_EQ(cw_callout_next_event(fresh, 0, &first, &last), 1);
        EXPECT_U64(first - 1000, rounding[i].ticks);
        cw_callouts_free(fresh);
    }
    /* CW_C_ABSOLUTE: "absolute (since tick 0)"; "an absolute time already passed, means the
     * next tick". */
    uint64_t now0 = ticks_on(cw, 0);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, (int64_t)(now0 + 100) * T, 0, record, tag(54), -1,
                                      CW_C_ABSOLUTE),
              1);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_FIRST(first, now0 + 100);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, 0, 0, record, tag(55), -1, CW_C_ABSOLUTE), 1);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_FIRST(first, now0 + 1);
    clear_log();
    ticks_n(cw, 0, 1);
    EXPECT_LOG(55);

    /* cw_callout_reset_sbt_on with a precision: "Every backing runs it at its window's firing
     * instant"; cw_callout_next_event: `first` the firing instant, `last` "the earliest end of
     * a window on CW_BACKING_WHEEL and `first` on the other backings"; "an interrupt
     * anywhere in [first, last] runs each callout inside its window". */
    const struct {
        int64_t ticks, precision;
        int flags;
    } windows[] = {{100, 50, 0}, {256, 0, CW_C_PREL(2)}, {1000, 3, CW_C_PREL(1)},
                   {5000, 4096, 0}, {7, 1000, 0}};
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
        uint64_t t0 = ticks_on(cw, 0);
        uint64_t slack = (uint64_t)windows[i].precision;
        if (windows[i].flags) {
            int n = (windows[i].flags >> 1) - 1;
            uint64_t rel = (uint64_t)windows[i].ticks >> n;
            if (rel > slack)
                slack = rel;
        }
        uint64_t d = t0 + (uint64_t)windows[i].ticks;
        EXPECT(cw_callout_reset_sbt_on(cw, h2, windows[i].ticks * T, windows[i].precision * T,
                                       record, tag(60), -1, windows[i].flags) >= 0);
        EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
        EXPECT((first >= d || backing == CW_BACKING_WHEEL) && first <= d + slack);
        EXPECT(last >= first && last <= d + slack);
        if (backing != CW_BACKING_WHEEL)
            EXPECT_U64(last, first);
        clear_log();
        if (first > t0 + 1) {
            EXPECT_EQ(jump(cw, 0, first - 1), 0);
            EXPECT_NOTHING_RAN();
        }
        EXPECT_EQ(jump(cw, 0, last), 1);
        EXPECT_LOG(60);
    }

    /* cw_callouts_set_deviation: a relative callout "may run about `percent` % of its
     * interval late ..."; "Callouts already pending keep their windows"; a new table's
     * callouts are exact. */
    EXPECT_EQ(cw_callout_reset(cw, h2, 512, record, tag(61)), 0);
    EXPECT_EQ(cw_callouts_set_deviation(cw, 50), 0);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_FIRST(first, ticks_on(cw, 0) + 512);
    EXPECT_U64(last, first);
    EXPECT_EQ(cw_callout_stop(cw, h2), 1);
    uint64_t t0 = ticks_on(cw, 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(62), 256), 0);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT(first >= t0 + 256 && first <= t0 + 256 + 128);
    EXPECT(last >= first && last <= t0 + 256 + 128);
    clear_log();
    EXPECT_EQ(jump(cw, 0, last), 1);
    EXPECT_LOG(62);
    /* ... but an absolute time is not "a relative time": exact. */
    t0 = ticks_on(cw, 0);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, (int64_t)(t0 + 256) * T, 0, record, tag(63), -1,
                                      CW_C_ABSOLUTE),
              0);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_FIRST(first, t0 + 256);
    EXPECT_U64(last, t0 + 256);
    EXPECT_EQ(cw_callout_stop(cw, h2), 1);
    EXPECT_EQ(cw_callouts_set_deviation(cw, 0), 0);

    /* Handlers: "a handler may call any function on its own table except cw_callouts_free";
     * cw_softclock/cw_hardclock from a handler: CW_EBUSY, and the tick still advanced. */
    handler_cw = cw;
    handler_cpu = 0;
    memset(handler_rc, 0x55, sizeof handler_rc);
    EXPECT_EQ(cw_timeout(cw, self_clocks, NULL, 1), 0);
    t0 = ticks_on(cw, 0);
    clear_log();
    EXPECT_EQ(cw_hardclock(cw, 0), 1);
    EXPECT_EQ(cw_softclock(cw, 0), 1);
    EXPECT_LOG(91);
    EXPECT_EQ(handler_rc[0], CW_EBUSY);
    EXPECT_EQ(handler_rc[1], CW_EBUSY);
    EXPECT_EQ(handler_rc[2], CW_EBUSY);
    /* cw_callout_process: "CW_EBUSY as for cw_hardclock (the clock still moved)". */
    EXPECT_U64(ticks_on(cw, 0), UINT64_MAX / 2);
    EXPECT_EQ(cw_softclock(cw, 0), 0);

    /* cw_callout_drain / cw_callout_free from the callout's own handler: CW_EDEADLK, nothing
     * changes; the callout is still active, and not pending while it runs. */
    EXPECT_EQ(cw_callout_init(cw, 0, &handler_h), 0);
    EXPECT_EQ(cw_callout_reset(cw, handler_h, 1, self_drain, NULL), 0);
    memset(handler_rc, 0x55, sizeof handler_rc);
    clear_log();
    ticks_n(cw, 0, 1);
    EXPECT_LOG(92);
    EXPECT_EQ(handler_rc[0], CW_EDEADLK);
    EXPECT_EQ(handler_rc[1], CW_EDEADLK);
    EXPECT_EQ(handler_rc[2], 1);
    EXPECT_EQ(handler_rc[3], 0);
    EXPECT_EQ(cw_callout_active(cw, handler_h), 1);
    EXPECT_EQ(cw_callout_free(cw, handler_h), 0);

    /* cw_callout_async_drain from the handler: drain(arg) "called once ... right after the
     * handler returns"; the reset meanwhile ignored; drain frees the callout. */
    EXPECT_EQ(cw_callout_init(cw, 0, &handler_h), 0);
    EXPECT_EQ(cw_callout_reset(cw, handler_h, 1, self_async_drain, tag(77)), 0);
    memset(handler_rc, 0x55, sizeof handler_rc);
    drains = 0;
    clear_log();
    ticks_n(cw, 0, 1);
    EXPECT_LOG(94);
    EXPECT_EQ(handler_rc[0], CW_ASYNC_DRAIN_PENDING);
    EXPECT_EQ(handler_rc[1], CW_EBUSY);
    EXPECT_EQ(handler_rc[2], 0);
    EXPECT_EQ(handler_rc[3], 0);
    EXPECT_EQ(handler_rc[4], 0); /* not before the handler returned */
    EXPECT_EQ(drains, 1);
    EXPECT_EQ(handler_rc[5], 77);
    EXPECT_EQ(handler_rc[6], 0);
    EXPECT_EQ(cw_callout_pending(cw, handler_h), CW_ESTALE);
    clear_log();
    ticks_n(cw, 0, 3);
    EXPECT_NOTHING_RAN();
    EXPECT_EQ(drains, 1);

    /* A handler stopping the next due callout: "a cancelled callout that has not started never
     * runs". */
    EXPECT_EQ(cw_callout_init(cw, 0, &handler_other), 0);
    EXPECT_EQ(cw_timeout(cw, stop_other, tag(70), 1), 0);
    EXPECT_EQ(cw_callout_reset(cw, handler_other, 1, record, tag(71)), 0);
    clear_log();
    ticks_n(cw, 0, 1);
    EXPECT_LOG(70);
    EXPECT_EQ(handler_rc[0], 1);
    EXPECT_EQ(cw_callout_free(cw, handler_other), 0);

    /* CW_C_DIRECT_EXEC: "run the handler from cw_hardclock itself". */
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, T, 0, record, tag(72), -1, CW_C_DIRECT_EXEC), 0);
    clear_log();
    int hard = cw_hardclock(cw, 0);
    EXPECT(hard == 0 || hard == 1);
    EXPECT_LOG(72);
    EXPECT_EQ(cw_softclock(cw, 0), 0);
    EXPECT_LOG(72);

    /* cw_callout_process: "a `now` at or before the current tick moves nothing". */
    t0 = ticks_on(cw, 0);
    EXPECT_EQ(cw_callout_process(cw, 0, 3), 0);
    EXPECT_U64(ticks_on(cw, 0), t0);

    /* The end of time: "Time is each CPU's tick, 0 to UINT64_MAX"; "A deadline after the last
     * tick (UINT64_MAX) is CW_ERANGE on every call that sets one, with nothing changed; so is
     * an absolute time already passed at the last tick." */
    clear_log();
    EXPECT_EQ(jump(cw, 0, UINT64_MAX - 5), 0);
    EXPECT_U64(ticks_on(cw, 0), UINT64_MAX - 5);
    EXPECT_EQ(cw_callout_reset(cw, h2, 2, record, tag(80)), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(81), 5), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(82), 6), CW_ERANGE);
    EXPECT_EQ(cw_timeout(cw, record, tag(82), INT64_MAX), CW_ERANGE);
    EXPECT_EQ(cw_setcallout(cw, record, tag(83), 6, &s), CW_ERANGE);
    EXPECT_EQ(cw_callout_reset(cw, h2, 6, record, tag(84)), CW_ERANGE);
    EXPECT_EQ(cw_callout_reset_on(cw, h2, 6, record, tag(84), 0), CW_ERANGE);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, 6 * T, 0, record, tag(85), -1, 0), CW_ERANGE);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, INT64_MAX, 0, record, tag(85), -1, 0), CW_ERANGE);
    /* ... a relative sbt of 5 ticks with a window reaching past the end is a deadline within
     * range. */
    EXPECT_EQ(cw_callout_pending(cw, h2), 1);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_FIRST(first, UINT64_MAX - 3);
    EXPECT_EQ(jump(cw, 0, UINT64_MAX), 2);
    EXPECT_LOG(80, 81);
    EXPECT_U64(ticks_on(cw, 0), UINT64_MAX);
    /* At the last tick every arming is past it. */
    EXPECT_EQ(cw_timeout(cw, record, tag(86), 0), CW_ERANGE);
    EXPECT_EQ(cw_timeout(cw, record, tag(86), -1), CW_ERANGE);
    EXPECT_EQ(cw_setcallout(cw, record, tag(86), 1, &s), CW_ERANGE);
    EXPECT_EQ(cw_callout_reset(cw, h2, 0, record, tag(86)), CW_ERANGE);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, 0, 0, record, tag(86), -1, CW_C_ABSOLUTE),
              CW_ERANGE);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h2, INT64_MAX, 0, record, tag(86), -1, CW_C_ABSOLUTE),
              CW_ERANGE);
    EXPECT_EQ(cw_callout_pending(cw, h2), 0);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 0);
    EXPECT_EQ(cw_callout_process(cw, 0, 5), 0);
    EXPECT_U64(ticks_on(cw, 0), UINT64_MAX);
    EXPECT_EQ(cw_callout_free(cw, h2), 0);

    /* cw_callout_init: "CW_ENOMEM when that CPU's fixed pool is exhausted"; cw_timeout and
     * cw_setcallout likewise; "everything set before stays pending". */
    cw_callouts *fixed = table(backing, ncpu, 2, 1, hz);
    cw_handle f1, f2, f3 = forge(5, 5);
    EXPECT_EQ(cw_callout_init(fixed, 0, &f1), 0);
    EXPECT_EQ(cw_callout_init(fixed, 0, &f2), 0);
    EXPECT_EQ(cw_callout_init(fixed, 0, &f3), CW_ENOMEM);
    EXPECT_EQ(cw_timeout(fixed, record, tag(1), 1), CW_ENOMEM);
    EXPECT_EQ(cw_setcallout(fixed, record, tag(1), 1, &f3), CW_ENOMEM);
    EXPECT_EQ(cw_callout_reset(fixed, f1, 3, record, tag(100)), 0);
    EXPECT_EQ(cw_callout_reset(fixed, f2, 3, record, tag(101)), 0);
    /* ... and a freed record serves again. */
    EXPECT_EQ(cw_callout_free(fixed, f2), 0);
    EXPECT_EQ(cw_timeout(fixed, record, tag(102), 3), 0);
    clear_log();
    ticks_n(fixed, 0, 3);
    EXPECT_LOG(100, 102);
    cw_callouts_free(fixed);

    /* hz at its ends: the rounding at hz = UINT32_MAX and hz = 1. */
    cw_callouts *fast = table(backing, ncpu, 4, 0, UINT32_MAX);
    EXPECT_EQ(cw_callout_init(fast, 0, &h), 0);
    EXPECT_EQ(cw_callout_reset_sbt_on(fast, h, CW_SBT_1S, 0, record, tag(1), -1, 0), 0);
    EXPECT_EQ(cw_callout_next_event(fast, 0, &first, &last), 1);
    EXPECT_U64(first, UINT32_MAX);
    EXPECT_EQ(cw_callout_reset_sbt_on(fast, h, 1, 0, record, tag(1), -1, 0), 1);
    EXPECT_EQ(cw_callout_next_event(fast, 0, &first, &last), 1);
    EXPECT_U64(first, 1);
    cw_callouts_free(fast);
    cw_callouts *slow = table(backing, ncpu, 4, 0, 1);
    EXPECT_EQ(cw_callout_init(slow, 0, &h), 0);
    EXPECT_EQ(cw_callout_reset_sbt_on(slow, h, CW_SBT_1S + 1, 0, record, tag(1), -1, 0), 0);
    EXPECT_EQ(cw_callout_next_event(slow, 0, &first, &last), 1);
    EXPECT_U64(first, 2);
    cw_callouts_free(slow);

    cw_callouts_free(cw);
    cw_callouts_free(other);
}

/* Per-CPU behaviour: binding, moves, independent clocks, per-CPU pools. */
static void percpu_one_backing(int backing) {
    backing_now = backing_names[backing];
    const int64_t T = (int64_t)1 << 22;
    cw_callouts *cw = table(backing, 3, 8, 0, 1024);
    cw_handle h, s;
    uint64_t first, last;

    /* cw_callout_init: "bound to CPU `cpu`"; cw_callout_cpu: "The CPU whose queue holds the
     * callout". */
    EXPECT_EQ(cw_callout_init(cw, 2, &h), 0);
    EXPECT_EQ(cw_callout_cpu(cw, h), 2);
    clear_log();
    EXPECT_EQ(cw_callout_reset(cw, h, 1, record, tag(1)), 0);
    /* "only the callouts bound to that CPU run there". */
    ticks_n(cw, 0, 3);
    ticks_n(cw, 1, 3);
    EXPECT_NOTHING_RAN();
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 0);
    EXPECT_EQ(cw_callout_next_event(cw, 2, &first, &last), 1);
    EXPECT_U64(first, 1);
    /* Each CPU's clock is its own. */
    EXPECT_U64(ticks_on(cw, 0), 3);
    EXPECT_U64(ticks_on(cw, 2), 0);
    ticks_n(cw, 2, 1);
    EXPECT_LOG(1);

    /* "The BSD calls (cw_timeout, cw_setcallout and their cancels) use CPU 0's queue." */
    clear_log();
    EXPECT_EQ(cw_timeout(cw, record, tag(2), 1), 0);
    EXPECT_EQ(cw_setcallout(cw, record, tag(3), 1, &s), 0);
    ticks_n(cw, 1, 2);
    ticks_n(cw, 2, 2);
    EXPECT_NOTHING_RAN();
    ticks_n(cw, 0, 1);
    EXPECT_LOG(2, 3);

    /* cw_callout_reset_sbt_on: "A callout that is idle or pending moves at once"; "Returns 1
     * if the callout was pending"; "Times count on the clock of the CPU that takes the
     * callout". */
    EXPECT_EQ(cw_callout_reset(cw, h, 50, record, tag(4)), 0);
    uint64_t t1 = ticks_on(cw, 1);
    EXPECT_EQ(cw_callout_reset_sbt_on(cw, h, 5 * T, 0, record, tag(4), 1, 0), 1);
    EXPECT_EQ(cw_callout_cpu(cw, h), 1);
    EXPECT_EQ(cw_callout_next_event(cw, 2, &first, &last), 0);
    EXPECT_EQ(cw_callout_next_event(cw, 1, &first, &last), 1);
    EXPECT_U64(first, t1 + 5);
    /* "-1 keeps its CPU" (now CPU 1). */
    EXPECT_EQ(cw_callout_reset_on(cw, h, 7, record, tag(5), -1), 1);
    EXPECT_EQ(cw_callout_cpu(cw, h), 1);
    /* cw_callout_reset: "The callout stays on its CPU". */
    EXPECT_EQ(cw_callout_reset(cw, h, 7, record, tag(5)), 1);
    EXPECT_EQ(cw_callout_cpu(cw, h), 1);
    /* cw_callout_reset_on: "moving it as cw_callout_reset_sbt_on does"; "ticks of CPU `cpu`'s
     * clock from now". */
    uint64_t t0 = ticks_on(cw, 0);
    EXPECT_EQ(cw_callout_reset_on(cw, h, 4, record, tag(6), 0), 1);
    EXPECT_EQ(cw_callout_cpu(cw, h), 0);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    EXPECT_U64(first, t0 + 4);
    EXPECT_EQ(cw_callout_next_event(cw, 1, &first, &last), 0);
    /* "Its handle stays valid across moves." */
    EXPECT_EQ(cw_callout_pending(cw, h), 1);
    clear_log();
    ticks_n(cw, 0, 4);
    EXPECT_LOG(6);
    /* An idle callout moves at once too. */
    EXPECT_EQ(cw_callout_reset_on(cw, h, 2, record, tag(7), 2), 0);
    EXPECT_EQ(cw_callout_cpu(cw, h), 2);
    EXPECT_EQ(cw_callout_stop(cw, h), 1);
    EXPECT_EQ(cw_callout_cpu(cw, h), 2);

    /* cw_callout_reset_on / _sbt_on: "CW_ENOMEM (the new CPU's queue is full). On failure
     * nothing changes." */
    cw_callouts *fixed = table(backing, 3, 1, 1, 1024);
    cw_handle a, b, c;
    EXPECT_EQ(cw_callout_init(fixed, 1, &a), 0);
    EXPECT_EQ(cw_callout_init(fixed, 1, &c), CW_ENOMEM); /* "a fixed pool bounds the callouts
                                                             of each CPU" */
    EXPECT_EQ(cw_callout_init(fixed, 2, &b), 0);
    EXPECT_EQ(cw_callout_reset(fixed, b, 3, record, tag(8)), 0);
    EXPECT_EQ(cw_callout_reset_on(fixed, b, 3, record, tag(9), 1), CW_ENOMEM);
    EXPECT_EQ(cw_callout_reset_sbt_on(fixed, b, 3 * T, 0, record, tag(9), 1, 0), CW_ENOMEM);
    EXPECT_EQ(cw_callout_cpu(fixed, b), 2);
    EXPECT_EQ(cw_callout_pending(fixed, b), 1);
    clear_log();
    ticks_n(fixed, 2, 3);
    EXPECT_LOG(8);
    cw_callouts_free(fixed);

    /* "a table of several CPUs has one [owner] for cw_setcallout's handles and another for
     * cw_callout_init's": the two kinds are told apart. */
    EXPECT_EQ(cw_setcallout(cw, record, tag(10), 5, &s), 0);
    EXPECT(s.owner != h.owner);
    EXPECT_EQ(cw_callout_pending(cw, s), CW_EINVAL);
    EXPECT_EQ(cw_unsetcallout(cw, h), CW_EINVAL);
    EXPECT_EQ(cw_unsetcallout(cw, s), 1);

    /* A handler moving its own callout: "the move is deferred until the handler returns ...
     * until then cw_callout_cpu still names the old CPU and cw_callout_pending says 1". */
    handler_cw = cw;
    handler_h = h;
    EXPECT_EQ(cw_callout_reset_on(cw, h, 1, record, tag(11), 2), 0);
    clear_log();
    ticks_n(cw, 2, 1);
    EXPECT_LOG(11);

    cw_callouts_free(cw);
}

/* A table with the default deviation `percent`: a cw_timeout of 6400 ticks gets a window of
 * 6400 >> shift ticks (its end exact on CW_BACKING_WHEEL's `last`, bounds elsewhere) and runs
 * at `last`. */
static void deviation_window(int backing, int ncpu, uint32_t percent, int shift) {
    uint64_t first, last;
    cw_callouts *cw = table(backing, ncpu, 4, 0, 1024);
    EXPECT_EQ(cw_callouts_set_deviation(cw, percent), 0);
    EXPECT_EQ(cw_timeout(cw, record, tag(2), 6400), 0);
    EXPECT_EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    uint64_t win = 6400u >> shift;
    EXPECT(first >= 6400 && first <= 6400 + win);
    if (backing == CW_BACKING_WHEEL) {
        checks++;
        if (last != 6400 + win) {
            failures++;
            printf("test_documented: FAIL %s:%d: [%s] deviation %u%%: window end %llu, "
                   "expected 6400 + 6400/2^%d = %llu\n",
                   __FILE__, __LINE__, backing_now, percent, (unsigned long long)last, shift,
                   (unsigned long long)(6400 + win));
        }
    }
    clear_log();
    EXPECT_EQ(jump(cw, 0, last), 1);
    EXPECT_LOG(2);
    cw_callouts_free(cw);
}

/* Exact windows on fresh tables, where cw_callout_next_event's values are not yet loosened by
 * re-armings. */
static void callouts_exact_windows(int backing, int ncpu) {
    backing_now = backing_names[backing];
    const int64_t T = (int64_t)1 << 22;
    uint64_t first, last;
    /* cw_callout_reset_sbt_on: "up to `precision` late, or the interval divided by 2^n with
     * CW_C_PREL(n) if that is larger (rounded down to whole ticks)"; on CW_BACKING_WHEEL
     * `last` is "the earliest end of a window". */
    const struct {
        int64_t ticks, precision;
        int n;
    } cases[] = {{1000, 10, 3}, {1000, 200, 3}, {4096, 0, 0}, {4096, 0, 12}, {4096, 0, 13},
                 {100, 7, -1}, {3, 0, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cw_callouts *cw = table(backing, ncpu, 4, 0, 1024);
        cw_handle h;
        EXPECT_EQ(cw_callout_init(cw, ncpu - 1, &h), 0);
        int flags = cases[i].n >= 0 ? cw_c_prel(cases[i].n) : 0;
        uint64_t win = (uint64_t)cases[i].precision;
        if (cases[i].n >= 0 && ((uint64_t)cases[i].ticks >> cases[i].n) > win)
            win = (uint64_t)cases[i].ticks >> cases[i].n;
        EXPECT_EQ(cw_callout_reset_sbt_on(cw, h, cases[i].ticks * T, cases[i].precision * T,
                                          record, tag(1), -1, flags),
                  0);
        EXPECT_EQ(cw_callout_next_event(cw, ncpu - 1, &first, &last), 1);
        uint64_t d = (uint64_t)cases[i].ticks;
        EXPECT(first >= d && first <= d + win);
        if (backing == CW_BACKING_WHEEL)
            EXPECT_U64(last, d + win);
        else
            EXPECT_U64(last, first);
        clear_log();
        EXPECT_EQ(jump(cw, ncpu - 1, last), 1);
        EXPECT_LOG(1);
        cw_callouts_free(cw);
    }
    /* cw_callouts_set_deviation: "1 / 2^s of it, s the highest bit of t + t/2 for t = (99 +
     * `percent`) / `percent`, as FreeBSD derives `tc_precexp` (1 allows 1/128, 5 a sixteenth,
     * 13 an eighth, 99 a half, 100 the whole interval)". */
    const uint32_t percents[] = {1, 2, 5, 6, 12, 13, 25, 50, 99, 100};
    const int shifts[] = {7, 6, 4, 4, 3, 3, 2, 1, 1, 0};
    for (size_t i = 0; i < sizeof percents / sizeof percents[0]; i++)
        deviation_window(backing, ncpu, percents[i], shifts[i]);
}

static int move_rc[4];

static void move_self(void *arg) {
    (void)arg;
    /* cw_callout_reset_sbt_on: "If its handler is running, the move is deferred until the
     * handler returns ...: until then cw_callout_cpu still names the old CPU and
     * cw_callout_pending says 1". */
    move_rc[0] = cw_callout_reset_sbt_on(handler_cw, handler_h, 3 * ((int64_t)1 << 22), 0,
                                         record, tag(21), 1, 0);
    move_rc[1] = cw_callout_cpu(handler_cw, handler_h);
    move_rc[2] = cw_callout_pending(handler_cw, handler_h);
    record(tag(20));
}

static void percpu_deferred_move(int backing) {
    backing_now = backing_names[backing];
    uint64_t first, last;
    cw_callouts *cw = table(backing, 3, 4, 0, 1024);
    cw_handle h;
    EXPECT_EQ(cw_callout_init(cw, 2, &h), 0);
    handler_cw = cw;
    handler_h = h;
    EXPECT_EQ(jump(cw, 1, 100), 0);
    EXPECT_EQ(cw_callout_reset(cw, h, 1, move_self, NULL), 0);
    clear_log();
    ticks_n(cw, 2, 1);
    EXPECT_LOG(20);
    EXPECT_EQ(move_rc[0], 0);
    EXPECT_EQ(move_rc[1], 2);
    EXPECT_EQ(move_rc[2], 1);
    /* After the handler returned: on CPU 1, "Times count on the clock of the CPU that takes
     * the callout, from when it takes it". */
    EXPECT_EQ(cw_callout_cpu(cw, h), 1);
    EXPECT_EQ(cw_callout_pending(cw, h), 1);
    EXPECT_EQ(cw_callout_next_event(cw, 1, &first, &last), 1);
    EXPECT_U64(first, 103);
    clear_log();
    ticks_n(cw, 2, 5);
    EXPECT_NOTHING_RAN();
    EXPECT_EQ(jump(cw, 1, 103), 1);
    EXPECT_LOG(21);
    cw_callouts_free(cw);

    /* "If the new CPU's queue cannot take the callout when the handler returns (full ...), it
     * is armed on its old CPU instead." */
    cw = table(backing, 3, 1, 1, 1024);
    cw_handle filler;
    EXPECT_EQ(cw_callout_init(cw, 2, &h), 0);
    handler_cw = cw;
    handler_h = h;
    EXPECT_EQ(cw_callout_reset(cw, h, 1, move_self, NULL), 0);
    /* CPU 1's pool of one is taken while the handler runs: by a callout set before. */
    EXPECT_EQ(cw_callout_init(cw, 1, &filler), 0);
    clear_log();
    ticks_n(cw, 2, 1);
    EXPECT_LOG(20);
    EXPECT_EQ(move_rc[0], 0);
    EXPECT_EQ(cw_callout_cpu(cw, h), 2);
    EXPECT_EQ(cw_callout_pending(cw, h), 1);
    clear_log();
    ticks_n(cw, 2, 3);
    EXPECT_LOG(21);
    cw_callouts_free(cw);
}

static void group_callouts(void) {
    callouts_construction(1);
    for (int b = 0; b < 3; b++) {
        callouts_one_backing(backings[b], 1);
        callouts_exact_windows(backings[b], 1);
    }
}

static void group_percpu(void) {
    callouts_construction(3);
    for (int b = 0; b < 3; b++) {
        callouts_one_backing(backings[b], 3);
        percpu_one_backing(backings[b]);
        callouts_exact_windows(backings[b], 3);
        percpu_deferred_move(backings[b]);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Running the groups                                                                          */

struct group {
    const char *name;
    void (*run)(void);
};

static const struct group groups[] = {
    {"general", group_general},
    {"wheel", group_wheel},
    {"timerset", group_timerset},
    {"itimer", group_itimer},
    {"sleep", group_sleep},
    {"callouts", group_callouts},
    {"percpu", group_percpu},
};

int main(int argc, char **argv) {
    int bad = 0;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (argc > 1 && strcmp(argv[1], groups[i].name) != 0)
            continue;
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            groups[i].run();
            printf("test_documented: %s %s: %ld checks, %d failed\n",
                   failures ? "FAILED" : "ok", groups[i].name, (long)atomic_load(&checks),
                   failures);
            fflush(stdout);
            _exit(failures ? 1 : 0);
        }
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid);
        if (WIFSIGNALED(status)) {
            printf("test_documented: CRASHED %s: signal %d\n", groups[i].name,
                   WTERMSIG(status));
            bad++;
        } else if (WEXITSTATUS(status) != 0) {
            bad++;
        }
    }
    if (bad) {
        printf("test_documented: %d group(s) failed\n", bad);
        return 1;
    }
    printf("test_documented: all groups passed\n");
    return 0;
}
