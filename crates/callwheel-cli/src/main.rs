//! The `callwheel` binary; everything is in the `callwheel_cli` library.

fn main() -> std::process::ExitCode {
    callwheel_cli::cli::run()
}
