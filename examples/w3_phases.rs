//! Where the production wheel spends W3's time: the starts, then the advance split by the kind
//! of tick (one that processes a level-2 slot, a level-1 slot, or only level 0).
//!
//! W3 (`docs/workloads.md`) starts 10^6 timers due in `[1, 100000)` and advances tick by tick. From
//! time 0 most timers sit on level 2 (slots 4096 ticks wide); each is cascaded to level 1 when its
//! level-2 slot comes up, to level 0 when its level-1 slot does, and fired there. This program
//! times each `advance` call and adds it to the kind of its tick, divided by the timers, so the
//! three columns show what each cascade and the firing cost per timer. The two clock reads
//! around every call add a few ns per timer (most to the level-0 column, which has the most
//! ticks), so the advance column runs a little above W3's own. It is a probe for work on the
//! wheel, not a benchmark of record (`callwheel bench --workload w3` is).
//!
//! ```text
//! cargo run --release -p callwheel-examples --example w3_phases -- [REPS]
//! ```

use std::time::Instant;

use callwheel::Wheel;
use callwheel::{Budget, Scheme, Timers};
use callwheel_bench::workload::{SplitMix64, SEED};

const TIMERS: u64 = 1_000_000;
const TICKS: u64 = 100_000;

fn usage() -> ! {
    eprintln!("usage: w3_phases [REPS > 0]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let reps: u32 = match args.as_slice() {
        [] => 3,
        [n] => match n.to_str().map(str::parse) {
            Some(Ok(n)) if n > 0 => n,
            _ => usage(),
        },
        _ => usage(),
    };
    println!("ns per timer | starts | level-2 ticks | level-1 ticks | level-0 ticks | advance");
    for _ in 0..reps {
        let mut rng = SplitMix64::new(SEED);
        let mut wheel: Wheel<u64> = Wheel::new();
        let begin = Instant::now();
        for i in 0..TIMERS {
            if let Err(e) = wheel.start(rng.range(1, TICKS), i) {
                eprintln!("start failed: {e}");
                std::process::exit(1);
            }
        }
        let starts = begin.elapsed().as_nanos() as f64;
        let mut by_kind = [0f64; 3];
        let mut fired = 0u64;
        for now in 1..=TICKS {
            let tick = Instant::now();
            let _ = wheel.advance(now, Budget::UNLIMITED, |_, _| fired += 1);
            let kind = if now % 4096 == 0 {
                0
            } else if now % 64 == 0 {
                1
            } else {
                2
            };
            by_kind[kind] += tick.elapsed().as_nanos() as f64;
        }
        if fired != TIMERS {
            eprintln!("fired {fired} of {TIMERS}");
            std::process::exit(1);
        }
        let per = |ns: f64| ns / TIMERS as f64;
        println!(
            "             | {:6.1} | {:13.1} | {:13.1} | {:13.1} | {:7.1}",
            per(starts),
            per(by_kind[0]),
            per(by_kind[1]),
            per(by_kind[2]),
            per(by_kind.iter().sum())
        );
    }
}
