//! The timer-module model of Varghese & Lauck (section 2) and the types every timer structure
//! of the project shares: the [`Timers`] and [`Scheme`] traits, [`Error`], [`Budget`] with its
//! step [`Meter`], [`Progress`] and the [`Expired`] record. The crate documentation describes
//! the model (the cursor, the overdue queue and its drains, budgets).

use core::fmt;

use crate::handle::Handle;
use crate::time::Tick;

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
    /// `true` when the cursor reached the target and every timer due when the call's last
    /// drain began fired (a periodic timer whose firing re-arms it in the past, as a Burst
    /// timer started periods late is, waits for the next call's drain); `false` when the
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
    /// [`Missed`](crate::Missed)); 0 for a one-shot timer.
    pub overruns: u64,
}

impl<T> Expired<T> {
    /// A one-shot timer's firing: `handle` (already stale), the `deadline` it fired for and its
    /// `value`, with no overruns. What a structure without periodic timers hands its callback.
    ///
    /// ```
    /// use callwheel::{Expired, Handle};
    ///
    /// let e = Expired::one_shot(Handle::from_parts(7, 1), 100, "done");
    /// assert_eq!((e.deadline, e.value, e.overruns), (100, "done", 0));
    /// ```
    pub fn one_shot(handle: Handle, deadline: Tick, value: T) -> Expired<T> {
        Expired {
            handle,
            deadline,
            value,
            overruns: 0,
        }
    }
}

/// The operations allowed at any time, including from inside an expiry callback.
///
/// Inside a callback the structure is in a consistent state: the firing timer has already been
/// removed, and stopping, starting or resetting any timer, the next one in the same bucket
/// included, is safe (Costello's `nextsoftcheck` discipline). The callback's own handle is
/// stale for a one-shot timer (a reset answers `None`); a periodic timer has already been
/// re-armed for its next period, which a reset moves.
pub trait Timers<T> {
    /// STARTTIMER: arms a timer that fires at the first tick at or after `expiry` that `advance`
    /// processes. A deadline at or before [`Timers::now`] is overdue: it fires in the next drain
    /// (see the [crate documentation](crate#time-and-the-cursor)), without the clock moving.
    /// (A timer with a window is overdue by its firing instant: see [`Timers::start_with`].)
    fn start(&mut self, expiry: Tick, value: T) -> Result<Handle, Error>;

    /// Starts a timer with the window `[deadline, deadline + tolerance]` (calloutng's
    /// precision): it may fire anywhere in the window. The production wheel keeps the window
    /// and coalesces wake-ups within it (`next_wakeup`); every other structure is exact, and
    /// the default here is [`Timers::start`], which fires at the deadline, inside the window.
    /// The production wheel fires such a timer at its [`firing_instant`](crate::firing_instant),
    /// which is what decides whether it is overdue: a deadline already passed whose instant
    /// is still ahead waits for that instant, inside its window.
    fn start_with(&mut self, deadline: Tick, tolerance: Tick, value: T) -> Result<Handle, Error> {
        let _ = tolerance;
        self.start(deadline, value)
    }

    /// STOPTIMER: cancels a pending timer and gives its value back. Returns `None`, touching
    /// nothing, for a handle whose timer already fired or was stopped, or that was never issued.
    fn stop(&mut self, handle: Handle) -> Option<T>;

    /// Moves a pending timer to the window `[deadline, deadline + tolerance]` and returns its
    /// previous deadline. The timer keeps its handle and its value; among equal deadlines it
    /// now counts as started last. A deadline at or before [`Timers::now`] makes it overdue, as
    /// for `start` (a window: its firing instant, as for `start_with`). Returns `None`, touching nothing, for a stale or foreign handle, and for a
    /// deadline beyond a bounded structure's range (where `start` would answer
    /// [`Error::BeyondRange`]; [`Timers::contains`] tells the two apart).
    ///
    /// The exact structures of the family ignore the tolerance, as [`Timers::start_with`] does,
    /// and implement reset as a stop and a start that keep the timer's slot (and so its
    /// handle); the production wheel moves the timer in O(1) and skips the relinking when it
    /// stays the last timer of its slot.
    fn reset(&mut self, handle: Handle, deadline: Tick, tolerance: Tick) -> Option<Tick>;

    /// The deadline of the pending timer `handle` names (a periodic timer's next one); `None`
    /// for a stale or foreign handle.
    fn deadline(&self, handle: Handle) -> Option<Tick>;

    /// `true` while the timer `handle` names is pending: started, and neither fired (a periodic
    /// timer stays pending until stopped) nor stopped.
    fn contains(&self, handle: Handle) -> bool {
        self.deadline(handle).is_some()
    }

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

    /// Whether a timer may expire at tick `t`: `false` only when none has its deadline at `t`
    /// (on the production wheel, a timer with a window its firing instant) and none is overdue. A clock interrupt that runs every tick asks it once per tick, as
    /// 4.4BSD's `hardclock` looks at the next tick's bucket alone: a hashed structure answers
    /// from that one bucket in constant time (possibly `true` for a bucket holding only later
    /// rotations) where [`Timers::next_expiry`] would search. The default is
    /// `next_expiry() <= max(t, now())` (an overdue timer makes it `true` for any `t`, a `t`
    /// before the cursor included), which is never `false` wrongly.
    fn may_expire_at(&self, t: Tick) -> bool {
        let t = t.max(self.now());
        self.next_expiry().is_some_and(|e| e <= t)
    }

    /// The instant a driver should next call `advance`: never later than the end of any
    /// pending timer's window ([`Timers::start_with`]). `None` when nothing is pending.
    ///
    /// The default is [`Timers::next_expiry`], right for every structure that fires a timer at
    /// its deadline; the production wheel answers with the earliest window end, which is how
    /// timers whose windows overlap share one wake-up (the same as the earliest deadline for
    /// timers started without tolerance).
    fn next_wakeup(&self) -> Option<Tick> {
        self.next_expiry()
    }

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

    /// [`Scheme::advance`] without a budget: moves the clock to `now`, fires every due timer and
    /// returns how many fired.
    fn advance_to<F>(&mut self, now: Tick, on_expire: F) -> usize
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        self.advance(now, Budget::UNLIMITED, on_expire).fired
    }
}

/// Counts the steps of one `advance` call against its [`Budget`], and what the call did.
///
/// Every [`Scheme::advance`] of the project keeps its budget with one: [`Meter::step`] before
/// each step (a tick moved over, a timer examined, moved or fired), returning when it says the
/// budget is spent; [`Meter::fired`] for each callback; [`Meter::finish`] for the [`Progress`]
/// to return. Public so that structures outside this crate (the scheme family, the benchmark
/// peers) account for steps the same way.
///
/// ```
/// use callwheel::{Budget, Meter};
///
/// let mut meter = Meter::new(Budget::steps(2));
/// assert!(meter.step());
/// meter.fired();
/// assert!(meter.step());
/// assert!(!meter.step(), "the budget is spent");
/// let p = meter.finish(false);
/// assert_eq!((p.steps, p.fired, p.complete), (2, 1, false));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Meter {
    left: u64,
    progress: Progress,
}

impl Meter {
    /// A meter with `budget` steps left and nothing done.
    pub fn new(budget: Budget) -> Meter {
        Meter {
            left: budget.get(),
            progress: Progress::default(),
        }
    }

    /// Takes one step; `false` when the budget is already spent and the caller must return
    /// (with its position saved, to resume there).
    #[inline]
    pub fn step(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        self.progress.steps += 1;
        true
    }

    /// Counts one timer fired.
    #[inline]
    pub fn fired(&mut self) {
        self.progress.fired += 1;
    }

    /// What the call did so far.
    pub fn progress(&self) -> Progress {
        self.progress
    }

    /// Ends the call: its [`Progress`], with `complete` as given.
    pub fn finish(mut self, complete: bool) -> Progress {
        self.progress.complete = complete;
        self.progress
    }
}
