//! [`Sleep`]: a future that completes once its deadline has passed, no earlier, and within
//! its tolerance after it.
//!
//! A sleep registers with its driver at its first pending poll, not before: one that is
//! polled only after its deadline (a timeout whose future finished first, a deadline already
//! past) never takes a shard's lock. Dropping a registered sleep cancels its timer (O(1)).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::driver::{Driver, Entry, Inner, Link, Refused};
use crate::due::{monotonic_deadline_after, monotonic_now, monotonic_ns, Due};

pub(crate) use callwheel_rt::saturating_ns as nanos;

/// Where a sleep stands with its driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Registration {
    /// Not registered (not yet polled pending, or reset since it fired).
    Idle,
    /// Registered: its waker is in the wheel, where its [`Entry`] says.
    Armed,
    /// It completed.
    Done,
}

/// A sleep's small fields in one word: its tolerance, its shard, where it stands and how it is
/// bound to its driver. Packed so that a whole `Sleep` is 64 bytes: a task that holds one
/// twice (as an argument and while awaiting it) then fits tokio's 256-byte task cell rather
/// than its 384-byte one, and async-executor's allocation shrinks by as much.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Word(u64);

impl Word {
    /// Bits 0–47: the tolerance in nanoseconds; all ones stands for the driver's default.
    const TOLERANCE: u64 = (1 << 48) - 1;
    /// Bits 48–55: the shard.
    const SHARD_SHIFT: u32 = 48;
    /// Bits 56–57: the [`Registration`].
    const STATE_SHIFT: u32 = 56;
    /// Bit 58: the sleep follows the context it is polled in.
    const FOLLOWS: u64 = 1 << 58;
    /// Bit 59: it is bound to the process-wide driver (a plain static reference).
    const GLOBAL: u64 = 1 << 59;

    fn new(follows_context: bool) -> Word {
        let w = Word(Word::TOLERANCE);
        if follows_context {
            Word(w.0 | Word::FOLLOWS)
        } else {
            w
        }
    }

    /// The tolerance asked for, in nanoseconds; `None` for the driver's default.
    fn tolerance(self) -> Option<u64> {
        let t = self.0 & Word::TOLERANCE;
        (t != Word::TOLERANCE).then_some(t)
    }

    /// Sets the tolerance; beyond 2^48 − 2 ns (about 78 hours) it is that: a window no wider
    /// than asked, so the guarantee still holds.
    fn set_tolerance(&mut self, tolerance: Duration) {
        let t = nanos(tolerance).min(Word::TOLERANCE - 1);
        self.0 = (self.0 & !Word::TOLERANCE) | t;
    }

    fn shard(self) -> usize {
        ((self.0 >> Word::SHARD_SHIFT) & 0xff) as usize
    }

    fn registration(self) -> Registration {
        match (self.0 >> Word::STATE_SHIFT) & 3 {
            0 => Registration::Idle,
            1 => Registration::Armed,
            _ => Registration::Done,
        }
    }

    fn set_registration(&mut self, r: Registration) {
        let bits = match r {
            Registration::Idle => 0,
            Registration::Armed => 1,
            Registration::Done => 2,
        };
        self.0 = (self.0 & !(3 << Word::STATE_SHIFT)) | (bits << Word::STATE_SHIFT);
    }

    /// Armed on shard `shard` (below [`MAX_SHARDS`](crate::MAX_SHARDS), which fits the 8 bits:
    /// asserted below).
    fn set_armed(&mut self, shard: usize) {
        self.0 =
            (self.0 & !(0xff << Word::SHARD_SHIFT)) | ((shard as u64 & 0xff) << Word::SHARD_SHIFT);
        self.set_registration(Registration::Armed);
    }

    fn has(self, bit: u64) -> bool {
        self.0 & bit != 0
    }

    fn set(&mut self, bit: u64, on: bool) {
        if on {
            self.0 |= bit;
        } else {
            self.0 &= !bit;
        }
    }
}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Word")
            .field("tolerance", &self.tolerance())
            .field("shard", &self.shard())
            .field("registration", &self.registration())
            .field("follows_context", &self.has(Word::FOLLOWS))
            .field("global", &self.has(Word::GLOBAL))
            .finish()
    }
}

/// A future that completes at its deadline: see [`sleep`] and [`sleep_until`].
///
/// `Unpin`: it can be polled through `&mut` and moved between tasks and threads freely (a
/// move takes effect at the next poll, whose waker replaces the registered one). It is 64
/// bytes.
#[derive(Debug)]
#[must_use = "a sleep does nothing unless polled"]
pub struct Sleep {
    /// The driver it is bound to, unless that is the process-wide one (a bit of `word`: no
    /// reference count to move per sleep). Neither before a sleep that follows its context is
    /// registered (its times are then `CLOCK_MONOTONIC` readings, which every driver it may
    /// go to reads), or when no driver could be started: the sleep then polls itself until
    /// its deadline (a degraded mode that never loses the wake-up).
    driver: Option<Arc<Inner>>,
    /// The deadline, as the caller gave it (or as `now + duration`) and on the driver's clock.
    due: Due,
    /// Which timer is its, while it is armed.
    entry: Entry,
    /// Its tolerance, shard, registration and binding. A sleep made by the free functions
    /// follows the context it is registered in: the executor's own driver (a tokio runtime's,
    /// with the `tokio` feature) or the process-wide one, chosen at registration. Made on a
    /// [`Driver`] of the caller's, it stays there.
    word: Word,
}

// A shard's number fits the word's 8 bits.
const _: () = assert!(crate::MAX_SHARDS <= 256);

// The size the task cells above are chosen by; a field added here must find its room.
const _: () = assert!(std::mem::size_of::<Sleep>() == 64);

/// A future that completes `duration` from now, on the process-wide driver (see
/// [`Driver::global`]). `Duration::MAX` never completes.
///
/// ```
/// # futures::executor::block_on(async {
/// use std::time::{Duration, Instant};
/// let start = Instant::now();
/// callwheel_async::sleep(Duration::from_millis(2)).await;
/// assert!(start.elapsed() >= Duration::from_millis(2));
/// # });
/// ```
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::after(made_on(), duration)
}

/// The driver a timer made by a free function is bound to at once: a paused runtime's (its
/// deadline counts on the paused clock), with the feature `test-util`; otherwise none, and the
/// timer follows the context it is first polled in.
#[inline]
pub(crate) fn made_on() -> Option<Link> {
    #[cfg(feature = "test-util")]
    {
        crate::paused::made_on()
    }
    #[cfg(not(feature = "test-util"))]
    {
        None
    }
}

/// A future that completes at `deadline` (at once when it has passed, including an `Instant`
/// from before the process started), on the process-wide driver.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::at(made_on(), deadline)
}

impl Driver {
    /// [`sleep`] on this driver; the duration counts on its clock (a [`ManualClock`]'s
    /// simulated time included).
    ///
    /// [`ManualClock`]: callwheel_rt::ManualClock
    pub fn sleep(&self, duration: Duration) -> Sleep {
        Sleep::after(Some(self.link()), duration)
    }

    /// [`sleep_until`] on this driver (on a clock other than the monotonic one, `deadline`
    /// converts by its distance from now).
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        Sleep::at(Some(self.link()), deadline)
    }
}

impl Sleep {
    /// A sleep for `duration` on `driver`, or (`None`) on the driver of the context it is
    /// registered in.
    pub(crate) fn after(driver: Option<Link>, duration: Duration) -> Sleep {
        let due = match &driver {
            Some(d) => d.deadline_after(duration),
            None => monotonic_deadline_after(duration),
        };
        Sleep::fixed(driver, due)
    }

    /// [`Sleep::after`] with a deadline.
    pub(crate) fn at(driver: Option<Link>, deadline: Instant) -> Sleep {
        let due = match &driver {
            Some(d) => d.due_at(deadline),
            None => Due::monotonic(monotonic_ns(deadline)),
        };
        Sleep::fixed(driver, due)
    }

    /// A sleep on `driver` (or following its context) with its deadline already read.
    pub(crate) fn fixed(driver: Option<Link>, due: Due) -> Sleep {
        let mut sleep = Sleep {
            driver: None,
            due,
            entry: Entry::NONE,
            word: Word::new(driver.is_none()),
        };
        sleep.bind(driver);
        sleep
    }

    /// Binds the sleep to `link` (or to none).
    fn bind(&mut self, link: Option<Link>) {
        let global = matches!(link, Some(Link::Global(_)));
        self.word.set(Word::GLOBAL, global);
        self.driver = match link {
            Some(Link::Own(inner)) => Some(inner),
            _ => None,
        };
    }

    /// The driver it is bound to.
    fn bound(&self) -> Option<&Inner> {
        bound(&self.driver, self.word)
    }

    fn follows_context(&self) -> bool {
        self.word.has(Word::FOLLOWS)
    }

    /// The reading of the clock this sleep counts on: its driver's, or `CLOCK_MONOTONIC`
    /// before it is registered; `None` in the degraded mode (no driver at all).
    fn clock_now(&self) -> Option<u64> {
        match self.bound() {
            Some(d) => Some(d.now()),
            None if self.follows_context() => Some(monotonic_now()),
            None => None,
        }
    }

    /// `at` both ways, on this sleep's clock.
    fn due_at(&self, at: Instant) -> Due {
        match self.bound() {
            Some(d) => d.due_at(at),
            None => Due::monotonic(monotonic_ns(at)),
        }
    }

    /// This sleep may complete up to `tolerance` after its deadline (never before): sleeps
    /// whose windows overlap then share one wake-up of the driver. Without it the driver's
    /// default applies ([`Builder::tolerance`](crate::Builder::tolerance); exact for the
    /// process-wide driver). A tolerance beyond 2^48 ns (about 78 hours) counts as that. Takes
    /// effect at the next registration (the first poll, or after a reset).
    pub fn tolerance(mut self, tolerance: Duration) -> Sleep {
        self.word.set_tolerance(tolerance);
        self
    }

    /// The deadline: the `Instant` it was made with (or `now + duration`). It is kept as a
    /// `CLOCK_MONOTONIC` reading: one from before that clock's origin (which has passed in any
    /// case) reads as the origin, one more than 2^64 ns (584 years) after it as that bound.
    pub fn deadline(&self) -> Instant {
        self.due.as_instant()
    }

    /// Whether the deadline has passed (on the driver's clock).
    pub fn is_elapsed(&self) -> bool {
        match (self.word.registration(), self.clock_now()) {
            (Registration::Done, _) => true,
            (_, Some(now)) => now >= self.due.clock,
            (_, None) => monotonic_now() >= self.due.instant,
        }
    }

    /// Moves the deadline to `deadline`, whether the sleep completed or not: a completed sleep
    /// becomes pending again, and one moved to a time already passed completes at its next
    /// poll. The timer keeps its place in the driver when it is still registered and its new
    /// deadline is ahead (no new registration).
    pub fn reset(&mut self, deadline: Instant) {
        let due = self.due_at(deadline);
        self.set_deadline(due);
    }

    /// [`Sleep::reset`] to `duration` after now on the driver's clock.
    pub(crate) fn reset_after(&mut self, duration: Duration) {
        let due = match self.bound() {
            Some(d) => d.deadline_after(duration),
            None => monotonic_deadline_after(duration),
        };
        self.set_deadline(due);
    }

    /// Whether the sleep is registered with its driver (polled pending, not since completed
    /// or reset past its firing).
    pub(crate) fn is_registered(&self) -> bool {
        self.word.registration() == Registration::Armed
    }

    /// Whether the driver it is bound to has shut down (a sleep on it completes at once).
    pub(crate) fn driver_gone(&self) -> bool {
        self.bound().is_some_and(Inner::is_shut_down)
    }

    /// The driver's clock now, if there is a driver.
    pub(crate) fn driver_now(&self) -> Option<u64> {
        self.clock_now()
    }

    /// The deadline both ways.
    pub(crate) fn due(&self) -> Due {
        self.due
    }

    /// The deadline in the driver's nanoseconds.
    pub(crate) fn deadline_ns(&self) -> u64 {
        self.due.clock
    }

    /// Resets to a deadline given in the driver's nanoseconds (exact both ways on the monotonic
    /// clock; its `Instant` by its distance from now on others).
    pub(crate) fn reset_ns(&mut self, ns: u64) {
        let due = match self.bound() {
            Some(d) => d.due_of(ns),
            // Not bound yet, or degraded: its readings are `CLOCK_MONOTONIC` ones.
            None => Due::monotonic(ns),
        };
        self.set_deadline(due);
    }

    /// Resets to a deadline given both ways (an interval keeps its grid exact in both).
    pub(crate) fn set_deadline(&mut self, due: Due) {
        self.due = due;
        if self.word.registration() != Registration::Armed {
            self.word.set_registration(Registration::Idle);
            return;
        }
        let (shard, entry) = (self.word.shard(), self.entry);
        let tolerance = self.bound().map(|d| self.tolerance_ns(d));
        let kept = match (self.bound(), tolerance) {
            // Moved to a time already passed: due at the next poll, as tokio's is, rather than
            // at the driver's next turn.
            (Some(d), _) if due.clock <= d.now() => {
                d.cancel(shard, entry);
                false
            }
            (Some(d), Some(tolerance)) => d.reset(shard, entry, due.clock, tolerance),
            _ => false,
        };
        if !kept {
            self.word.set_registration(Registration::Idle);
        }
    }

    fn tolerance_ns(&self, d: &Inner) -> u64 {
        match self.word.tolerance() {
            Some(t) => t,
            None => d.default_tolerance(self.due.clock),
        }
    }

    /// Polls as a `Future` does, through `&mut` (a `Sleep` is `Unpin`).
    pub fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_with(cx, true)
    }

    /// The first poll of a sleep made this instant for a positive duration (a timeout's, made
    /// at the first poll its future was pending): its deadline cannot have passed, so the
    /// clock is not read again.
    pub(crate) fn poll_fresh(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_with(cx, false)
    }

    fn is_bound(&self) -> bool {
        self.driver.is_some() || self.word.has(Word::GLOBAL)
    }

    fn poll_with(&mut self, cx: &mut Context<'_>, check: bool) -> Poll<()> {
        if !self.is_bound() && self.follows_context() {
            // Not yet registered: the driver of the context it is polled in takes it.
            self.bind(context_link().or_else(Driver::global_link));
            let bound = self.is_bound();
            self.word.set(Word::FOLLOWS, bound);
        }
        // Borrowed, not cloned: a clone would move the driver's reference count, an atomic
        // operation, at every poll.
        // Through the fields, not `self`: the entry is borrowed apart from them.
        let Some(d) = bound(&self.driver, self.word) else {
            // No driver: check the clock and ask to be polled again.
            if monotonic_now() >= self.due.instant {
                self.word.set_registration(Registration::Done);
                return Poll::Ready(());
            }
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        match self.word.registration() {
            Registration::Done => Poll::Ready(()),
            Registration::Armed => {
                let shard = self.word.shard();
                if d.still_pending(shard, &mut self.entry, cx.waker()) {
                    return Poll::Pending;
                }
                if self.follows_context() && d.is_shut_down() && d.now() < self.due.clock {
                    // Its driver went away with its executor (a runtime shut down), not due
                    // yet: it registers again where it is polled now.
                    self.word.set_registration(Registration::Idle);
                    self.bind(None);
                    return self.poll_with(cx, false);
                }
                self.word.set_registration(Registration::Done);
                Poll::Ready(())
            }
            Registration::Idle => self.register(cx, check),
        }
    }

    /// The first registration (or the first after a reset, or after its driver went away) on
    /// the sleep's driver: for a sleep that follows its context, the context's.
    fn register(&mut self, cx: &mut Context<'_>, check: bool) -> Poll<()> {
        let Some(d) = self.bound() else {
            // Not reached: a sleep registers only once it has a driver.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        if check && d.now() >= self.due.clock {
            self.word.set_registration(Registration::Done);
            return Poll::Ready(());
        }
        let tolerance = self.tolerance_ns(d);
        match d.register(self.due.clock, tolerance, cx.waker()) {
            Ok((shard, entry)) => {
                self.entry = entry;
                self.word.set_armed(shard);
                Poll::Pending
            }
            Err(Refused::ShutDown) => match Driver::global_link() {
                // A context's driver shut down under it (its runtime is going away, or the
                // process forked since it was made): the process-wide one takes it.
                Some(global) if self.follows_context() && !std::ptr::eq(&*global, d) => {
                    self.bind(Some(global));
                    self.register(cx, false)
                }
                None if self.follows_context() => {
                    // No process-wide driver could start: the sleep polls itself until its
                    // deadline, as one that never found a driver does, rather than end early.
                    self.bind(None);
                    self.word.set(Word::FOLLOWS, false);
                    self.poll_with(cx, true)
                }
                _ => {
                    self.word.set_registration(Registration::Done);
                    Poll::Ready(())
                }
            },
            Err(Refused::NoMemory) => {
                // The wheel could not grow: poll again until the deadline rather than lose
                // the wake-up.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }
}

/// The driver a sleep with these fields is bound to.
fn bound(driver: &Option<Arc<Inner>>, word: Word) -> Option<&Inner> {
    if word.has(Word::GLOBAL) {
        return Driver::first_global().map(|g| g.inner());
    }
    driver.as_deref()
}

/// The driver a sleep that follows its context registers on, polled here: the wheel of this
/// thread for the tokio runtime it runs in (the `tokio` feature), else this thread's wheel on
/// async-io's reactor (the `async-io` feature); `None` for the process-wide driver.
fn context_link() -> Option<Link> {
    #[cfg(feature = "tokio")]
    if let Some(link) = crate::tokio_reactor::context_link() {
        return Some(link);
    }
    #[cfg(feature = "async-io")]
    if let Some(link) = crate::async_io_reactor::thread_link() {
        return Some(link);
    }
    None
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().poll_sleep(cx)
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if self.word.registration() == Registration::Armed {
            if let Some(d) = self.bound() {
                d.cancel(self.word.shard(), self.entry);
            }
        }
    }
}

#[cfg(all(test, not(callwheel_loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_word_keeps_each_field_apart() {
        let mut w = Word::new(true);
        assert_eq!(w.tolerance(), None);
        w.set_tolerance(Duration::from_nanos(123_456_789));
        w.set_armed(255);
        w.set(Word::GLOBAL, true);
        assert_eq!(w.tolerance(), Some(123_456_789));
        assert_eq!(w.shard(), 255);
        assert_eq!(w.registration(), Registration::Armed);
        assert!(w.has(Word::FOLLOWS) && w.has(Word::GLOBAL));
        w.set_registration(Registration::Done);
        assert_eq!((w.shard(), w.tolerance()), (255, Some(123_456_789)));
        w.set_armed(3);
        w.set_registration(Registration::Done);
        w.set(Word::FOLLOWS, false);
        w.set_tolerance(Duration::ZERO);
        assert_eq!(w.tolerance(), Some(0));
        assert_eq!(w.shard(), 3);
        assert_eq!(w.registration(), Registration::Done);
        assert!(!w.has(Word::FOLLOWS) && w.has(Word::GLOBAL));
    }

    // A tolerance past the field's range is narrowed, never widened and never taken for the
    // driver's default.
    #[test]
    fn a_tolerance_too_wide_for_the_word_is_narrowed() {
        let mut w = Word::new(false);
        w.set_tolerance(Duration::MAX);
        assert_eq!(w.tolerance(), Some((1 << 48) - 2));
        w.set_tolerance(Duration::from_nanos((1 << 48) - 1));
        assert_eq!(w.tolerance(), Some((1 << 48) - 2));
        w.set_tolerance(Duration::from_nanos((1 << 48) - 2));
        assert_eq!(w.tolerance(), Some((1 << 48) - 2));
    }

    // The deadline is kept as one number, and still gives back the very `Instant` it was made
    // with, on the monotonic clock and on a simulated one.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_sleep_gives_back_the_instant_it_was_made_with() {
        let at = Instant::now() + Duration::from_secs(86_400) + Duration::from_nanos(7);
        assert_eq!(sleep_until(at).deadline(), at);
        let (driver, _clock) = Driver::manual().unwrap();
        assert_eq!(driver.sleep_until(at).deadline(), at);
        let mut s = driver.sleep(Duration::from_secs(1));
        let later = at + Duration::from_nanos(1);
        s.reset(later);
        assert_eq!(s.deadline(), later);
        // A reset to a reading of the monotonic clock (a delay queue's) keeps it exact too.
        let mut s = sleep_until(at);
        s.reset_ns(monotonic_ns(later));
        assert_eq!(s.deadline(), later);
    }
}
