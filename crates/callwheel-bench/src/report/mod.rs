//! The tables `callwheel bench` prints: one table per workload, the compact W1 matrix (rows =
//! schemes, columns = N, the shape of Costello & Varghese's Table I), the median/min/max summary
//! they show, and the ratio tables (each peer's median over the facility's). Tables are Markdown
//! with padded, aligned columns, readable as they are in a terminal and pastable into a document.

// One file per table and one per shared piece (outcome, table layout); the tables import the
// shared pieces and never each other.
mod outcome;
mod ratio;
mod table;
mod w1;
mod w2;
mod w3;
mod w4;
mod w5;

pub use outcome::{median_of, summary_cells, Outcome, Summary};
pub use ratio::{largest_ratio, outcome_ratio, ratio_table, reference, RatioEntry};
pub use table::{format_ns, Align, Table};
pub use w1::{w1_matrix, w1_table, W1Row};
pub use w2::{w2_table, W2Row};
pub use w3::{w3_table, W3Row};
pub use w4::{w4_table, W4Row};
pub use w5::{w5_table, W5Row};
// The verdicts have a module of their own; their old path here still works.
pub use crate::verdict::{verdict, Verdict};
