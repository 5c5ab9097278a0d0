//! The timer-module model of Varghese & Lauck and every scheme of their paper.
//!
//! Varghese & Lauck (section 2) reduce any timer facility to four routines:
//!
//! | paper                 | here                                   |
//! |-----------------------|----------------------------------------|
//! | `STARTTIMER`          | [`Timers::start`]                      |
//! | `STOPTIMER`           | [`Timers::stop`]                       |
//! | `PERTICKBOOKKEEPING`  | [`Scheme::advance`] (moving the clock) |
//! | `EXPIRYPROCESSING`    | the `on_expire` callback of `advance`  |
//!
//! Every structure in this module implements the same two traits, so the conformance suite, the
//! benchmarks and the callout layer run unchanged on any of them:
//!
//! | scheme | module | start | stop | per tick | exact |
//! |---|---|---|---|---|---|
//! | 1 straightforward | [`straightforward`] | O(1) | O(1) | O(n) | yes |
//! | 2 ordered list | [`ordered_list`] | O(n) | O(1) | O(1) | yes |
//! | 2 BSD `calltodo` | [`differential_list`] | O(n) | O(1) | O(1)+overdue | yes |
//! | 3 binary heap | [`binary_heap`] | O(log n) | O(log n) | O(1) | yes |
//! | 3 balanced tree | [`balanced_tree`] | O(log n) | O(log n) | O(1) | yes |
//! | 4 basic wheel | [`basic_wheel`] | O(1) | O(1) | O(1) | yes |
//! | 5 hashed, sorted | [`hashed_wheel_sorted`] | O(1) avg | O(1) | O(1) | yes |
//! | 6 hashed, unsorted | [`hashed_wheel`] | O(1) | O(1) | O(n/size) avg | yes |
//! | 7 hierarchical | [`hierarchical_wheel`] | O(levels) | O(1) | O(1) amortized | by mode |
//! | Brown's calendar queue | [`calendar_queue`] | O(1) avg | O(1) avg | O(1) avg | yes |
//!
//! # Time and the cursor
//!
//! A scheme counts time in [`Tick`]s and starts at tick 0. It keeps a *cursor*, the last tick whose
//! timers it has processed (Costello's `softticks`), and a *target*, the latest `now` it was asked
//! to reach (Costello's `ticks`). [`Timers::now`] returns the cursor; outside `advance`, after an
//! advance that completed, the cursor equals the target.
//!
//! A deadline at or before the cursor is *overdue*: such a timer is queued in start order and
//! fires in the next *drain* of that queue, before the cursor moves on. Drains run at the start of
//! each `advance` call and after each tick: a timer started between calls fires at the start of
//! the next call; one a callback starts while a tick is processed fires right after that tick, at
//! the same tick. A drain fires only the timers queued before it began, so a callback that keeps
//! re-arming itself in the past fires once per drain instead of live-locking `advance`; a budget
//! that interrupts a drain resumes it, not a new one.
//!
//! # Budgets
//!
//! `advance` takes a [`Budget`] of steps (Costello's `MAX_SOFTCLOCK_STEPS`). A step is one tick
//! moved over or one timer examined, moved or fired. When the budget runs out, `advance` returns
//! with [`Progress::complete`] false and the exact position saved; the next call resumes there,
//! losing and repeating nothing.

pub(crate) mod arena;
pub mod balanced_tree;
pub mod basic_wheel;
pub mod binary_heap;
mod busy;
pub mod calendar_queue;
pub(crate) mod clock;
pub mod differential_list;
mod hashed;
pub mod hashed_wheel;
pub mod hashed_wheel_sorted;
pub mod hierarchical_wheel;
pub mod ordered_list;
pub mod straightforward;

use core::fmt;

pub use crate::handle::{Handle, Owner};
pub use crate::time::Tick;

/// Why a timer could not be started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The deadline is further ahead than the structure can represent (Scheme 4's
    /// `MaxInterval`, the top of a bounded hierarchy). `max` is the latest deadline it accepts
    /// from the current cursor.
    BeyondRange {
        /// The deadline that was asked for.
        expiry: Tick,
        /// The latest deadline the structure accepts right now.
        max: Tick,
    },
    /// A constructor was given a configuration it cannot build (the reason says which limit).
    Config {
        /// What is wrong with the configuration.
        reason: &'static str,
    },
    /// A periodic timer was asked for with a period of zero.
    ZeroPeriod,
    /// The structure was given a fixed capacity and every slot holds a pending timer.
    Full {
        /// The fixed capacity.
        capacity: usize,
    },
    /// The structure had to grow to take the timer and the allocator refused the memory.
    /// Nothing changed: every timer already started is still there.
    NoMemory,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::BeyondRange { expiry, max } => write!(
                f,
                "deadline {expiry} is beyond the structure's range (latest accepted now: {max})"
            ),
            Error::Config { reason } => write!(f, "invalid configuration: {reason}"),
            Error::ZeroPeriod => write!(f, "a periodic timer needs a period of at least one tick"),
            Error::Full { capacity } => {
                write!(f, "all {capacity} timer slots are in use (fixed capacity)")
            }
            Error::NoMemory => write!(f, "out of memory: the structure could not grow"),
        }
    }
}

impl core::error::Error for Error {}

/// How much work one call to [`Scheme::advance`] may do before it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget(u64);

impl Budget {
    /// No limit: `advance` returns only when every due timer has fired.
    pub const UNLIMITED: Budget = Budget(u64::MAX);

    /// At most `steps` steps (a tick moved over, or a timer examined, moved or fired). Zero is
    /// taken as one, so every call makes progress.
    pub const fn steps(steps: u64) -> Budget {
        Budget(if steps == 0 { 1 } else { steps })
    }

    /// The number of steps allowed.
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// What one call to [`Scheme::advance`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[must_use]
pub struct Progress {
    /// How many timers fired during the call.
    pub fired: usize,
    /// How many steps the call took.
    pub steps: u64,
    /// `true` when the cursor reached the target and every due timer fired; `false` when the
    /// budget ran out first (call `advance` again to resume).
    pub complete: bool,
}

/// One timer handed to the expiry callback.
#[derive(Debug)]
pub struct Expired<T> {
    /// The handle `start` returned. A one-shot timer's is already stale when the callback runs;
    /// a periodic timer's stays valid (it has been re-armed), so the callback can stop it.
    pub handle: Handle,
    /// The deadline the timer fired for.
    pub deadline: Tick,
    /// The value the timer was started with (a copy, for a periodic timer).
    pub value: T,
    /// For a periodic timer, the whole periods this firing missed (see
    /// [`Missed`](crate::wheel::Missed)); 0 for a one-shot timer.
    pub overruns: u64,
}

/// The operations allowed at any time, including from inside an expiry callback.
///
/// Inside a callback the structure is in a consistent state: the firing timer has already been
/// removed, and stopping or starting any timer, the next one in the same bucket included, is safe
/// (Costello's `nextsoftcheck` discipline).
pub trait Timers<T> {
    /// STARTTIMER: arms a timer that fires at the first tick at or after `expiry` that `advance`
    /// processes. A deadline at or before [`Timers::now`] is overdue: it fires in the next drain
    /// (see the [module documentation](self)), without the clock moving.
    fn start(&mut self, expiry: Tick, value: T) -> Result<Handle, Error>;

    /// STOPTIMER: cancels a pending timer and gives its value back. Returns `None`, touching
    /// nothing, for a handle whose timer already fired or was stopped, or that was never issued.
    fn stop(&mut self, handle: Handle) -> Option<T>;

    /// The cursor: the last tick whose timers have been processed (inside a callback, the tick
    /// being processed).
    fn now(&self) -> Tick;

    /// How many timers are pending.
    fn len(&self) -> usize;

    /// `true` when no timer is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The earliest tick at which `advance` has work: never later than the tick at which the
    /// first pending timer fires (its deadline, for an exact scheme), possibly earlier for a
    /// coarse structure (a bucket or cascade boundary). `None` when nothing is pending.
    fn next_expiry(&self) -> Option<Tick>;

    /// Bytes of memory the structure holds for its timers and buckets (capacity, not just use).
    fn memory_bytes(&self) -> usize;
}

/// A complete timer module: [`Timers`] plus the clock (PERTICKBOOKKEEPING and EXPIRYPROCESSING).
pub trait Scheme<T>: Timers<T> {
    /// Moves the clock to `now` and fires, in deadline order (start order among equal deadlines
    /// where the scheme promises it), every timer that is due, calling `on_expire` for each.
    ///
    /// A `now` earlier than a previous target is ignored (time never goes backwards); the call
    /// then only finishes work left over by an earlier budgeted call. Stops after `budget` steps
    /// and reports whether it finished.
    ///
    /// A callback that panics ends the call (the panic reaches the caller) with the structure
    /// consistent: the timer whose callback panicked has fired (a periodic one is re-armed),
    /// and the next call resumes exactly as after a budget ran out at that timer.
    fn advance<F>(&mut self, now: Tick, budget: Budget, on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>);

    /// Verifies every internal invariant by brute force (O(n) or worse): the lists, the busy
    /// marks, the slab and the clock. For tests and debugging; `Err` names the broken invariant.
    fn check_invariants(&self) -> Result<(), &'static str>;
}

/// Counts the steps of one `advance` call against its budget.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meter {
    left: u64,
    pub(crate) progress: Progress,
}

impl Meter {
    pub(crate) fn new(budget: Budget) -> Meter {
        Meter {
            left: budget.get(),
            progress: Progress::default(),
        }
    }

    /// Takes one step; `false` when the budget is already spent and the caller must return.
    #[inline]
    pub(crate) fn step(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        self.progress.steps += 1;
        true
    }

    #[inline]
    pub(crate) fn fired(&mut self) {
        self.progress.fired += 1;
    }

    pub(crate) fn finish(mut self, complete: bool) -> Progress {
        self.progress.complete = complete;
        self.progress
    }
}
