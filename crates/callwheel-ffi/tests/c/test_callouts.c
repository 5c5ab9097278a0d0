/*
 * The C API from C: every function of callwheel.h, with good and bad input, on every backing
 * (tables of several CPUs and async drain included).
 * Built and run by tests/c_api.rs (cargo test), against the static and the shared library.
 * Exits 0 when every check passes; otherwise prints the failing line and exits 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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

static const int backings[] = {CW_BACKING_LIST, CW_BACKING_HASHED, CW_BACKING_WHEEL};
static const char *const backing_names[] = {"list", "hashed", "wheel"};

/* The handlers run on the thread calling cw_softclock / cw_hardclock: for the single-thread
 * tests that is the main thread, so a plain log will do. */
static int fired[256];
static int nfired;

static void *tag(intptr_t n) { return (void *)n; }

static void record(void *arg) {
    CHECK(nfired < 256);
    fired[nfired++] = (int)(intptr_t)arg;
}

static void record_other(void *arg) { record(tag((intptr_t)arg + 1000)); }

/* Checks that the log holds exactly the n tags given, then clears it. */
static void expect_log(int line, int n, const int *tags) {
    int ok = nfired == n;
    for (int i = 0; ok && i < n; i++)
        ok = fired[i] == tags[i];
    checks++;
    if (!ok) {
        fprintf(stderr, "%s:%d: handlers ran:", __FILE__, line);
        for (int i = 0; i < nfired; i++)
            fprintf(stderr, " %d", fired[i]);
        fprintf(stderr, "; expected:");
        for (int i = 0; i < n; i++)
            fprintf(stderr, " %d", tags[i]);
        fprintf(stderr, "\n");
        exit(1);
    }
    nfired = 0;
}
#define EXPECT_LOG(...)                                                                  \
    do {                                                                                 \
        const int tags_[] = {__VA_ARGS__};                                               \
        expect_log(__LINE__, (int)(sizeof tags_ / sizeof tags_[0]), tags_);              \
    } while (0)
#define EXPECT_NONE() expect_log(__LINE__, 0, NULL)

/* Whether two handles name the same callout of the same table. */
static int same(cw_handle a, cw_handle b) { return a.id == b.id && a.owner == b.owner; }

/* A handle made up from its two numbers. */
static cw_handle forge(uint64_t id, uint64_t owner) {
    cw_handle h = {id, owner};
    return h;
}

static cw_callouts *make(int backing, size_t calloutsize, int fixed) {
    cw_callouts *cw = NULL;
    EQ(cw_callouts_new(backing, calloutsize, fixed, 1000, &cw), CW_OK);
    CHECK(cw != NULL);
    return cw;
}

/* n clock ticks, each followed by cw_softclock when it has work; returns handlers run. */
static int run(cw_callouts *cw, int n) {
    int ran = 0;
    for (int i = 0; i < n; i++) {
        int rc = cw_hardclock(cw, 0);
        CHECK(rc == 0 || rc == 1);
        if (rc == 1) {
            int r = cw_softclock(cw, 0);
            CHECK(r >= 0);
            ran += r;
        }
    }
    return ran;
}

static uint64_t ticks_of(cw_callouts *cw) {
    uint64_t t = 0;
    EQ(cw_ticks(cw, 0, &t), CW_OK);
    return t;
}

static uint64_t softticks_of(cw_callouts *cw) {
    uint64_t t = 0;
    EQ(cw_softticks(cw, 0, &t), CW_OK);
    return t;
}

static void test_constants(void) {
#ifdef __linux__
    EQ(CW_EINVAL, -EINVAL);
    EQ(CW_ENOMEM, -ENOMEM);
    EQ(CW_ESTALE, -ESTALE);
    EQ(CW_EDEADLK, -EDEADLK);
    EQ(CW_EBUSY, -EBUSY);
    EQ(CW_ERANGE, -ERANGE);
#endif
    /* The negative codes are parenthesised: this must not read as 1--22. */
    EQ(1 - CW_EINVAL, 23);
    EQ(CW_OK, 0);
    CHECK(CW_EPANIC < 0);
    EQ(CW_SBT_1S, (int64_t)1 << 32);
    EQ(CW_SBT_1MS, CW_SBT_1S / 1000);
    EQ(CW_SBT_1US, CW_SBT_1S / 1000000);
    EQ(CW_SBT_1NS, CW_SBT_1S / 1000000000);
    EQ(CW_C_PREL_MAX, 126);
    for (int n = 0; n <= CW_C_PREL_MAX; n++) {
        EQ(cw_c_prel(n), CW_C_PREL(n));
        CHECK((cw_c_prel(n) & (CW_C_DIRECT_EXEC | CW_C_ABSOLUTE | CW_C_HARDCLOCK)) == 0);
    }
    EQ(cw_c_prel(-1), CW_EINVAL);
    EQ(cw_c_prel(CW_C_PREL_MAX + 1), CW_EINVAL);
    EQ(cw_c_prel(INT_MIN), CW_EINVAL);
}

static void test_strerror(void) {
    const int codes[] = {CW_EINVAL, CW_ENOMEM, CW_ESTALE, CW_EDEADLK, CW_EBUSY,
                         CW_ERANGE, CW_EPANIC, CW_ENOSPC, CW_EINVARIANT};
    const int n = (int)(sizeof codes / sizeof codes[0]);
    const char *unknown = cw_strerror(-5000);
    CHECK(unknown != NULL && strlen(unknown) > 0);
    EQ(strcmp(cw_strerror(INT_MIN), unknown), 0);
    EQ(strcmp(cw_strerror(-4096), unknown), 0);
    /* Other negated errno values (timer sets report failed system calls so) have one text. */
    const char *syscall_text = cw_strerror(-EMFILE);
    CHECK(strcmp(syscall_text, unknown) != 0);
    EQ(strcmp(cw_strerror(-1500), syscall_text), 0);
    CHECK(strcmp(cw_strerror(CW_OK), "success") == 0);
    CHECK(strcmp(cw_strerror(1), "success") == 0);
    for (int i = 0; i < n; i++) {
        const char *s = cw_strerror(codes[i]);
        CHECK(s != NULL && strlen(s) > 0);
        CHECK(strcmp(s, unknown) != 0);
        CHECK(strcmp(s, "success") != 0);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(s, cw_strerror(codes[j])) != 0);
        /* Static: the same pointer every time. */
        CHECK(s == cw_strerror(codes[i]));
    }
}

static void test_new_and_free(void) {
    static int garbage;
    cw_callouts *cw = (cw_callouts *)&garbage; /* must be overwritten */
    EQ(cw_callouts_new(3, 16, 0, 1000, &cw), CW_EINVAL);
    CHECK(cw == NULL);
    cw = (cw_callouts *)&garbage;
    EQ(cw_callouts_new(-1, 16, 0, 1000, &cw), CW_EINVAL);
    CHECK(cw == NULL);
    EQ(cw_callouts_new(CW_BACKING_HASHED, 16, 0, 0, &cw), CW_EINVAL); /* hz = 0 */
    EQ(cw_callouts_new(CW_BACKING_WHEEL, 0, 1, 1000, &cw), CW_EINVAL); /* fixed, no records */
    EQ(cw_callouts_new(CW_BACKING_LIST, SIZE_MAX, 0, 1000, &cw), CW_EINVAL);
    /* The documented range ends at CW_CALLOUTSIZE_MAX: one more is refused by the check... */
    EQ(cw_callouts_new(CW_BACKING_HASHED, CW_CALLOUTSIZE_MAX + 1, 0, 1000, &cw), CW_EINVAL);
    EQ(cw_callouts_new(CW_BACKING_WHEEL, (size_t)CW_CALLOUTSIZE_MAX + 1, 1, 1000, &cw),
       CW_EINVAL);
    CHECK(cw == NULL);
    /* ...the top is taken (a reservation of address space), or refused for memory only. */
    for (int fixed = 0; fixed < 2; fixed++) {
        int rc = cw_callouts_new(CW_BACKING_HASHED, CW_CALLOUTSIZE_MAX, fixed, 1000, &cw);
        CHECK(rc == CW_OK || rc == CW_ENOMEM);
        CHECK((rc == CW_OK) == (cw != NULL));
        if (cw != NULL) {
            EQ(cw_timeout(cw, record, tag(1), 1), CW_OK);
            EQ(run(cw, 1), 1);
            EXPECT_LOG(1);
            cw_callouts_free(cw);
            cw = NULL;
        }
    }
    EQ(cw_callouts_new(CW_BACKING_LIST, 16, 0, 1000, NULL), CW_EINVAL);
    CHECK(cw == NULL);
    cw_callouts_free(NULL);
    for (int b = 0; b < 3; b++) {
        cw = make(backings[b], 0, 0); /* a growing pool may start empty */
        EQ(cw_timeout(cw, record, tag(1), 1), CW_OK);
        cw_callouts_free(cw); /* pending callouts go with it, unrun */
        cw = make(backings[b], 1u << 22, 0); /* large hashed wheels are capped at 2^20 */
        EQ(run(cw, 3), 0);
        cw_callouts_free(cw);
    }
    EXPECT_NONE();
}

static void test_null_arguments(cw_callouts *cw) {
    uint64_t out = 77;
    cw_handle h = {0, 0}, hout = {77, 77}, zero = {0, 0};
    EQ(cw_hardclock(NULL, 0), CW_EINVAL);
    EQ(cw_softclock(NULL, 0), CW_EINVAL);
    EQ(cw_ticks(NULL, 0, &out), CW_EINVAL);
    EQ(cw_softticks(NULL, 0, &out), CW_EINVAL);
    EQ(cw_timeout(NULL, record, tag(1), 1), CW_EINVAL);
    EQ(cw_untimeout(NULL, record, tag(1)), CW_EINVAL);
    EQ(cw_setcallout(NULL, record, tag(1), 1, &hout), CW_EINVAL);
    EQ(cw_unsetcallout(NULL, zero), CW_EINVAL);
    EQ(cw_callout_init(NULL, -1, &hout), CW_EINVAL);
    EQ(cw_callout_free(NULL, zero), CW_EINVAL);
    EQ(cw_callout_reset(NULL, zero, 1, record, tag(1)), CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(NULL, zero, CW_SBT_1MS, 0, record, tag(1), 0, 0), CW_EINVAL);
    EQ(cw_callout_stop(NULL, zero), CW_EINVAL);
    EQ(cw_callout_drain(NULL, zero), CW_EINVAL);
    EQ(cw_callout_pending(NULL, zero), CW_EINVAL);
    EQ(cw_callout_active(NULL, zero), CW_EINVAL);
    EQ(cw_callout_deactivate(NULL, zero), CW_EINVAL);
    EQ(cw_callout_async_drain(NULL, zero, record), CW_EINVAL);
    EQ(out, 77);
    CHECK(hout.id == 77 && hout.owner == 77);

    /* NULL out-pointers and NULL functions, on a real table: refused, nothing armed. */
    EQ(cw_callout_init(cw, -1, &h), CW_OK);
    EQ(cw_ticks(cw, 0, NULL), CW_EINVAL);
    EQ(cw_softticks(cw, 0, NULL), CW_EINVAL);
    EQ(cw_callout_init(cw, -1, NULL), CW_EINVAL);
    EQ(cw_timeout(cw, NULL, tag(1), 1), CW_EINVAL);
    EQ(cw_untimeout(cw, NULL, tag(1)), CW_EINVAL);
    EQ(cw_setcallout(cw, NULL, tag(1), 1, &hout), CW_EINVAL);
    EQ(cw_setcallout(cw, record, tag(1), 1, NULL), CW_EINVAL);
    EQ(cw_callout_reset(cw, h, 1, NULL, tag(1)), CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1MS, 0, NULL, tag(1), 0, 0), CW_EINVAL);
    EQ(cw_callout_async_drain(cw, h, NULL), CW_EINVAL);
    EQ(out, 77);
    CHECK(hout.id == 77 && hout.owner == 77);
    EQ(cw_callout_pending(cw, h), 0);
    EQ(run(cw, 3), 0);
    EXPECT_NONE();
    EQ(cw_callout_free(cw, h), CW_OK);
}

static void test_timeout(cw_callouts *cw) {
    uint64_t t0 = ticks_of(cw);
    EQ(softticks_of(cw), t0);
    /* Zero and negative tick counts are one tick, as in BSD. */
    EQ(cw_timeout(cw, record, tag(1), 0), CW_OK);
    EQ(cw_timeout(cw, record, tag(2), -5), CW_OK);
    EQ(cw_timeout(cw, record, tag(3), INT64_MIN), CW_OK);
    EQ(cw_timeout(cw, record, tag(4), 1), CW_OK);
    EQ(cw_timeout(cw, record, tag(5), 3), CW_OK);
    EQ(cw_timeout(cw, record, tag(6), 3), CW_OK);
    EQ(cw_timeout(cw, record_other, tag(6), 3), CW_OK);
    /* untimeout of something that does not exist: 0, and nothing changes. */
    EQ(cw_untimeout(cw, record, tag(99)), 0);
    EQ(cw_untimeout(cw, record_other, tag(5)), 0);
    /* (func, arg) must both match. */
    EQ(cw_untimeout(cw, record, tag(6)), 1);
    EQ(cw_untimeout(cw, record, tag(6)), 0);

    EQ(cw_hardclock(cw, 0), 1);
    EQ(softticks_of(cw), t0);
    EQ(cw_softclock(cw, 0), 4);
    EXPECT_LOG(1, 2, 3, 4); /* equal expiries in the order they were set */
    EQ(cw_softclock(cw, 0), 0);
    EQ(cw_hardclock(cw, 0), 0); /* nothing due at t0 + 2: the fast path */
    EQ(ticks_of(cw), t0 + 2);
    EQ(softticks_of(cw), t0 + 2);
    EQ(cw_hardclock(cw, 0), 1);
    EQ(cw_softclock(cw, 0), 2);
    EXPECT_LOG(5, 1006);
    EQ(cw_untimeout(cw, record, tag(5)), 0); /* already ran */

    /* A very long timeout is taken (or refused with CW_ERANGE by a bounded scheme). */
    int rc = cw_timeout(cw, record, tag(7), INT64_MAX);
    CHECK(rc == CW_OK || rc == CW_ERANGE);
    EQ(run(cw, 5), 0);
    EQ(cw_untimeout(cw, record, tag(7)), rc == CW_OK);
    EXPECT_NONE();
}

static void test_handles(cw_callouts *cw) {
    cw_handle a, b, c, p;
    EQ(cw_setcallout(cw, record, tag(1), 2, &a), CW_OK);
    EQ(cw_setcallout(cw, record, tag(2), 2, &b), CW_OK);
    CHECK(!same(a, b));
    CHECK(a.owner != 0 && a.owner == b.owner); /* one table, one owner */
    EQ(cw_unsetcallout(cw, a), 1);
    EQ(cw_unsetcallout(cw, a), CW_ESTALE); /* cancelled: stale */
    EQ(cw_setcallout(cw, record, tag(3), 2, &c), CW_OK);
    EQ(cw_unsetcallout(cw, a), CW_ESTALE); /* even if c reuses a's record */
    /* Forged handles with this table's owner: another generation, an index never
     * allocated, all ones; b's id with an owner that is not this table's, or zero. */
    EQ(cw_unsetcallout(cw, forge(b.id ^ ((uint64_t)1 << 40), b.owner)), CW_ESTALE);
    EQ(cw_unsetcallout(cw, forge(1000000, b.owner)), CW_ESTALE);
    EQ(cw_unsetcallout(cw, forge(UINT64_MAX, b.owner)), CW_ESTALE);
    EQ(cw_callout_stop(cw, forge(UINT64_MAX, b.owner)), CW_ESTALE);
    EQ(cw_unsetcallout(cw, forge(b.id, b.owner + 1)), CW_ESTALE);
    EQ(cw_unsetcallout(cw, forge(b.id, 0)), CW_ESTALE);
    EQ(cw_unsetcallout(cw, forge(b.id, UINT64_MAX)), CW_ESTALE);
    /* A one-shot handle is the wrong kind for the callout_* functions and vice versa. */
    EQ(cw_callout_init(cw, -1, &p), CW_OK);
    EQ(cw_unsetcallout(cw, p), CW_EINVAL);
    EQ(cw_callout_stop(cw, b), CW_EINVAL);
    EQ(cw_callout_pending(cw, c), CW_EINVAL);
    EQ(cw_callout_free(cw, b), CW_EINVAL);
    EQ(cw_callout_async_drain(cw, b, record), CW_EINVAL);

    EQ(run(cw, 2), 2);
    EXPECT_LOG(2, 3);
    EQ(cw_unsetcallout(cw, b), CW_ESTALE); /* fired: stale */
    EQ(cw_unsetcallout(cw, c), CW_ESTALE);

    /* A freed callout_init handle is stale for every call. */
    EQ(cw_callout_free(cw, p), CW_OK);
    EQ(cw_callout_free(cw, p), CW_ESTALE);
    EQ(cw_callout_reset(cw, p, 1, record, tag(9)), CW_ESTALE);
    EQ(cw_callout_reset_sbt_on(cw, p, CW_SBT_1MS, 0, record, tag(9), 0, 0), CW_ESTALE);
    EQ(cw_callout_stop(cw, p), CW_ESTALE);
    EQ(cw_callout_drain(cw, p), CW_ESTALE);
    EQ(cw_callout_pending(cw, p), CW_ESTALE);
    EQ(cw_callout_active(cw, p), CW_ESTALE);
    EQ(cw_callout_deactivate(cw, p), CW_ESTALE);
    EQ(cw_callout_async_drain(cw, p, record), CW_ESTALE);
    EQ(run(cw, 3), 0);
    EXPECT_NONE();
}

/* Two tables both issue their first records at the same index and generation: each
 * table's handles are CW_ESTALE on the other for every function that takes a handle, and
 * change nothing there. */
static void test_cross_tables(int backing_a, int backing_b) {
    cw_callouts *a = make(backing_a, 8, 0), *b = make(backing_b, 8, 0);
    cw_handle oa, ob, pa, pb;
    EQ(cw_setcallout(a, record, tag(1), 2, &oa), CW_OK);
    EQ(cw_setcallout(b, record, tag(2), 2, &ob), CW_OK);
    EQ(cw_callout_init(a, -1, &pa), CW_OK);
    EQ(cw_callout_init(b, -1, &pb), CW_OK);
    EQ(oa.id, ob.id);
    EQ(pa.id, pb.id);
    CHECK(oa.owner != ob.owner);
    EQ(cw_callout_reset(a, pa, 3, record, tag(3)), 0);
    for (int side = 0; side < 2; side++) {
        cw_callouts *t = side ? b : a;
        cw_handle one_shot = side ? oa : ob, persistent = side ? pa : pb;
        EQ(cw_unsetcallout(t, one_shot), CW_ESTALE);
        EQ(cw_unsetcallout(t, persistent), CW_ESTALE);
        EQ(cw_callout_free(t, persistent), CW_ESTALE);
        EQ(cw_callout_reset(t, persistent, 1, record, tag(9)), CW_ESTALE);
        EQ(cw_callout_reset_sbt_on(t, persistent, CW_SBT_1MS, 0, record, tag(9), 0, 0),
           CW_ESTALE);
        EQ(cw_callout_stop(t, persistent), CW_ESTALE);
        EQ(cw_callout_drain(t, persistent), CW_ESTALE);
        EQ(cw_callout_pending(t, persistent), CW_ESTALE);
        EQ(cw_callout_active(t, persistent), CW_ESTALE);
        EQ(cw_callout_deactivate(t, persistent), CW_ESTALE);
        EQ(cw_callout_async_drain(t, persistent, record), CW_ESTALE);
        EQ(cw_callout_stop(t, one_shot), CW_ESTALE);
    }
    /* Nothing changed: a's persistent callout is still armed and active, b's idle; each
     * table runs exactly its own callouts. */
    EQ(cw_callout_pending(a, pa), 1);
    EQ(cw_callout_active(a, pa), 1);
    EQ(cw_callout_pending(b, pb), 0);
    EQ(cw_callout_active(b, pb), 0);
    EQ(run(a, 3), 2);
    EXPECT_LOG(1, 3);
    EQ(run(b, 3), 1);
    EXPECT_LOG(2);
    EQ(cw_callout_free(a, pa), CW_OK);
    EQ(cw_callout_free(b, pb), CW_OK);
    cw_callouts_free(a);
    cw_callouts_free(b);
}

#ifdef __linux__
static long oom_ran;
static void oom_count(void *arg) {
    (void)arg;
    oom_ran++;
}

/* Bytes of address space the process uses now. */
/* In a child process with its address space capped a little above what it uses: a growing
 * table is filled until it reports CW_ENOMEM (not an abort), and then every callout set
 * before is still there: a sample cancels, all the others run once. */
static void test_out_of_memory(int backing) {
    static cw_handle sample[1024];
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        cw_callouts *cw = make(backing, 64, 0);
        unsigned long long limit = address_space_in_use() + (96ull << 20);
        struct rlimit rl = {limit, limit};
        EQ(setrlimit(RLIMIT_AS, &rl), 0);
        long set = 0, sampled = 0;
        int rc;
        for (;;) {
            cw_handle h;
            rc = cw_setcallout(cw, oom_count, NULL, set % 16 + 1, &h);
            if (rc != CW_OK)
                break;
            if (set % 1024 == 0 && sampled < 1024)
                sample[sampled++] = h;
            set++;
        }
        EQ(rc, CW_ENOMEM);
        CHECK(set > 10000);
        for (long i = 0; i < sampled; i++)
            EQ(cw_unsetcallout(cw, sample[i]), 1);
        run(cw, 17);
        EQ(oom_ran, set - sampled);
        cw_callouts_free(cw);
        _exit(0);
    }
    int status = 0;
    EQ(waitpid(pid, &status, 0), pid);
    CHECK(!WIFSIGNALED(status)); /* not killed: no abort on a refused allocation */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
#endif

static void test_exhausted(int backing) {
    cw_callouts *cw = make(backing, 3, 1);
    cw_handle h, p, x = {55, 55};
    EQ(cw_timeout(cw, record, tag(1), 5), CW_OK);
    EQ(cw_setcallout(cw, record, tag(2), 5, &h), CW_OK);
    EQ(cw_callout_init(cw, -1, &p), CW_OK);
    /* All three records in use. */
    EQ(cw_timeout(cw, record, tag(3), 5), CW_ENOMEM);
    EQ(cw_setcallout(cw, record, tag(3), 5, &x), CW_ENOMEM);
    EQ(cw_callout_init(cw, -1, &x), CW_ENOMEM);
    CHECK(x.id == 55 && x.owner == 55); /* nothing written */
    /* Arming a callout_init record takes no new record. */
    EQ(cw_callout_reset(cw, p, 5, record, tag(4)), 0);
    /* Freeing one lets the next call through. */
    EQ(cw_unsetcallout(cw, h), 1);
    EQ(cw_timeout(cw, record, tag(5), 5), CW_OK);
    EQ(cw_timeout(cw, record, tag(6), 5), CW_ENOMEM);
    EQ(run(cw, 5), 3);
    EXPECT_LOG(1, 4, 5);
    /* The one-shot records came back when they fired. */
    EQ(cw_setcallout(cw, record, tag(7), 1, &h), CW_OK);
    EQ(cw_callout_init(cw, -1, &x), CW_OK);
    EQ(cw_callout_init(cw, -1, &x), CW_ENOMEM);
    cw_callouts_free(cw);
}

/* Shared with the re-entrant handlers through their argument. */
struct ctx {
    cw_callouts *cw;
    cw_handle handle;
    int runs;
    int results[32];
    int nresults;
};

static void note(struct ctx *c, int rc) {
    CHECK(c->nresults < 32);
    c->results[c->nresults++] = rc;
}

/* Cancels record(tag(1)), due at the same tick right after this one. */
static void cancel_next(void *arg) {
    struct ctx *c = arg;
    c->runs++;
    note(c, cw_untimeout(c->cw, record, tag(1)));
}

/* Re-arms its own callout twice; tries what a handler may not do. */
static void rearm(void *arg) {
    struct ctx *c = arg;
    uint64_t t;
    c->runs++;
    EQ(cw_callout_pending(c->cw, c->handle), 0); /* started: no longer pending */
    EQ(cw_callout_active(c->cw, c->handle), 1);  /* but still active */
    EQ(cw_callout_drain(c->cw, c->handle), CW_EDEADLK);
    EQ(cw_callout_free(c->cw, c->handle), CW_EDEADLK);
    EQ(cw_softclock(c->cw, 0), CW_EBUSY); /* this thread is already running handlers */
    EQ(cw_ticks(c->cw, 0, &t), CW_OK);
    note(c, (int)t);
    if (c->runs < 3)
        EQ(cw_callout_reset(c->cw, c->handle, 2, rearm, arg), 0);
    else
        EQ(cw_callout_deactivate(c->cw, c->handle), CW_OK);
}

static void test_reentrant(cw_callouts *cw) {
    struct ctx c = {cw, {0, 0}, 0, {0}, 0};
    EQ(cw_timeout(cw, cancel_next, &c, 2), CW_OK);
    EQ(cw_timeout(cw, record, tag(1), 2), CW_OK);
    EQ(cw_timeout(cw, record, tag(2), 2), CW_OK);
    EQ(run(cw, 3), 2);
    EXPECT_LOG(2);
    EQ(c.runs, 1);
    EQ(c.results[0], 1);

    struct ctx r = {cw, {0, 0}, 0, {0}, 0};
    uint64_t t0 = ticks_of(cw);
    EQ(cw_callout_init(cw, -1, &r.handle), CW_OK);
    EQ(cw_callout_active(cw, r.handle), 0);
    EQ(cw_callout_reset(cw, r.handle, 2, rearm, &r), 0);
    EQ(cw_callout_pending(cw, r.handle), 1);
    EQ(run(cw, 10), 3);
    EQ(r.runs, 3);
    EQ(r.results[0], t0 + 2);
    EQ(r.results[1], t0 + 4);
    EQ(r.results[2], t0 + 6);
    EQ(cw_callout_pending(cw, r.handle), 0);
    EQ(cw_callout_active(cw, r.handle), 0);
    EQ(cw_callout_drain(cw, r.handle), 0);
    EQ(cw_callout_free(cw, r.handle), CW_OK);
}

static void test_freebsd(cw_callouts *cw) {
    cw_handle h, d;
    EQ(cw_callout_init(cw, -1, &h), CW_OK);
    EQ(cw_callout_init(cw, -1, &d), CW_OK);
    uint64_t t0 = ticks_of(cw);

    /* Bad flags and CPUs: refused, nothing armed. */
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1MS, 0, record, tag(1), 0, 0x4000), CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1MS, 0, record, tag(1), 0, -1), CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1MS, 0, record, tag(1), 0, cw_c_prel(500)),
       CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1MS, 0, record, tag(1), 1, 0), CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1MS, 0, record, tag(1), -2, 0), CW_EINVAL);
    EQ(cw_callout_pending(cw, h), 0);
    EQ(cw_callout_active(cw, h), 0);

    /* C_ABSOLUTE: 5 ms after tick 0 at 1000 Hz is tick t0 + 5 when t0 = 0. */
    int64_t abs = (int64_t)(t0 + 5) * CW_SBT_1MS;
    EQ(cw_callout_reset_sbt_on(cw, h, abs, 0, record, tag(1), -1, CW_C_ABSOLUTE), 0);
    /* C_DIRECT_EXEC: runs from cw_hardclock itself, 2 ticks from now. */
    EQ(cw_callout_reset_sbt_on(cw, d, 2 * CW_SBT_1MS, CW_SBT_1US, record, tag(2), 0,
                               CW_C_DIRECT_EXEC | CW_C_HARDCLOCK | CW_C_PREL(2)),
       0);
    EQ(cw_callout_pending(cw, d), 1);
    EQ(cw_hardclock(cw, 0), 0);
    EXPECT_NONE();
    cw_hardclock(cw, 0); /* no cw_softclock: the direct handler ran in here */
    EXPECT_LOG(2);
    EQ(cw_callout_pending(cw, d), 0);
    EQ(cw_callout_active(cw, d), 1);
    EQ(run(cw, 2), 0);
    EXPECT_NONE();
    EQ(run(cw, 1), 1);
    EXPECT_LOG(1);
    EQ(ticks_of(cw), t0 + 5);

    /* An absolute time already passed runs at the next cw_softclock. */
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1MS, 0, record, tag(3), 0, CW_C_ABSOLUTE), 0);
    EQ(run(cw, 1), 1);
    EXPECT_LOG(3);
    /* Relative 0 or negative: the next tick; re-arming a pending callout returns 1. */
    EQ(cw_callout_reset_sbt_on(cw, h, -CW_SBT_1S, 0, record, tag(4), 0, 0), 0);
    EQ(cw_callout_reset_sbt_on(cw, h, 0, 0, record, tag(5), 0, cw_c_prel(0)), 1);
    EQ(run(cw, 1), 1);
    EXPECT_LOG(5);
    /* A coarse callout: 1 s with 1/8 relative precision (the wheel may coalesce). */
    EQ(cw_callout_reset_sbt_on(cw, h, CW_SBT_1S, 0, record, tag(6), 0, CW_C_PREL(3)), 0);
    EQ(run(cw, 999), 0);
    EQ(run(cw, 126), 1);
    EXPECT_LOG(6);

    /* callout_reset, zero and negative ticks: one tick. */
    EQ(cw_callout_reset(cw, h, 0, record, tag(7)), 0);
    EQ(cw_callout_reset(cw, h, -3, record, tag(8)), 1);
    EQ(run(cw, 1), 1);
    EXPECT_LOG(8);
    /* stop, deactivate, drain. */
    EQ(cw_callout_reset(cw, h, 3, record, tag(9)), 0);
    EQ(cw_callout_stop(cw, h), 1);
    EQ(cw_callout_stop(cw, h), 0);
    EQ(cw_callout_active(cw, h), 0);
    EQ(cw_callout_reset(cw, h, 1, record, tag(10)), 0);
    EQ(cw_callout_deactivate(cw, h), CW_OK);
    EQ(cw_callout_pending(cw, h), 1);
    EQ(cw_callout_active(cw, h), 0);
    EQ(cw_callout_drain(cw, h), 1);
    EQ(cw_callout_drain(cw, h), 0);
    EQ(run(cw, 3), 0);
    EXPECT_NONE();
    EQ(cw_callout_free(cw, h), CW_OK);
    EQ(cw_callout_free(cw, d), CW_OK);
}

/* ---- threads ---- */

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static long counted;

static void count(void *arg) {
    (void)arg;
    pthread_mutex_lock(&count_lock);
    counted++;
    pthread_mutex_unlock(&count_lock);
}

static void noop(void *arg) { (void)arg; }

struct worker {
    cw_callouts *cw;
    int id;
    long kept, stale;
};

#define EACH 2000

static void *work(void *arg) {
    struct worker *w = arg;
    for (int j = 0; j < EACH; j++) {
        cw_handle h;
        EQ(cw_setcallout(w->cw, count, w, j % 7 + 1, &h), CW_OK);
        if ((w->id + j) % 3 == 0) {
            int rc = cw_unsetcallout(w->cw, h);
            CHECK(rc == 1 || rc == CW_ESTALE);
            w->stale += rc == CW_ESTALE;
        } else {
            w->kept++;
        }
        /* timeout/untimeout by this thread's own (func, arg). */
        EQ(cw_timeout(w->cw, noop, w, 3), CW_OK);
        CHECK(cw_untimeout(w->cw, noop, w) >= 0);
    }
    return NULL;
}

struct slow {
    cw_callouts *cw;
    int started, go, finished; /* under slow_lock */
};
static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;

static int get(int *flag) {
    pthread_mutex_lock(&slow_lock);
    int v = *flag;
    pthread_mutex_unlock(&slow_lock);
    return v;
}

static void set(int *flag) {
    pthread_mutex_lock(&slow_lock);
    *flag = 1;
    pthread_mutex_unlock(&slow_lock);
}

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Runs until the main thread says go, then 50 ms more. */
static void slow_handler(void *arg) {
    struct slow *s = arg;
    set(&s->started);
    while (!get(&s->go))
        pause_ms(1);
    pause_ms(50);
    set(&s->finished);
}

static void *softclock_thread(void *arg) {
    struct slow *s = arg;
    static int ran;
    ran = cw_softclock(s->cw, 0);
    return &ran;
}

static void test_threads(int backing) {
    cw_callouts *cw = make(backing, 16, 0);
    struct worker w[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (struct worker){cw, i, 0, 0};
        EQ(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    /* Meanwhile this thread is the clock. */
    for (int i = 0; i < EACH; i++)
        if (cw_hardclock(cw, 0) == 1)
            CHECK(cw_softclock(cw, 0) >= 0);
    long expected = 0;
    for (int i = 0; i < 3; i++) {
        EQ(pthread_join(th[i], NULL), 0);
        expected += w[i].kept + w[i].stale;
    }
    run(cw, 10);
    /* Every callout not cancelled in time ran exactly once; no cancelled one ran. */
    EQ(counted, expected);
    EXPECT_NONE();
    counted = 0;

    /* cw_callout_drain waits for the handler running on another thread. */
    struct slow s = {cw, 0, 0, 0};
    cw_handle h;
    EQ(cw_callout_init(cw, -1, &h), CW_OK);
    EQ(cw_callout_reset(cw, h, 1, slow_handler, &s), 0);
    EQ(cw_hardclock(cw, 0), 1);
    pthread_t runner;
    EQ(pthread_create(&runner, NULL, softclock_thread, &s), 0);
    while (!get(&s.started))
        pause_ms(1);
    uint64_t t = ticks_of(cw);
    EQ(cw_softclock(cw, 0), CW_EBUSY); /* the other thread is running handlers */
    EQ(cw_hardclock(cw, 0), CW_EBUSY); /* likewise; the clock still advanced */
    EQ(ticks_of(cw), t + 1);
    EQ(cw_callout_pending(cw, h), 0);
    EQ(cw_callout_active(cw, h), 1);
    set(&s.go);
    EQ(cw_callout_drain(cw, h), 0); /* waits for slow_handler to return */
    CHECK(get(&s.finished));
    EQ(cw_callout_free(cw, h), CW_OK);
    void *ran;
    EQ(pthread_join(runner, &ran), 0);
    EQ(*(int *)ran, 1);
    cw_callouts_free(cw);
}

/* The tickless mode: a table at hz = 10^9 (nanosecond ticks) driven only by
 * cw_callout_process at the end of the window cw_callout_next_event names. Every callout runs
 * inside [deadline, deadline + precision], never early; with 5 % precision the wheel needs far
 * fewer interrupts than the distinct deadlines, which is what it needs with no precision. */
#define TICKLESS_N 2000
static uint64_t tickless_ran[TICKLESS_N];
static struct tickless_ctx {
    cw_callouts *cw;
} tickless;

static void tickless_record(void *arg) {
    uint64_t now = 0;
    EQ(cw_ticks(tickless.cw, 0, &now), CW_OK);
    size_t i = (size_t)(uintptr_t)arg;
    CHECK(tickless_ran[i] == 0);
    tickless_ran[i] = now;
}

static long tickless_run(int percent, uint64_t *deadline, uint64_t *end) {
    cw_callouts *cw = NULL;
    EQ(cw_callouts_new(CW_BACKING_WHEEL, 64, 0, 1000000000u, &cw), CW_OK);
    tickless.cw = cw;
    memset(tickless_ran, 0, sizeof tickless_ran);
    const uint64_t start = 1000000000u;
    EQ(cw_callout_process(cw, 0, start), 0);
    static cw_handle h[TICKLESS_N];
    uint64_t x = 12345;
    for (size_t i = 0; i < TICKLESS_N; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        int64_t ns = 1 + (int64_t)((x >> 20) % 100000000u);
        int64_t sbt = (int64_t)(((int64_t)ns << 32) / 1000000000);
        sbt += ((((int64_t)sbt * 1000000000) >> 32) < ns); /* at least ns */
        int64_t precision = sbt / 100 * percent;
        EQ(cw_callout_init(cw, -1, &h[i]), CW_OK);
        EQ(cw_callout_reset_sbt_on(cw, h[i], sbt, precision, tickless_record, (void *)(uintptr_t)i,
                                   -1, 0), 0);
        deadline[i] = start + (uint64_t)(((int64_t)sbt * 1000000000 + 0xffffffff) >> 32);
        end[i] = deadline[i] + (uint64_t)(((int64_t)precision * 1000000000) >> 32);
    }
    long interrupts = 0;
    uint64_t first, last;
    int rc;
    while ((rc = cw_callout_next_event(cw, 0, &first, &last)) == 1) {
        CHECK(first <= last);
        interrupts++;
        rc = cw_callout_process(cw, 0, last);
        CHECK(rc == 0 || rc == 1);
        CHECK(cw_softclock(cw, 0) >= 0);
        CHECK(interrupts <= 2 * TICKLESS_N);
    }
    EQ(rc, 0);
    for (size_t i = 0; i < TICKLESS_N; i++) {
        CHECK(tickless_ran[i] != 0);
        /* The sbt conversions may round a nanosecond either way: the window is checked to it. */
        CHECK(tickless_ran[i] + 1 >= deadline[i]);
        CHECK(tickless_ran[i] <= end[i] + 1);
        EQ(cw_callout_free(cw, h[i]), CW_OK);
    }
    cw_callouts_free(cw);
    return interrupts;
}

static void test_tickless(void) {
    static uint64_t deadline[TICKLESS_N], end[TICKLESS_N];
    long coalesced = tickless_run(5, deadline, end);
    long exact = tickless_run(0, deadline, end);
    CHECK(exact > TICKLESS_N * 9 / 10); /* about one interrupt per callout */
    CHECK(coalesced * 10 < exact);
    uint64_t a, b;
    EQ(cw_callout_next_event(NULL, 0, &a, &b), CW_EINVAL);
    EQ(cw_callout_process(NULL, 0, 1), CW_EINVAL);
    printf("test_callouts: tickless ok (%ld interrupts at 5 %% precision, %ld at none)\n",
           coalesced, exact);
}

/* ---- callout_async_drain ---- */

struct drain_ctx {
    cw_callouts *cw;
    cw_handle handle;
    int runs, drains;
};

/* The drain function: the handler has returned, so the callout is neither pending nor running
 * and may be freed here. */
static void drain_done(void *arg) {
    struct drain_ctx *d = arg;
    d->drains++;
    record(tag(2000 + d->runs));
    EQ(cw_callout_pending(d->cw, d->handle), 0);
    EQ(cw_callout_free(d->cw, d->handle), CW_OK);
}

/* A handler that drains its own callout: the drain waits for it to return. */
static void drain_self(void *arg) {
    struct drain_ctx *d = arg;
    d->runs++;
    record(tag(d->runs));
    EQ(cw_callout_async_drain(d->cw, d->handle, drain_done), CW_ASYNC_DRAIN_PENDING);
    EQ(cw_callout_async_drain(d->cw, d->handle, drain_done), CW_EBUSY); /* one per run */
    /* Resets are ignored until the handler returns. */
    EQ(cw_callout_reset(d->cw, d->handle, 1, drain_self, arg), 0);
    EQ(cw_callout_reset_sbt_on(d->cw, d->handle, CW_SBT_1MS, 0, drain_self, arg, -1, 0), 0);
    EQ(cw_callout_pending(d->cw, d->handle), 0);
    EQ(cw_callout_active(d->cw, d->handle), 0);
    EQ(cw_callout_free(d->cw, d->handle), CW_EDEADLK);
}

struct slow_drain {
    cw_callouts *cw;
    int started, go, finished, drained_after; /* under slow_lock */
};

static void slow_drain_handler(void *arg) {
    struct slow_drain *s = arg;
    set(&s->started);
    while (!get(&s->go))
        pause_ms(1);
    pause_ms(20);
    set(&s->finished);
}

static void slow_drain_done(void *arg) {
    struct slow_drain *s = arg;
    if (get(&s->finished))
        set(&s->drained_after);
}

static void *slow_drain_thread(void *arg) {
    struct slow_drain *s = arg;
    static int ran;
    ran = cw_softclock(s->cw, 0);
    return &ran;
}

static void test_async_drain(int backing) {
    cw_callouts *cw = make(backing, 8, 0);
    cw_handle h, one;
    EQ(cw_callout_init(cw, -1, &h), CW_OK);
    /* Not running: idle, then pending (cancelled); the drain function never runs. */
    EQ(cw_callout_async_drain(cw, h, record), CW_ASYNC_DRAIN_IDLE);
    EQ(cw_callout_reset(cw, h, 2, record, tag(1)), 0);
    EQ(cw_callout_async_drain(cw, h, record_other), CW_ASYNC_DRAIN_CANCELLED);
    EQ(cw_callout_pending(cw, h), 0);
    EQ(cw_callout_active(cw, h), 0);
    EQ(run(cw, 4), 0);
    EXPECT_NONE();
    /* With no drain waiting, a reset is honoured again. */
    EQ(cw_callout_reset(cw, h, 1, record, tag(2)), 0);
    EQ(run(cw, 1), 1);
    EXPECT_LOG(2);
    EQ(cw_setcallout(cw, record, tag(3), 2, &one), CW_OK);
    EQ(cw_callout_async_drain(cw, one, record), CW_EINVAL); /* a cw_setcallout handle */
    EQ(cw_unsetcallout(cw, one), 1);
    EQ(cw_callout_free(cw, h), CW_OK);
    EQ(cw_callout_async_drain(cw, h, record), CW_ESTALE);

    /* From its own handler: the drain runs once, right after the handler returns. */
    struct drain_ctx d = {cw, {0, 0}, 0, 0};
    EQ(cw_callout_init(cw, -1, &d.handle), CW_OK);
    EQ(cw_callout_reset(cw, d.handle, 1, drain_self, &d), 0);
    EQ(run(cw, 1), 2); /* the handler and its drain */
    EXPECT_LOG(1, 2001);
    EQ(d.drains, 1);
    EQ(cw_callout_pending(cw, d.handle), CW_ESTALE); /* the drain freed it */
    EQ(run(cw, 3), 0);
    EXPECT_NONE();

    /* The handler runs on another thread: cw_callout_async_drain does not wait for it, and
     * that thread calls the drain function after the handler has finished. */
    struct slow_drain s = {cw, 0, 0, 0, 0};
    EQ(cw_callout_init(cw, -1, &h), CW_OK);
    EQ(cw_callout_reset(cw, h, 1, slow_drain_handler, &s), 0);
    EQ(cw_hardclock(cw, 0), 1);
    pthread_t runner;
    EQ(pthread_create(&runner, NULL, slow_drain_thread, &s), 0);
    while (!get(&s.started))
        pause_ms(1);
    EQ(cw_callout_async_drain(cw, h, slow_drain_done), CW_ASYNC_DRAIN_PENDING);
    CHECK(!get(&s.finished)); /* returned while the handler runs */
    EQ(cw_callout_reset(cw, h, 1, record, tag(4)), 0); /* ignored */
    set(&s.go);
    void *ran;
    EQ(pthread_join(runner, &ran), 0);
    EQ(*(int *)ran, 2);
    CHECK(get(&s.drained_after));
    EQ(cw_callout_pending(cw, h), 0);
    EQ(cw_callout_free(cw, h), CW_OK);
    EQ(run(cw, 3), 0);
    EXPECT_NONE();
    cw_callouts_free(cw);
}

/* ---- tables of several CPUs ---- */

static cw_callouts *make_set(int backing, int ncpu, size_t calloutsize, int fixed) {
    cw_callouts *set = NULL;
    EQ(cw_callouts_new_percpu(backing, ncpu, calloutsize, fixed, 1000, &set), CW_OK);
    CHECK(set != NULL);
    return set;
}

/* n ticks of CPU cpu, each followed by cw_softclock when it has work; returns calls. */
static int run_cpu(cw_callouts *set, int cpu, int n) {
    int ran = 0;
    for (int i = 0; i < n; i++) {
        int rc = cw_hardclock(set, cpu);
        CHECK(rc == 0 || rc == 1);
        if (rc == 1) {
            int r = cw_softclock(set, cpu);
            CHECK(r >= 0);
            ran += r;
        }
    }
    return ran;
}

static uint64_t cpu_ticks(cw_callouts *set, int cpu) {
    uint64_t t = 0;
    EQ(cw_ticks(set, cpu, &t), CW_OK);
    return t;
}

static void test_percpu_arguments(void) {
    static int garbage;
    cw_callouts *set = (cw_callouts *)&garbage; /* must be overwritten */
    const int bad_ncpu[] = {0, -1, CW_NCPU_MAX + 1, INT_MIN};
    for (int i = 0; i < 4; i++) {
        EQ(cw_callouts_new_percpu(CW_BACKING_HASHED, bad_ncpu[i], 8, 0, 1000, &set), CW_EINVAL);
        CHECK(set == NULL);
    }
    EQ(cw_callouts_new_percpu(3, 2, 8, 0, 1000, &set), CW_EINVAL);
    EQ(cw_callouts_new_percpu(CW_BACKING_HASHED, 2, 8, 0, 0, &set), CW_EINVAL);  /* hz = 0 */
    EQ(cw_callouts_new_percpu(CW_BACKING_WHEEL, 2, 0, 1, 1000, &set), CW_EINVAL); /* fixed, no records */
    EQ(cw_callouts_new_percpu(CW_BACKING_LIST, 2, (size_t)CW_CALLOUTSIZE_MAX + 1, 0, 1000, &set),
       CW_EINVAL);
    EQ(cw_callouts_new_percpu(CW_BACKING_LIST, 2, 8, 0, 1000, NULL), CW_EINVAL);
    CHECK(set == NULL);
    cw_callouts_free(NULL);
    /* The most CPUs. */
    set = make_set(CW_BACKING_HASHED, CW_NCPU_MAX, 0, 0);
    EQ(cw_callouts_ncpu(set), CW_NCPU_MAX);
    cw_handle last;
    EQ(cw_callout_init(set, CW_NCPU_MAX - 1, &last), CW_OK);
    EQ(cw_callout_cpu(set, last), CW_NCPU_MAX - 1);
    cw_callouts_free(set);

    /* A NULL set, for every function. */
    cw_handle zero = {0, 0}, hout = {77, 77};
    uint64_t out = 77, first = 77, last_tick = 77;
    EQ(cw_callouts_ncpu(NULL), CW_EINVAL);
    EQ(cw_callout_init(NULL, 0, &hout), CW_EINVAL);
    EQ(cw_callout_free(NULL, zero), CW_EINVAL);
    EQ(cw_callout_reset_on(NULL, zero, 1, record, tag(1), 0), CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(NULL, zero, CW_SBT_1MS, 0, record, tag(1), 0, 0),
       CW_EINVAL);
    EQ(cw_callout_stop(NULL, zero), CW_EINVAL);
    EQ(cw_callout_drain(NULL, zero), CW_EINVAL);
    EQ(cw_callout_async_drain(NULL, zero, record), CW_EINVAL);
    EQ(cw_callout_pending(NULL, zero), CW_EINVAL);
    EQ(cw_callout_active(NULL, zero), CW_EINVAL);
    EQ(cw_callout_deactivate(NULL, zero), CW_EINVAL);
    EQ(cw_callout_cpu(NULL, zero), CW_EINVAL);
    EQ(cw_hardclock(NULL, 0), CW_EINVAL);
    EQ(cw_softclock(NULL, 0), CW_EINVAL);
    EQ(cw_callout_process(NULL, 0, 1), CW_EINVAL);
    EQ(cw_callout_next_event(NULL, 0, &first, &last_tick), CW_EINVAL);
    EQ(cw_ticks(NULL, 0, &out), CW_EINVAL);
    /* NULL out-pointers and functions on a real set: refused, nothing armed. */
    set = make_set(CW_BACKING_WHEEL, 2, 8, 0);
    cw_handle h;
    EQ(cw_callout_init(set, 1, &h), CW_OK);
    EQ(cw_callout_init(set, 0, NULL), CW_EINVAL);
    EQ(cw_callout_reset_on(set, h, 1, NULL, tag(1), 0), CW_EINVAL);
    EQ(cw_callout_reset_sbt_on(set, h, CW_SBT_1MS, 0, NULL, tag(1), 0, 0), CW_EINVAL);
    EQ(cw_callout_async_drain(set, h, NULL), CW_EINVAL);
    EQ(cw_callout_next_event(set, 0, NULL, &last_tick), CW_EINVAL);
    EQ(cw_callout_next_event(set, 0, &first, NULL), CW_EINVAL);
    EQ(cw_ticks(set, 0, NULL), CW_EINVAL);
    CHECK(hout.id == 77 && hout.owner == 77);
    EQ(out, 77);
    EQ(first, 77);
    EQ(last_tick, 77);
    EQ(cw_callout_pending(set, h), 0);
    EQ(cw_callout_cpu(set, h), 1);
    EQ(run_cpu(set, 0, 3) + run_cpu(set, 1, 3), 0);
    EXPECT_NONE();
    cw_callouts_free(set); /* with a callout still initialised: it goes with the table */
}

/* A handler that moves its own callout to CPU m->to: the move waits for it to return. */
struct mover {
    cw_callouts *set;
    cw_handle h;
    int to, runs, stop;
};

static void move_self(void *arg) {
    struct mover *m = arg;
    m->runs++;
    record(tag(100 + m->runs));
    int from = cw_callout_cpu(m->set, m->h);
    CHECK(from >= 0 && from != m->to);
    EQ(cw_callout_reset_on(m->set, m->h, 1, record, tag(200 + m->to), m->to), 0);
    EQ(cw_callout_cpu(m->set, m->h), from); /* not yet */
    EQ(cw_callout_pending(m->set, m->h), 1);
    EQ(cw_callout_drain(m->set, m->h), CW_EDEADLK);
    EQ(cw_callout_free(m->set, m->h), CW_EDEADLK);
    EQ(cw_softclock(m->set, from), CW_EBUSY); /* this thread runs that CPU already */
    if (m->stop)
        EQ(cw_callout_stop(m->set, m->h), 1); /* cancels the waiting move */
}

struct percpu_drain {
    cw_callouts *set;
    cw_handle h;
    int drains;
};

static void percpu_drain_done(void *arg) {
    struct percpu_drain *d = arg;
    d->drains++;
    record(tag(3000));
    EQ(cw_callout_free(d->set, d->h), CW_OK);
}

static void percpu_drain_self(void *arg) {
    struct percpu_drain *d = arg;
    record(tag(300));
    EQ(cw_callout_async_drain(d->set, d->h, percpu_drain_done), CW_ASYNC_DRAIN_PENDING);
    EQ(cw_callout_async_drain(d->set, d->h, percpu_drain_done), CW_EBUSY);
    EQ(cw_callout_reset_on(d->set, d->h, 1, record, tag(301), 0), 0); /* ignored */
}

struct percpu_slow {
    cw_callouts *set;
    int started, go, finished; /* under slow_lock */
};

static void percpu_slow_handler(void *arg) {
    struct percpu_slow *s = arg;
    set(&s->started);
    while (!get(&s->go))
        pause_ms(1);
    pause_ms(20);
    set(&s->finished);
}

static void *percpu_softclock_thread(void *arg) {
    struct percpu_slow *s = arg;
    static int ran;
    ran = cw_softclock(s->set, 0);
    return &ran;
}

/* Another table's (of several CPUs or of one), freed and made-up handles: CW_ESTALE from
 * every function that takes a handle, and nothing changes; handles of the wrong kind are
 * CW_EINVAL. */
static void test_percpu_handles(int backing) {
    cw_callouts *set = make_set(backing, 3, 8, 0), *other = make_set(backing, 3, 8, 0);
    cw_callouts *table = make(backing, 8, 0);
    cw_handle v, f, t, freed;
    EQ(cw_callout_init(set, 1, &v), CW_OK);
    EQ(cw_callout_init(other, 1, &f), CW_OK);
    EQ(cw_callout_init(table, -1, &t), CW_OK);
    EQ(v.id, f.id); /* both sets' first callouts: only the owner tells them apart */
    CHECK(v.owner != f.owner);
    EQ(cw_callout_reset_on(set, v, 3, record, tag(50), -1), 0);
    EQ(cw_callout_init(set, 0, &freed), CW_OK);
    EQ(cw_callout_free(set, freed), CW_OK);
    const cw_handle bad[] = {f,
                             t,
                             freed,
                             forge(v.id ^ ((uint64_t)1 << 40), v.owner),
                             forge(1000000, v.owner),
                             forge(UINT64_MAX, v.owner),
                             forge(v.id, v.owner + 1),
                             forge(v.id, 0)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cw_handle b = bad[i];
        EQ(cw_callout_reset_on(set, b, 1, record, tag(9), 0), CW_ESTALE);
        EQ(cw_callout_reset_sbt_on(set, b, CW_SBT_1MS, 0, record, tag(9), -1, 0),
           CW_ESTALE);
        EQ(cw_callout_stop(set, b), CW_ESTALE);
        EQ(cw_callout_drain(set, b), CW_ESTALE);
        EQ(cw_callout_async_drain(set, b, record), CW_ESTALE);
        EQ(cw_callout_pending(set, b), CW_ESTALE);
        EQ(cw_callout_active(set, b), CW_ESTALE);
        EQ(cw_callout_deactivate(set, b), CW_ESTALE);
        EQ(cw_callout_cpu(set, b), CW_ESTALE);
        EQ(cw_callout_free(set, b), CW_ESTALE);
    }
    /* The set's handles name nothing in a table or in another set. */
    EQ(cw_callout_stop(table, v), CW_ESTALE);
    EQ(cw_callout_async_drain(table, v, record), CW_ESTALE);
    EQ(cw_callout_stop(other, v), CW_ESTALE);
    EQ(cw_callout_pending(other, f), 0);
    /* Handles of the wrong kind, as on a table of one CPU: a cw_setcallout handle given to a
     * callout_* function, a cw_callout_init one to cw_unsetcallout. */
    cw_handle oneshot;
    EQ(cw_setcallout(set, record, tag(60), 100, &oneshot), CW_OK);
    EQ(cw_callout_cpu(set, oneshot), CW_EINVAL);
    EQ(cw_callout_reset_on(set, oneshot, 1, record, tag(9), 2), CW_EINVAL);
    EQ(cw_unsetcallout(set, v), CW_EINVAL);
    EQ(cw_unsetcallout(set, oneshot), 1);
    /* The victim is untouched: active, on CPU 1, due at its tick 3. */
    EQ(cw_callout_active(set, v), 1);
    EQ(cw_callout_cpu(set, v), 1);
    EQ(run_cpu(set, 0, 5) + run_cpu(set, 2, 5), 0);
    EQ(run_cpu(set, 1, 2), 0);
    EQ(run_cpu(set, 1, 1), 1);
    EXPECT_LOG(50);
    EQ(cw_callout_free(set, v), CW_OK);
    cw_callouts_free(table);
    cw_callouts_free(other);
    cw_callouts_free(set);
}

/* set(), for functions whose per-CPU set is a local called set. */
static void flag_on(int *flag) { set(flag); }

static void test_percpu(int backing) {
    cw_callouts *set = make_set(backing, 3, 8, 0);
    uint64_t out = 77, first, last;
    EQ(cw_callouts_ncpu(set), 3);

    /* CPUs outside the set: refused, nothing written or armed. */
    const int bad[] = {3, 4, -2, INT_MAX, INT_MIN};
    cw_handle h;
    EQ(cw_callout_init(set, 0, &h), CW_OK);
    for (int i = 0; i < 5; i++) {
        cw_handle x = {55, 55};
        EQ(cw_callout_init(set, bad[i], &x), CW_EINVAL);
        CHECK(x.id == 55 && x.owner == 55);
        EQ(cw_callout_reset_on(set, h, 1, record, tag(9), bad[i]), CW_EINVAL);
        EQ(cw_callout_reset_sbt_on(set, h, CW_SBT_1MS, 0, record, tag(9), bad[i], 0),
           CW_EINVAL);
        EQ(cw_hardclock(set, bad[i]), CW_EINVAL);
        EQ(cw_softclock(set, bad[i]), CW_EINVAL);
        EQ(cw_callout_process(set, bad[i], 5), CW_EINVAL);
        EQ(cw_callout_next_event(set, bad[i], &out, &out), CW_EINVAL);
        EQ(cw_ticks(set, bad[i], &out), CW_EINVAL);
    }
    EQ(cw_callout_reset_sbt_on(set, h, CW_SBT_1MS, 0, record, tag(9), 0, 0x4000),
       CW_EINVAL);
    EQ(out, 77);
    EQ(cw_callout_pending(set, h), 0);
    EQ(cw_callout_active(set, h), 0);
    EQ(cw_callout_cpu(set, h), 0);

    /* Armed on CPU 2, it runs only when CPU 2's table is processed. */
    EQ(cw_callout_reset_sbt_on(set, h, 2 * CW_SBT_1MS, 0, record, tag(1), 2, 0), 0);
    EQ(cw_callout_cpu(set, h), 2);
    EQ(run_cpu(set, 0, 5), 0);
    EQ(run_cpu(set, 1, 5), 0);
    EXPECT_NONE();
    EQ(cw_callout_pending(set, h), 1);
    EQ(run_cpu(set, 2, 1), 0);
    EQ(run_cpu(set, 2, 1), 1);
    EXPECT_LOG(1);
    EQ(cpu_ticks(set, 2), 2);

    /* -1 keeps the CPU; a pending callout moves at once (returns 1: it was pending). */
    EQ(cw_callout_reset_on(set, h, 3, record, tag(2), -1), 0);
    EQ(cw_callout_cpu(set, h), 2);
    EQ(cw_callout_reset_on(set, h, 1, record, tag(3), 1), 1);
    EQ(cw_callout_cpu(set, h), 1);
    EQ(cw_callout_active(set, h), 1);
    EQ(run_cpu(set, 2, 5), 0);
    EXPECT_NONE();
    EQ(run_cpu(set, 1, 1), 1); /* CPU 1 was at tick 5: tick 6 */
    EXPECT_LOG(3);

    /* Tickless, per CPU: only CPU 0 has an event; its interrupt runs the callout. */
    EQ(cw_callout_reset_on(set, h, 4, record, tag(4), 0), 0);
    EQ(cw_callout_next_event(set, 0, &first, &last), 1);
    CHECK(first <= last && last <= cpu_ticks(set, 0) + 4);
    EQ(cw_callout_next_event(set, 1, &first, &last), 0);
    EQ(cw_callout_next_event(set, 2, &first, &last), 0);
    EQ(cw_callout_process(set, 1, 1000), 0);
    EQ(cw_softclock(set, 1), 0);
    EQ(cpu_ticks(set, 1), 1000);
    EQ(cw_callout_process(set, 0, cpu_ticks(set, 0) + 4), 1);
    EQ(cw_softclock(set, 0), 1);
    EXPECT_LOG(4);

    /* A handler moving its own callout: the move is made when it returns. */
    struct mover m = {set, h, 2, 0, 0};
    EQ(cw_callout_reset_on(set, h, 1, move_self, &m, 0), 0);
    EQ(run_cpu(set, 0, 1), 1);
    EXPECT_LOG(101);
    EQ(cw_callout_cpu(set, h), 2);
    EQ(cw_callout_pending(set, h), 1);
    EQ(run_cpu(set, 0, 3) + run_cpu(set, 1, 3), 0);
    EQ(run_cpu(set, 2, 1), 1);
    EXPECT_LOG(202);
    /* A stop from the handler cancels the waiting move: it stays, idle, on its CPU. */
    m.to = 0;
    m.stop = 1;
    EQ(cw_callout_reset_on(set, h, 1, move_self, &m, -1), 0);
    EQ(run_cpu(set, 2, 1), 1);
    EXPECT_LOG(102);
    EQ(cw_callout_cpu(set, h), 2);
    EQ(cw_callout_pending(set, h), 0);
    EQ(run_cpu(set, 0, 3) + run_cpu(set, 1, 3) + run_cpu(set, 2, 3), 0);
    EXPECT_NONE();

    /* Moved while its handler runs on another thread: deferred until the handler returns. */
    struct percpu_slow s = {set, 0, 0, 0};
    EQ(cw_callout_reset_on(set, h, 1, percpu_slow_handler, &s, 0), 0);
    EQ(cw_hardclock(set, 0), 1);
    pthread_t runner;
    EQ(pthread_create(&runner, NULL, percpu_softclock_thread, &s), 0);
    while (!get(&s.started))
        pause_ms(1);
    EQ(cw_callout_reset_on(set, h, 1, record, tag(7), 1), 0);
    EQ(cw_callout_cpu(set, h), 0);
    EQ(cw_callout_pending(set, h), 1);
    EQ(cw_softclock(set, 0), CW_EBUSY);
    EQ(run_cpu(set, 1, 3), 0); /* CPU 1 cannot run it yet */
    flag_on(&s.go);
    void *ran;
    EQ(pthread_join(runner, &ran), 0);
    EQ(*(int *)ran, 1);
    CHECK(get(&s.finished));
    EQ(cw_callout_cpu(set, h), 1);
    EQ(run_cpu(set, 0, 3), 0);
    EQ(run_cpu(set, 1, 1), 1);
    EXPECT_LOG(7);

    /* cw_callout_async_drain: not running, then from its own handler. */
    EQ(cw_callout_async_drain(set, h, record), CW_ASYNC_DRAIN_IDLE);
    EQ(cw_callout_reset_on(set, h, 2, record, tag(8), 2), 0);
    EQ(cw_callout_async_drain(set, h, record), CW_ASYNC_DRAIN_CANCELLED);
    EQ(cw_callout_pending(set, h), 0);
    EQ(cw_callout_active(set, h), 0);
    EQ(run_cpu(set, 2, 3), 0);
    EXPECT_NONE();
    struct percpu_drain d = {set, h, 0};
    EQ(cw_callout_reset_on(set, h, 1, percpu_drain_self, &d, -1), 0);
    EQ(run_cpu(set, 2, 1), 2); /* the handler, then its drain, on the same CPU */
    EXPECT_LOG(300, 3000);
    EQ(d.drains, 1);
    EQ(cw_callout_pending(set, h), CW_ESTALE); /* freed by the drain */
    EQ(run_cpu(set, 0, 3) + run_cpu(set, 1, 3) + run_cpu(set, 2, 3), 0);
    EXPECT_NONE();

    /* stop, deactivate, drain and free of a callout on another CPU. */
    EQ(cw_callout_init(set, 2, &h), CW_OK);
    EQ(cw_callout_reset_on(set, h, 3, record, tag(10), -1), 0);
    EQ(cw_callout_deactivate(set, h), CW_OK);
    EQ(cw_callout_active(set, h), 0);
    EQ(cw_callout_pending(set, h), 1);
    EQ(cw_callout_stop(set, h), 1);
    EQ(cw_callout_stop(set, h), 0);
    EQ(cw_callout_reset_on(set, h, 3, record, tag(11), 1), 0);
    EQ(cw_callout_drain(set, h), 1);
    EQ(cw_callout_drain(set, h), 0);
    EQ(cw_callout_free(set, h), CW_OK);
    EQ(cw_callout_free(set, h), CW_ESTALE);
    EQ(run_cpu(set, 0, 4) + run_cpu(set, 1, 4) + run_cpu(set, 2, 4), 0);
    EXPECT_NONE();
    cw_callouts_free(set);

    /* A move to a CPU whose fixed pool is full: CW_ENOMEM, and the callout stays. */
    set = make_set(backing, 2, 1, 1);
    cw_handle a, b, x = {55, 55};
    EQ(cw_callout_init(set, 0, &a), CW_OK);
    EQ(cw_callout_init(set, 1, &b), CW_OK);
    EQ(cw_callout_init(set, 1, &x), CW_ENOMEM);
    CHECK(x.id == 55 && x.owner == 55);
    EQ(cw_callout_reset_on(set, a, 2, record, tag(12), 0), 0);
    EQ(cw_callout_reset_on(set, a, 1, record, tag(13), 1), CW_ENOMEM);
    EQ(cw_callout_cpu(set, a), 0);
    EQ(cw_callout_pending(set, a), 1);
    EQ(run_cpu(set, 1, 3), 0);
    EQ(run_cpu(set, 0, 2), 1);
    EXPECT_LOG(12);
    cw_callouts_free(set);

    test_percpu_handles(backing);
}

/* calloutng's default precision, asked for with cw_callouts_set_deviation: a new table arms
 * exactly; at 5 % a relative callout may run up to a sixteenth of its interval late, at a
 * coarse instant inside that window; an absolute time keeps its exact deadline. */
static void test_deviation(int backing) {
    const uint64_t second = 1000000000u;
    cw_callouts *cw = NULL;
    EQ(cw_callouts_new(backing, 16, 0, 1000000000u, &cw), CW_OK);
    EQ(cw_callouts_set_deviation(NULL, 5), CW_EINVAL);
    EQ(cw_callouts_set_deviation(cw, 101), CW_EINVAL);
    uint64_t first = 0, last = 0;
    EQ(cw_timeout(cw, record, tag(1), (int64_t)second), CW_OK);
    EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    CHECK(first == second && last == second);
    EQ(cw_untimeout(cw, record, tag(1)), 1);
    EQ(cw_callouts_set_deviation(cw, 5), CW_OK);
    EQ(cw_timeout(cw, record, tag(2), (int64_t)second), CW_OK);
    EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    CHECK(first > second && first <= last && last <= second + second / 16);
    EQ(cw_untimeout(cw, record, tag(2)), 1);
    cw_handle h;
    EQ(cw_callout_init(cw, -1, &h), CW_OK);
    EQ(cw_callout_reset_sbt_on(cw, h, (int64_t)1 << 32, 0, record, tag(3), -1, CW_C_ABSOLUTE),
       CW_OK);
    EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    CHECK(first == second && last == second);
    EQ(cw_callout_stop(cw, h), 1);
    EQ(cw_callout_free(cw, h), CW_OK);
    EQ(cw_callouts_set_deviation(cw, 0), CW_OK);
    EQ(cw_timeout(cw, record, tag(4), (int64_t)second), CW_OK);
    EQ(cw_callout_next_event(cw, 0, &first, &last), 1);
    CHECK(first == second && last == second);
    cw_callouts_free(cw);

    cw_callouts *set = NULL;
    EQ(cw_callouts_new_percpu(backing, 2, 16, 0, 1000000000u, &set), CW_OK);
    EQ(cw_callouts_set_deviation(NULL, 5), CW_EINVAL);
    EQ(cw_callouts_set_deviation(set, 101), CW_EINVAL);
    EQ(cw_callouts_set_deviation(set, 5), CW_OK);
    EQ(cw_callout_init(set, 1, &h), CW_OK);
    EQ(cw_callout_reset_sbt_on(set, h, (int64_t)1 << 32, 0, record, tag(5), 1, 0), CW_OK);
    EQ(cw_callout_next_event(set, 1, &first, &last), 1);
    CHECK(first > second && last <= second + second / 16);
    EQ(cw_callout_stop(set, h), 1);
    EQ(cw_callout_free(set, h), CW_OK);
    cw_callouts_free(set);
}

int main(void) {
    test_constants();
    test_strerror();
    test_new_and_free();
    test_tickless();
    test_percpu_arguments();
    for (int b = 0; b < 3; b++) {
        cw_callouts *cw = make(backings[b], 8, 0);
        test_null_arguments(cw);
        test_timeout(cw);
        test_handles(cw);
        test_reentrant(cw);
        cw_callouts_free(cw);
        /* The FreeBSD tests count time from tick 0. */
        cw = make(backings[b], 8, 0);
        test_freebsd(cw);
        cw_callouts_free(cw);
        test_exhausted(backings[b]);
        test_deviation(backings[b]);
        test_cross_tables(backings[b], backings[(b + 1) % 3]);
        test_cross_tables(backings[b], backings[b]);
#ifdef __linux__
        /* The old BSD list sets a callout in O(n): filling memory with it takes too long. */
        if (RLIMIT_TESTS && backings[b] != CW_BACKING_LIST)
            test_out_of_memory(backings[b]);
#endif
        test_threads(backings[b]);
        test_async_drain(backings[b]);
        test_percpu(backings[b]);
        printf("test_callouts: async drain and per-CPU %s ok\n", backing_names[b]);
        printf("test_callouts: backing %s ok\n", backing_names[b]);
    }
    printf("test_callouts: all %ld checks passed\n", (long)atomic_load(&checks));
    return 0;
}
