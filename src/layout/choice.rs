//! One way a component may run in a layout: what the exact searches over a tree
//! ([`super::search`] for the front, [`super::ranked`] for the ranking by fittingness) both take
//! as input, kept below both so neither imports the other.

/// One way a component may run: its MPI tasks, OpenMP threads per task and the seconds one
/// simulated year takes that way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// MPI tasks.
    pub tasks: u32,
    /// OpenMP threads per task.
    pub threads: u32,
    /// Seconds per simulated year.
    pub run_s: f64,
}

impl Choice {
    /// Cores the choice takes on its own.
    pub fn cores(&self) -> u64 {
        u64::from(self.tasks) * u64::from(self.threads.max(1))
    }
}

/// A plain enumeration of a tree's placements: the oracle the fast searches are checked against.
#[cfg(test)]
pub(crate) mod oracle {
    use super::Choice;
    use crate::layout::Layout;
    use rand::rngs::StdRng;
    use rand::Rng;
    use std::collections::BTreeMap;

    pub(crate) fn random_tree(rng: &mut StdRng, names: &mut Vec<String>, depth: u32) -> Layout {
        if depth == 0 || names.len() >= 5 || rng.random_bool(0.4) {
            let name = format!("c{}", names.len());
            names.push(name.clone());
            return Layout::Component(name);
        }
        let parts = (0..rng.random_range(2..=3))
            .map(|_| random_tree(rng, names, depth - 1))
            .collect();
        if rng.random_bool(0.5) {
            Layout::beside(parts)
        } else {
            Layout::after(parts)
        }
    }

    /// Every placement the tree allows within the budget: (time, width, most threads, choices).
    pub(crate) fn every_placement(
        tree: &Layout,
        budget: u32,
        choices: &BTreeMap<String, Vec<Choice>>,
    ) -> Vec<(f64, u32, u32, BTreeMap<String, Choice>)> {
        let names: Vec<String> = tree.components().iter().map(|s| s.to_string()).collect();
        let mut out = Vec::new();
        let mut idx = vec![0usize; names.len()];
        loop {
            let pick: BTreeMap<String, Choice> = names
                .iter()
                .zip(&idx)
                .map(|(n, &i)| (n.clone(), choices[n][i]))
                .collect();
            let width = tree.width(&|n| Some(pick[n].tasks));
            let threads = pick.values().map(|c| c.threads).max().unwrap();
            if u64::from(width) * u64::from(threads) <= u64::from(budget) {
                let t = tree.run_time(&|n| Some(pick[n].run_s)).unwrap();
                out.push((t, width, threads, pick));
            }
            let mut k = 0;
            loop {
                if k == names.len() {
                    return out;
                }
                idx[k] += 1;
                if idx[k] < choices[&names[k]].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }
}
