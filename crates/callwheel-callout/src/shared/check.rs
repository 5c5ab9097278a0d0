//! A shared table's invariants, checked by brute force: the directory and the CPUs' tables
//! agree.

use core::hash::Hash;

use super::SharedCallouts;
use crate::backing::Backing;
use crate::pool::Kind;

impl<S: Backing, C: Copy + Eq + Hash> SharedCallouts<S, C> {
    /// Verifies, by brute force, every table's invariants and that the directory and the
    /// tables agree: each live callout has exactly one record, in the table its entry names,
    /// and each waiting move belongs to the callout whose record waits. For tests; `Err`
    /// names what is broken.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        let directory = self.lock_directory();
        let mut homes = Vec::new();
        directory.entries.check()?;
        for (index, &(cpu, local)) in directory.entries.iter() {
            let table = self
                .cpus
                .get(cpu)
                .ok_or("an entry names no CPU of the table")?;
            if table.with(|t| t.resolve(local, Kind::Persistent)).is_err() {
                return Err("an entry names no callout of its CPU's table");
            }
            homes.push(((cpu, local.to_parts()), index));
        }
        homes.sort_unstable();
        if homes.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err("two entries name one record");
        }
        for (cpu, table) in self.cpus.iter().enumerate() {
            table.with(|t| {
                t.check_invariants()?;
                for m in &t.moves {
                    let local = t.pool.handle(m.idx);
                    if directory.entries.get(m.entry).copied() != Some((cpu, local)) {
                        return Err("a waiting move is not its callout's");
                    }
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}
