//! Generates the C header from this crate's source with cbindgen into the build's `OUT_DIR`.
//! The committed `include/callwheel.h` is rewritten only with `CALLWHEEL_UPDATE_HEADER=1`
//! set; the test `tests/header.rs` fails while the two differ.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build.rs");

    let lib = dir.join("src/lib.rs");
    let source = fs::read_to_string(&lib).expect("src/lib.rs is readable");
    let config =
        cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_header(header_comment(&source))
        .with_src(&lib)
        .generate()
        .expect("cbindgen generates the header");

    let mut text = Vec::new();
    bindings.write(&mut text);
    // The build's own copy, which the header test compares with the committed one.
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    write_if_changed(&out.join("callwheel.h"), &text);
    // Dependents' build scripts find it there (DEP_CALLWHEEL_FFI_INCLUDE), in a packaged crate
    // as in the source tree.
    println!("cargo:include={}", out.display());
    // The source tree is written only when asked: an ordinary build (or a packaged crate)
    // never touches it.
    println!("cargo:rerun-if-env-changed=CALLWHEEL_UPDATE_HEADER");
    if env::var_os("CALLWHEEL_UPDATE_HEADER").is_some() {
        write_if_changed(&dir.join("include/callwheel.h"), &text);
    }
}

/// The crate documentation (`//!` lines of lib.rs) as a C block comment, so the header
/// explains itself with the same words as rustdoc.
fn header_comment(source: &str) -> String {
    let mut out = String::from("/*\n");
    for line in source.lines().map_while(|l| l.strip_prefix("//!")) {
        let line = line.strip_prefix(' ').unwrap_or(line);
        assert!(
            !line.contains("*/"),
            "the crate documentation must not close a C comment"
        );
        if line.is_empty() {
            out.push_str(" *\n");
        } else {
            out.push_str(" * ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(
        " *\n * Generated from crates/callwheel-ffi by cbindgen (build.rs): do not edit.\n */",
    );
    out
}

/// Writes the header only when its text changes, so an unchanged build touches nothing. A
/// read-only source tree (a packaged crate) gets a warning instead of a failed build.
fn write_if_changed(path: &Path, text: &[u8]) {
    if fs::read(path).is_ok_and(|old| old == text) {
        return;
    }
    let written = path
        .parent()
        .map_or(Ok(()), fs::create_dir_all)
        .and_then(|()| fs::write(path, text));
    if let Err(e) = written {
        println!("cargo:warning=could not write {}: {e}", path.display());
    }
}
