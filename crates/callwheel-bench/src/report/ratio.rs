//! The ratio tables: each structure's median over the facility's, column by column, paired by
//! round when the run had rounds.

use super::outcome::Outcome;
use super::table::{Align, Table};
use crate::percentile::median;
use crate::structure::{Role, SchemeInfo};

/// One measurement as the ratio table sees it: the structure, the column it belongs to (`N=…`
/// for W1, one column otherwise) and its outcome.
pub type RatioEntry<'a> = (&'static SchemeInfo, String, &'a Outcome);

/// `a`'s figure over `b`'s. When both ran in the same number of rounds (two or more), the
/// median of the rounds' ratios: the two ran close together in each round, so a disturbance of
/// the machine that lasts a round falls on both, and the pairing cancels it where pooled
/// medians would not. Otherwise the ratio of the medians. `None` when either has no figure or
/// `b`'s is not positive.
pub fn outcome_ratio(a: &Outcome, b: &Outcome) -> Option<f64> {
    let (Outcome::Done(a), Outcome::Done(b)) = (a, b) else {
        return None;
    };
    if a.rounds.len() >= 2 && a.rounds.len() == b.rounds.len() {
        let ratios: Vec<f64> = a
            .rounds
            .iter()
            .zip(&b.rounds)
            .filter(|(_, &y)| y > 0.0)
            .map(|(&x, &y)| x / y)
            .collect();
        if ratios.len() == a.rounds.len() {
            return median(&ratios);
        }
        return None;
    }
    let (x, y) = (median(&a.samples)?, median(&b.samples)?);
    (y > 0.0).then_some(x / y)
}

/// The structure the ratios divide by: the first structure of role [`Role::Facility`] among
/// the entries (the registry lists the Rust wheel first).
pub fn reference(entries: &[RatioEntry]) -> Option<&'static SchemeInfo> {
    entries
        .iter()
        .find(|e| e.0.role == Role::Facility)
        .map(|e| e.0)
}

/// The outcome of the structure named `name` in `column`, if the entries hold it.
fn outcome_in<'a>(entries: &[RatioEntry<'a>], name: &str, column: &str) -> Option<&'a Outcome> {
    entries
        .iter()
        .find(|e| e.0.name == name && e.1 == column)
        .map(|e| e.2)
}

/// [`outcome_ratio`] of the structure named `name` over the reference in `column`.
fn ratio_in(entries: &[RatioEntry], reference: &str, name: &str, column: &str) -> Option<f64> {
    outcome_ratio(
        outcome_in(entries, name, column)?,
        outcome_in(entries, reference, column)?,
    )
}

/// The ratio table of the structures with role `role` against the [`reference()`]: one row per
/// structure, the reference itself left out, one column per entry column, each cell
/// [`outcome_ratio`] of the structure over the reference in that column ("… / wheel": above 1,
/// the reference is faster). `None` when the entries hold no reference or no such structure.
pub fn ratio_table(entries: &[RatioEntry], columns: &[String], role: Role) -> Option<String> {
    let reference = reference(entries)?;
    let mut rows: Vec<&'static SchemeInfo> = Vec::new();
    for (scheme, _, _) in entries {
        if scheme.role == role
            && scheme.name != reference.name
            && !rows.iter().any(|p| p.name == scheme.name)
        {
            rows.push(scheme);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let heading = format!(
        "{} / {}",
        if role == Role::Peer {
            "peer"
        } else {
            "structure"
        },
        reference.name
    );
    let mut header: Vec<(&str, Align)> = vec![(heading.as_str(), Align::Left)];
    header.extend(columns.iter().map(|c| (c.as_str(), Align::Right)));
    let mut table = Table::new(&header);
    for row in rows {
        let mut cells = vec![row.row_name()];
        for column in columns {
            let ratio = ratio_in(entries, reference.name, row.name, column);
            cells.push(ratio.map_or_else(|| "-".into(), |r| format!("{r:.2}")));
        }
        table.push(cells);
    }
    Some(table.render())
}

/// The largest [`outcome_ratio`] of the structure named `name` over the [`reference()`] across
/// `columns`, with its column; `None` when no column has both figures, or when `name` is the
/// reference itself.
pub fn largest_ratio<'c>(
    entries: &[RatioEntry],
    columns: &'c [String],
    name: &str,
) -> Option<(f64, &'c str)> {
    let reference = reference(entries)?;
    if reference.name == name {
        return None;
    }
    columns
        .iter()
        .filter_map(|c| Some((ratio_in(entries, reference.name, name, c)?, c.as_str())))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}
