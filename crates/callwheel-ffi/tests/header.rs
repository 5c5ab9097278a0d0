//! The committed header is the one this source generates: a change to the C API that was not
//! carried into `include/callwheel.h` fails here, with the command that updates it.

#[test]
fn the_committed_header_is_the_generated_one() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/callwheel.h"));
    let committed = include_str!("../include/callwheel.h");
    assert!(
        generated == committed,
        "include/callwheel.h is out of date: run `CALLWHEEL_UPDATE_HEADER=1 cargo build -p \
         callwheel-ffi` and commit the header"
    );
}

/// The header is written for the wheel's users: the caller-driven wheel comes before timer
/// sets, sleeping and the callout tables (the order of the module declarations in `lib.rs`);
/// within the callouts, making a table, the BSD calls, the clock, then FreeBSD's (`callout/`).
#[test]
fn the_header_lists_the_wheel_first() {
    let header = include_str!("../include/callwheel.h");
    // The line that declares `name` (a comment or an example only mentions it).
    let at = |name: &str| {
        header
            .lines()
            .position(|line| {
                !line.starts_with([' ', '/', '*']) && line.contains(&format!(" {name}("))
            })
            .unwrap_or_else(|| panic!("{name} is declared"))
    };
    let order = [
        "cw_wheel_new",
        "cw_timerset_new",
        "cw_sleep_sbt",
        "cw_callouts_new",
        "cw_timeout",
        "cw_hardclock",
        "cw_callout_init",
    ];
    for pair in order.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{} after {}", pair[0], pair[1]);
    }
}
