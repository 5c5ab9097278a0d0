//! Busy marks: one bit per bucket, set while the bucket holds a timer (Varghese & Lauck,
//! Appendix A). Finding the next non-empty bucket is a scan of words with `trailing_zeros`,
//! 64 buckets per instruction, instead of a visit to every empty bucket.

use alloc::vec::Vec;

/// A bitmap over `len` buckets.
#[derive(Clone, Debug)]
pub(crate) struct BusyMarks {
    words: Vec<u64>,
    len: usize,
}

impl BusyMarks {
    pub(crate) fn new(len: usize) -> BusyMarks {
        BusyMarks {
            words: alloc::vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// [`BusyMarks::new`] with the allocation refused as an error, for sizes the caller chose.
    pub(crate) fn try_new(len: usize) -> Result<BusyMarks, callwheel::Error> {
        let mut words = Vec::new();
        words
            .try_reserve_exact(len.div_ceil(64))
            .map_err(|_| callwheel::Error::NoMemory)?;
        words.resize(len.div_ceil(64), 0);
        Ok(BusyMarks { words, len })
    }

    #[inline]
    pub(crate) fn set(&mut self, bucket: usize) {
        self.words[bucket / 64] |= 1 << (bucket % 64);
    }

    #[inline]
    pub(crate) fn clear(&mut self, bucket: usize) {
        self.words[bucket / 64] &= !(1 << (bucket % 64));
    }

    #[inline]
    pub(crate) fn get(&self, bucket: usize) -> bool {
        self.words[bucket / 64] & (1 << (bucket % 64)) != 0
    }

    /// The first busy bucket at or after `from`, wrapping around once; `None` when none is busy.
    /// Returns the distance from `from` (0..len).
    pub(crate) fn next_from(&self, from: usize) -> Option<usize> {
        let from = from % self.len;
        let n = self.words.len();
        let (w0, b0) = (from / 64, from % 64);
        // The first word, masked below `from`; then whole words; then the first word's low part.
        let first = self.words[w0] & (!0u64 << b0);
        if first != 0 {
            return Some(w0 * 64 + first.trailing_zeros() as usize - from);
        }
        for k in 1..=n {
            let w = (w0 + k) % n;
            let mut word = self.words[w];
            if k == n {
                word &= if b0 == 0 { 0 } else { !0u64 >> (64 - b0) };
            }
            if word != 0 {
                let bucket = w * 64 + word.trailing_zeros() as usize;
                return Some((bucket + self.len - from) % self.len);
            }
        }
        None
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::BusyMarks;
    use proptest::prelude::*;
    use std::vec::Vec;

    proptest! {
        #[test]
        fn next_from_finds_the_first_busy_bucket_circularly(
            len in 1usize..300,
            busy in proptest::collection::vec(any::<u16>(), 0..20),
            from in any::<u16>(),
        ) {
            let mut marks = BusyMarks::new(len);
            let busy: Vec<usize> = busy.iter().map(|&b| b as usize % len).collect();
            for &b in &busy {
                marks.set(b);
            }
            let from = from as usize % len;
            let expect = (0..len).find(|d| busy.contains(&((from + d) % len)));
            prop_assert_eq!(marks.next_from(from), expect);
            for &b in &busy {
                marks.clear(b);
            }
            prop_assert_eq!(marks.next_from(from), None);
        }
    }
}
