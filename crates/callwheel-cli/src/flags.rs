//! The flags the commands share, defined once so that they mean the same everywhere: the sizes
//! (`--quick`, `--tiny`; each size option's help gives its value at each) and the output
//! (`--out DIR`, `--json`).

use std::path::PathBuf;

use clap::Args;

/// `--quick` and `--tiny`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Args)]
pub struct Sizes {
    /// Smaller sizes: a few seconds (each size option says its value).
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
        let probe = dir.join(".write-test");
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
