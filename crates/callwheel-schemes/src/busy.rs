//! Busy marks: one bit per bucket, set while the bucket holds a timer (Varghese & Lauck,
//! Appendix A), with two levels of summary above them: a bit per word of marks, set while the
//! word has a bit set, and a bit per word of that. Finding the next non-empty bucket then
//! looks at two words of marks, one of the summary and a scan of the top level (at most 256
//! words for 2^26 buckets), however sparse the bitmap, instead of every empty word between two
//! busy buckets. A mark costs one or two more words only when its word goes from empty to
//! busy or back.

use alloc::vec::Vec;

/// A bitmap over `len` buckets, with its summary levels.
#[derive(Clone, Debug)]
pub(crate) struct BusyMarks {
    /// A bit per bucket.
    words: Vec<u64>,
    /// A bit per word of `words`, set while that word is not zero.
    summary: Vec<u64>,
    /// A bit per word of `summary`, set while that word is not zero.
    top: Vec<u64>,
    len: usize,
}

/// `n` zero words, or the allocator's refusal.
fn zeroed(n: usize) -> Result<Vec<u64>, callwheel::Error> {
    let mut words = Vec::new();
    words
        .try_reserve_exact(n)
        .map_err(|_| callwheel::Error::NoMemory)?;
    words.resize(n, 0);
    Ok(words)
}

/// The bit of `i` in its word.
#[inline]
fn bit(i: usize) -> u64 {
    1 << (i % 64)
}

/// The first set bit of `words` at or after bit `from`, scanning word by word.
fn scan(words: &[u64], from: usize) -> Option<usize> {
    let w = from / 64;
    let first = *words.get(w)? & (!0u64 << (from % 64));
    if first != 0 {
        return Some(w * 64 + first.trailing_zeros() as usize);
    }
    let (k, word) = words[w + 1..].iter().enumerate().find(|(_, &x)| x != 0)?;
    Some((w + 1 + k) * 64 + word.trailing_zeros() as usize)
}

impl BusyMarks {
    /// Marks over `len` buckets, all clear; the allocator's refusal is
    /// [`Error::NoMemory`](callwheel::Error::NoMemory).
    pub(crate) fn try_new(len: usize) -> Result<BusyMarks, callwheel::Error> {
        let words = len.div_ceil(64).max(1);
        let summary = words.div_ceil(64);
        Ok(BusyMarks {
            words: zeroed(words)?,
            summary: zeroed(summary)?,
            top: zeroed(summary.div_ceil(64))?,
            len,
        })
    }

    #[inline]
    pub(crate) fn set(&mut self, bucket: usize) {
        let w = bucket / 64;
        let word = &mut self.words[w];
        let was = *word;
        *word = was | bit(bucket);
        if was == 0 {
            let s = &mut self.summary[w / 64];
            let was = *s;
            *s = was | bit(w);
            if was == 0 {
                self.top[w / 4096] |= bit(w / 64);
            }
        }
    }

    #[inline]
    pub(crate) fn clear(&mut self, bucket: usize) {
        let w = bucket / 64;
        let word = &mut self.words[w];
        *word &= !bit(bucket);
        if *word == 0 {
            let s = &mut self.summary[w / 64];
            *s &= !bit(w);
            if *s == 0 {
                self.top[w / 4096] &= !bit(w / 64);
            }
        }
    }

    #[inline]
    pub(crate) fn get(&self, bucket: usize) -> bool {
        self.words[bucket / 64] & bit(bucket) != 0
    }

    /// The lowest busy bucket of word `w`, which is not zero.
    #[inline]
    fn lowest_in(&self, w: usize) -> usize {
        w * 64 + self.words[w].trailing_zeros() as usize
    }

    /// The first busy bucket at or after `from`, without wrapping; `None` when none is.
    pub(crate) fn first_from(&self, from: usize) -> Option<usize> {
        // The rest of `from`'s own word.
        let w = from / 64;
        let rest = *self.words.get(w)? & (!0u64 << (from % 64));
        if rest != 0 {
            return Some(w * 64 + rest.trailing_zeros() as usize);
        }
        // The next busy word in the same summary word.
        let next = w + 1;
        let s = next / 64;
        let in_summary = self
            .summary
            .get(s)
            .map_or(0, |&x| x & (!0u64 << (next % 64)));
        if in_summary != 0 {
            return Some(self.lowest_in(s * 64 + in_summary.trailing_zeros() as usize));
        }
        // The next busy summary word, from the top level.
        let s = scan(&self.top, s + 1)?;
        let w = s * 64 + self.summary[s].trailing_zeros() as usize;
        Some(self.lowest_in(w))
    }

    /// The first busy bucket at or after `from`, wrapping around once; `None` when none is busy.
    /// Returns the distance from `from` (0..len).
    pub(crate) fn next_from(&self, from: usize) -> Option<usize> {
        let from = from % self.len;
        if let Some(b) = self.first_from(from) {
            return Some(b - from);
        }
        // Wrapped: anything busy now lies before `from`.
        self.first_from(0).map(|b| b + self.len - from)
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        (self.words.capacity() + self.summary.capacity() + self.top.capacity()) * 8
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::BusyMarks;
    use proptest::prelude::*;
    use std::vec::Vec;

    proptest! {
        // Lengths up to 2,000,000 give a top level of one to eight words; clearing half the marks
        // again leaves summary bits that must follow their words.
        #[test]
        fn next_from_finds_the_first_busy_bucket_circularly(
            len in prop_oneof![1usize..300, 300usize..2_000_000],
            busy in proptest::collection::vec(any::<u32>(), 0..20),
            from in any::<u32>(),
        ) {
            let mut marks = BusyMarks::try_new(len).unwrap();
            let busy: Vec<usize> = busy.iter().map(|&b| b as usize % len).collect();
            for &b in &busy {
                marks.set(b);
            }
            let (kept, cleared) = busy.split_at(busy.len() / 2);
            for &b in cleared {
                if !kept.contains(&b) {
                    marks.clear(b);
                }
            }
            let from = from as usize % len;
            let expect = (0..len).find(|d| kept.contains(&((from + d) % len)));
            prop_assert_eq!(marks.next_from(from), expect);
            let first = kept.iter().copied().filter(|&b| b >= from).min();
            prop_assert_eq!(marks.first_from(from), first);
            for &b in kept {
                marks.clear(b);
            }
            prop_assert_eq!(marks.next_from(from), None);
            let mut words = marks.words.iter().chain(&marks.summary).chain(&marks.top);
            prop_assert!(words.all(|&w| w == 0));
        }
    }

    #[test]
    fn a_mark_far_from_the_search_is_found_through_the_summary() {
        let len = 1 << 26;
        let mut marks = BusyMarks::try_new(len).unwrap();
        assert_eq!(marks.top.len(), 256);
        marks.set(len - 1);
        assert_eq!(marks.first_from(3), Some(len - 1));
        assert_eq!(marks.next_from(len - 1), Some(0));
        assert_eq!(marks.next_from(0), Some(len - 1));
        marks.set(7);
        assert_eq!(marks.next_from(8), Some(len - 1 - 8));
        assert_eq!(marks.next_from(len - 1 + 1), Some(7));
        assert_eq!(marks.first_from(len), None);
    }
}
