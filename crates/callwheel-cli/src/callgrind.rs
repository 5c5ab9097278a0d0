//! Counting instructions with valgrind's callgrind: running one of this binary's hidden driver
//! commands under it ([`profile`]), and reading the inclusive instruction count of every call to
//! a function from its dumps ([`calls_to`]). The experiments that count (`table2`,
//! `instructions`) both work this way: the driver calls each measured function through a probe
//! the compiler may not inline, callgrind collects only inside the probes, and the driver calls
//! [`point_done`] after each point, after which callgrind writes a dump.
//!
//! A callgrind profile lists, under each function (`fn=`), the cost of its own lines and of
//! each call it makes: a `cfn=` line names the callee, a `calls=COUNT TARGET` line follows,
//! and the next line is `POSITION COST`, the callee's inclusive cost for those calls. Summing
//! those call costs over every caller gives a function's inclusive count and its number of
//! calls, whoever called it. Names are compressed: `(id) name` the first time, `(id)` after,
//! in one namespace for `fn=` and `cfn=`, which this reader keeps across the dumps of one run
//! (callgrind repeats the names in each file, but need not).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `valgrind` on `PATH`, if it is there.
pub fn valgrind() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("valgrind"))
        .find(|p| p.is_file())
}

/// What a driver printed and the dumps callgrind wrote, one per point, in order.
#[derive(Debug)]
pub struct Profile {
    /// The driver's standard output.
    pub stdout: String,
    /// Each dump's text, in the order written.
    pub dumps: Vec<String>,
}

/// Marks the end of a driver's point: callgrind writes a dump when this returns. One function
/// for every driver, on purpose: two drivers' markers with the same body would be folded into
/// one by the linker, and the other's name would never be called.
#[inline(never)]
pub fn point_done(point: usize) {
    std::hint::black_box(point);
}

/// The marker's name, as `--dump-after` matches it.
const POINT_DONE: &str = "callgrind::point_done";

/// The points a driver announced on its standard output, in order: every line `tag {json}`,
/// read as a `P` and named by `key` (`None` for a point it does not know). Other lines are
/// ignored; no point at all is an error, as is a line that does not parse.
pub fn driver_points<P, K>(
    stdout: &str,
    tag: &str,
    key: impl Fn(P) -> Option<K>,
) -> Result<Vec<K>, String>
where
    P: serde::de::DeserializeOwned,
{
    let mut points = Vec::new();
    for line in stdout.lines().filter(|l| l.starts_with(tag)) {
        let point: P = callwheel_bench::child_line::read(tag, line)?;
        points.push(key(point).ok_or_else(|| format!("an unknown point in {line:?}"))?);
    }
    if points.is_empty() {
        return Err("the driver printed no points".into());
    }
    Ok(points)
}

impl Profile {
    /// The dumps of `points` points, one each in order, or why they cannot be had. Callgrind
    /// writes one dump per point and may write the costs left at exit as one more.
    pub fn dumps_of(&self, points: usize) -> Result<&[String], String> {
        self.dumps.get(..points).ok_or_else(|| {
            format!(
                "callgrind wrote {} dumps for {points} points (is --dump-after supported?)",
                self.dumps.len()
            )
        })
    }
}

/// Runs this binary with `args` under callgrind, collecting only inside functions whose names
/// contain `probe_marker` and writing a dump after each call of [`point_done`]. `Ok(None)`
/// without valgrind on `PATH`; `Err` says what failed (the driver's exit status and the end of
/// its errors).
pub fn profile(args: &[&str], probe_marker: &str) -> Result<Option<Profile>, String> {
    let Some(valgrind) = valgrind() else {
        return Ok(None);
    };
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let dir = std::env::temp_dir().join(format!(
        "callwheel-callgrind-{}-{}",
        std::process::id(),
        probe_marker.trim_matches('_')
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = profile_in(&valgrind, &exe, &dir, args, probe_marker);
    let _ = std::fs::remove_dir_all(&dir);
    result.map(Some)
}

fn profile_in(
    valgrind: &Path,
    exe: &Path,
    dir: &Path,
    args: &[&str],
    probe_marker: &str,
) -> Result<Profile, String> {
    const STEM: &str = "callgrind.out";
    let output = Command::new(valgrind)
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", dir.join(STEM).display()))
        .args([
            "--collect-atstart=no",
            &format!("--toggle-collect=*{probe_marker}*"),
            &format!("--dump-after=*{POINT_DONE}*"),
            "--dump-instr=no",
            "--demangle=yes",
        ])
        .arg(exe)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", valgrind.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(format!(
            "the driver under callgrind failed ({}): {}",
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            dump_number(&name, STEM).map(|n| (n, e.path()))
        })
        .collect();
    files.sort();
    let dumps = files
        .iter()
        .map(|(_, path)| {
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Profile {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        dumps,
    })
}

/// The calls to one function in one dump.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// How many calls.
    pub count: u64,
    /// Instructions executed inside them, callees included (the `Ir` event).
    pub instructions: u64,
}

/// Function names by compressed id, shared by the dumps of one run.
#[derive(Debug, Default)]
pub struct Names {
    by_id: HashMap<String, String>,
}

impl Names {
    /// The name a `fn=` or `cfn=` value stands for: `(id) name` defines and returns `name`,
    /// `(id)` looks it up, anything else is a plain name.
    fn resolve(&mut self, value: &str) -> String {
        let value = value.trim();
        let Some(rest) = value.strip_prefix('(') else {
            return value.to_string();
        };
        let Some((id, name)) = rest.split_once(')') else {
            return value.to_string();
        };
        let name = name.trim();
        if name.is_empty() {
            self.by_id.get(id).cloned().unwrap_or_default()
        } else {
            self.by_id.insert(id.to_string(), name.to_string());
            name.to_string()
        }
    }
}

/// The calls in one dump (`text`) to every function whose name contains `marker`, keyed by
/// what follows the marker up to the first character that cannot be in an identifier (so a
/// compiler's clone of a function, `name.specialized.1`, counts as the function).
///
/// # Errors
///
/// A `calls=` line not followed by a cost line, or a count that is not a number.
pub fn calls_to(
    text: &str,
    marker: &str,
    names: &mut Names,
) -> Result<HashMap<String, Calls>, String> {
    let mut out: HashMap<String, Calls> = HashMap::new();
    let mut callee: Option<String> = None;
    // Position columns before the costs: `line` by default, `instr line` with --dump-instr.
    let mut positions = 1;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(value) = line.strip_prefix("positions:") {
            positions = value.split_whitespace().count().max(1);
        } else if let Some(value) = line.strip_prefix("fn=") {
            // Defines the name, if new; the caller itself does not matter.
            names.resolve(value);
        } else if let Some(value) = line.strip_prefix("cfn=") {
            callee = Some(names.resolve(value));
        } else if let Some(value) = line.strip_prefix("calls=") {
            let count: u64 = value
                .split_whitespace()
                .next()
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| format!("bad calls line {line:?}"))?;
            let cost = lines
                .next()
                .ok_or_else(|| format!("calls line {line:?} without a cost line"))?;
            let mut words = cost.split_whitespace();
            if words.by_ref().take(positions).count() < positions {
                return Err(format!("short cost line after {line:?}"));
            }
            // A missing event is a zero.
            let instructions: u64 = match words.next() {
                Some(w) => w.parse().map_err(|_| format!("bad cost line {cost:?}"))?,
                None => 0,
            };
            let Some(name) = callee.take() else {
                return Err(format!("calls line {line:?} without a callee"));
            };
            if let Some(key) = key_of(&name, marker) {
                let entry = out.entry(key).or_default();
                entry.count += count;
                entry.instructions += instructions;
            }
        }
    }
    Ok(out)
}

/// What follows `marker` in `name`, up to the first character that is not alphanumeric or `_`.
fn key_of(name: &str, marker: &str) -> Option<String> {
    let at = name.find(marker)? + marker.len();
    let key: String = name[at..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!key.is_empty()).then_some(key)
}

/// The number of a dump file `stem.N` (callgrind's `--dump-after` dumps), if `file` is one.
pub fn dump_number(file: &str, stem: &str) -> Option<u64> {
    file.strip_prefix(stem)?.strip_prefix('.')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "\
# callgrind format
version: 1
positions: line
events: Ir
summary: 76

fl=(1) src/main.rs
fn=(10) app::main
cfn=(12) app::table2_probe_timeout_old
calls=2 491
10 300
cfn=(13) app::table2_probe_untimeout_old.specialized.1
calls=2 12
11 100
cfn=(14) app::other
calls=1 5
12 999

fn=(12)
5 7
cfn=(13)
calls=1 20
+3 60
";

    #[test]
    fn sums_the_calls_to_each_marked_function_from_every_caller() {
        let mut names = Names::default();
        let calls = calls_to(DUMP, "table2_probe_", &mut names).unwrap();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(
            calls["timeout_old"],
            Calls {
                count: 2,
                instructions: 300
            }
        );
        assert_eq!(
            calls["untimeout_old"],
            Calls {
                count: 3,
                instructions: 160
            }
        );
    }

    #[test]
    fn names_carry_over_between_dumps() {
        let mut names = Names::default();
        calls_to(DUMP, "table2_probe_", &mut names).unwrap();
        let later = "fn=(10)\ncfn=(12)\ncalls=4 1\n0 40\n";
        let calls = calls_to(later, "table2_probe_", &mut names).unwrap();
        assert_eq!(calls["timeout_old"].instructions, 40);
    }

    #[test]
    fn instruction_positions_come_before_the_cost() {
        let mut names = Names::default();
        let text = "positions: instr line\ncfn=(1) a::table2_probe_x\ncalls=1 0x10 4\n0x20 5 42\n";
        let calls = calls_to(text, "table2_probe_", &mut names).unwrap();
        assert_eq!(calls["x"].instructions, 42);
    }

    #[test]
    fn a_truncated_profile_is_an_error() {
        let mut names = Names::default();
        assert!(calls_to("cfn=(1) x\ncalls=1 2\n", "x", &mut names).is_err());
        assert!(calls_to("cfn=(1) x\ncalls=z 2\n0 1\n", "x", &mut names).is_err());
    }

    #[test]
    fn dump_files_are_numbered() {
        assert_eq!(dump_number("callgrind.out.12", "callgrind.out"), Some(12));
        assert_eq!(dump_number("callgrind.out", "callgrind.out"), None);
        assert_eq!(dump_number("other.3", "callgrind.out"), None);
    }
}
