//! Compiles the C driver of W1–W4 (`c/workloads.c`) against the C API's header, as the
//! callwheel-ffi dependency generates it (its build script names the directory); the driver's
//! calls resolve to that dependency's `cw_wheel_*` functions when the tool is linked.

fn main() {
    let include = std::env::var("DEP_CALLWHEEL_FFI_INCLUDE")
        .expect("callwheel-ffi's build script names the directory of its header");
    println!("cargo:rerun-if-changed=c/workloads.c");
    println!("cargo:rerun-if-changed={include}/callwheel.h");
    cc::Build::new()
        .file("c/workloads.c")
        .include(&include)
        .std("c11")
        .opt_level(2)
        // As a C program's -O2 build is (and the Rust side is): cc forces frame pointers
        // whenever debug information is on, which the release profile's line tables turn on.
        .force_frame_pointer(false)
        .warnings(true)
        .extra_warnings(true)
        .compile("callwheel_bench_c");
}
