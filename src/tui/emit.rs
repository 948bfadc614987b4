//! `y`: the configuration the screen shows as EC-Earth4 YAML, so what the user is looking at
//! becomes something to paste into the experiment configuration. What is written is what is
//! shown: the configuration under the matrix cursor, or, with the table focused, its selected
//! row (the ★ best included), with each hybrid component's threads as `omp_num_threads`. On a
//! file that packs nodes (`placement = "groups"`) it is the `job.groups` form with the helpers
//! where the file pins them; otherwise the het-job form. The text comes from the library's
//! writers, the ones `autolb predict --emit ecearth4` uses; the event loop writes it
//! ([`Effect::WriteText`]).

use std::path::{Path, PathBuf};

use autolb::predict::emit_ecearth4::hetjob_text;
use autolb::predict::node_groups::{self, groups_fragment, naming_problem, sypd_text};

use super::effect::Effect;
use super::pane::Pane;
use super::ranking::{Groups, Ranking};
use super::table::TableState;

/// The file the YAML goes to, in the app's output directory.
pub const ECEARTH4_FILE: &str = "ecearth4-job.yml";

/// The widest status-line message about a written file: an 80-column terminal shows it whole.
pub const MESSAGE_WIDTH: usize = 80;

/// A configuration as the screen shows it, in the problem's component order.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// Where it is on screen: `the configuration under the matrix cursor`, `the table's row
    /// it/t 0/2 (the ★ best measured)`.
    pub place: String,
    /// Cores per component (ranks x threads).
    pub nproc: Vec<u32>,
    /// OpenMP threads per rank of each component.
    pub threads: Vec<u32>,
    /// Its SYPD, predicted under the cursor and measured in a row (`None`: not measured yet).
    pub sypd: Option<f64>,
    /// Whether `sypd` was measured (a table row) rather than predicted.
    pub measured: bool,
    /// The configuration as the screen writes it: `oifs 191x4 + nemo 259`.
    pub text: String,
}

impl Shown {
    /// MPI ranks per component.
    pub fn ranks(&self) -> Vec<u32> {
        self.nproc
            .iter()
            .zip(&self.threads)
            .map(|(p, t)| p / t.max(&1))
            .collect()
    }
}

/// What `y` writes: the table's selected row when the table has the focus and lists a
/// balancing campaign's rows, else the configuration under the matrix cursor.
/// `focus` is the focused pane, `cursor` the matrix cursor.
pub fn shown(
    ranking: &Ranking,
    table: &TableState,
    focus: Pane,
    cursor: &[usize],
) -> Result<Shown, String> {
    let view = &table.campaign;
    let row = table
        .selected_row()
        .filter(|_| focus == Pane::Table && view.scaling.is_empty());
    let Some(i) = row else {
        return Ok(at_cursor(ranking, cursor));
    };
    let r = &view.rows[i];
    let names = ranking.problem.names();
    // The table's columns are the campaign's components; the problem's order may differ.
    let mut nproc = Vec::with_capacity(names.len());
    let mut threads = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        let at = if view.components.is_empty() {
            Some(k)
        } else {
            view.components.iter().position(|c| c == name)
        };
        let Some(&p) = at.and_then(|j| r.nproc.get(j)) else {
            return Err(format!(
                "EC-Earth4 YAML not written: the selected row gives no PEs for {name}"
            ));
        };
        nproc.push(p);
        threads.push(at.and_then(|j| view.threads.get(j).copied()).unwrap_or(1));
    }
    let label = r
        .label
        .clone()
        .unwrap_or_else(|| format!("it/t {}/{}", r.iteration, r.test));
    let best = if view.best == Some(i) {
        " (the ★ best measured)"
    } else {
        ""
    };
    Ok(Shown {
        place: format!("the table's row {label}{best}"),
        nproc,
        threads,
        sypd: r.sypd,
        measured: true,
        text: view.describe(&r.nproc),
    })
}

/// The configuration under the matrix cursor, as its line names it.
fn at_cursor(r: &Ranking, cursor: &[usize]) -> Shown {
    let config = r.problem.score(cursor, r.tts_w());
    Shown {
        place: "the configuration under the matrix cursor".into(),
        threads: r.threads_of(&config),
        sypd: Some(config.sypd),
        measured: false,
        text: r.describe_scored(&config),
        nproc: config.nproc,
    }
}

/// The effect writing what the screen shows ([`shown`]) as EC-Earth4 YAML into `out_dir`, or
/// why it cannot be written (a component name YAML would misread, a configuration no node
/// layout holds).
pub fn ecearth4(r: &Ranking, shown: &Shown, out_dir: &Path) -> Result<Effect, String> {
    let (text, what) = yaml(r, shown).map_err(|e| format!("EC-Earth4 YAML not written: {e}"))?;
    Ok(Effect::WriteText {
        path: out_dir.join(ECEARTH4_FILE),
        text,
        what,
    })
}

/// The YAML of `shown` and what it is in a few words for the status line.
pub fn yaml(r: &Ranking, shown: &Shown) -> Result<(String, String), String> {
    let names = r.problem.names();
    let speed = match (shown.sypd, shown.measured) {
        (Some(s), true) => format!("measured {s:.2} SYPD"),
        (Some(s), false) => format!("{s:.2} SYPD at TTS_w {:.2}", r.tts_w()),
        (None, _) => "not measured yet".into(),
    };
    if let Some(g) = &r.groups {
        return groups_yaml(g, &names, shown, r.tts_w());
    }
    let by = if shown.measured {
        String::new()
    } else {
        format!(" by the {} model", r.model)
    };
    let cores_per_node = r
        .problem
        .cost_model
        .machine
        .as_ref()
        .map(|m| m.cores_per_node);
    let text = hetjob_text(
        &names,
        &shown.nproc,
        &shown.threads,
        cores_per_node,
        &format!("autolb tui: {}{by}, {speed}", shown.place),
    )?;
    Ok((text, format!("EC-Earth4 het job of {}", shown.text)))
}

/// `shown` as node groups: the ranked packing itself when it is one (as `predict` writes it),
/// else the configuration laid out on the fewest nodes that hold it.
fn groups_yaml(
    g: &Groups,
    names: &[String],
    shown: &Shown,
    tts_w: f64,
) -> Result<(String, String), String> {
    let ranks = shown.ranks();
    let ranked = g.ranked(&ranks, &shown.threads);
    let cpn = g.cores_per_node;
    let problem = match &g.packings {
        Ok(r) => r.problem.clone(),
        Err(_) => naming_problem(names, g.helpers.clone(), cpn),
    };
    let packing = match ranked {
        Some(p) => p.clone(),
        None => node_groups::lay_out(
            &problem,
            &ranks,
            &shown.threads,
            shown.sypd.unwrap_or(f64::NAN),
        )?,
    };
    let text = match (ranked, &g.packings) {
        // A ranked packing: `predict --emit ecearth4`'s text for it, with what ranked it.
        (Some(_), Ok(r)) => {
            let scored = r.top.iter().find(|s| s.packing == packing);
            let speed =
                scored.map_or_else(|| format!("{:.2} SYPD", packing.sypd), |s| sypd_text(r, s));
            let first = format!(
                "autolb tui: {}, {}; a node packing autolb predict ranks at TTS_w {:.2}: {} nodes of {cpn} cores, {speed}, NHSY {:.0}",
                shown.place,
                shown.text,
                tts_w,
                packing.nodes,
                packing.nhsy(cpn)
            );
            groups_fragment(&r.problem, &packing, &first, &r.basis())?
        }
        _ => {
            let speed = match (shown.sypd, shown.measured) {
                (Some(s), true) => format!(", measured {s:.2} SYPD"),
                (Some(s), false) => format!(", {s:.2} SYPD predicted for its PEs"),
                (None, _) => String::new(),
            };
            let first = format!(
                "autolb tui: {}, {}; laid out on the fewest nodes that hold it: {} nodes of {cpn} cores{speed}",
                shown.place, shown.text, packing.nodes
            );
            groups_fragment(&problem, &packing, &first, &[])?
        }
    };
    let what = format!(
        "EC-Earth4 job.groups of {} on {} nodes",
        shown.text, packing.nodes
    );
    Ok((text, what))
}

/// The status line after a file was written: `wrote PATH: WHAT`, in at most
/// [`MESSAGE_WIDTH`] characters. The path is said relative to `cwd` when it is under it, and a
/// long one loses the middle of its directories, never its file name; then `what` is cut.
pub fn written_message(path: &Path, what: &str, cwd: Option<&Path>) -> String {
    let shown = cwd
        .and_then(|d| path.strip_prefix(d).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| path.to_path_buf());
    let path_text = middle_ellipsis(&shown, MESSAGE_WIDTH / 2);
    let head = format!("wrote {path_text}");
    let room = MESSAGE_WIDTH.saturating_sub(head.chars().count() + 2);
    if room < 8 {
        return head;
    }
    let what: String = if what.chars().count() > room {
        let mut cut: String = what.chars().take(room - 1).collect();
        cut.push('…');
        cut
    } else {
        what.to_string()
    };
    format!("{head}: {what}")
}

/// `path` in at most `width` characters: whole when it fits, else its first component, `…`
/// and as many of its last components as fit, the file name always kept.
fn middle_ellipsis(path: &Path, width: usize) -> String {
    let whole = path.display().to_string();
    if whole.chars().count() <= width {
        return whole;
    }
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some((name, dirs)) = parts.split_last() else {
        return whole;
    };
    let sep = std::path::MAIN_SEPARATOR.to_string();
    // The first directory stays, after the root of an absolute path: `/gpfs/…/run/FILE`.
    let (first, skip) = match dirs {
        [root, top, ..] if *root == sep => (format!("{sep}{top}"), 2),
        [top, ..] => (top.clone(), 1),
        [] => return whole,
    };
    let mut tail = PathBuf::from(name);
    let count = |t: &Path| first.chars().count() + 3 + t.display().to_string().chars().count();
    for dir in dirs.iter().skip(skip).rev() {
        let longer = Path::new(dir).join(&tail);
        if count(&longer) > width {
            break;
        }
        tail = longer;
    }
    format!("{first}{sep}…{sep}{}", tail.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_path_keeps_its_file_name_and_the_message_fits_80_columns() {
        let deep = Path::new(
            "/gpfs/projects/bsc32/bsc032123/ecearth4/experiments/cmip7/piControl-mn5/autolb",
        );
        let path = deep.join(ECEARTH4_FILE);
        let what = "EC-Earth4 job.groups of oifs 368x2 + nemo 259 + lim 12x2 + xios on 9 nodes";
        let m = written_message(&path, what, None);
        assert!(m.chars().count() <= MESSAGE_WIDTH, "{m}");
        assert!(m.starts_with("wrote /gpfs/…/"), "{m}");
        assert!(m.contains("autolb/ecearth4-job.yml: EC-Earth4"), "{m}");
        // Under the working directory: the path relative to it.
        let m = written_message(&path, what, Some(deep));
        assert!(
            m.starts_with("wrote ecearth4-job.yml: EC-Earth4 job.groups"),
            "{m}"
        );
        assert!(m.chars().count() <= MESSAGE_WIDTH, "{m}");
        // A short one is whole.
        let m = written_message(Path::new("out/ecearth4-job.yml"), "x", Some(deep));
        assert_eq!(m, "wrote out/ecearth4-job.yml: x");
    }
}
