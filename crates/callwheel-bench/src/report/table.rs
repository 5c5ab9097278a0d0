//! Markdown tables with padded, aligned columns, and the formatting of nanoseconds.

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text, flush left.
    Left,
    /// Numbers, flush right.
    Right,
}

/// A Markdown table whose columns are padded to a common width.
#[derive(Clone, Debug)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column headings and alignments.
    pub fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|&(_, a)| a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are left empty, extra cells are dropped.
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h).max(3)).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::from("|");
            for ((cell, &w), &align) in cells.iter().zip(&widths).zip(&self.align) {
                let pad = " ".repeat(w - width(cell));
                match align {
                    Align::Left => out.push_str(&format!(" {cell}{pad} |")),
                    Align::Right => out.push_str(&format!(" {pad}{cell} |")),
                }
            }
            out.push('\n');
            out
        };
        let mut out = line(&self.header);
        out.push('|');
        for (&w, &align) in widths.iter().zip(&self.align) {
            match align {
                Align::Left => out.push_str(&format!(" {} |", "-".repeat(w))),
                Align::Right => out.push_str(&format!(" {}: |", "-".repeat(w - 1))),
            }
        }
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// Formats nanoseconds with a precision that suits their size.
pub fn format_ns(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.2}")
    } else if ns < 1000.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.0}")
    }
}
