//! A plain model of the callout interfaces: a vector of pending callouts, searched by brute
//! force. Property tests run random operations on a table and on the model and compare.

use callwheel_callout::{Error, Handle};
use proptest::prelude::*;

/// One random operation.
#[derive(Clone, Debug)]
pub enum Op {
    Timeout(u8, i64),
    Untimeout(u8),
    Set(u8, i64),
    /// Unset the handle issued `n`-th from last (wrapping), or a forged one if none.
    Unset(usize),
    /// `hardclock` this many times, without `softclock`.
    Hardclock(u8),
    /// `softclock`.
    Softclock,
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..12, -2i64..40).prop_map(|(k, n)| Op::Timeout(k, n)),
        2 => (0u8..12).prop_map(Op::Untimeout),
        3 => (0u8..12, -2i64..40).prop_map(|(k, n)| Op::Set(k, n)),
        2 => (0usize..8).prop_map(Op::Unset),
        3 => (1u8..6).prop_map(Op::Hardclock),
        3 => Just(Op::Softclock),
    ]
}

/// What a handler does, by its key, so the model and the table can replay it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `untimeout(key + 1)`: often the next callout due, in the same tick.
    CancelNext,
    /// `timeout(key, 1 + key % 3)`: re-arm.
    Rearm,
    /// `unsetcallout` of the newest handle.
    UnsetNewest,
    /// `setcallout(key + 1, 0)`.
    SetNext,
    Nothing,
}

pub fn action(key: u8) -> Action {
    match key % 5 {
        0 => Action::CancelNext,
        1 => Action::Rearm,
        2 => Action::UnsetNewest,
        3 => Action::SetNext,
        _ => Action::Nothing,
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    seq: u64,
    deadline: u64,
    key: u8,
    hashed: bool,
}

/// The model table.
#[derive(Debug, Default)]
pub struct Model {
    pub ticks: u64,
    seq: u64,
    pending: Vec<Entry>,
    /// Handles in issue order: the sequence number each names.
    pub handles: Vec<u64>,
    /// `untimeout` cancels the match due first (set first among equal deadlines), as 4.4BSD's
    /// search of `calltodo` does; otherwise the match set first, as the hash does.
    pub first_due: bool,
}

impl Model {
    fn add(&mut self, key: u8, n: i64, hashed: bool) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        self.pending.push(Entry {
            seq,
            deadline: self.ticks + n.max(1) as u64,
            key,
            hashed,
        });
        seq
    }

    pub fn timeout(&mut self, key: u8, n: i64) {
        self.add(key, n, true);
    }

    pub fn untimeout(&mut self, key: u8) -> bool {
        let first_due = self.first_due;
        let found = self
            .pending
            .iter()
            .enumerate()
            .filter(|(_, e)| e.hashed && e.key == key)
            .min_by_key(|(_, e)| (if first_due { e.deadline } else { 0 }, e.seq))
            .map(|(i, _)| i);
        found.map(|i| self.pending.remove(i)).is_some()
    }

    pub fn set(&mut self, key: u8, n: i64) {
        let seq = self.add(key, n, false);
        self.handles.push(seq);
    }

    /// `unsetcallout` of the handle issued `back`-th from last.
    pub fn unset(&mut self, back: usize) -> Result<bool, Error> {
        if self.handles.is_empty() {
            return Err(Error::StaleHandle);
        }
        let seq = self.handles[self.handles.len() - 1 - back % self.handles.len()];
        match self.pending.iter().position(|e| e.seq == seq && !e.hashed) {
            Some(i) => {
                self.pending.remove(i);
                Ok(true)
            }
            None => Err(Error::StaleHandle),
        }
    }

    /// Whether anything is due at the current tick.
    pub fn due(&self) -> bool {
        self.pending.iter().any(|e| e.deadline <= self.ticks)
    }

    /// `softclock`: fires every due callout in (deadline, set order), running its action.
    pub fn softclock(&mut self, log: &mut Vec<(u64, u8)>) {
        loop {
            let next = self
                .pending
                .iter()
                .enumerate()
                .filter(|(_, e)| e.deadline <= self.ticks)
                .min_by_key(|(_, e)| (e.deadline, e.seq))
                .map(|(i, _)| i);
            let Some(i) = next else { return };
            let e = self.pending.remove(i);
            log.push((self.ticks, e.key));
            match action(e.key) {
                Action::CancelNext => {
                    self.untimeout(e.key.wrapping_add(1));
                }
                Action::Rearm => self.timeout(e.key, 1 + i64::from(e.key % 3)),
                Action::UnsetNewest => {
                    let _ = self.unset(0);
                }
                Action::SetNext => self.set(e.key.wrapping_add(1), 0),
                Action::Nothing => {}
            }
        }
    }

    pub fn len(&self) -> usize {
        self.pending.len()
    }
}

/// The handle `back`-th from last, or a forged one when none was issued.
pub fn pick(handles: &[Handle], back: usize) -> Handle {
    if handles.is_empty() {
        Handle::from_parts(0xdead_beef_0000_0007, 0)
    } else {
        handles[handles.len() - 1 - back % handles.len()]
    }
}
