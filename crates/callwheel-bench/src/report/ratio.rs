//! The ratio tables: each structure's median over the facility's, column by column, paired by
//! round when the run had rounds.

use super::outcome::Outcome;
use super::table::{Align, Table};
use crate::percentile::median;
use crate::registry::{Role, SchemeInfo};

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

/// The ratio table of the structures with role `role` against the facility (the first
/// structure of role [`Role::Facility`] in the entries): one row per structure, the facility
/// itself left out, one column per entry column, each cell [`outcome_ratio`] of the structure
/// over the facility in that column ("… / wheel": above 1, the facility is faster). `None`
/// when the entries hold no facility or no such structure.
pub fn ratio_table(entries: &[RatioEntry], columns: &[String], role: Role) -> Option<String> {
    let facility = entries.iter().find(|e| e.0.role == Role::Facility)?.0;
    let mut rows: Vec<&'static SchemeInfo> = Vec::new();
    for (scheme, _, _) in entries {
        if scheme.role == role
            && scheme.name != facility.name
            && !rows.iter().any(|p| p.name == scheme.name)
        {
            rows.push(scheme);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let outcome = |scheme: &SchemeInfo, column: &str| {
        entries
            .iter()
            .find(|e| e.0.name == scheme.name && e.1 == column)
            .map(|e| e.2)
    };
    let heading = format!(
        "{} / {}",
        if role == Role::Peer {
            "peer"
        } else {
            "structure"
        },
        facility.name
    );
    let mut header: Vec<(&str, Align)> = vec![(heading.as_str(), Align::Left)];
    header.extend(columns.iter().map(|c| (c.as_str(), Align::Right)));
    let mut table = Table::new(&header);
    for row in rows {
        let mut cells = vec![row.row_name()];
        for column in columns {
            let ratio = match (outcome(row, column), outcome(facility, column)) {
                (Some(a), Some(b)) => outcome_ratio(a, b),
                _ => None,
            };
            cells.push(ratio.map_or_else(|| "-".into(), |r| format!("{r:.2}")));
        }
        table.push(cells);
    }
    Some(table.render())
}

/// The largest [`outcome_ratio`] of the structure named `name` over the facility (the first
/// structure of role [`Role::Facility`] in the entries) across `columns`, with its column;
/// `None` when no column has both figures.
pub fn largest_ratio<'c>(
    entries: &[RatioEntry],
    columns: &'c [String],
    name: &str,
) -> Option<(f64, &'c str)> {
    let facility = entries.iter().find(|e| e.0.role == Role::Facility)?.0;
    let outcome = |scheme: &str, column: &str| {
        entries
            .iter()
            .find(|e| e.0.name == scheme && e.1 == column)
            .map(|e| e.2)
    };
    columns
        .iter()
        .filter_map(|c| {
            let ratio = outcome_ratio(outcome(name, c)?, outcome(facility.name, c)?)?;
            Some((ratio, c.as_str()))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}
