//! The memory of the callout tables beside Costello & Varghese's figures: "n callout
//! structures required 4n longwords. The new implementation needs 9n longwords for them, plus
//! n to 2n for the callwheel array, plus 2n to 4n for the callhash array".
//!
//! The new table is [`Callouts`] on Scheme 6 ([`HashedWheel`]) filled by `timeout`, so every
//! callout is also on the (function, argument) hash; the original is [`Callouts`] on 4.4BSD's
//! `calltodo` ([`DifferentialList`]), whose `untimeout` searches the list and keeps no hash.
//! Each is measured twice: sized as the kernel sizes it at boot (a fixed pool of n records, a
//! slab of n nodes, a wheel of the next power of two at or above n buckets, as BSD's
//! `callwheelsize`), and grown on demand from the defaults (a pool of 256 records and a wheel
//! of 256 buckets, doubled as they fill: up to twice what n needs).
//!
//! Everything comes from the tables' own accounting, [`Callouts::memory_bytes`], split with
//! what is public: the backing scheme's [`memory_bytes`](callwheel::Timers::memory_bytes) (its
//! nodes and its array of list heads), and the array alone from an empty scheme of the same
//! shape. The rest is the callout records with the callhash buckets (and the table's small
//! queues), which the table reports only together. The paper's longword is 32 bits (4 bytes);
//! its counts are also given at 8 bytes a word, the size of a pointer today.

use std::fmt::Write as _;
use std::path::Path;

use callwheel::Timers;
use callwheel_callout::{Backing, Callouts, Config};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;

use crate::experiment::{Experiment, Section, Size};

/// The paper's longwords per callout: the new table's callout structures, its callwheel array
/// (a range), its callhash array (a range); the original's callout structures.
pub const NEW_STRUCTURES: f64 = 9.0;
/// The callwheel array, longwords per callout (n to 2n).
pub const NEW_WHEEL: (f64, f64) = (1.0, 2.0);
/// The callhash array, longwords per callout (2n to 4n).
pub const NEW_HASH: (f64, f64) = (2.0, 4.0);
/// The original callout structures, longwords per callout.
pub const ORIGINAL: f64 = 4.0;

/// The paper's total for the new table, longwords per callout: 12 to 15.
pub fn new_total() -> (f64, f64) {
    (
        NEW_STRUCTURES + NEW_WHEEL.0 + NEW_HASH.0,
        NEW_STRUCTURES + NEW_WHEEL.1 + NEW_HASH.1,
    )
}

/// How a table's storage was sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizing {
    /// For n callouts up front, as the kernel sizes its tables at boot.
    AtBoot,
    /// From the defaults, doubled on demand.
    Grown,
}

impl Sizing {
    fn name(self) -> &'static str {
        match self {
            Sizing::AtBoot => "at boot",
            Sizing::Grown => "grown",
        }
    }
}

/// Which table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// Costello & Varghese's: Scheme 6 and the callhash.
    New,
    /// 4.4BSD's `calltodo`.
    Original,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::New => "new (Scheme 6 + callhash)",
            Table::Original => "original (`calltodo`)",
        }
    }
}

/// One table's memory with n callouts pending, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Which table.
    pub table: Table,
    /// How it was sized.
    pub sizing: Sizing,
    /// Callouts pending.
    pub n: usize,
    /// [`Callouts::memory_bytes`].
    pub total: usize,
    /// The backing scheme's nodes: its memory less the array of an empty scheme of its shape.
    pub nodes: usize,
    /// The backing scheme's array of list heads (and busy marks): the callwheel array.
    pub array: usize,
}

impl Row {
    /// The records with the callhash buckets and the table's queues: all but the scheme.
    pub fn records(&self) -> usize {
        self.total - self.nodes - self.array
    }

    /// Bytes per callout of `bytes`.
    pub fn per(&self, bytes: usize) -> f64 {
        bytes as f64 / self.n.max(1) as f64
    }
}

/// Fills `table` with `n` timeouts of distinct calls, due from n ticks down to 1 (so that the
/// original's inserts each find their place at the head), and measures it; `empty_array` is
/// the bytes of an empty scheme shaped like the one the table ends with.
fn fill<S: Backing>(
    mut table: Callouts<S, u32>,
    n: usize,
    empty_array: impl Fn(&S) -> Result<usize, String>,
) -> Result<(usize, usize, usize), String> {
    for i in 0..n {
        table
            .timeout(i as u32, (n - i) as i64)
            .map_err(|e| format!("timeout {i} of {n}: {e}"))?;
    }
    if table.pending() != n {
        return Err(format!("{} of {n} callouts pending", table.pending()));
    }
    let scheme = table.scheme().memory_bytes();
    let array = empty_array(table.scheme())?;
    Ok((table.memory_bytes(), scheme.saturating_sub(array), array))
}

/// The bits of a wheel with at least `n` buckets.
fn bits_for(n: usize) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// Measures one table, sized one way, with `n` callouts.
pub fn measure(table: Table, sizing: Sizing, n: usize) -> Result<Row, String> {
    let err = |e: callwheel_callout::Error| e.to_string();
    let config = match sizing {
        Sizing::AtBoot => Config {
            calloutsize: n,
            fixed: true,
            ..Config::default()
        },
        Sizing::Grown => Config::default(),
    };
    let (total, nodes, array) = match table {
        Table::New => {
            let wheel = match sizing {
                Sizing::AtBoot => HashedWheel::with_capacity(bits_for(n), n),
                Sizing::Grown => HashedWheel::new(8),
            }
            .map_err(|e| e.to_string())?;
            let empty = |w: &HashedWheel<u32>| {
                HashedWheel::<u32>::new(w.size().trailing_zeros())
                    .map(|e| e.memory_bytes())
                    .map_err(|e| e.to_string())
            };
            fill(Callouts::with_config(wheel, config).map_err(err)?, n, empty)?
        }
        Table::Original => {
            let list = match sizing {
                Sizing::AtBoot => DifferentialList::with_capacity(n).map_err(|e| e.to_string())?,
                Sizing::Grown => DifferentialList::new(),
            };
            let empty =
                |_: &DifferentialList<u32>| Ok(DifferentialList::<u32>::new().memory_bytes());
            fill(Callouts::with_config(list, config).map_err(err)?, n, empty)?
        }
    };
    Ok(Row {
        table,
        sizing,
        n,
        total,
        nodes,
        array,
    })
}

/// What a callout-memory run measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The numbers of callouts pending.
    pub sizes: Vec<usize>,
}

/// `callout-memory`: bytes per callout of the new and the original tables against the paper's
/// longwords.
pub struct CalloutMemory;

impl Experiment for CalloutMemory {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "callout-memory"
    }

    fn about(&self) -> &'static str {
        "Bytes per callout of the new callout table and the original, against Costello & Varghese's 9n + (n-2n) + (2n-4n) and 4n longwords"
    }

    fn plan(&self, size: Size) -> Plan {
        let sizes = match size {
            Size::Tiny => vec![1_000],
            Size::Default => vec![1_000, 10_000, 100_000],
            Size::Full => vec![1_000, 10_000, 100_000, 1_000_000],
        };
        Plan { sizes }
    }

    fn run(&self, plan: &Plan, _out: &Path) -> Section {
        callout_memory(plan)
    }
}

/// `lo–hi` longwords per callout in bytes at `word` bytes a word.
fn range_bytes((lo, hi): (f64, f64), word: f64) -> String {
    format!("{:.0}–{:.0}", lo * word, hi * word)
}

/// The experiment: the tables and the findings.
fn callout_memory(plan: &Plan) -> Section {
    let mut done = Section::default();
    let _ = writeln!(
        done.markdown,
        "\n## Callout memory: the new table and the original against Costello & Varghese's longwords\n"
    );
    let mut rows = Vec::new();
    for &n in &plan.sizes {
        for sizing in [Sizing::AtBoot, Sizing::Grown] {
            for table in [Table::New, Table::Original] {
                match measure(table, sizing, n) {
                    Ok(row) => rows.push(row),
                    Err(e) => done.failed(&format!("{} {} n={n}", table.name(), sizing.name()), e),
                }
            }
        }
    }
    if rows.is_empty() {
        return done;
    }
    let total = new_total();
    let _ = writeln!(
        done.markdown,
        "Bytes per pending callout from `Callouts::memory_bytes`, split with the backing scheme's own `memory_bytes` (its nodes; its array of list heads measured on an empty scheme of the same shape); the records column is the rest: callout records, callhash buckets and the table's queues, which the table reports together. The paper's figures are in its 32-bit longwords (4 bytes) and, for comparison with 64-bit pointers, at 8 bytes a word: the new table {:.0}–{:.0} longwords per callout (9 for the callout structures, 1–2 for the callwheel array, 2–4 for the callhash array), the original {ORIGINAL:.0}.\n",
        total.0, total.1
    );
    let _ = writeln!(
        done.markdown,
        "| table | sized | n | bytes / callout | records + callhash | scheme nodes | callwheel array | the paper, 4-byte words | the paper, 8-byte words |"
    );
    let _ = writeln!(
        done.markdown,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in &rows {
        let (paper4, paper8) = match r.table {
            Table::New => (range_bytes(total, 4.0), range_bytes(total, 8.0)),
            Table::Original => (
                format!("{:.0}", ORIGINAL * 4.0),
                format!("{:.0}", ORIGINAL * 8.0),
            ),
        };
        let _ = writeln!(
            done.markdown,
            "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {paper4} | {paper8} |",
            r.table.name(),
            r.sizing.name(),
            r.n,
            r.per(r.total),
            r.per(r.records()),
            r.per(r.nodes),
            r.per(r.array)
        );
        let structure = match r.table {
            Table::New => "callouts on scheme 6",
            Table::Original => "callouts on calltodo",
        };
        let case = format!("{} n={}", r.sizing.name(), r.n);
        for (metric, bytes) in [
            ("bytes_per_callout", r.total),
            ("records_bytes_per_callout", r.records()),
            ("scheme_node_bytes_per_callout", r.nodes),
            ("array_bytes_per_callout", r.array),
        ] {
            done.figures
                .figure("callout-memory", structure, &case, metric, r.per(bytes));
        }
    }
    parts_table(&mut done, &rows);
    let _ = writeln!(
        done.markdown,
        "\nThe original here is not 4.4BSD's callout of four longwords (`c_next`, `c_arg`, `c_func`, `c_time`): both tables keep the same record in the pool (the call, its state and deadline, the hash links and what handles need) and the same node in the scheme (a 64-bit absolute deadline, a 64-bit word for the scheme, list links and the record's index), so the original differs from the new only by the callwheel array and the hash buckets the timeouts add, and the two are within a few tens of per cent of each other where the paper's differ by 3–3.75×."
    );
    for (what, result) in findings(&rows) {
        done.find("callout-memory", what, result);
    }
    done
}

/// The new table at boot sizing and the largest n, part by part beside the paper's.
fn parts_table(done: &mut Section, rows: &[Row]) {
    let at_boot = |table| {
        rows.iter()
            .filter(|r| r.table == table && r.sizing == Sizing::AtBoot)
            .max_by_key(|r| r.n)
    };
    let (Some(new), Some(old)) = (at_boot(Table::New), at_boot(Table::Original)) else {
        return;
    };
    let structures = (NEW_STRUCTURES + NEW_HASH.0, NEW_STRUCTURES + NEW_HASH.1);
    let _ = writeln!(
        done.markdown,
        "\nPart by part, sized at boot, n = {} (bytes per callout):\n",
        new.n
    );
    let _ = writeln!(
        done.markdown,
        "| part | the paper, longwords | 4-byte words | 8-byte words | ours |\n|---|---:|---:|---:|---:|"
    );
    let lines = [
        (
            "new: callout structures + callhash",
            structures,
            new.per(new.records() + new.nodes),
        ),
        ("new: callwheel array", NEW_WHEEL, new.per(new.array)),
        ("new: total", new_total(), new.per(new.total)),
        (
            "original: callout structures",
            (ORIGINAL, ORIGINAL),
            old.per(old.total),
        ),
    ];
    for (part, words, ours) in lines {
        let text = if words.0 == words.1 {
            format!("{:.0}", words.0)
        } else {
            format!("{:.0}–{:.0}", words.0, words.1)
        };
        let (b4, b8) = if words.0 == words.1 {
            (
                format!("{:.0}", words.0 * 4.0),
                format!("{:.0}", words.0 * 8.0),
            )
        } else {
            (range_bytes(words, 4.0), range_bytes(words, 8.0))
        };
        let _ = writeln!(
            done.markdown,
            "| {part} | {text} | {b4} | {b8} | {ours:.1} |"
        );
    }
}

/// Observations beside the paper's figures, and one check: memory linear in n.
fn findings(rows: &[Row]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let boot = |table| -> Vec<&Row> {
        rows.iter()
            .filter(|r| r.table == table && r.sizing == Sizing::AtBoot)
            .collect()
    };
    let span = |rs: &[&Row]| {
        let per: Vec<f64> = rs.iter().map(|r| r.per(r.total)).collect();
        (
            per.iter().copied().fold(f64::MAX, f64::min),
            per.iter().copied().fold(0.0, f64::max),
        )
    };
    let text = |(lo, hi): (f64, f64)| {
        if (hi - lo).abs() < 0.05 {
            format!("{lo:.1}")
        } else {
            format!("{lo:.1}–{hi:.1}")
        }
    };
    let (new, old) = (boot(Table::New), boot(Table::Original));
    let total = new_total();
    if !new.is_empty() {
        out.push((
            "new table, sized at boot: bytes per callout against the paper's 12n–15n longwords (no target)".into(),
            format!(
                "{} B against {} B at 4-byte words, {} B at 8-byte words",
                text(span(&new)),
                range_bytes(total, 4.0),
                range_bytes(total, 8.0)
            ),
        ));
    }
    if !old.is_empty() {
        out.push((
            "original table, sized at boot: bytes per callout against the paper's 4n longwords (no target)".into(),
            format!(
                "{} B against {:.0} B at 4-byte words, {:.0} B at 8-byte words",
                text(span(&old)),
                ORIGINAL * 4.0,
                ORIGINAL * 8.0
            ),
        ));
    }
    let ratios: Vec<String> = new
        .iter()
        .filter_map(|a| {
            let b = old.iter().find(|b| b.n == a.n)?;
            Some(format!(
                "{:.2}× at n = {}",
                a.total as f64 / b.total as f64,
                a.n
            ))
        })
        .collect();
    if !ratios.is_empty() {
        out.push((
            "new / original, sized at boot, against the paper's 3–3.75× (no target)".into(),
            ratios.join(", "),
        ));
    }
    if new.len() > 1 {
        let (lo, hi) = span(&new);
        out.push((
            "new table's memory linear in n: bytes per callout, sized at boot, within 1.5× over n"
                .into(),
            format!(
                "{lo:.1} to {hi:.1} B ({:.2}×): {}",
                hi / lo,
                callwheel_bench::report::verdict(hi <= 1.5 * lo)
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_add_up_and_the_new_table_costs_more() {
        for sizing in [Sizing::AtBoot, Sizing::Grown] {
            let new = measure(Table::New, sizing, 2_000).unwrap();
            let old = measure(Table::Original, sizing, 2_000).unwrap();
            assert_eq!(new.records() + new.nodes + new.array, new.total);
            // The hash buckets, the wheel's heads and the records' hash links are the new
            // table's alone.
            assert!(new.total > old.total, "{new:?} against {old:?}");
            assert!(new.array > old.array);
            // Every callout holds one record and one node at least.
            assert!(new.per(new.nodes) >= 16.0 && old.per(old.nodes) >= 16.0);
        }
    }

    #[test]
    fn at_boot_the_wheel_has_a_bucket_per_callout_or_up_to_two() {
        let row = measure(Table::New, Sizing::AtBoot, 1_000).unwrap();
        // 1,024 buckets of two 32-bit links, and the busy marks.
        let heads = row.array as f64 / 1_024.0;
        assert!((8.0..9.0).contains(&heads), "{heads} bytes per bucket");
    }

    #[test]
    fn the_paper_totals_are_twelve_to_fifteen_longwords() {
        assert_eq!(new_total(), (12.0, 15.0));
        assert_eq!(range_bytes(new_total(), 4.0), "48–60");
        assert_eq!(range_bytes(new_total(), 8.0), "96–120");
    }

    #[test]
    fn the_tiny_run_reports_both_tables() {
        let section = CalloutMemory.run(&CalloutMemory.plan(Size::Tiny), Path::new("."));
        assert_eq!(section.failures, 0, "{}", section.markdown);
        assert!(section
            .markdown
            .contains("| new (Scheme 6 + callhash) | at boot | 1000 |"));
        assert!(section
            .markdown
            .contains("| original (`calltodo`) | grown | 1000 |"));
        assert_eq!(section.findings.len(), 3);
    }
}
