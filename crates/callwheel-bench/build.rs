//! Compiles the C driver of W1–W4 (`c/workloads.c`) against the C API's header; its calls
//! resolve to the callwheel-ffi dependency's `cw_wheel_*` functions when the tool is linked.

fn main() {
    println!("cargo:rerun-if-changed=c/workloads.c");
    println!("cargo:rerun-if-changed=../callwheel-ffi/include/callwheel.h");
    cc::Build::new()
        .file("c/workloads.c")
        .include("../callwheel-ffi/include")
        .std("c11")
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .compile("callwheel_bench_c");
}
