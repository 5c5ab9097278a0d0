//! The flags the commands share, defined once so that they mean the same everywhere: the sizes
//! (`--quick`, `--tiny`; each size option's help gives its value at each) and the output
//! (`--out DIR`, `--json`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Args;

/// `--quick` and `--tiny`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Args)]
pub struct Sizes {
    /// Smaller sizes: seconds rather than a minute (each size option says its value).
    #[arg(long)]
    pub quick: bool,
    /// Tiny sizes that check the plumbing in about a second; the figures mean little.
    #[arg(long, conflicts_with = "quick")]
    pub tiny: bool,
}

/// `--out DIR` and `--json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Args)]
pub struct Output {
    /// Where files go: the command's plots and, with --json, results.json [default: report].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the figures as JSON to DIR/results.json.
    #[arg(long)]
    pub json: bool,
}

impl Output {
    /// The directory files go to: `--out`, or `report`.
    pub fn dir(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| callwheel_bench::sections::DEFAULT_OUT.into())
    }

    /// Makes the output directory and checks that files can be written in it, so that a bad
    /// `--out` is refused before anything is measured. `Err` says what failed.
    pub fn prepare(&self) -> Result<PathBuf, String> {
        let dir = self.dir();
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // A name of this call's own: commands (and threads) may share a directory and run at
        // once, and one's removal must not take another's probe.
        static PROBES: AtomicU64 = AtomicU64::new(0);
        let probe = dir.join(format!(
            ".write-test-{}-{}",
            std::process::id(),
            PROBES.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&probe, b"")
            .and_then(|()| std::fs::remove_file(&probe))
            .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
        Ok(dir)
    }

    /// The directory `results.json` goes to, with `--json`.
    pub fn json_dir(&self) -> Option<PathBuf> {
        self.json.then(|| self.dir())
    }
}

#[cfg(test)]
mod tests {
    use super::Output;

    #[test]
    fn commands_sharing_a_directory_prepare_it_at_once() {
        let dir = std::env::temp_dir().join(format!("callwheel-prepare-{}", std::process::id()));
        let output = Output {
            out: Some(dir.clone()),
            json: false,
        };
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..200 {
                        assert_eq!(output.prepare(), Ok(dir.clone()));
                    }
                });
            }
        });
        // Every probe was removed.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
