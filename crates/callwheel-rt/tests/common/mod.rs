//! What several of the runtime's integration tests share.

/// A deterministic spread of values (a linear congruential generator): the tests need
/// reproducible variety, not statistical quality.
pub struct Lcg(pub u64);

impl Lcg {
    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}
