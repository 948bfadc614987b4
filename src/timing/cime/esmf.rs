//! `ESMF_Profile.summary`: the profile ESMF writes at the end of a NUOPC run (CIME copies it to
//! `timing/cesm.ESMF_Profile.summary.LID`; UFS and other NUOPC systems write the same file).
//!
//! After a notice of a few lines comes a header `Region PETs PEs Count Mean (s) Min (s) Min
//! PET Max (s) Max PET` (files of ESMF before 8.3 have no `PEs` column) and the tree of
//! regions, two spaces of indent a level. `Count` may be `MULTIPLE` (the region was entered
//! different numbers of times on different PETs), and a name repeats under other parents (a
//! component's `RunPhase1` appears under the run loop and under initialisation), so regions
//! are found by their place in the tree, not by name alone:
//! * `[ensemble] RunPhase1` is the run loop: its Max is the TOT;
//! * under it, `[ESM0001] RunPhase1` (the first ensemble member) holds `[ATM] RunPhase1` and the
//!   like, one per component: PETs are its tasks, PEs over PETs its threads, Max its run time;
//! * `[MED] med_phases*`, `med_connectors*` and `med_fraction*` are the mediator: the sum of
//!   their means is the coupler's run time;
//! * `[X-TO-Y] RunPhase1` are the connectors: the sum of their means is the communication time.
//!
//! The file states no root PEs and no simulated time, so it gives no layout and no SYPD; the
//! run's summary file beside it does. The reading is complete once the run loop's subtree has
//! ended (a region at its level or above follows it).

use std::path::Path;

use super::{whole_lines, CimeComponent, CimeRun};
use crate::timing::{Format, Reading, TimingError};

/// Whether a file name is an ESMF profile summary.
pub fn is_profile_name(name: &str) -> bool {
    name.contains("ESMF_Profile.summary")
}

/// Whether text (the first few kilobytes of a file) is an ESMF profile summary.
pub fn sniff(text: &str) -> bool {
    text.lines().any(|l| {
        let t: Vec<&str> = l.split_whitespace().collect();
        t.first() == Some(&"Region") && t.get(1) == Some(&"PETs")
    })
}

/// One region of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    /// The name as written (`[ATM] RunPhase1`).
    pub name: String,
    /// Depth in the tree (0 for the top level).
    pub depth: usize,
    /// PETs (MPI tasks) that entered the region.
    pub pets: u32,
    /// PEs (cores, with threads) of those PETs, in files that have the column.
    pub pes: Option<u32>,
    /// Times entered, `None` for `MULTIPLE`.
    pub count: Option<u64>,
    /// Mean over PETs of the time in the region, seconds.
    pub mean_s: f64,
    /// Largest over PETs, seconds.
    pub max_s: f64,
    /// Index of the parent region.
    pub parent: Option<usize>,
}

/// Reads an ESMF profile summary file.
pub fn read_file(path: &Path) -> Result<Reading, TimingError> {
    let bytes = crate::timing::read_bytes(path)?;
    parse(&String::from_utf8_lossy(&bytes), path)
}

/// The regions of the text, with whether the header has a `PEs` column; errors name the line.
fn regions(
    lines: &[(usize, &str)],
    path: &Path,
) -> Result<Option<(Vec<Region>, bool)>, TimingError> {
    let Some(header_at) = lines.iter().position(|(_, l)| {
        let t: Vec<&str> = l.split_whitespace().collect();
        t.first() == Some(&"Region") && t.get(1) == Some(&"PETs")
    }) else {
        return Ok(None);
    };
    let with_pes = lines[header_at].1.split_whitespace().nth(2) == Some("PEs");
    let columns = if with_pes { 8 } else { 7 };
    let mut out: Vec<Region> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for &(no, line) in &lines[header_at + 1..] {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| {
            TimingError::parse(
                path,
                no,
                format!(
                    "{what}; a region line is its name and {columns} columns (PETs{} Count Mean Min MinPET Max MaxPET), found {:?}",
                    if with_pes { " PEs" } else { "" },
                    line.trim()
                ),
            )
        };
        let indent = line.len() - line.trim_start_matches(' ').len();
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.len() <= columns {
            return Err(bad("too few columns"));
        }
        let (name, cols) = tokens.split_at(tokens.len() - columns);
        let int = |s: &str| s.parse::<u64>().ok();
        let secs = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
        let pets = int(cols[0])
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| bad("PETs is not a count"))?;
        let rest = if with_pes { &cols[2..] } else { &cols[1..] };
        let pes = if with_pes {
            Some(
                int(cols[1])
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| bad("PEs is not a count"))?,
            )
        } else {
            None
        };
        let count = match rest[0] {
            "MULTIPLE" => None,
            c => Some(int(c).ok_or_else(|| bad("Count is neither a number nor MULTIPLE"))?),
        };
        let mean_s = secs(rest[1]).ok_or_else(|| bad("Mean is not a time"))?;
        let max_s = secs(rest[4]).ok_or_else(|| bad("Max is not a time"))?;
        let depth = indent / 2;
        while stack.last().is_some_and(|&i| out[i].depth >= depth) {
            stack.pop();
        }
        let parent = stack.last().copied();
        if parent.map_or(depth > 1, |p| depth > out[p].depth + 1) {
            return Err(bad(
                "indented deeper than one level below the region before",
            ));
        }
        out.push(Region {
            name: name.join(" "),
            depth,
            pets,
            pes,
            count,
            mean_s,
            max_s,
            parent,
        });
        stack.push(out.len() - 1);
    }
    Ok(Some((out, with_pes)))
}

/// Parses profile text read from `path`.
pub fn parse(text: &str, path: &Path) -> Result<Reading, TimingError> {
    let (lines, cut) = whole_lines(text);
    let ends = match (cut, lines.last()) {
        (true, last) => format!(
            "the file ends in the middle of line {}",
            last.map_or(1, |l| l.0 + 1)
        ),
        (false, Some((no, _))) => format!("the file ends at line {no}"),
        (false, None) => "the file is empty".into(),
    };
    let incomplete = |what: &str| {
        Ok(Reading::Incomplete {
            reason: format!("{}: {what} yet ({ends})", path.display()),
        })
    };
    let Some((regions, with_pes)) = regions(&lines, path)? else {
        return incomplete("no region table");
    };
    let Some(ensemble) = regions
        .iter()
        .position(|r| r.name == "[ensemble] RunPhase1")
    else {
        return incomplete("no run loop ([ensemble] RunPhase1)");
    };
    let children = |parent: usize| {
        regions
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.parent == Some(parent))
    };
    let run_root = children(ensemble)
        .find(|(_, r)| r.name.starts_with("[ESM") && r.name.ends_with("] RunPhase1"))
        .map_or(ensemble, |(i, _)| i);
    let ended = regions[ensemble + 1..]
        .iter()
        .any(|r| r.depth <= regions[ensemble].depth);
    let mut notes = Vec::new();
    if !with_pes {
        notes.push("no PEs column (ESMF before 8.3): threads unknown".into());
    }
    let mut run = CimeRun::new("NUOPC");
    run.run_s = Some(regions[ensemble].max_s);
    run.init_s = regions
        .iter()
        .find(|r| r.depth == regions[ensemble].depth && r.name == "[ensemble] Init 1")
        .map(|r| r.max_s);
    let (mut med, mut comm) = (0.0, 0.0);
    for (i, r) in regions.iter().enumerate() {
        if !descends(&regions, i, run_root) {
            continue;
        }
        let Some(tag) = r.name.strip_prefix('[').and_then(|n| n.split_once(']')) else {
            continue;
        };
        let (tag, phase) = (tag.0, tag.1.trim());
        if tag.contains("-TO-") && phase == "RunPhase1" {
            comm += r.mean_s;
        } else if tag == "MED"
            && ["med_phases", "med_connectors", "med_fraction"]
                .iter()
                .any(|p| phase.starts_with(p))
        {
            med += r.mean_s;
        } else if r.parent == Some(run_root) && phase == "RunPhase1" && tag != "MED" {
            let name = tag.to_ascii_lowercase();
            if run.components.iter().any(|c| c.name == name) {
                continue;
            }
            let threads = r.pes.filter(|_| r.pets > 0).map(|p| (p / r.pets).max(1));
            run.components.push(CimeComponent {
                name,
                model: None,
                nproc: r.pets,
                threads,
                root_pe: None,
                stride: None,
                run_s: Some(r.max_s),
            });
        }
    }
    run.cpl_run_s = Some(med);
    run.cpl_comm_s = Some(comm);
    if run.components.is_empty() {
        return incomplete("no component under the run loop");
    }
    notes.push(
        "an ESMF profile states no root PEs and no simulated time: no layout, no SYPD; read the run's cesm_timing file for them".into(),
    );
    let partial = (!ended).then(|| format!("the run loop's regions are not all written ({ends})"));
    Ok(run.into_reading(Format::Esmf, partial, notes))
}

/// Whether region `i` lies in the subtree of `root` (or is it).
fn descends(regions: &[Region], mut i: usize, root: usize) -> bool {
    loop {
        if i == root {
            return true;
        }
        match regions[i].parent {
            Some(p) => i = p,
            None => return false,
        }
    }
}
