//! The ratio tables: each peer's median over the facility's, column by column.

use super::table::{Align, Table};
use crate::registry::{Role, SchemeInfo};

/// One measurement as the ratio table sees it: the structure, the column it belongs to (`N=…`
/// for W1, one column otherwise) and its median.
pub type RatioEntry = (&'static SchemeInfo, String, Option<f64>);

/// The ratio table: one row per peer, one column per entry column, each cell the peer's median
/// divided by the facility's median in the same column ("peer / wheel": above 1, the facility
/// is faster). `None` when the entries hold no facility or no peer.
pub fn ratio_table(entries: &[RatioEntry], columns: &[String]) -> Option<String> {
    let facility = entries.iter().find(|e| e.0.role == Role::Facility)?.0;
    let mut peers: Vec<&'static SchemeInfo> = Vec::new();
    for (scheme, _, _) in entries {
        if scheme.role == Role::Peer && !peers.iter().any(|p| p.name == scheme.name) {
            peers.push(scheme);
        }
    }
    if peers.is_empty() {
        return None;
    }
    let median = |scheme: &SchemeInfo, column: &str| {
        entries
            .iter()
            .find(|e| e.0.name == scheme.name && e.1 == column)
            .and_then(|e| e.2)
    };
    let heading = format!("peer / {}", facility.name);
    let mut header: Vec<(&str, Align)> = vec![(heading.as_str(), Align::Left)];
    header.extend(columns.iter().map(|c| (c.as_str(), Align::Right)));
    let mut table = Table::new(&header);
    for peer in peers {
        let mut cells = vec![peer.row_name()];
        for column in columns {
            cells.push(match (median(peer, column), median(facility, column)) {
                (Some(p), Some(f)) if f > 0.0 => format!("{:.2}", p / f),
                _ => "-".into(),
            });
        }
        table.push(cells);
    }
    Some(table.render())
}
