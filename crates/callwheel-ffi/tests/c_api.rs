//! Compiles the C test programs — `tests/c/test_callouts.c` (the callout facility),
//! `tests/c/test_wheel.c` (the caller-driven wheel), `tests/c/test_sleep.c` (sleeping with
//! precision) and `tests/c/test_timerset.c` (timer sets: every bullet of Figures 6 and 7, the clean API,
//! isolation) — with the C compiler against the generated header and the library cargo just
//! built, once linked statically (`libcallwheel_ffi.a`), once dynamically
//! (`libcallwheel_ffi.so`), and runs them.
//!
//! The compiler is `$CC`, or `cc`. Miri cannot run processes, so this file is skipped there.
#![cfg(not(miri))]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// The directory holding the libraries: this test runs from `<target>/<profile>/deps/`.
///
/// `cargo test` builds the library (all its crate types) into `deps/`, next to this test,
/// from the same sources as the test itself; it copies them up to `<target>/<profile>/` only
/// on `cargo build`, so the copies there may be older than the sources (the C programs would
/// then test old code): `deps/` comes first. Where the static and shared libraries are in
/// neither, the test builds them with the same cargo, profile and target directory (cargo
/// has released its lock by the time tests run).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its path");
    let deps = exe.parent().expect("the test executable is in a directory");
    let libs = ["libcallwheel_ffi.a", "libcallwheel_ffi.so"];
    if libs.iter().all(|lib| deps.join(lib).is_file()) {
        return deps.to_path_buf();
    }
    let dir = if deps.ends_with("deps") {
        deps.parent().expect("deps has a parent")
    } else {
        deps
    };
    if !libs.iter().all(|lib| dir.join(lib).is_file()) {
        let target = dir.parent().expect("the profile directory has a parent");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "-p", "callwheel-ffi", "--lib", "--target-dir"])
            .arg(target);
        if dir.ends_with("release") {
            build.arg("--release");
        }
        let out = build.output().expect("cargo runs");
        assert!(
            out.status.success(),
            "{}",
            show("cargo build -p callwheel-ffi", &out)
        );
    }
    for lib in libs {
        assert!(
            dir.join(lib).is_file(),
            "{lib} not found in {} after building the library",
            dir.display()
        );
    }
    dir.to_path_buf()
}

fn show(what: &str, out: &Output) -> String {
    format!(
        "{what}: {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Compiles the C test `program` (`tests/c/<program>.c`) into `exe` with `link` arguments
/// after the source, runs it with the extra environment `env`, and returns its standard
/// output. Panics with the compiler's or the program's output on failure.
fn build_and_run(program: &str, exe: &Path, link: &[OsString], env: &[(&str, &Path)]) -> String {
    let source = Path::new(CRATE).join(format!("tests/c/{program}.c"));
    build_source_and_run(program, &source, exe, link, env)
}

/// With `CALLWHEEL_C_SANITIZE=1` (CI sets it for a second run), the C programs are built with
/// AddressSanitizer and UndefinedBehaviorSanitizer, any report being fatal. The library itself
/// is Rust (checked by Miri and the fuzz targets); the sanitizers watch the C side of every
/// call: the pointers it hands over and the memory the library writes through them.
fn sanitizers() -> Vec<&'static str> {
    match std::env::var("CALLWHEEL_C_SANITIZE") {
        Ok(v) if v == "1" => vec![
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ],
        _ => Vec::new(),
    }
}

/// [`build_and_run`] for a C source anywhere.
fn build_source_and_run(
    program: &str,
    source: &Path,
    exe: &Path,
    link: &[OsString],
    env: &[(&str, &Path)],
) -> String {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let crate_dir = Path::new(CRATE);
    let mut compile = Command::new(&cc);
    compile
        // POSIX names (poll) beside strict C11.
        .args([
            "-std=c11",
            "-D_DEFAULT_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-g",
        ])
        .args(sanitizers())
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(source)
        .args(link)
        .arg("-o")
        .arg(exe);
    let out = compile
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(
        out.status.success(),
        "{}",
        show(&format!("compiling {program}.c"), &out)
    );

    let mut run = Command::new(exe);
    for (key, value) in env {
        run.env(key, value);
    }
    let out = run.output().expect("the compiled test starts");
    assert!(out.status.success(), "{}", show(program, &out));
    String::from_utf8(out.stdout).expect("the test prints text")
}

fn expect_all_passed(stdout: &str) {
    for backing in ["list", "hashed", "wheel"] {
        assert!(
            stdout.contains(&format!("backing {backing} ok")),
            "no result for {backing}:\n{stdout}"
        );
        assert!(
            stdout.contains(&format!("async drain and per-CPU {backing} ok")),
            "no async drain or per-CPU result for {backing}:\n{stdout}"
        );
    }
    assert!(stdout.contains("checks passed"), "{stdout}");
    print!("{stdout}");
}

/// The static library and what it needs from glibc.
fn static_link(dir: &Path) -> Vec<OsString> {
    vec![
        dir.join("libcallwheel_ffi.a").into(),
        "-lpthread".into(),
        "-ldl".into(),
        "-lm".into(),
    ]
}

/// The shared library, found at run time through an rpath.
fn shared_link(dir: &Path) -> Vec<OsString> {
    let mut rpath = OsString::from("-Wl,-rpath,");
    rpath.push(dir);
    let mut search = OsString::from("-L");
    search.push(dir);
    vec![search, "-lcallwheel_ffi".into(), rpath]
}

fn expect_static(exe: &Path) {
    let binary = std::fs::read(exe).unwrap();
    assert!(
        !contains(&binary, b"libcallwheel_ffi.so"),
        "the static build must not load the shared library"
    );
}

fn expect_shared(exe: &Path) {
    // The linker preferred the .so: the executable names it as a needed library.
    let binary = std::fs::read(exe).unwrap();
    assert!(
        contains(&binary, b"libcallwheel_ffi.so"),
        "not linked to the shared library"
    );
}

#[test]
fn c_program_against_the_static_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_callouts_static");
    let stdout = build_and_run("test_callouts", &exe, &static_link(&dir), &[]);
    expect_all_passed(&stdout);
    expect_static(&exe);
}

#[test]
fn c_program_against_the_shared_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_callouts_shared");
    let env = [("LD_LIBRARY_PATH", dir.as_path())];
    let stdout = build_and_run("test_callouts", &exe, &shared_link(&dir), &env);
    expect_all_passed(&stdout);
    expect_shared(&exe);
}

/// The caller-driven wheel from C (`tests/c/test_wheel.c`): every `cw_wheel_*` function with
/// good and bad input, other wheels' handles, a full capacity, memory refused, a fork, an
/// event loop on the monotonic clock and a random run against a brute-force model.
#[test]
fn wheel_c_program_against_the_static_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_wheel_static");
    let stdout = build_and_run("test_wheel", &exe, &static_link(&dir), &[]);
    assert!(stdout.contains("test_wheel: all "), "{stdout}");
    expect_static(&exe);
}

#[test]
fn wheel_c_program_against_the_shared_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_wheel_shared");
    let env = [("LD_LIBRARY_PATH", dir.as_path())];
    let stdout = build_and_run("test_wheel", &exe, &shared_link(&dir), &env);
    assert!(stdout.contains("test_wheel: all "), "{stdout}");
    expect_shared(&exe);
}

/// The callout contract (`tests/c/test_callout_contract.c`): every backing and both per-CPU
/// forms at table ticks near 0, 2^32, 2^40, 2^63 and the last tick, at hz from 100 to 10^9:
/// next event in ticks, one step to any tick, the end of time, exact rounding of sbt.
#[test]
fn callout_contract_against_the_static_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_callout_contract_static");
    let stdout = build_and_run("test_callout_contract", &exe, &static_link(&dir), &[]);
    expect_every_contract_check(&stdout);
    expect_static(&exe);
}

#[test]
fn callout_contract_against_the_shared_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_callout_contract_shared");
    let env = [("LD_LIBRARY_PATH", dir.as_path())];
    let stdout = build_and_run("test_callout_contract", &exe, &shared_link(&dir), &env);
    expect_every_contract_check(&stdout);
    expect_shared(&exe);
}

fn expect_every_contract_check(stdout: &str) {
    for form in ["table", "per-CPU"] {
        for backing in ["list", "hashed", "wheel"] {
            assert!(
                stdout.contains(&format!("test_callout_contract: ok {form} {backing}\n")),
                "no result for the {form} form on {backing}:\n{stdout}"
            );
        }
    }
    assert!(stdout.contains("checks passed"), "{stdout}");
    print!("{stdout}");
}

/// Sleeping with precision from C (`tests/c/test_sleep.c`): cw_sleep_sbt and the condition
/// variable, every documented error included.
#[test]
fn sleep_c_program_against_the_static_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_sleep_static");
    let stdout = build_and_run("test_sleep", &exe, &static_link(&dir), &[]);
    expect_every_sleep_check(&stdout);
    expect_static(&exe);
}

#[test]
fn sleep_c_program_against_the_shared_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_sleep_shared");
    let env = [("LD_LIBRARY_PATH", dir.as_path())];
    let stdout = build_and_run("test_sleep", &exe, &shared_link(&dir), &env);
    expect_every_sleep_check(&stdout);
    expect_shared(&exe);
}

fn expect_every_sleep_check(stdout: &str) {
    for id in ["S.1", "S.2", "S.3", "C.1", "C.2", "C.3", "C.4", "C.5"] {
        assert!(
            stdout.contains(&format!("test_sleep: ok {id} ")),
            "no result for check {id}:\n{stdout}"
        );
    }
    assert!(stdout.contains("test_sleep: all "), "{stdout}");
}

/// Every check of test_timerset.c, by its id: the bullets of Figure 6 (F6.*) and Figure 7
/// (F7.*), the encoding and process-wide set (E.*), the clean API and isolation (C.*).
const TIMERSET_CHECKS: [&str; 31] = [
    "F6.1", "F6.2", "F6.3", "F6.4", "F6.5", "F6.6", "F6.7", "F6.8", "F7.1", "F7.2", "F7.3", "F7.4",
    "F7.5", "F7.6", "F7.7", "F7.8", "E.1", "E.2", "E.3", "E.4", "E.5", "E.6", "C.1", "C.2", "C.3",
    "C.4", "C.5", "C.6", "C.7", "C.8", "C.9",
];

fn expect_every_timerset_check(stdout: &str) {
    for id in TIMERSET_CHECKS {
        assert!(
            stdout.contains(&format!("test_timerset: ok {id} ")),
            "no result for check {id}:\n{stdout}"
        );
    }
    assert!(stdout.contains("checks passed"), "{stdout}");
    print!("{stdout}");
}

#[test]
fn timerset_c_program_against_the_static_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_timerset_static");
    let stdout = build_and_run("test_timerset", &exe, &static_link(&dir), &[]);
    expect_every_timerset_check(&stdout);
    expect_static(&exe);
}

#[test]
fn timerset_c_program_against_the_shared_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_timerset_shared");
    let env = [("LD_LIBRARY_PATH", dir.as_path())];
    let stdout = build_and_run("test_timerset", &exe, &shared_link(&dir), &env);
    expect_every_timerset_check(&stdout);
    expect_shared(&exe);
}

/// The header's promises checked function by function (`tests/c/test_documented.c`): every
/// documented error code, NULL pointers, stale and foreign handles, edge values, firing order
/// and windows, for the wheel, timer sets, itimers, sleeps and callout tables. Each group runs
/// in a child process and prints `test_documented: ok <group>`.
const DOCUMENTED_GROUPS: [&str; 7] = [
    "general", "wheel", "timerset", "itimer", "sleep", "callouts", "percpu",
];

fn expect_every_documented_group(stdout: &str) {
    for group in DOCUMENTED_GROUPS {
        assert!(
            stdout.contains(&format!("test_documented: ok {group}:")),
            "no result for group {group}:\n{stdout}"
        );
    }
    assert!(
        stdout.contains("test_documented: all groups passed"),
        "{stdout}"
    );
    print!("{stdout}");
}

#[test]
fn documented_c_program_against_the_static_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_documented_static");
    let stdout = build_and_run("test_documented", &exe, &static_link(&dir), &[]);
    expect_every_documented_group(&stdout);
    expect_static(&exe);
}

#[test]
fn documented_c_program_against_the_shared_library() {
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_documented_shared");
    let env = [("LD_LIBRARY_PATH", dir.as_path())];
    let stdout = build_and_run("test_documented", &exe, &shared_link(&dir), &env);
    expect_every_documented_group(&stdout);
    expect_shared(&exe);
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The README's C quick start, compiled with the same warnings as the tests and run against
/// the shared library: the program users copy first must build and work.
#[test]
fn the_readme_c_quick_start_builds_and_runs() {
    let readme = std::fs::read_to_string(Path::new(CRATE).join("../../README.md")).unwrap();
    let start = readme
        .find("## Quick start: C")
        .expect("the README has a C quick start");
    let block = &readme[start..];
    let code_start = block.find("```c\n").expect("a ```c block") + 5;
    let code_len = block[code_start..].find("```").expect("the block ends");
    let code = &block[code_start..code_start + code_len];
    let example = std::fs::read_to_string(Path::new(CRATE).join("../../examples/c/quick_start.c"))
        .expect("examples/c/quick_start.c is readable");
    assert_eq!(
        code, example,
        "the README's C quick start is examples/c/quick_start.c, word for word"
    );
    let source = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme_quick_start.c");
    std::fs::write(&source, code).unwrap();
    let dir = lib_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme_quick_start");
    let out = build_source_and_run("README quick start", &source, &exe, &shared_link(&dir), &[]);
    assert_eq!(out, "timer 1 expired\ntimer 2 expired\ntimer 3 expired\n");
}
