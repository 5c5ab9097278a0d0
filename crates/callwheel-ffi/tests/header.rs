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
