//! The SplitMix64 generator against values computed by hand from the algorithm in docs/workloads.md
//! (64-bit wrapping arithmetic in a few lines of Python).

use callwheel_bench::workload::{SplitMix64, SEED};

#[test]
fn first_outputs_for_seed_42() {
    let mut rng = SplitMix64::new(SEED);
    let expected: [u64; 5] = [
        0xBDD7_3226_2FEB_6E95, // 13679457532755275413
        0x28EF_E333_B266_F103, // 2949826092126892291
        0x4752_6757_130F_9F52, // 5139283748462763858
        0x581C_E1FF_0E4A_E394, // 6349198060258255764
        0x09BC_585A_2448_23F2, // 701532786141963250
    ];
    for want in expected {
        assert_eq!(rng.next_u64(), want);
    }
}

#[test]
fn range_is_lo_plus_next_mod_width() {
    // W1's first five outstanding-timer expiries: 1_000_000 + next() % 1_000_000.
    let mut rng = SplitMix64::new(SEED);
    let drawn: Vec<u64> = (0..5).map(|_| rng.range(1_000_000, 2_000_000)).collect();
    assert_eq!(
        drawn,
        [1_275_413, 1_892_291, 1_763_858, 1_255_764, 1_963_250]
    );
}

#[test]
fn reseeding_repeats_the_sequence() {
    let mut a = SplitMix64::new(SEED);
    let first: Vec<u64> = (0..100).map(|_| a.range(1, 100_000)).collect();
    let mut b = SplitMix64::new(SEED);
    let again: Vec<u64> = (0..100).map(|_| b.range(1, 100_000)).collect();
    assert_eq!(first, again);
    assert!(first.iter().all(|&x| (1..100_000).contains(&x)));
}

#[test]
fn seed_zero_matches_the_reference_implementation() {
    // The published SplitMix64 reference output for state 0.
    let mut rng = SplitMix64::new(0);
    assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
}
