/*
 * callwheel's C library: timers for C programs, on callwheel's production wheel.
 *
 * - The caller-driven wheel (cw_wheel_*): timers in nanoseconds on your own clock, driven by
 *   your event loop, with no thread, no lock and no global state (wahern/timeout's and
 *   libuv's use). Start here.
 * - Timer sets (cw_timerset_*, cw_timer_*): many real-time timers owned by one set, reaped
 *   through an eventfd, a callback or a signal; with the setitimer-shaped ITIMER_MULTIREAL
 *   surface of Costello and Varghese.
 * - Sleeping with precision (cw_sleep_sbt, cw_cv_*): calloutng's pause_sbt and
 *   cv_timedwait_sbt.
 * - Callout tables (cw_callouts, of one CPU or one queue per CPU): the BSD and FreeBSD
 *   kernels' callout interfaces, for code ported from a kernel or reproducing its behaviour.
 *
 * Conventions, for every interface:
 *
 * - Every function returns int: 0, or a non-negative result (1/0 for a yes/no answer, a
 *   count), on success; a negative CW_E* code on failure, and then nothing changed (the
 *   exceptions are documented where they are: cw_hardclock's clock still moves).
 *   cw_strerror describes a code; cw_wheel_strerror, cw_timerset_strerror,
 *   cw_sleep_strerror and cw_callout_strerror describe it in the words of one interface.
 * - Pointer arguments are checked for NULL (CW_EINVAL), and so are function pointers. Any
 *   other pointer must be valid: an object from its _new function not yet freed,
 *   out-pointers to writable, aligned storage.
 * - Handles (cw_handle, two uint64_t: id and owner) name one timer or callout, its
 *   generation and the object that issued it: a handle kept after its timer fired or was
 *   deleted, or given to another object, gets CW_ESTALE and changes nothing. Copy them by
 *   value; their fields are opaque numbers (compare both to tell two handles apart).
 * - An object that needs memory the allocator refuses returns CW_ENOMEM; everything set
 *   before stays pending.
 * - No Rust panic crosses this boundary: should one happen inside the library, the call
 *   returns CW_EPANIC. A callback must return normally: a C++ exception or a longjmp out of
 *   a callback crosses Rust frames, which is undefined behaviour.
 * - CW_VERSION_MAJOR, CW_VERSION_MINOR and CW_VERSION_PATCH are the header's version;
 *   cw_version() (CW_VERSION's packing) and cw_version_string() are the library's.
 *
 * The caller-driven wheel (cw_wheel): callwheel's production wheel in nanoseconds on the
 * caller's clock; one thread at a time per wheel, safe across fork. cw_wheel_new (growing,
 * or a fixed capacity) and cw_wheel_reserve (exact room); cw_wheel_add / cw_wheel_add_in
 * (absolute or relative deadline, a tolerance, a uint64_t value), cw_wheel_add_periodic,
 * cw_wheel_del, cw_wheel_reset / cw_wheel_reset_in, cw_wheel_pending; cw_wheel_update(w, now)
 * or cw_wheel_step(w, delta), then cw_wheel_get (one expired timer), cw_wheel_get_many (a
 * batch) or cw_wheel_expire (a callback per timer), or cw_wheel_advance (the update and a
 * batch in one call); cw_wheel_expired (is one due and not pulled?); cw_wheel_next_wakeup
 * (absolute) and cw_wheel_timeout (relative): the earliest window end, to sleep until;
 * cw_wheel_period / cw_wheel_set_period (a periodic timer's period); cw_wheel_next_pending
 * or CW_WHEEL_FOREACH (every pending timer); cw_wheel_counts; cw_wheel_check (the
 * invariants).
 *
 * ```c
 * cw_wheel *w;
 * cw_wheel_new(0, now_ns(), &w);
 * cw_handle h;
 * cw_wheel_add_in(w, 250000000, 5000000, (uint64_t)(uintptr_t)conn, &h);  // 250 ms, 5 ms tolerance
 * for (;;) {
 *     uint64_t ns;
 *     int ms = cw_wheel_timeout(w, &ns) == 1 ? (int)((ns + 999999) / 1000000) : -1;
 *     int n = epoll_wait(ep, events, 64, ms);
 *     handle(events, n);
 *     cw_wheel_update(w, now_ns());
 *     cw_expiry e;
 *     while (cw_wheel_get(w, &e) == 1)
 *         expire((struct conn *)(uintptr_t)e.value);
 * }
 * ```
 *
 * Timer sets (Costello and Varghese's "multiple user-level timers", ITIMER_MULTIREAL): a
 * cw_timerset owns many real-time timers, each with a set-chosen 64-bit handle and a
 * caller-chosen 64-bit label. An expired timer joins the set's expired queue and still exists
 * there until it is reaped (its handle and label popped: a one-shot timer is destroyed, a
 * periodic one runs again from the expiry it was reaped for), reset or cancelled. The set's
 * eventfd is readable exactly while the queue is non-empty. Two layers:
 *
 * - Clean names, times in uint64_t nanoseconds: cw_timerset_new / cw_timerset_free,
 *   cw_timer_create, cw_timer_reset, cw_timer_cancel, cw_timer_get, cw_timer_reap (1, or 0
 *   when the queue is empty), cw_timer_set_missed, cw_timer_overruns, cw_timerset_fd,
 *   cw_timerset_wait, cw_timerset_set_callback, cw_timerset_set_signal, cw_timerset_counts.
 *   CW_EINVAL for NULL, bad arguments and any handle that names none of the set's timers
 *   (another set's, a destroyed timer's, a made-up number: nothing changes); CW_ENOSPC past
 *   the set's quota.
 * - The paper's exact surface: cw_setitimer / cw_getitimer with CW_ITIMER_MULTIREAL and the
 *   libc struct itimerval (other `which` values go to libc), on a process-wide set
 *   (cw_multireal_set, cw_multireal_fd, cw_multireal_signal), or on any set with the _on
 *   variants. These return 0, or -1 with errno set: EINVAL for a bad handle or argument (a
 *   NULL ovalue included), EAGAIN for an empty queue (reap) or a full quota (create). A
 *   handle or label travels in a struct timeval as { (time_t)bits, 0 } (64-bit time_t), never
 *   {0, 0} nor {-1, -1}.
 *
 * Every set made by cw_timerset_new, and the process-wide set, runs on one process-wide
 * runtime on CLOCK_MONOTONIC, started by the first call that needs one: one driver thread
 * (named callwheel-rt-driver-0), which finds expiries and runs set callbacks, and one idle
 * worker. It lives until the process exits. A child forked since has a runtime of its own,
 * started by its first call that needs one, and a process-wide set of its own (setitimer's
 * timers are not inherited either): the sets made before the fork are copies there whose
 * calls that would arm, reap or wait fail with CW_ESHUTDOWN (or reap nothing, or return at
 * once), leaving the parent's sets, descriptors included, as they are.
 *
 * ```c
 * cw_timerset *set;
 * cw_timerset_new(0, CW_MISSED_BURST, &set);
 * uint64_t poll_h, h, label;
 * cw_timer_create(set, 10000000, 10000000, 7, &poll_h);   // every 10 ms, label 7
 * struct pollfd p = { .fd = cw_timerset_fd(set), .events = POLLIN };
 * while (poll(&p, 1, -1) > 0)
 *     while (cw_timer_reap(set, &h, &label) == 1)
 *         handle(label);
 * ```
 *
 * Sleeping with precision (calloutng's pause_sbt and cv_timedwait_sbt), on the same
 * process-wide runtime: cw_sleep_sbt(sbt, precision, flags) blocks the calling thread until
 * sbt has passed (relative, or CLOCK_MONOTONIC with CW_C_ABSOLUTE), never earlier and up to
 * the precision later (an absolute precision, or CW_C_PREL(n)), so the wake-up is shared with
 * every timer whose window overlaps. cw_cv (cw_cv_new, cw_cv_free, cw_cv_signal,
 * cw_cv_broadcast, cw_cv_wait) is a condition variable for a pthread_mutex_t whose
 * cw_cv_timedwait_sbt(cv, m, sbt, precision, flags) times out the same way (CW_ETIMEDOUT).
 *
 * ```c
 * cw_sleep_sbt(10 * CW_SBT_1MS, 0, CW_C_PREL(4));   // 10 ms, up to 1/16 later
 * pthread_mutex_lock(&m);
 * while (!ready && cw_cv_timedwait_sbt(cv, &m, CW_SBT_1S, CW_SBT_1MS, 0) == 0)
 *     ;
 * pthread_mutex_unlock(&m);
 * ```
 *
 * Callout tables: the BSD kernel's callout interfaces (timeout/untimeout,
 * setcallout/unsetcallout and FreeBSD's callout_reset_sbt_on family). A table (cw_callouts)
 * has one callout queue per CPU (cw_callouts_new: one CPU, the single table of BSD;
 * cw_callouts_new_percpu: FreeBSD's per-CPU callwheels), each on one of three timer
 * schemes: CW_BACKING_LIST, the old BSD
 * callout (a differential list: O(n) to set a callout, and cw_untimeout searches it from its
 * head, O(n)); CW_BACKING_HASHED, Costello and Varghese's callwheel (Scheme 6, a hashed wheel
 * of 2^bits buckets, bits sized from calloutsize between 8 and 20, and rebuilt with one
 * bucket per pending callout whenever they outnumber the buckets twice); and
 * CW_BACKING_WHEEL, callwheel's production hierarchical wheel, which also uses the precision
 * of callout_reset_sbt_on to coalesce callouts. Every backing keeps one contract:
 *
 * - Time is each CPU's tick, 0 to UINT64_MAX, moved by cw_hardclock (one tick per call) or,
 *   tickless, by cw_callout_process(cw, cpu, now) to any later tick in one step, at a time inside
 *   the window cw_callout_next_event names. Every clock call names its CPU (0 on a table of one),
 *   and only the callouts bound to that CPU run there. A tick, a jump and a softclock step each
 *   cost at most a constant, whatever the tick's value (a nanosecond clock's reading works as a
 *   tick) and however many callouts are pending. A hashed table does O(1) expected work per
 *   callout fired while deadlines lie within one turn of its buckets (2^bits ticks); when the
 *   earliest lies further out, finding it takes a pass over every pending callout, spread over
 *   softclock steps of constant cost, or made at once by cw_callout_next_event, which then costs
 *   O(n) for that call. CW_BACKING_WHEEL answers both in O(1) at any distance.
 * - cw_callout_next_event's first value is the earliest deadline in ticks, never a tick
 *   already passed (the current tick when work is due now); on CW_BACKING_WHEEL, after
 *   callouts were stopped or re-armed it may be earlier than that deadline, never later.
 * - A callout set for n ticks at tick t runs in the first cw_softclock after the interrupt
 *   that reaches tick t + n; n <= 0 counts as 1, as in BSD. Equal expiries run in the order
 *   they were set. An sbt time is rounded up to a tick exactly (the ceiling of
 *   sbt * hz / 2^32); an absolute time already passed runs at the next tick.
 * - A deadline after the last tick (UINT64_MAX) is CW_ERANGE on every call that sets one,
 *   with nothing changed; so is an absolute time already passed at the last tick.
 * - Handlers run on the thread calling cw_softclock (or cw_hardclock, for CW_C_DIRECT_EXEC
 *   callouts) for their CPU, with the table unlocked, so a handler may call any function on
 *   its own table except cw_callouts_free. Several threads may share a table; one at a time
 *   runs a CPU's cw_softclock (another gets CW_EBUSY). func(arg) must be safe to call on
 *   that thread.
 *
 * ```c
 * static void retransmit(void *arg) { printf("retransmit %s\n", (const char *)arg); }
 *
 * cw_callouts *cw;
 * int rc = cw_callouts_new(CW_BACKING_HASHED, 1024, 0, 1000, &cw);
 * if (rc < 0) { fprintf(stderr, "%s\n", cw_callout_strerror(rc)); return 1; }
 * cw_timeout(cw, retransmit, "segment 7", 3);         // by (func, arg)
 * cw_handle keepalive;
 * cw_callout_init(cw, -1, &keepalive);                // FreeBSD's struct callout
 * cw_callout_reset_sbt_on(cw, keepalive, 2 * CW_SBT_1S, 0, retransmit, "keepalive",
 *                         -1, CW_C_PREL(3));
 * for (int i = 0; i < 3000; i++)
 *     if (cw_hardclock(cw, 0) > 0)                     // the clock interrupt
 *         cw_softclock(cw, 0);                         // runs due handlers
 * cw_callout_drain(cw, keepalive);
 * cw_callout_free(cw, keepalive);
 * cw_callouts_free(cw);
 * ```
 *
 * cw_callout_async_drain(cw, h, drain) is FreeBSD's callout_async_drain: it stops a callout
 * without waiting; if its handler is running, drain(arg) is called once, on the handler's
 * thread, right after the handler returns (CW_ASYNC_DRAIN_PENDING), and resets are ignored
 * until then, so drain may free the callout and whatever arg points to.
 *
 * Per-CPU callouts (FreeBSD's per-CPU callwheels): cw_callouts_new_percpu makes a table with
 * one queue per CPU, each with its own lock, processed on its own by whoever drives that CPU
 * (cw_hardclock / cw_softclock, or cw_callout_next_event / cw_callout_process, each for one
 * cpu), under the same contract and through the same calls. A callout is bound to one CPU's
 * queue (cw_callout_init's cpu) and runs only when that CPU is processed;
 * cw_callout_reset_sbt_on(cw, h, sbt, precision, func, arg, cpu, flags) and
 * cw_callout_reset_on arm it on CPU cpu (0 to ncpu - 1; -1 keeps its CPU). Moving a callout
 * whose handler is running is deferred until the handler returns (FreeBSD's deferred
 * migration); cw_callout_cpu says where a callout is. Its handle stays valid across moves.
 * The BSD calls (cw_timeout, cw_setcallout and their cancels) use CPU 0's queue. A CPU
 * outside the table is CW_EINVAL; a handle of another table, a freed or made-up one,
 * CW_ESTALE.
 *
 * ```c
 * cw_callouts *cw;
 * cw_callouts_new_percpu(CW_BACKING_WHEEL, ncpu, 1024, 0, 1000, &cw);
 * cw_handle h;
 * cw_callout_init(cw, 0, &h);
 * cw_callout_reset_sbt_on(cw, h, 10 * CW_SBT_1MS, 0, flush, queue, 3, 0); // CPU 3
 * // on the thread driving CPU 3, once per tick:
 * if (cw_hardclock(cw, 3) > 0)
 *     cw_softclock(cw, 3);
 * ```
 *
 * Linking (after `make install`): the shared library, `cc app.c $(pkg-config --cflags --libs
 * callwheel)`; the static library linked in, with what it needs from the system,
 * `cc app.c $(pkg-config --cflags --libs callwheel-static)`; a program with nothing shared,
 * `cc -static app.c $(pkg-config --static --cflags --libs callwheel)`. The files installed:
 * callwheel.h, libcallwheel.so (with its versioned soname), libcallwheel.a, callwheel.pc and
 * callwheel-static.pc.
 *
 * Generated from crates/callwheel-ffi by cbindgen (build.rs): do not edit.
 */

#ifndef CALLWHEEL_H
#define CALLWHEEL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
/**
 * calloutng's C_PREL(n) as a constant expression, for n from 0 to CW_C_PREL_MAX
 * (the same value as cw_c_prel(n)).
 */
#define CW_C_PREL(n) ((int)((((unsigned)(n) + 1u) & 0x7fu) << 1))

/**
 * Walks every pending timer of the wheel w (wahern/timeout's TIMEOUTS_FOREACH): the body
 * runs once per timer with e (a cw_expiry lvalue) holding it, cursor (a size_t this declares)
 * the walk's position. Storage order, not deadline order; see cw_wheel_next_pending.
 *
 *     cw_expiry e;
 *     CW_WHEEL_FOREACH(w, at, e)
 *         close_idle((struct conn *)(uintptr_t)e.value);
 */
#define CW_WHEEL_FOREACH(w, cursor, e) \
    for (size_t cursor = 0; cw_wheel_next_pending((w), &(cursor), &(e)) == 1;)


// The major version of the header: a program can test it at compile time (cw_version()
// gives the library's at run time).
#define CW_VERSION_MAJOR 0

// The minor version of the header. Before 1.0, a new minor version may change the ABI (the
// shared library's soname carries it).
#define CW_VERSION_MINOR 1

// The patch version of the header.
#define CW_VERSION_PATCH 0

// The header's version as one number, `MAJOR * 65536 + MINOR * 256 + PATCH`, to compare
// with cw_version().
#define CW_VERSION (((CW_VERSION_MAJOR << 16) | (CW_VERSION_MINOR << 8)) | CW_VERSION_PATCH)

// Success.
#define CW_OK 0

// Invalid argument: a NULL object, out-pointer or function, or a value the call does not
// accept (each function says which). Equal to -EINVAL on Linux.
#define CW_EINVAL (0 - 22)

// Out of room: a fixed capacity (a wheel's, a callout table's pool) is full, or the object
// needed memory and the allocator refused it. Nothing changed: every timer or callout set
// before is still pending. Equal to -ENOMEM on Linux.
#define CW_ENOMEM (0 - 12)

// The handle names nothing live here: its timer or callout already fired (one-shot),
// was deleted, cancelled or freed, or it was issued by another wheel or table, or made up.
// Nothing changed. Equal to -ESTALE on Linux.
#define CW_ESTALE (0 - 116)

// cw_callout_drain or cw_callout_free from the callout's own handler: waiting for the
// handler would never return; or a cw_sleep_sbt or cw_cv_timedwait_sbt on the process-wide
// runtime's driver thread, which would wait for its own timer. Nothing changed.
// Equal to -EDEADLK on Linux.
#define CW_EDEADLK (0 - 35)

// cw_softclock or cw_hardclock while another thread (or the caller, from a handler) is
// already running the handlers of that CPU of the table; a callout's
// record is in use by its running handler; or a cw_callout_async_drain already waits for
// the running handler. Equal to -EBUSY on Linux.
#define CW_EBUSY (0 - 16)

// A time out of range: before a wheel's time, after the last tick (UINT64_MAX) of a wheel or
// callout table, or beyond what a callout table's backing can hold. Nothing changed. Equal
// to -ERANGE on Linux.
#define CW_ERANGE (0 - 34)

// A bug inside callwheel: a Rust panic was caught at the boundary. The object is still
// usable (every change is complete before any code that can panic runs), but the failing
// call's effect is unknown. Not an errno value.
#define CW_EPANIC (0 - 1000)

// An internal invariant of a wheel does not hold (cw_wheel_check found it): a defect in
// callwheel, or memory of the wheel overwritten by the program.
#define CW_EINVARIANT (0 - 1001)

// A set's quota of timers (running plus queued) is full, or the process has no unused handle
// left (only with about 2^24 sets alive at once: a freed set's key is reused, above every
// handle it issued). Nothing was created. Equal to -ENOSPC on Linux.
#define CW_ENOSPC (0 - 28)

// The set's runtime has shut down: a runtime of the embedder's (cw_timerset::into_raw) was
// dropped, or the set is a copy in a process forked since its runtime started, whose threads
// stay with the parent. Such a set takes no call that would arm, reap or wait. Sets made in
// a forked child (and its cw_multireal_set) run on a runtime of the child's own. Equal to
// -ESHUTDOWN on Linux.
#define CW_ESHUTDOWN (0 - 108)

// Missed-period policy (the default, and the paper's rule): a periodic timer reaped so late
// that further periods came due is queued again at once, once per missed period.
#define CW_MISSED_BURST 0

// Missed-period policy: the next period starts at the reap; missed periods are dropped and
// counted (cw_timer_overruns).
#define CW_MISSED_DELAY 1

// Missed-period policy: missed periods are dropped and counted (cw_timer_overruns); the timer
// stays on its grid (the next deadline is the first multiple of the interval, counted from its
// first deadline, after the reap).
#define CW_MISSED_SKIP 2

// The quota cw_timerset_new gives for a quota of 0 (4096 timers).
#define CW_TIMERSET_DEFAULT_QUOTA 4096

// The largest quota a set accepts (2^20 timers).
#define CW_TIMERSET_MAX_QUOTA 1048576

// The `which` of cw_setitimer and cw_getitimer for the paper's multiple real-time timers.
// Not a kernel timer number (ITIMER_REAL, ITIMER_VIRTUAL and ITIMER_PROF are 0, 1 and 2, and
// go to the libc calls).
#define CW_ITIMER_MULTIREAL 19794

// cw_cv_timedwait_sbt: the timeout came first (FreeBSD's cv_timedwait_sbt says EWOULDBLOCK).
// Equal to -ETIMEDOUT on Linux.
#define CW_ETIMEDOUT (0 - 110)

// Backing scheme: the old BSD callout, a differential list (setting a callout is O(n), and
// cw_untimeout searches the list from its head, O(n), as 4.4BSD's untimeout did).
#define CW_BACKING_LIST 0

// Backing scheme: Costello and Varghese's callwheel, Scheme 6 (a hashed wheel of 2^bits
// unsorted buckets, with bits = ceil(log2(calloutsize)) kept between 8 and 20).
#define CW_BACKING_HASHED 1

// Backing scheme: callwheel's production hierarchical wheel (coalesces callouts within the
// precision given to cw_callout_reset_sbt_on).
#define CW_BACKING_WHEEL 2

// Flag for cw_callout_reset_sbt_on: run the handler from cw_hardclock itself (the clock
// interrupt) instead of from cw_softclock.
#define CW_C_DIRECT_EXEC 1

// Flag for cw_callout_reset_sbt_on, accepted for compatibility: times are already rounded
// to the table's ticks.
#define CW_C_HARDCLOCK 256

// Flag for cw_callout_reset_sbt_on: the time is absolute (since tick 0), not relative to
// the current tick. A time already passed runs at the next tick.
#define CW_C_ABSOLUTE 512

// The largest n accepted by cw_c_prel and CW_C_PREL.
#define CW_C_PREL_MAX 126

// cw_callout_async_drain's result when the handler is running: drain(arg) will be called
// once, right after it returns (FreeBSD's 0, "drain pending").
#define CW_ASYNC_DRAIN_PENDING 0

// cw_callout_async_drain's result when the handler was not running and the callout was
// pending: the firing is cancelled; drain is never called.
#define CW_ASYNC_DRAIN_CANCELLED 1

// cw_callout_async_drain's result when the handler was not running and nothing was pending:
// the callout is stopped (inactive); drain is never called.
#define CW_ASYNC_DRAIN_IDLE 2

// One second in sbintime_t units (32.32 fixed point, as FreeBSD's SBT_1S).
#define CW_SBT_1S 4294967296

// One millisecond in sbintime_t units (SBT_1S / 1000, truncated, as FreeBSD's SBT_1MS).
#define CW_SBT_1MS 4294967

// One microsecond in sbintime_t units (SBT_1S / 1000000, truncated, as FreeBSD's SBT_1US).
#define CW_SBT_1US 4294

// One nanosecond in sbintime_t units (SBT_1S / 1000000000, truncated, as FreeBSD's SBT_1NS).
#define CW_SBT_1NS 4

// The largest calloutsize cw_callouts_new accepts: 2^26 records reserved up front. A larger
// value is CW_EINVAL, so that a mistyped size (a negative number converted to size_t, a
// byte count) fails at once instead of reserving tens of gigabytes; a growing table still
// grows past it on demand (up to 2^32 - 2 records).
#define CW_CALLOUTSIZE_MAX (1 << 26)

// The most CPUs cw_callouts_new_percpu accepts.
#define CW_NCPU_MAX 1024

// A callout table, shareable between threads: one callout queue per CPU, each processed on
// its own (one CPU: the single table). Opaque: made by cw_callouts_new or
// cw_callouts_new_percpu, destroyed by cw_callouts_free.
typedef struct cw_callouts cw_callouts;

// A condition variable whose timed waits are timers of the process-wide runtime (opaque).
typedef struct cw_cv cw_cv;

// A set of labelled timers with an expired queue. Opaque: made by cw_timerset_new, destroyed
// by cw_timerset_free; the process-wide set of cw_multireal_set lives as long as the process.
typedef struct cw_timerset cw_timerset;

// A caller-driven timer wheel (opaque). One thread at a time may call into a wheel (it has
// no lock); different wheels are independent, on any threads.
typedef struct cw_wheel cw_wheel;

// Names one callout of one table, or one timer of one cw_wheel: what cw_setcallout,
// cw_callout_init and cw_wheel_add store, and what every function acting on a callout or a
// wheel's timer takes. Pass it by value; both fields are opaque.
//
// `id` holds the record's index and generation, `owner` an identity of the table or wheel
// that issued it (never 0 for an issued handle; a table of several CPUs has one for
// cw_setcallout's handles and another for cw_callout_init's, which name a callout wherever it
// moves). A table or wheel accepts a handle only when
// both name one of its live callouts or timers: a stale handle, another's handle or a
// made-up one gets CW_ESTALE and changes nothing.
typedef struct {
    // The record's index (low 32 bits) and generation (high 32 bits).
    uint64_t id;
    // An identity of the table or wheel that issued the handle.
    uint64_t owner;
} cw_handle;

// What cw_wheel_counts reports about a wheel.
typedef struct {
    // Timers pending now.
    size_t pending;
    // Bytes the wheel holds (its slab at capacity, links, slot summaries, schedules).
    size_t bytes;
    // The wheel's time: the latest cw_wheel_update.
    uint64_t now;
    // Timers added, ever.
    uint64_t added;
    // Timers deleted while pending, ever.
    uint64_t deleted;
    // Resets of pending timers, ever.
    uint64_t reset;
    // Timers fired (periodic ones once per firing), ever.
    uint64_t fired;
} cw_wheel_info;

// One expired timer, as cw_wheel_get returns it and cw_wheel_expire passes it.
typedef struct {
    // The timer's handle. A one-shot timer's is already stale; a periodic timer's stays valid
    // (it has been re-armed for its next period), so cw_wheel_del can stop it.
    cw_handle handle;
    // The value the timer was added with.
    uint64_t value;
    // The deadline it fired for, in the caller's nanoseconds.
    uint64_t deadline;
    // For a periodic timer, the whole periods this firing missed; 0 otherwise.
    uint64_t overruns;
} cw_expiry;

// A callback for cw_wheel_expire: called with the caller's `arg` and one expired timer.
typedef void (*cw_wheel_fn)(void *arg,
                            const cw_expiry *expiry);

// A timer's value: the time until it expires and its interval, in nanoseconds (the
// nanosecond counterpart of `struct itimerval`).
typedef struct {
    // Nanoseconds until the timer expires; 0 while it waits on the expired queue.
    uint64_t value_ns;
    // The period of a periodic timer in nanoseconds; 0 for a one-shot timer.
    uint64_t interval_ns;
} cw_timer_value;

// A callout handler: called once with the argument it was set with.
typedef void (*cw_func)(void *arg);

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// The version of the library linked, as CW_VERSION packs it: compare with CW_VERSION to
// detect a program built against another header.
int cw_version(void);

// The version of the library linked, as a static NUL-terminated string ("0.1.0").
const char *cw_version_string(void);

// A static, NUL-terminated description of a code returned by any function of this library,
// in words that fit every interface (any non-negative value is a success). Never NULL;
// unknown codes get a generic text. The interface's own function (cw_wheel_strerror, ...)
// says more.
const char *cw_strerror(int code);

// cw_strerror in the caller-driven wheel's words (cw_wheel_*), for the codes its calls
// return.
const char *cw_wheel_strerror(int code);

// cw_strerror in the callout tables' words (cw_callout*, cw_timeout, cw_setcallout,
// cw_hardclock, cw_softclock), for the codes their calls return.
const char *cw_callout_strerror(int code);

// cw_strerror in the timer sets' words (cw_timerset_*, cw_timer_*, cw_multireal_*), for the
// codes their calls return (the setitimer-shaped calls report errno instead).
const char *cw_timerset_strerror(int code);

// cw_strerror in the words of sleeping with precision (cw_sleep_sbt, cw_cv_*), for the codes
// their calls return.
const char *cw_sleep_strerror(int code);

// Creates a wheel whose time starts at `now` (nanoseconds on any clock the caller chooses,
// CLOCK_MONOTONIC for an event loop).
//
// - `capacity`: 0 for a wheel that grows as timers are added (a refused allocation is
//   CW_ENOMEM with nothing changed); otherwise the most timers it holds, reserved now (adding
//   more is CW_ENOMEM), below 2^32 - 707 (the wheel's index space).
// - `out`: receives the wheel, or NULL on failure.
//
// Returns 0; CW_EINVAL (NULL `out`, capacity too large); CW_ENOMEM when a fixed capacity
// cannot be reserved.
//
// # Safety
//
// `out` is NULL or valid for writing a pointer.
int cw_wheel_new(size_t capacity,
                 uint64_t now,
                 cw_wheel **out);

// Makes room for `additional` more timers than are pending, so that adding that many
// allocates nothing. Exact: an add that finds no free slot grows the wheel by doubling, which
// can leave half of it spare; this grows it to what is asked (32 bytes per timer and 17 KiB
// for the wheel's slots). On a wheel of fixed capacity it checks that they fit.
//
// Returns 0; CW_EINVAL for NULL `w`; CW_ENOMEM when they would not fit (the fixed capacity,
// the wheel's index space of 2^32 - 707 timers) or the allocator refuses, with no timer
// changed.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress.
int cw_wheel_reserve(cw_wheel *w,
                     size_t additional);

// Destroys a wheel and every timer in it. NULL is ignored.
//
// # Safety
//
// `w` is NULL or a wheel from cw_wheel_new, not yet freed, with no call on it in progress
// (not even the cw_wheel_expire whose callback is running); it must not be used afterwards.
void cw_wheel_free(cw_wheel *w);

// Adds a timer due at the absolute time `deadline`, in the window [deadline, deadline +
// tolerance] (the end saturates at UINT64_MAX; a tolerance of 2^30 ns or more is kept to 25
// significant bits, rounded down, so the end is earlier by less than 2^-24 of it, never
// later), carrying `value` (a `(uint64_t)(uintptr_t)` pointer, an index, anything). It is
// due at its firing instant (see cw_wheel_get: the deadline, or with a window a coarse slot
// boundary in its first eighth); one at or before the wheel's time fires at the next
// cw_wheel_get. `out` receives its handle: point it where the handle is kept
// (`&conn->timer`), the fastest way to keep it.
//
// Returns 0; CW_EINVAL (NULL `w` or `out`); CW_ENOMEM (a fixed capacity is full, or the
// allocator refused to grow the wheel: nothing changed).
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress; `out` is NULL or valid
// for writing a cw_handle.
int cw_wheel_add(cw_wheel *w,
                 uint64_t deadline,
                 uint64_t tolerance,
                 uint64_t value,
                 cw_handle *out);

// Adds a timer due `delay` nanoseconds after the wheel's time (the latest cw_wheel_update),
// otherwise as cw_wheel_add.
//
// Returns as cw_wheel_add, and CW_ERANGE when the deadline would pass UINT64_MAX.
//
// # Safety
//
// As for cw_wheel_add.
int cw_wheel_add_in(cw_wheel *w,
                    uint64_t delay,
                    uint64_t tolerance,
                    uint64_t value,
                    cw_handle *out);

// Adds a periodic timer: first due at the absolute time `first`, then every `period`
// nanoseconds after its previous deadline (never drifting with late pulls), each window
// `tolerance` wide (its end kept as for cw_wheel_add), until deleted. `missed`
// (CW_MISSED_BURST, CW_MISSED_DELAY or CW_MISSED_SKIP) decides what a pull made a period or
// more late does; each expiry reports the periods it missed. A timer whose next deadline would pass UINT64_MAX fires its last
// time and is gone. Its handle stays valid across firings.
//
// Returns 0; CW_EINVAL (NULL `w` or `out`, a zero period, an unknown `missed`); CW_ENOMEM.
//
// # Safety
//
// As for cw_wheel_add.
int cw_wheel_add_periodic(cw_wheel *w,
                          uint64_t first,
                          uint64_t period,
                          uint64_t tolerance,
                          int missed_policy,
                          uint64_t value,
                          cw_handle *out);

// Deletes a pending timer; `value` (may be NULL) receives the value it carried.
//
// Returns 0; CW_ESTALE when `handle` names no pending timer of this wheel (it fired, was
// deleted, belongs to another wheel or was made up: nothing changes); CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress; `value` is NULL or valid
// for writing a uint64_t.
int cw_wheel_del(cw_wheel *w,
                 cw_handle handle,
                 uint64_t *value);

// Moves a pending timer to the window [deadline, deadline + tolerance] (absolute; its end kept
// as for cw_wheel_add). It keeps its handle and value; a periodic timer keeps its period and
// takes the new tolerance.
//
// Returns 0; CW_ESTALE (as for cw_wheel_del); CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress.
int cw_wheel_reset(cw_wheel *w,
                   cw_handle handle,
                   uint64_t deadline,
                   uint64_t tolerance);

// cw_wheel_reset to `delay` nanoseconds after the wheel's time.
//
// Returns as cw_wheel_reset, and CW_ERANGE when the deadline would pass UINT64_MAX.
//
// # Safety
//
// As for cw_wheel_reset.
int cw_wheel_reset_in(cw_wheel *w,
                      cw_handle handle,
                      uint64_t delay,
                      uint64_t tolerance);

// Whether `handle` names a pending timer of this wheel: 1 (and its deadline in `deadline`,
// which may be NULL) or 0.
//
// Returns 1 or 0; CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no call that changes it is in progress; `deadline` is
// NULL or valid for writing a uint64_t.
int cw_wheel_pending(const cw_wheel *w,
                     cw_handle handle,
                     uint64_t *deadline);

// Sets the wheel's time to `now`, the caller's clock reading. Nothing fires here: the timers
// due by `now` are then pulled with cw_wheel_get.
//
// Returns 0; CW_ERANGE when `now` is earlier than the wheel's time (time never goes back:
// nothing changes); CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress.
int cw_wheel_update(cw_wheel *w,
                    uint64_t now);

// The wheel's counts: pending timers, bytes held, its time and what happened since it was
// created.
//
// Returns 0; CW_EINVAL for NULL `w` or `out`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no call that changes it is in progress; `out` is NULL
// or valid for writing a cw_wheel_info.
int cw_wheel_counts(const cw_wheel *w,
                    cw_wheel_info *out);

// Verifies every internal invariant of the wheel by brute force (O(timers + slots): for
// tests and debugging, as wahern/timeout's timeouts_check). When one is broken and `buf` is
// not NULL, the text naming it is copied into `buf` (at most `len` bytes, always
// NUL-terminated when `len` > 0).
//
// Returns 0 when every invariant holds; CW_EINVARIANT otherwise; CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no call that changes it is in progress; `buf` is NULL
// or valid for writing `len` bytes.
int cw_wheel_check(const cw_wheel *w,
                   char *buf,
                   size_t len);

// Pulls the next timer due by the wheel's time. A one-shot timer is removed; a periodic one
// is re-armed for its next period before it is returned.
//
// A timer is due once the wheel's time reaches its firing instant: its deadline when its
// tolerance is 0; with a window, the first multiple of the coarsest slot width (64^l ns) in
// the window's first eighth, or the deadline when that part holds no multiple of 64 (placed
// there, the timer fires without cascading down the wheel; never before its deadline, never
// after its window).
//
// Order: by firing instant, timers with equal instants in the order they were armed (added or
// reset) — except for *overdue* timers: those armed, or re-armed (a periodic timer catching
// up missed periods with CW_MISSED_BURST, one period per pull), with an instant at or before
// the point the pulls have reached (the deadline of the latest timer pulled, or the wheel's
// time after a pull that found nothing; never later than the wheel's time). Overdue timers
// armed by add or reset come out in the order they were armed; where overdue timers come out
// among the other due timers is not specified, only that each comes out within a bounded
// number of pulls and never before its deadline. This keeps every call bounded, whatever the
// callers add meanwhile.
//
// Returns 1 with `out` filled; 0 when nothing is due (no timer's firing instant is at or
// before the wheel's time); CW_EINVAL for NULL `w` or `out`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress; `out` is NULL or valid
// for writing a cw_expiry.
int cw_wheel_get(cw_wheel *w,
                 cw_expiry *out);

// Pulls up to `max` due timers in one call into `out[0]`, `out[1]`, …: the timers that many
// cw_wheel_get calls would return, in the same order, each one-shot timer removed and each
// periodic one re-armed as cw_wheel_get does. For an event loop that fires many timers per
// turn, it saves a call per timer; every timer it returns has fired, so deleting one of them
// while handling another is CW_ESTALE (for a one-shot timer) and changes nothing.
//
// Returns the number of timers written, from 1 to `max` (at most INT_MAX per call): fewer
// than `max` only when no other timer is due, so a loop may stop at a short batch without a
// last call that finds nothing. Returns 0 when nothing is due, as cw_wheel_get; CW_EINVAL for
// NULL `w` or `out`, or a `max` of 0.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress; `out` is NULL or valid
// for writing `max` cw_expiry.
int cw_wheel_get_many(cw_wheel *w,
                      cw_expiry *out,
                      size_t max);

// cw_wheel_update to `now`, then cw_wheel_get_many: an event loop's turn in one call. Every
// argument is checked before the wheel's time moves, so a refused call changes nothing.
//
// Returns as cw_wheel_get_many; CW_ERANGE for a `now` earlier than the wheel's time; CW_EINVAL
// for NULL `w` or `out`, or a `max` of 0.
//
// # Safety
//
// As for cw_wheel_get_many.
int cw_wheel_advance(cw_wheel *w,
                     uint64_t now,
                     cw_expiry *out,
                     size_t max);

// cw_wheel_update to `now`, then calls `fn(arg, expiry)` for each timer due, in the order
// cw_wheel_get would return them, until none is due or `max` calls were made (0: no limit —
// but a callback that keeps adding timers already due, or a CW_MISSED_BURST timer catching
// up many missed periods, then keeps the call going). The wheel is not borrowed while a
// callback runs: it may call any function on this wheel but cw_wheel_free.
//
// Returns the number of callbacks made (at most INT_MAX is reported); CW_ERANGE for a `now`
// earlier than the wheel's time (nothing fires); CW_EINVAL for NULL `w` or `fn`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress (but those its callbacks
// make); `fn(arg, …)` must be safe to call on this thread and return normally.
int cw_wheel_expire(cw_wheel *w,
                    uint64_t now,
                    cw_wheel_fn func,
                    void *arg,
                    uint64_t max);

// The absolute time the caller should next wake: the earliest window end among the pending
// timers, or the wheel's time when timers are already due (pull them now). Never later than
// any window's end; it may be earlier than needed after deletes or resets, and is the
// wheel's time while a run of pulls is unfinished (until a cw_wheel_get returns 0 or a
// cw_wheel_get_many batch comes back short): a wake-up that finds nothing due costs one empty
// pull.
//
// Returns 1 with `deadline` filled; 0 when no timer is pending (sleep as long as you like);
// CW_EINVAL for NULL `w` or `deadline`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no call that changes it is in progress; `deadline` is
// NULL or valid for writing a uint64_t.
int cw_wheel_next_wakeup(const cw_wheel *w,
                         uint64_t *deadline);

// cw_wheel_next_wakeup relative to the wheel's time: the nanoseconds to sleep (0 when timers
// are due), to hand to epoll_wait, poll or a timerfd after rounding up to their unit.
//
// Returns 1 with `ns` filled; 0 when no timer is pending; CW_EINVAL for NULL `w` or `ns`.
//
// # Safety
//
// As for cw_wheel_next_wakeup, with `ns` for `deadline`.
int cw_wheel_timeout(const cw_wheel *w,
                     uint64_t *ns);

// The period and missed-period policy of a periodic timer.
//
// Returns 1 with `period` (nanoseconds) and `missed_policy` (CW_MISSED_*) filled, each when
// not NULL; 0 for a pending one-shot timer (nothing written); CW_ESTALE when `handle` names no
// pending timer of this wheel; CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no call that changes it is in progress; `period` and
// `missed_policy` are NULL or valid for writing.
int cw_wheel_period(const cw_wheel *w,
                    cw_handle handle,
                    uint64_t *period,
                    int *missed_policy);

// Changes a periodic timer's period, from its next firing on: the deadline it is armed for
// now stays (libuv's `uv_timer_set_repeat`). A one-shot timer cannot be made periodic here
// (delete it and add it with cw_wheel_add_periodic): the wheel keeps a schedule only for
// timers added periodic.
//
// Returns 0; CW_EINVAL (NULL `w`, a zero period, or `handle` names a one-shot timer; nothing
// changes); CW_ESTALE when `handle` names no pending timer of this wheel.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress.
int cw_wheel_set_period(cw_wheel *w,
                        cw_handle handle,
                        uint64_t period);

// Walks the pending timers: stores the first pending timer at or after position `*cursor`
// in `out` (its handle, value and deadline; for a periodic timer, the periods its latest
// firing missed) and moves `*cursor` past it. Start with `*cursor` = 0 and call until it
// returns 0; or use CW_WHEEL_FOREACH. The walk is in the wheel's storage order, not by
// deadline. A timer that stays pending throughout the walk is seen exactly once; one added
// during it may or may not be; one deleted or fired is not seen after that. Timers due but not
// yet pulled are pending.
//
// Returns 1 with `out` filled; 0 past the last pending timer; CW_EINVAL for NULL `w`,
// `cursor` or `out`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no call that changes it is in progress; `cursor` is
// NULL or valid for reading and writing a size_t; `out` is NULL or valid for writing a
// cw_expiry.
int cw_wheel_next_pending(const cw_wheel *w,
                          size_t *cursor,
                          cw_expiry *out);

// Moves the wheel's time `delta` nanoseconds forward (wahern/timeout's `timeouts_step`):
// cw_wheel_update to the wheel's time plus `delta`.
//
// Returns 0; CW_ERANGE when that passes the end of time, UINT64_MAX (nothing changes);
// CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no other call is in progress.
int cw_wheel_step(cw_wheel *w,
                  uint64_t delta);

// Whether a timer is due at the wheel's time and not yet pulled (wahern/timeout's
// `timeouts_expired`): never 0 while one is, and 0 after a pull that found nothing (until
// the time moves or a timer is armed). Between those it may answer 1 with nothing left due
// (after deletes or resets, or before a round of pulls is complete): the next pull then
// returns 0.
//
// Returns 1 or 0; CW_EINVAL for NULL `w`.
//
// # Safety
//
// `w` is NULL or a live wheel on which no call that changes it is in progress.
int cw_wheel_expired(const cw_wheel *w);

// Creates a timer set on the process-wide monotonic runtime (started by the first set).
//
// - `quota`: the most timers the set holds, running plus queued (0 means
//   CW_TIMERSET_DEFAULT_QUOTA; at most CW_TIMERSET_MAX_QUOTA). Memory grows with the timers
//   actually held, up to the quota, however long the owner goes without reaping.
// - `missed`: the missed-period policy new timers start with (CW_MISSED_BURST, CW_MISSED_DELAY
//   or CW_MISSED_SKIP; see cw_timer_set_missed).
// - `out`: receives the set, or NULL on failure.
//
// Returns 0; CW_EINVAL (NULL `out`, quota above the maximum, unknown policy); a negated errno
// when the set's eventfd or the runtime's threads cannot be created (e.g. -EMFILE).
//
// # Safety
//
// `out` is NULL or valid for writing a pointer.
int cw_timerset_new(size_t quota,
                    int missed_policy,
                    cw_timerset **out);

// Destroys a set and every timer in it, running or queued (no callback or signal of the set
// starts after this returns; one already running on the driver thread is waited for), and
// closes its descriptor. NULL is ignored.
//
// Returns 0; CW_EINVAL for the process-wide set of cw_multireal_set, which lives as long as
// the process (nothing happens).
//
// # Safety
//
// `set` is NULL or a set from cw_timerset_new (or cw_multireal_set), not yet freed, on which
// no other call is in progress (on any thread, the set's callback included); it must not be
// used afterwards.
int cw_timerset_free(cw_timerset *set);

// Creates a timer that expires `value_ns` nanoseconds from now and carries `label` (any
// 64-bit value of the caller's choosing); a non-zero `interval_ns` makes it periodic (once
// reaped, it runs again `interval_ns` after the expiry it was reaped for). The new timer's
// handle is stored in `*handle`: never 0 and never UINT64_MAX, never issued twice in the life
// of the process, and accepted by this set only.
//
// Returns 0; CW_ENOSPC when the set holds its quota (queued timers count); CW_EINVAL for a
// NULL argument, a `value_ns` of 0, or a deadline or first period beyond the clock's 64-bit
// nanoseconds. On failure nothing is created and `*handle` is untouched.
//
// # Safety
//
// `set` is NULL or a live set; `handle` is NULL or valid for writing a uint64_t.
int cw_timer_create(cw_timerset *set,
                    uint64_t value_ns,
                    uint64_t interval_ns,
                    uint64_t label,
                    uint64_t *handle);

// Gives the timer `handle` a new value, interval and label (the label may differ from its
// current one). A timer waiting on the expired queue leaves the queue first. The timer keeps
// its handle. Its former value (0 ns remaining if it was queued) is stored in `*old` unless
// `old` is NULL.
//
// Returns 0; CW_EINVAL for a NULL set, a handle that names none of this set's timers
// (another set's, a destroyed timer's, a made-up number), a `value_ns` of 0 (cancel with
// cw_timer_cancel) or a value out of range. On failure nothing changes.
//
// # Safety
//
// `set` is NULL or a live set; `old` is NULL or valid for writing a cw_timer_value.
int cw_timer_reset(cw_timerset *set,
                   uint64_t handle,
                   uint64_t value_ns,
                   uint64_t interval_ns,
                   uint64_t label,
                   cw_timer_value *old);

// Destroys the timer `handle`, running or waiting on the expired queue (a queued timer still
// exists until it is reaped or cancelled). Its final value (0 ns remaining if it was queued)
// is stored in `*final_value` unless it is NULL. The handle is never valid again.
//
// Returns 0; CW_EINVAL for a NULL set or a handle that names none of this set's timers
// (nothing changes).
//
// # Safety
//
// `set` is NULL or a live set; `final_value` is NULL or valid for writing a cw_timer_value.
int cw_timer_cancel(cw_timerset *set,
                    uint64_t handle,
                    cw_timer_value *final_value);

// Stores the current value of the timer `handle` in `*value`: the nanoseconds until it
// expires (0 while it waits on the expired queue) and its interval.
//
// Returns 0; CW_EINVAL for a NULL argument or a handle that names none of this set's timers
// (`*value` is untouched).
//
// # Safety
//
// `set` is NULL or a live set; `value` is NULL or valid for writing a cw_timer_value.
int cw_timer_get(const cw_timerset *set,
                 uint64_t handle,
                 cw_timer_value *value);

// Pops the head of the expired queue (timers are queued in expiry order): stores its handle
// in `*handle` and its label in `*label` (unless `label` is NULL). A one-shot timer is
// destroyed; a periodic one runs again from the deadline it expired for, not from the reap
// (see cw_timer_set_missed for reaps that come after further periods).
//
// Returns 1 when a timer was reaped; 0 when the queue is empty (the paper's EAGAIN; nothing
// is written); CW_EINVAL for a NULL set or `handle`.
//
// # Safety
//
// `set` is NULL or a live set; `handle` is NULL or valid for writing a uint64_t; `label` is
// NULL or valid for writing a uint64_t.
int cw_timer_reap(cw_timerset *set,
                  uint64_t *handle,
                  uint64_t *label);

// Sets the missed-period policy of the timer `handle` (CW_MISSED_BURST, CW_MISSED_DELAY or
// CW_MISSED_SKIP), used from its next reap on. When a periodic timer is reaped after `k >= 1`
// further periods came due: BURST queues it again at once, once per missed period; DELAY
// restarts the period from the reap; SKIP keeps the timer on its grid. DELAY and SKIP count
// the `k` dropped periods (cw_timer_overruns).
//
// Returns 0; CW_EINVAL for a NULL set, an unknown policy or a bad handle (nothing changes).
//
// # Safety
//
// `set` is NULL or a live set.
int cw_timer_set_missed(cw_timerset *set,
                        uint64_t handle,
                        int policy);

// Stores in `*overruns` the number of further periods that had come due when the timer
// `handle` was last reaped (0 before its first reap, after a reset, and for one-shot timers).
//
// Returns 0; CW_EINVAL for a NULL argument or a bad handle.
//
// # Safety
//
// `set` is NULL or a live set; `overruns` is NULL or valid for writing a uint64_t.
int cw_timer_overruns(const cw_timerset *set,
                      uint64_t handle,
                      uint64_t *overruns);

// Brings the expired queue up to date with the clock and stores the number of running timers
// in `*running` and of queued timers in `*queued` (either may be NULL).
//
// Returns 0; CW_EINVAL for a NULL set.
//
// # Safety
//
// `set` is NULL or a live set; `running` and `queued` are NULL or valid for writing a size_t.
int cw_timerset_counts(const cw_timerset *set,
                       size_t *running,
                       size_t *queued);

// The set's eventfd: readable exactly while the expired queue is non-empty, for poll, select
// or epoll (level-triggered works without reading it; with EPOLLET, reap until cw_timer_reap
// returns 0). The set owns the descriptor: do not read, write or close it. It is closed by
// cw_timerset_free.
//
// Returns the descriptor (>= 0); CW_EINVAL for a NULL set.
//
// # Safety
//
// `set` is NULL or a live set.
int cw_timerset_fd(const cw_timerset *set);

// Blocks until the expired queue is non-empty or `timeout_ns` nanoseconds (of real time) have
// passed; a negative `timeout_ns` waits without a limit, 0 only looks. Another thread may reap
// the timer between the return and the caller's cw_timer_reap.
//
// Returns 1 if the queue is non-empty, 0 on timeout; CW_EINVAL for a NULL set.
//
// # Safety
//
// `set` is NULL or a live set, not freed while the call waits.
int cw_timerset_wait(const cw_timerset *set,
                     int64_t timeout_ns);

// Installs `func(arg)`, called each time the set's expired queue goes from empty to
// non-empty (not once per expiry: reap until cw_timer_reap returns 0). It is called on the
// thread that finds the expiry — usually the runtime's driver thread, or a thread whose call
// into the set caught up with the clock — without the set's lock held, so it may call the set
// (but not cw_timerset_free). Keep it short: it delays the other sets' timers. A NULL `func`
// removes the callback. Replaces any earlier callback or signal (cw_timerset_set_signal).
//
// Returns 0; CW_EINVAL for a NULL set.
//
// # Safety
//
// `set` is NULL or a live set; `func(arg)` is safe to call from any thread until the callback
// is replaced or removed and the set freed.
int cw_timerset_set_callback(cw_timerset *set,
                             cw_func func,
                             void *arg);

// Sends the signal `signo` to the process (`kill(getpid(), signo)`) each time the set's
// expired queue goes from empty to non-empty, as the paper's kernel sent SIGALRM; 0 stops
// the signals. One signal per transition, not per expiry (ordinary signals coalesce anyway):
// the handler should set a flag, and the main loop reap until cw_timer_reap returns 0 — no
// function of this library is async-signal-safe. The library's threads block every signal,
// so the signal goes to a thread of the program, or waits for a program that blocks it to
// take it (sigwait, sigtimedwait, signalfd). Replaces any callback
// (cw_timerset_set_callback), and is replaced by one.
//
// Returns 0; CW_EINVAL for a NULL set or a `signo` outside 0..=SIGRTMAX.
//
// # Safety
//
// `set` is NULL or a live set.
int cw_timerset_set_signal(cw_timerset *set,
                           int signo);

// setitimer(2) extended with the paper's ITIMER_MULTIREAL (Figure 6). With any other `which`
// this is the libc setitimer, unchanged. With CW_ITIMER_MULTIREAL it acts on the process-wide
// set (cw_multireal_set; made on first use) — and, as in the paper:
//
// - `ovalue` must not be NULL (EINVAL); nor may `value`.
// - `value->it_value` non-zero and `ovalue->it_value` == {-1, -1}: create. The label is read
//   from `ovalue->it_interval`; the new timer's handle is written to `ovalue->it_value`
//   (`ovalue->it_interval` keeps the label). The timer expires after `value->it_value`, and
//   with a non-zero `value->it_interval` is periodic. EAGAIN when the set holds its quota.
// - `value->it_value` non-zero and `ovalue->it_value` any other value: reset. The handle is
//   `ovalue->it_value`, the new label `ovalue->it_interval` (it may differ from the old one).
//   A timer waiting on the expired queue leaves it; its value and label are replaced; `ovalue`
//   is overwritten with its former value. EINVAL if the handle names no timer of the set.
// - `value->it_value` zero: cancel. `value->it_interval` and `ovalue->it_interval` are
//   ignored; the handle is `ovalue->it_value`. The timer is destroyed, running or queued
//   (queued timers still exist), and its final value is stored in `ovalue` (zero remaining if
//   it was queued). EINVAL if the handle names no timer of the set.
//
// Handles and labels travel in a struct timeval as cw_timeval_from_bits encodes them.
// Times must have `tv_sec >= 0` and `0 <= tv_usec < 1000000`, and a deadline must fit the
// clock's 64-bit nanoseconds (about 584 years): EINVAL otherwise, where Linux's setitimer would
// clamp. Values read back are rounded up to the microsecond. Returns 0, or -1 with errno set
// (EINVAL, EAGAIN; or
// the errno of the failed eventfd or thread creation when the process-wide set cannot be
// made). On failure `*ovalue` is unchanged.
//
// # Safety
//
// As setitimer: `value` is NULL or valid for reading, `ovalue` NULL or valid for reading and
// writing, a struct itimerval.
int cw_setitimer(int which,
                 const struct itimerval *value,
                 struct itimerval *ovalue);

// getitimer(2) extended with the paper's ITIMER_MULTIREAL (Figure 7). With any other `which`
// this is the libc getitimer, unchanged. With CW_ITIMER_MULTIREAL it acts on the process-wide
// set — and, as in the paper, `value->it_value` must be set before the call
// (`value->it_interval` is ignored):
//
// - `value->it_value` == {-1, -1}: reap. The timer at the head of the expired queue is
//   removed from it; its handle is written to `value->it_value` and its label to
//   `value->it_interval`. A one-shot timer is destroyed; a periodic one runs again, its next
//   expiry based on the expiry just reaped, not on the reap. EAGAIN if the queue is empty.
// - Any other `value->it_value` is a handle: `value` is overwritten with the timer's current
//   value (zero remaining while it waits on the expired queue). EINVAL if the handle names no
//   timer of the set.
//
// Returns 0, or -1 with errno set (EINVAL also for a NULL `value`); on failure `*value` is
// left untouched.
//
// # Safety
//
// As getitimer: `value` is NULL or valid for reading and writing a struct itimerval.
int cw_getitimer(int which,
                 struct itimerval *value);

// cw_setitimer(CW_ITIMER_MULTIREAL, value, ovalue) on the set `set` instead of the
// process-wide one. Returns 0, or -1 with errno set (EINVAL also for a NULL set).
//
// # Safety
//
// `set` is NULL or a live set; the other pointers as cw_setitimer's.
int cw_setitimer_on(cw_timerset *set,
                    const struct itimerval *value,
                    struct itimerval *ovalue);

// cw_getitimer(CW_ITIMER_MULTIREAL, value) on the set `set` instead of the process-wide one.
// Returns 0, or -1 with errno set (EINVAL also for a NULL set).
//
// # Safety
//
// `set` is NULL or a live set; `value` as cw_getitimer's.
int cw_getitimer_on(cw_timerset *set,
                    struct itimerval *value);

// Makes the process-wide ITIMER_MULTIREAL set with room for `quota` timers, running plus
// queued (0: CW_TIMERSET_DEFAULT_QUOTA, also the quota when the set is made on first use). Call
// it before any other use of the process-wide set.
//
// Returns 0; CW_EBUSY if the set already exists (its quota is unchanged); CW_EINVAL for a
// quota above CW_TIMERSET_MAX_QUOTA; a negated errno if the set's eventfd or the runtime's
// threads cannot be created.
int cw_multireal_init(size_t quota);

// The process-wide ITIMER_MULTIREAL set that cw_setitimer and cw_getitimer act on, made on
// first use (with CW_TIMERSET_DEFAULT_QUOTA unless cw_multireal_init came first) on the
// process-wide monotonic runtime. Every cw_timer_* and cw_timerset_* function accepts it;
// cw_timerset_free refuses it (it lives as long as the process; its timers end with it, as
// the paper's end at exit()). Handles of cw_timer_create on it work with cw_setitimer, and the
// other way round.
//
// Returns the set, or NULL with errno set when it cannot be made.
cw_timerset *cw_multireal_set(void);

// The process-wide set's eventfd (cw_timerset_fd of cw_multireal_set): readable exactly while
// its expired queue is non-empty. Returns the descriptor, or a negated errno when the set
// cannot be made.
int cw_multireal_fd(void);

// The paper's SIGALRM: sends `signo` to the process each time the process-wide set's expired
// queue goes from empty to non-empty (cw_timerset_set_signal on cw_multireal_set); 0 stops
// the signals. Off by default: use the descriptor (cw_multireal_fd) where you can.
//
// Returns 0; CW_EINVAL for a `signo` outside 0..=SIGRTMAX; a negated errno when the set
// cannot be made.
int cw_multireal_signal(int signo);

// Stores in `*tv` the struct timeval that carries the 64 bits `bits` (a handle or a label):
// `{ (time_t)bits, 0 }` where time_t has 64 bits, `{ high 32 bits, low 32 bits }` where it
// has 32.
//
// Returns 0, or CW_EINVAL for a NULL `tv`.
//
// # Safety
//
// `tv` is NULL or valid for writing a struct timeval.
int cw_timeval_from_bits(uint64_t bits,
                         struct timeval *tv);

// Stores in `*bits` the 64 bits (a handle or a label) that `*tv` carries (see
// cw_timeval_from_bits).
//
// Returns 0; CW_EINVAL for a NULL pointer or a timeval that carries no 64 bits (`tv_usec` not
// 0 where time_t has 64 bits).
//
// # Safety
//
// `tv` is NULL or valid for reading a struct timeval; `bits` is NULL or valid for writing a
// uint64_t.
int cw_timeval_to_bits(const struct timeval *tv,
                       uint64_t *bits);

// calloutng's `pause_sbt`: blocks the calling thread until `sbt` (32.32 fixed-point seconds,
// see CW_SBT_1S) has passed — relative to now, or with CW_C_ABSOLUTE an absolute
// CLOCK_MONOTONIC time — never earlier, and up to `precision` later, or the interval divided
// by 2^n with CW_C_PREL(n) if that is larger: the process-wide runtime wakes the thread at
// a wake-up it shares with every timer whose window overlaps (cw_timerset timers, other
// sleepers). A time already passed returns at once. CW_C_DIRECT_EXEC and CW_C_HARDCLOCK are
// accepted and change nothing.
//
// Returns 0; CW_EINVAL (a negative `sbt` or `precision`, unknown flags); CW_EDEADLK from a
// callback of a timer set on the process-wide runtime (its driver would wait for itself);
// CW_ENOMEM; a negated errno when the runtime's threads cannot start.
int cw_sleep_sbt(int64_t sbt,
                 int64_t precision,
                 int flags);

// Creates a condition variable; `out` receives it.
//
// Returns 0; CW_EINVAL for NULL `out`.
//
// # Safety
//
// `out` is NULL or valid for writing a pointer.
int cw_cv_new(cw_cv **out);

// Destroys a condition variable. Threads already woken that have not yet returned from their
// wait are waited for (briefly: they are on their way out).
//
// Returns 0 (also for NULL); CW_EBUSY, freeing nothing, while a thread is blocked on it.
//
// # Safety
//
// `cv` is NULL or from cw_cv_new, not yet freed; after 0 it must not be used again.
int cw_cv_free(cw_cv *cv);

// Wakes the longest-waiting thread blocked on `cv`.
//
// Returns 1 if a thread was woken, 0 if none waited; CW_EINVAL for NULL `cv`.
//
// # Safety
//
// `cv` is NULL or a live condition variable.
int cw_cv_signal(cw_cv *cv);

// Wakes every thread blocked on `cv`.
//
// Returns how many were woken (at most INT_MAX is reported); CW_EINVAL for NULL `cv`.
//
// # Safety
//
// `cv` is NULL or a live condition variable.
int cw_cv_broadcast(cw_cv *cv);

// Releases `m` (which the caller holds), blocks until cw_cv_signal or cw_cv_broadcast wakes
// the thread, and locks `m` again. Check the condition in a loop, as with
// pthread_cond_wait; change it under `m` before signalling.
//
// With no timeout it arms no timer: called on the process-wide runtime's driver (a timer
// set's callback), it holds that driver until signalled.
//
// Returns 0; CW_EINVAL (NULL `cv` or `m`, or `m` not locked: nothing happens); CW_ENOMEM.
//
// # Safety
//
// `cv` is NULL or a live condition variable; `m` is NULL or an initialised, non-recursive
// mutex that the calling thread holds, and stays alive until the call returns.
int cw_cv_wait(cw_cv *cv,
               pthread_mutex_t *m);

// cw_cv_wait that also gives up at `sbt` — relative to now, or with CW_C_ABSOLUTE an absolute
// CLOCK_MONOTONIC time — woken then by a timer of the process-wide runtime whose window is
// `precision` wide, or the interval divided by 2^n with CW_C_PREL(n) if that is larger
// (FreeBSD's cv_timedwait_sbt). `m` is locked again in every case but an error.
//
// Returns 0 when woken by cw_cv_signal or cw_cv_broadcast; CW_ETIMEDOUT when the timeout
// came first; CW_EINVAL (NULL `cv` or `m`, `m` not locked, a negative `sbt` or `precision`,
// unknown flags: nothing happens); CW_EDEADLK on the process-wide runtime's driver thread
// (it would wait for itself); CW_ENOMEM; a negated errno when the runtime's threads cannot
// start.
//
// # Safety
//
// As for cw_cv_wait.
int cw_cv_timedwait_sbt(cw_cv *cv,
                        pthread_mutex_t *m,
                        int64_t sbt,
                        int64_t precision,
                        int flags);

// Creates a callout table of one CPU (cw_callouts_new_percpu with `ncpu` 1): the clock calls
// are given `cpu` 0, and the calls that name a callout's CPU 0 or -1 ("its own").
//
// - `backing`: CW_BACKING_LIST, CW_BACKING_HASHED or CW_BACKING_WHEEL.
// - `calloutsize`: callout records reserved now (the kernel's calloutsize), 0 to
//   CW_CALLOUTSIZE_MAX (2^26). The reservation is address space, touched as records are
//   first used.
// - `fixed`: non-zero to never allocate more (calls needing another record then fail with
//   CW_ENOMEM); zero to let the pool double when it runs out.
// - `hz`: ticks per second, to convert cw_callout_reset_sbt_on's times (at least 1).
// - `out`: receives the table, or NULL on failure.
//
// Returns 0; CW_EINVAL (NULL `out`, unknown backing, hz of 0, fixed pool of 0 records,
// calloutsize above CW_CALLOUTSIZE_MAX); CW_ENOMEM when the records cannot be reserved.
//
// # Safety
//
// `out` is NULL or valid for writing a pointer.
int cw_callouts_new(int backing,
                    size_t calloutsize,
                    int fixed,
                    uint32_t hz,
                    cw_callouts **out);

// Creates a callout table of `ncpu` CPUs: FreeBSD's per-CPU callwheels, one queue per CPU
// with its own lock, each processed on its own by whoever drives that CPU (cw_hardclock,
// cw_softclock, cw_callout_process with its number), and cw_callout_reset_sbt_on's `cpu`
// choosing the queue a callout runs on.
//
// - `backing`: CW_BACKING_LIST, CW_BACKING_HASHED or CW_BACKING_WHEEL, for every CPU.
// - `ncpu`: 1 to CW_NCPU_MAX (for example the number of online CPUs, or of the threads that
//   will drive the queues).
// - `calloutsize`, `fixed`, `hz`: as for cw_callouts_new, for each CPU's queue (a callout's
//   record lives in its CPU's queue; a fixed pool bounds the callouts of each CPU).
// - `out`: receives the table, or NULL on failure.
//
// Returns 0; CW_EINVAL (NULL `out`, unknown backing, ncpu outside 1 to CW_NCPU_MAX, hz of 0,
// fixed pool of 0 records, calloutsize above CW_CALLOUTSIZE_MAX); CW_ENOMEM when the records
// cannot be reserved.
//
// # Safety
//
// `out` is NULL or valid for writing a pointer.
int cw_callouts_new_percpu(int backing,
                           int ncpu,
                           size_t calloutsize,
                           int fixed,
                           uint32_t hz,
                           cw_callouts **out);

// How many CPUs the table has (1 for cw_callouts_new's); CW_EINVAL for NULL.
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callouts_ncpu(const cw_callouts *cw);

// Sets the default deviation of every CPU's queue, FreeBSD's `kern.timecounter.alldeviation`: a callout
// armed from now on by a relative time without a precision (cw_timeout, cw_setcallout,
// cw_callout_reset, and cw_callout_reset_sbt_on without CW_C_PREL or CW_C_ABSOLUTE) may run
// about `percent` % of its interval late: 1 / 2^s of it, s the highest bit of t + t/2 for
// t = (99 + `percent`) / `percent`, as FreeBSD derives `tc_precexp` (1 allows 1/128, 5 a
// sixteenth, 13 an eighth, 99 a half, 100 the whole interval), at its window's firing
// instant, which callouts with overlapping
// windows share. A new table has 0: every such callout exact. Callouts already pending keep
// their windows.
//
// Returns 0; CW_EINVAL for NULL or a `percent` above 100.
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callouts_set_deviation(cw_callouts *cw,
                              uint32_t percent);

// Destroys a table and every callout in it, on every CPU (pending handlers never run). NULL
// is ignored.
//
// # Safety
//
// `cw` is NULL or a table from cw_callouts_new or cw_callouts_new_percpu, not yet freed, on
// which no other call is in progress (on any thread, including from a handler); it must not
// be used afterwards.
void cw_callouts_free(cw_callouts *cw);

// BSD's `timeout(func, arg, ticks)`: runs `func(arg)` `ticks` ticks from now (`ticks` <= 0
// counts as 1), on CPU 0. Only cw_untimeout with the same (func, arg) cancels it.
//
// Returns 0; CW_ENOMEM when a fixed pool is exhausted or the table cannot grow; CW_ERANGE if
// the scheme refuses the deadline; CW_EINVAL for a NULL table or `func`.
//
// # Safety
//
// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
// cw_softclock for CPU 0.
int cw_timeout(cw_callouts *cw,
               cw_func func,
               void *arg,
               int64_t ticks);

// BSD's `untimeout(func, arg)`: cancels one pending cw_timeout of (func, arg). On
// CW_BACKING_HASHED and CW_BACKING_WHEEL it is found through a hash of (func, arg), and it is
// the oldest (set first); cancelling one that does not exist costs the same as one that
// does. On CW_BACKING_LIST it is 4.4BSD's search of the list from its head, which stops at
// the first match: the one due first (set first among equal deadlines).
//
// Returns 1 if one was cancelled (it will not run), 0 if none was pending; CW_EINVAL for a
// NULL table or `func`.
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_untimeout(cw_callouts *cw,
                 cw_func func,
                 void *arg);

// Costello and Varghese's `setcallout(func, arg, ticks)`: like cw_timeout, and stores in
// `*handle_out` a handle that cancels this callout and no other (cw_unsetcallout).
//
// The handle goes stale when the callout fires (before its handler runs) or is cancelled.
//
// Returns 0; CW_ENOMEM when a fixed pool is exhausted or the table cannot grow; CW_ERANGE if
// the scheme refuses the deadline; CW_EINVAL for a NULL table, `func` or `handle_out`
// (nothing is set).
//
// # Safety
//
// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a cw_handle;
// `func(arg)` is safe to call from the thread that will run cw_softclock for CPU 0.
int cw_setcallout(cw_callouts *cw,
                  cw_func func,
                  void *arg,
                  int64_t ticks,
                  cw_handle *handle_out);

// Costello and Varghese's `unsetcallout(handle)`: cancels the callout cw_setcallout
// returned `handle` for.
//
// Returns 1 if it was pending (it will not run); CW_ESTALE if it already fired or was
// cancelled, or the handle was never issued by this table; CW_EINVAL for a NULL table or a
// cw_callout_init handle.
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_unsetcallout(cw_callouts *cw,
                    cw_handle handle);

// The clock interrupt of CPU `cpu`: advances that CPU's tick by one, then runs its due
// CW_C_DIRECT_EXEC handlers (and ready drain calls) on this thread.
//
// Returns 1 if cw_softclock may have work on that CPU (always when a callout is due; on
// CW_BACKING_HASHED also when the next busy bucket holds only later turns' callouts, and
// cw_softclock then runs none), 0 if not (when nothing is due, the tick is processed right
// here: the paper's fast path); CW_EBUSY if another thread (or this one, from a handler) is
// running that CPU's handlers — the tick still advanced, and the direct handlers run at that
// thread's next cw_softclock; CW_EINVAL (NULL table, a CPU outside the table).
//
// # Safety
//
// `cw` is NULL or a live table (see the crate documentation).
int cw_hardclock(cw_callouts *cw,
                 int cpu);

// The tickless interrupt of CPU `cpu` (calloutng's callout_process): moves that CPU's tick
// to `now` in one step (a `now` at or before the current tick moves nothing), as the
// one-shot event timer armed from cw_callout_next_event fires, then runs its due
// CW_C_DIRECT_EXEC handlers (and ready drain calls) on this thread. With hz = 1000000000 a
// tick is a nanosecond, and the precision given to cw_callout_reset_sbt_on decides, on a
// CW_BACKING_WHEEL table, which callouts share an interrupt.
//
// Returns 1 if cw_softclock may have work on that CPU (as for cw_hardclock), 0 if not;
// CW_EBUSY as for cw_hardclock (the clock still moved); CW_EINVAL (NULL table, a CPU outside
// the table).
//
// # Safety
//
// `cw` is NULL or a live table (see the crate documentation).
int cw_callout_process(cw_callouts *cw,
                       int cpu,
                       uint64_t now);

// The event window of the callouts pending on CPU `cpu` (calloutng arms that CPU's one-shot
// event timer inside it): `first` is the earliest tick a pending callout runs at (its
// deadline, or for a callout with a window its firing instant, which callouts with
// overlapping windows share), `last` the earliest end of a window on CW_BACKING_WHEEL and
// `first` on the other backings; an interrupt anywhere in [first, last] runs each callout
// inside its window, and one at `last` coalesces the most. Both in that CPU's ticks;
// (current tick, current tick) when work is due now.
//
// Returns 1 with `first` and `last` filled; 0 when nothing is pending there; CW_EINVAL (a
// NULL argument, a CPU outside the table).
//
// # Safety
//
// `cw` is NULL or a live table; `first` and `last` are NULL or valid for writing a uint64_t.
int cw_callout_next_event(const cw_callouts *cw,
                          int cpu,
                          uint64_t *first,
                          uint64_t *last);

// The software interrupt of CPU `cpu`: runs every due handler of that CPU (and no other's),
// in expiry order (set order among equal expiries), until it has caught up with its clock,
// then makes each move to another CPU that waited for a handler to return.
//
// Handlers run with the table unlocked and may set or cancel any callout, the next due one
// included (a cancelled callout that has not started never runs).
//
// Returns the number of handlers and drain calls run (at most INT_MAX is reported);
// CW_EBUSY if another thread (or this one, from a handler) is already running that CPU's
// handlers; CW_EINVAL (NULL table, a CPU outside the table).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_softclock(cw_callouts *cw,
                 int cpu);

// Stores CPU `cpu`'s current tick (the kernel's `ticks`, advanced by cw_hardclock and
// cw_callout_process) in `*out`.
//
// Returns 0; CW_EINVAL (a NULL argument, a CPU outside the table).
//
// # Safety
//
// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
int cw_ticks(const cw_callouts *cw,
             int cpu,
             uint64_t *out);

// Stores the tick CPU `cpu`'s cw_softclock has processed up to (the kernel's `softticks`;
// equal to cw_ticks when caught up) in `*out`.
//
// Returns 0; CW_EINVAL (a NULL argument, a CPU outside the table).
//
// # Safety
//
// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
int cw_softticks(const cw_callouts *cw,
                 int cpu,
                 uint64_t *out);

// FreeBSD's `callout_init`, bound to CPU `cpu` (0 to ncpu - 1; -1 for CPU 0, where FreeBSD's
// `callout_init` puts a callout): a persistent callout, idle and inactive, whose handle is
// stored in `*handle_out`. It lives until cw_callout_free, and may be armed again and again
// (cw_callout_reset, cw_callout_reset_on, cw_callout_reset_sbt_on). The handle names the
// callout wherever it moves.
//
// Returns 0; CW_ENOMEM when that CPU's fixed pool is exhausted or the table cannot grow;
// CW_EINVAL (a NULL argument, a CPU outside the table).
//
// # Safety
//
// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a cw_handle.
int cw_callout_init(cw_callouts *cw,
                    int cpu,
                    cw_handle *handle_out);

// Returns a cw_callout_init record to the pool, cancelling it if pending; if its handler is
// running on another thread, waits for it to return first. The handle goes stale.
//
// Returns 0; CW_EDEADLK from the callout's own handler (nothing changes); CW_ESTALE,
// CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_free(cw_callouts *cw,
                    cw_handle handle);

// FreeBSD's `callout_reset(c, ticks, func, arg)`: (re)arms the callout to run `func(arg)`
// `ticks` ticks from now (`ticks` <= 0 counts as 1) and marks it active. A handler may
// re-arm its own callout. While a cw_callout_async_drain waits for the handler, the reset is
// ignored and returns 0 (as FreeBSD ignores resets of a callout being drained); so is
// cw_callout_reset_sbt_on.
//
// The callout stays on its CPU (a waiting move still goes where it was going).
//
// Returns 1 if the callout was pending (that arming is cancelled), 0 if not; CW_ESTALE;
// CW_ERANGE; CW_EINVAL (NULL table or `func`, cw_setcallout handle). On failure the
// callout keeps its previous arming.
//
// # Safety
//
// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
// cw_softclock for the callout's CPU.
int cw_callout_reset(cw_callouts *cw,
                     cw_handle handle,
                     int64_t ticks,
                     cw_func func,
                     void *arg);

// FreeBSD's `callout_reset_on(c, ticks, func, arg, cpu)`: (re)arms the callout to run
// `func(arg)` `ticks` ticks of CPU `cpu`'s clock from now (`ticks` <= 0 counts as 1), on
// that CPU's queue (-1: the callout's own CPU), moving it as cw_callout_reset_sbt_on does.
//
// Returns 1 if the callout was pending, 0 if not; CW_ESTALE; CW_ENOMEM (the new CPU's queue
// is full); CW_ERANGE; CW_EINVAL (NULL table or `func`, a CPU outside the table,
// cw_setcallout handle). On failure nothing changes.
//
// # Safety
//
// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that drives the
// callout's CPU.
int cw_callout_reset_on(cw_callouts *cw,
                        cw_handle handle,
                        int64_t ticks,
                        cw_func func,
                        void *arg,
                        int cpu);

// FreeBSD calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)`.
//
// - `sbt` (32.32 fixed-point seconds, see CW_SBT_1S) is relative to the current tick's
//   time, or absolute (since tick 0) with CW_C_ABSOLUTE. It is rounded up to a tick at the
//   table's hz (exactly: the ceiling of sbt * hz / 2^32); a relative time of 0 or less, or
//   an absolute time already passed, means the next tick. A deadline after UINT64_MAX is
//   CW_ERANGE.
// - The callout may run up to `precision` late, or the interval divided by 2^n with
//   CW_C_PREL(n) if that is larger (rounded down to whole ticks). Every backing runs it at
//   its window's firing instant, which callouts with overlapping windows share. Without
//   either, a relative time gets the table's default deviation (cw_callouts_set_deviation;
//   none on a new table: exact).
// - `flags`: CW_C_DIRECT_EXEC (run from cw_hardclock), CW_C_ABSOLUTE, CW_C_HARDCLOCK
//   (accepted, no effect), CW_C_PREL(n); any other bit is CW_EINVAL.
// - `cpu`: the CPU whose queue takes the callout (0 to ncpu - 1), or -1 for its own (while
//   a move waits, the CPU it goes to). Times count on the clock of the CPU that takes the
//   callout, from when it takes it (for a deferred move, when the handler returns).
//
// A callout that is idle or pending moves at once: it is cancelled on its old CPU and armed
// on the new one, and only the new CPU's processing runs it. If its handler is running, the
// move is deferred until the handler returns (a handler may move its own callout): until
// then cw_callout_cpu still names the old CPU and cw_callout_pending says 1; a later reset
// replaces the arming the move makes, cw_callout_stop cancels it. If the new CPU's queue
// cannot take the callout when the handler returns (full, or out of range), it is armed on
// its old CPU instead.
//
// Returns 1 if the callout was pending (a waiting move counts), 0 if not; CW_ESTALE (a
// handle this table did not issue, or freed); CW_ENOMEM (the new CPU's queue is full);
// CW_ERANGE; CW_EINVAL (NULL table or `func`, bad flags, a CPU outside the table,
// cw_setcallout handle). On failure nothing changes.
//
// # Safety
//
// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that drives the
// callout's CPU (its cw_softclock, or its cw_hardclock with CW_C_DIRECT_EXEC).
int cw_callout_reset_sbt_on(cw_callouts *cw,
                            cw_handle handle,
                            int64_t sbt,
                            int64_t precision,
                            cw_func func,
                            void *arg,
                            int cpu,
                            int flags);

// FreeBSD's `callout_stop`: cancels the callout if pending (or waiting to move) and clears
// its active flag. Does not wait for a running handler (see cw_callout_drain).
//
// Returns 1 if it was pending, 0 if not; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout
// handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_stop(cw_callouts *cw,
                    cw_handle handle);

// FreeBSD's `callout_drain`: cw_callout_stop, and if the handler is running on another
// thread, waits until it returns.
//
// Returns 1 if the callout was pending, 0 if not; CW_EDEADLK from the callout's own handler
// (nothing changes); CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_drain(cw_callouts *cw,
                     cw_handle handle);

// FreeBSD's `callout_async_drain(c, drain)`: stops the callout without waiting for its
// handler.
//
// - If the handler is running (on another thread, or this is called from the handler
//   itself), `drain(arg)` is called once, with the argument the callout was last armed
//   with, on the thread that ran the handler, right after the handler returns (from that
//   cw_softclock or cw_hardclock call). Any pending arming or waiting move is cancelled,
//   and resets are ignored until the handler has returned, so when `drain` runs the
//   callout is neither pending nor running: `drain` may cw_callout_free it.
// - Otherwise the callout is stopped as by cw_callout_stop and `drain` is never called.
//
// Returns CW_ASYNC_DRAIN_PENDING (0) when `drain` will be called; CW_ASYNC_DRAIN_CANCELLED
// (1) when it will not and a pending firing was cancelled; CW_ASYNC_DRAIN_IDLE (2) when it
// will not and nothing was pending. Errors: CW_EBUSY when a drain already waits for the
// running handler; CW_ENOMEM; CW_ESTALE; CW_EINVAL (NULL table or `drain`, cw_setcallout
// handle). On error nothing changes.
//
// # Safety
//
// `cw` is NULL or a live table; `drain(arg)` is safe to call from the thread that drives the
// callout's CPU.
int cw_callout_async_drain(cw_callouts *cw,
                           cw_handle handle,
                           cw_func drain);

// FreeBSD's `callout_pending`: 1 if the callout is armed and its handler has not been
// started (a move waiting for the handler counts), 0 if not; CW_ESTALE; CW_EINVAL (NULL
// table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_pending(const cw_callouts *cw,
                       cw_handle handle);

// FreeBSD's `callout_active`: 1 if the callout was armed and not since stopped or
// deactivated, 0 if not (running does not clear it, so a handler can tell whether it was
// stopped after it was started); CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_active(const cw_callouts *cw,
                      cw_handle handle);

// FreeBSD's `callout_deactivate`: clears the active flag (a handler does this first).
//
// Returns 0; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_deactivate(cw_callouts *cw,
                          cw_handle handle);

// The CPU whose queue holds the callout now (the only one whose processing can run it): 0 to
// ncpu - 1. While a move waits for the handler to return, the old CPU.
//
// Returns the CPU; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_cpu(const cw_callouts *cw,
                   cw_handle handle);

// calloutng's `C_PREL(n)` for cw_callout_reset_sbt_on's flags: the callout may run up to
// its interval / 2^n late. `n` is 0 to CW_C_PREL_MAX; any other `n` gives CW_EINVAL, which
// cw_callout_reset_sbt_on refuses as a flag. The macro CW_C_PREL(n) is the same for valid n.
int cw_c_prel(int n);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* CALLWHEEL_H */
