//! Runs the conformance suite (tests/conformance/) on every scheme of the family.

#[macro_use]
mod conformance;

use callwheel::scheme::hashed_wheel::HashedWheel;
use conformance::Spec;

fn exact(_: u64) -> u64 {
    0
}

conformance!(
    scheme6_hashed_wheel,
    Spec {
        make: || HashedWheel::new(4).unwrap(),
        make_capped: Some(|n| HashedWheel::with_capacity(4, n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 100_000,
        tickless: true,
    }
);
