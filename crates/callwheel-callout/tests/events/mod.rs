//! Driving a table as a tickless kernel does, shared by the tests that need it: interrupt at each
//! event window the table names, process to the window's end and run softclock, until nothing
//! is pending.

use callwheel::Tick;
use callwheel_callout::{Backing, Callouts};

/// Drives `t`, whose callouts' values are their indices below `n`, by its event windows until
/// none is pending, with at most `max_interrupts` interrupts; asserts that every window is sane
/// (it ends no earlier than it starts, and starts no earlier than the table's time) and that no
/// callout runs twice. Returns the tick each callout ran at, and the interrupts taken.
pub fn run_by_events<S: Backing>(
    t: &mut Callouts<S, usize>,
    n: usize,
    max_interrupts: usize,
) -> (Vec<Option<Tick>>, usize) {
    let mut ran_at = vec![None; n];
    let mut interrupts = 0;
    while let Some((first, last)) = t.next_event() {
        assert!(first <= last, "an event window ends before it starts");
        assert!(first >= t.ticks(), "an event window in the past");
        interrupts += 1;
        assert!(
            interrupts <= max_interrupts,
            "the event windows make no progress"
        );
        let mut log = Vec::new();
        t.process_with(last, |table, i| log.push((i, table.ticks())));
        t.softclock(|table, i| log.push((i, table.ticks())));
        for (i, at) in log {
            assert!(ran_at[i].is_none(), "callout {i} ran twice");
            ran_at[i] = Some(at);
        }
    }
    (ran_at, interrupts)
}
