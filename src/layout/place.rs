//! Where every component of a layout tree starts when each one's task count is fixed.
//!
//! A campaign on a layout tree keeps each component's task count as its configuration; the
//! root PEs follow from the tree: parts side by side (`|`) are laid one after the other on
//! disjoint PEs, left to right, and parts one after the other (`;`) all start on the same first
//! PE. The span, one past the highest PE any component uses, is what CIME counts as the cores
//! of a run of one thread per task.

use super::search::Placement;
use super::Layout;

/// A tree's components placed: every component left to right, and the PEs they span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// Every component of the tree, left to right.
    pub placements: Vec<Placement>,
    /// One past the highest PE any component uses.
    pub width: u32,
}

impl Placed {
    /// The first PE of `name`, if the tree has it.
    pub fn root_pe(&self, name: &str) -> Option<u32> {
        self.placements
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.root_pe)
    }
}

/// Places `tree` from PE 0 with `tasks(name)` tasks per component; `Err(name)` names the first
/// component without a count.
pub fn place(tree: &Layout, tasks: &dyn Fn(&str) -> Option<u32>) -> Result<Placed, String> {
    let mut placements = Vec::new();
    let width = place_at(tree, 0, tasks, &mut placements)?;
    Ok(Placed { placements, width })
}

/// The PEs `tree` spans with these counts (see [`place`]).
pub fn width(tree: &Layout, tasks: &dyn Fn(&str) -> Option<u32>) -> Result<u32, String> {
    place(tree, tasks).map(|p| p.width)
}

fn place_at(
    tree: &Layout,
    root: u32,
    tasks: &dyn Fn(&str) -> Option<u32>,
    out: &mut Vec<Placement>,
) -> Result<u32, String> {
    match tree {
        Layout::Component(name) => {
            let n = tasks(name).ok_or_else(|| name.clone())?;
            out.push(Placement {
                name: name.clone(),
                tasks: n,
                threads: 1,
                root_pe: root,
            });
            Ok(n)
        }
        Layout::Beside(parts) => {
            let mut at = root;
            for part in parts {
                let w = place_at(part, at, tasks, out)?;
                at = at.saturating_add(w);
            }
            Ok(at - root)
        }
        Layout::After(parts) => {
            let mut widest = 0;
            for part in parts {
                widest = widest.max(place_at(part, root, tasks, out)?);
            }
            Ok(widest)
        }
    }
}

/// Every class a CIME case needs set: the tree's components as placed, then each ride-along
/// class the tree leaves out on the PEs of the part that holds the atmosphere
/// ([`super::emit::with_ride_along`]).
pub fn with_ride_along(tree: &Layout, placed: &Placed) -> Vec<Placement> {
    super::emit::with_ride_along(tree, &placed.placements, placed.width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{infer, PeRange};

    #[test]
    fn cesm_default_places_the_ocean_first_and_ice_beside_land_on_the_atmosphere() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let tasks = |n: &str| match n {
            "ocn" => Some(40),
            "atm" => Some(96),
            "ice" => Some(30),
            "lnd" => Some(50),
            _ => None,
        };
        let placed = place(&tree, &tasks).unwrap();
        assert_eq!(placed.width, 40 + 96);
        assert_eq!(placed.root_pe("ocn"), Some(0));
        assert_eq!(placed.root_pe("atm"), Some(40));
        assert_eq!(placed.root_pe("ice"), Some(40));
        assert_eq!(placed.root_pe("lnd"), Some(70));
        // The placement reads back as the same tree.
        let ranges: Vec<(String, PeRange)> = placed
            .placements
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    PeRange {
                        tasks: p.tasks,
                        threads: 1,
                        root_pe: p.root_pe,
                        stride: 1,
                    },
                )
            })
            .collect();
        assert_eq!(infer(&ranges).unwrap(), tree);
        // A side wider than the atmosphere sets the span.
        let wide = |n: &str| if n == "lnd" { Some(90) } else { tasks(n) };
        assert_eq!(width(&tree, &wide).unwrap(), 40 + 120);
        assert_eq!(width(&tree, &|_| None).unwrap_err(), "ocn");
        // The coupler and the other ride-along classes sit on the atmosphere's side.
        let all = with_ride_along(&tree, &placed);
        assert_eq!(all.len(), 8);
        assert!(all[4..].iter().all(|p| p.root_pe == 40 && p.tasks == 96));
    }
}
