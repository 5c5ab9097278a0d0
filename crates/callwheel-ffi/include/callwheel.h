/*
 * callwheel's C API: the BSD kernel's callout interfaces (timeout/untimeout,
 * setcallout/unsetcallout and FreeBSD's callout_reset_sbt_on family) for C programs.
 *
 * A table (cw_callouts) is one CPU's callout queue on one of three timer schemes:
 * CW_BACKING_LIST, the old BSD callout (a differential list: O(n) to set a callout);
 * CW_BACKING_HASHED, Costello and Varghese's callwheel (Scheme 6, a hashed wheel of 2^bits
 * buckets, bits sized from calloutsize between 8 and 20); and CW_BACKING_WHEEL, callwheel's
 * production hierarchical wheel, which also uses the precision of callout_reset_sbt_on to
 * coalesce callouts.
 *
 * Conventions:
 *
 * - Every function returns int: 0, or a non-negative result (1/0 for "was it pending", a
 *   count), on success; a negative CW_E* code on failure. cw_strerror describes a code.
 *   A failed call changes nothing, except that cw_hardclock advances the clock even when it
 *   reports CW_EBUSY.
 * - Pointer arguments are checked for NULL (CW_EINVAL), and so are function pointers. Any
 *   other pointer must be valid: a table from cw_callouts_new not yet freed, out-pointers
 *   to writable, aligned storage.
 * - Time moves only by cw_hardclock, one tick per call. A callout set for n ticks at tick t
 *   runs in the first cw_softclock after the cw_hardclock that reaches tick t + n; n <= 0
 *   counts as 1, as in BSD. Equal expiries run in the order they were set.
 * - Handlers run on the thread calling cw_softclock (or cw_hardclock, for CW_C_DIRECT_EXEC
 *   callouts) with the table unlocked, so a handler may call any function on its own table
 *   except cw_callouts_free. Several threads may share a table; one runs cw_softclock at a
 *   time (another gets CW_EBUSY). func(arg) must be safe to call on that thread.
 * - Handles (uint64_t) name a callout record and its generation: a handle kept after its
 *   callout fired or was freed gets CW_ESTALE, and never touches the record's next user.
 * - No Rust panic crosses this boundary: should one happen inside the library, the call
 *   returns CW_EPANIC.
 *
 * Example:
 *
 * ```c
 * #include <stdio.h>
 * #include "callwheel.h"
 *
 * static void retransmit(void *arg) { printf("retransmit %s\n", (const char *)arg); }
 *
 * int main(void) {
 *     cw_callouts *cw;
 *     int rc = cw_callouts_new(CW_BACKING_HASHED, 1024, 0, 1000, &cw);
 *     if (rc < 0) { fprintf(stderr, "%s\n", cw_strerror(rc)); return 1; }
 *
 *     cw_timeout(cw, retransmit, "segment 7", 3);         // by (func, arg)
 *     uint64_t keepalive;
 *     cw_callout_init(cw, &keepalive);                    // FreeBSD's struct callout
 *     cw_callout_reset_sbt_on(cw, keepalive, 2 * CW_SBT_1S, 0, retransmit, "keepalive",
 *                             -1, CW_C_PREL(3));
 *
 *     for (int i = 0; i < 3000; i++)
 *         if (cw_hardclock(cw) > 0)                        // the clock interrupt
 *             cw_softclock(cw);                            // runs due handlers
 *
 *     cw_callout_drain(cw, keepalive);
 *     cw_callout_free(cw, keepalive);
 *     cw_callouts_free(cw);
 *     return 0;
 * }
 * ```
 *
 * Linking: the static library libcallwheel_ffi.a needs -lpthread -ldl -lm (glibc); the
 * shared library libcallwheel_ffi.so needs nothing more.
 *
 * Generated from crates/callwheel-ffi by cbindgen (build.rs): do not edit.
 */

#ifndef CALLWHEEL_H
#define CALLWHEEL_H

#include <stddef.h>
#include <stdint.h>
/**
 * calloutng's C_PREL(n) as a constant expression, for n from 0 to CW_C_PREL_MAX
 * (the same value as cw_c_prel(n)).
 */
#define CW_C_PREL(n) ((int)((((unsigned)(n) + 1u) & 0x7fu) << 1))


// Backing scheme: the old BSD callout, a differential list (setting a callout is O(n)).
#define CW_BACKING_LIST 0

// Backing scheme: Costello and Varghese's callwheel, Scheme 6 (a hashed wheel of 2^bits
// unsorted buckets, with bits = ceil(log2(calloutsize)) kept between 8 and 20).
#define CW_BACKING_HASHED 1

// Backing scheme: callwheel's production hierarchical wheel (coalesces callouts within the
// precision given to cw_callout_reset_sbt_on).
#define CW_BACKING_WHEEL 2

// Success.
#define CW_OK 0

// Invalid argument: a NULL table, out-pointer or function; an unknown backing; unknown
// flag bits or a cpu other than 0 or -1; a handle of the wrong kind (a cw_setcallout handle
// given to a cw_callout_* function or the other way round); hz of 0 or a fixed pool of 0
// records. Equal to -EINVAL on Linux.
#define CW_EINVAL (0 - 22)

// A fixed pool of callout records is exhausted (the 1995 kernel panicked here). Equal to
// -ENOMEM on Linux.
#define CW_ENOMEM (0 - 12)

// The handle names no live callout: it already fired (cw_setcallout), was cancelled or
// freed, or was never issued by this table. Equal to -ESTALE on Linux.
#define CW_ESTALE (0 - 116)

// cw_callout_drain or cw_callout_free from the callout's own handler: waiting for the
// handler would never return. Nothing changed. Equal to -EDEADLK on Linux.
#define CW_EDEADLK (0 - 35)

// cw_softclock or cw_hardclock while another thread (or the caller, from a handler) is
// already running handlers of this table; or a callout's record is in use by its running
// handler. Equal to -EBUSY on Linux.
#define CW_EBUSY (0 - 16)

// The backing scheme refused the deadline (it is beyond the range the scheme can hold).
// Equal to -ERANGE on Linux.
#define CW_ERANGE (0 - 34)

// A bug inside callwheel: a Rust panic was caught at the boundary. The table is still
// usable (every change is complete before any code that can panic runs), but the failing
// call's effect is unknown. Not an errno value.
#define CW_EPANIC (0 - 1000)

// Flag for cw_callout_reset_sbt_on: run the handler from cw_hardclock itself (the clock
// interrupt) instead of from cw_softclock.
#define CW_C_DIRECT_EXEC 1

// Flag for cw_callout_reset_sbt_on, accepted for compatibility: times are already rounded
// to the table's ticks.
#define CW_C_HARDCLOCK 256

// Flag for cw_callout_reset_sbt_on: the time is absolute (since tick 0), not relative to
// the current tick. A time already passed runs at the next cw_softclock.
#define CW_C_ABSOLUTE 512

// The largest n accepted by cw_c_prel and CW_C_PREL.
#define CW_C_PREL_MAX 126

// One second in sbintime_t units (32.32 fixed point, as FreeBSD's SBT_1S).
#define CW_SBT_1S 4294967296

// One millisecond in sbintime_t units (SBT_1S / 1000, truncated, as FreeBSD's SBT_1MS).
#define CW_SBT_1MS 4294967

// One microsecond in sbintime_t units (SBT_1S / 1000000, truncated, as FreeBSD's SBT_1US).
#define CW_SBT_1US 4294

// One nanosecond in sbintime_t units (SBT_1S / 1000000000, truncated, as FreeBSD's SBT_1NS).
#define CW_SBT_1NS 4

// A callout table: one CPU's callout queue, shareable between threads. Opaque: made by
// cw_callouts_new, destroyed by cw_callouts_free.
typedef struct cw_callouts cw_callouts;

// A callout handler: called once with the argument it was set with.
typedef void (*cw_func)(void *arg);

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Creates a callout table.
//
// - `backing`: CW_BACKING_LIST, CW_BACKING_HASHED or CW_BACKING_WHEEL.
// - `calloutsize`: callout records allocated now (the kernel's calloutsize; below 2^32 - 1).
// - `fixed`: non-zero to never allocate more (calls needing another record then fail with
//   CW_ENOMEM); zero to let the pool double when it runs out.
// - `hz`: ticks per second, to convert cw_callout_reset_sbt_on's times (at least 1).
// - `out`: receives the table, or NULL on failure.
//
// Returns 0, or CW_EINVAL (NULL `out`, unknown backing, hz of 0, fixed pool of 0 records,
// calloutsize too large).
//
// # Safety
//
// `out` is NULL or valid for writing a pointer.
int cw_callouts_new(int backing,
                    size_t calloutsize,
                    int fixed,
                    uint32_t hz,
                    cw_callouts **out);

// Destroys a table and every callout in it (pending handlers never run). NULL is ignored.
//
// # Safety
//
// `cw` is NULL or a table from cw_callouts_new, not yet freed, on which no other call is in
// progress (on any thread, including from a handler); it must not be used afterwards.
void cw_callouts_free(cw_callouts *cw);

// The clock interrupt: advances the table's tick by one, then runs the due
// CW_C_DIRECT_EXEC handlers on this thread.
//
// Returns 1 if cw_softclock has work, 0 if not (when nothing is due, the tick is processed
// right here: the paper's fast path); CW_EBUSY if another thread (or this one, from a
// handler) is running handlers — the tick still advanced, and the direct handlers run at
// that thread's next cw_softclock; CW_EINVAL for NULL.
//
// # Safety
//
// `cw` is NULL or a live table (see the crate documentation).
int cw_hardclock(cw_callouts *cw);

// The software interrupt: runs every due handler, in expiry order (set order among equal
// expiries), until the table has caught up with cw_hardclock.
//
// Handlers run with the table unlocked and may set or cancel any callout, the next due one
// included (a cancelled callout that has not started never runs).
//
// Returns the number of handlers run (at most INT_MAX is reported); CW_EBUSY if another
// thread (or this one, from a handler) is already running handlers; CW_EINVAL for NULL.
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_softclock(cw_callouts *cw);

// Stores the current tick (the kernel's `ticks`, advanced by cw_hardclock) in `*out`.
//
// Returns 0, or CW_EINVAL for a NULL argument.
//
// # Safety
//
// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
int cw_ticks(const cw_callouts *cw,
             uint64_t *out);

// Stores the tick cw_softclock has processed up to (the kernel's `softticks`; equal to
// cw_ticks when caught up) in `*out`.
//
// Returns 0, or CW_EINVAL for a NULL argument.
//
// # Safety
//
// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
int cw_softticks(const cw_callouts *cw,
                 uint64_t *out);

// BSD's `timeout(func, arg, ticks)`: runs `func(arg)` `ticks` ticks from now (`ticks` <= 0
// counts as 1). Only cw_untimeout with the same (func, arg) cancels it.
//
// Returns 0; CW_ENOMEM when a fixed pool is exhausted; CW_ERANGE if the scheme refuses the
// deadline; CW_EINVAL for a NULL table or `func`.
//
// # Safety
//
// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
// cw_softclock.
int cw_timeout(cw_callouts *cw,
               cw_func func,
               void *arg,
               int64_t ticks);

// BSD's `untimeout(func, arg)`: cancels the oldest pending cw_timeout of (func, arg).
// Cancelling one that does not exist costs the same as one that does.
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
// Returns 0; CW_ENOMEM when a fixed pool is exhausted; CW_ERANGE if the scheme refuses the
// deadline; CW_EINVAL for a NULL table, `func` or `handle_out` (nothing is set).
//
// # Safety
//
// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a uint64_t;
// `func(arg)` is safe to call from the thread that will run cw_softclock.
int cw_setcallout(cw_callouts *cw,
                  cw_func func,
                  void *arg,
                  int64_t ticks,
                  uint64_t *handle_out);

// Costello and Varghese's `unsetcallout(handle)`: cancels the callout cw_setcallout
// returned `handle` for.
//
// Returns 1 if it was pending (it will not run); CW_ESTALE if it already fired or was
// cancelled, or the handle was never issued; CW_EINVAL for a NULL table or a cw_callout_init
// handle.
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_unsetcallout(cw_callouts *cw,
                    uint64_t handle);

// FreeBSD's `callout_init`: a persistent callout record, idle and inactive, whose handle is
// stored in `*handle_out`. It lives until cw_callout_free, and may be armed again and again
// (cw_callout_reset, cw_callout_reset_sbt_on).
//
// Returns 0; CW_ENOMEM when a fixed pool is exhausted; CW_EINVAL for a NULL argument.
//
// # Safety
//
// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a uint64_t.
int cw_callout_init(cw_callouts *cw,
                    uint64_t *handle_out);

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
                    uint64_t handle);

// FreeBSD's `callout_reset(c, ticks, func, arg)`: (re)arms the callout to run `func(arg)`
// `ticks` ticks from now (`ticks` <= 0 counts as 1) and marks it active. A handler may
// re-arm its own callout.
//
// Returns 1 if the callout was pending (that arming is cancelled), 0 if not; CW_ESTALE;
// CW_ERANGE; CW_EINVAL (NULL table or `func`, cw_setcallout handle). On failure the
// callout keeps its previous arming.
//
// # Safety
//
// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
// cw_softclock.
int cw_callout_reset(cw_callouts *cw,
                     uint64_t handle,
                     int64_t ticks,
                     cw_func func,
                     void *arg);

// FreeBSD calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)`.
//
// - `sbt` (32.32 fixed-point seconds, see CW_SBT_1S) is relative to the current tick's
//   time, or absolute (since tick 0) with CW_C_ABSOLUTE. It is rounded up to a tick at the
//   table's hz; a relative time of 0 or less means the next tick, an absolute time already
//   passed runs at the next cw_softclock.
// - The callout may run up to `precision` late, or the interval divided by 2^n with
//   CW_C_PREL(n) if that is larger (rounded down to whole ticks; only CW_BACKING_WHEEL
//   uses it).
// - `flags`: CW_C_DIRECT_EXEC (run from cw_hardclock), CW_C_ABSOLUTE, CW_C_HARDCLOCK
//   (accepted, no effect), CW_C_PREL(n); any other bit is CW_EINVAL.
// - `cpu` must be 0 or -1 (a table is one CPU's queue).
//
// Returns 1 if the callout was pending, 0 if not; CW_ESTALE; CW_ERANGE; CW_EINVAL (NULL
// table or `func`, bad flags or cpu, cw_setcallout handle). On failure nothing changes.
//
// # Safety
//
// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
// cw_softclock (or cw_hardclock, with CW_C_DIRECT_EXEC).
int cw_callout_reset_sbt_on(cw_callouts *cw,
                            uint64_t handle,
                            int64_t sbt,
                            int64_t precision,
                            cw_func func,
                            void *arg,
                            int cpu,
                            int flags);

// FreeBSD's `callout_stop`: cancels the callout if pending and clears its active flag. Does
// not wait for a running handler (see cw_callout_drain).
//
// Returns 1 if it was pending, 0 if not; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout
// handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_stop(cw_callouts *cw,
                    uint64_t handle);

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
                     uint64_t handle);

// FreeBSD's `callout_pending`: 1 if the callout is armed and its handler has not been
// started, 0 if not; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_pending(const cw_callouts *cw,
                       uint64_t handle);

// FreeBSD's `callout_active`: 1 if the callout was armed and not since stopped or
// deactivated, 0 if not (running does not clear it, so a handler can tell whether it was
// stopped after it was started); CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_active(const cw_callouts *cw,
                      uint64_t handle);

// FreeBSD's `callout_deactivate`: clears the active flag (a handler does this first).
//
// Returns 0; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
//
// # Safety
//
// `cw` is NULL or a live table.
int cw_callout_deactivate(cw_callouts *cw,
                          uint64_t handle);

// calloutng's `C_PREL(n)` for cw_callout_reset_sbt_on's flags: the callout may run up to
// its interval / 2^n late. `n` is 0 to CW_C_PREL_MAX; any other `n` gives CW_EINVAL, which
// cw_callout_reset_sbt_on refuses as a flag. The macro CW_C_PREL(n) is the same for valid n.
int cw_c_prel(int n);

// A static, NUL-terminated description of a code returned by this library (any
// non-negative value is a success). Never NULL; unknown codes get a generic text.
const char *cw_strerror(int code);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* CALLWHEEL_H */
