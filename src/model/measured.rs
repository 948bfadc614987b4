//! Measured runs from timing output: one run directory, or a directory of run directories named
//! like `240IFS_144NEMO[_suffix]` (as BSC's lucia_lite collections are). The guided campaign
//! strategy builds its runs from the campaign state instead (`measured_runs` in
//! `campaign::strategy::guided::landscape`: the campaign knows its own runs).
//!
//! PE counts come from the timing files when they carry them (lucia_lite tables do), because a
//! directory name can be wrong: two lucia_lite directories (`1008IFS_411NEMO`,
//! `960IFS_411NEMO`) hold tables of NEMO on 144 PEs. The name (or `--nproc`) only fills in what
//! the files do not say (raw LUCIA files carry no PE counts). A run that failed, is partial or
//! cannot be read is skipped with a one-line note.

use std::collections::BTreeMap;
use std::path::Path;

use super::{MeasuredComponent, MeasuredRun};
use crate::timing::{self, Measurement, ReadOptions, Reading};

/// A balanced component: its model (curve) name and its name in timing files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Naming {
    /// The component's model (curve) name.
    pub name: String,
    /// Its name in the timing files (EC-Earth3 LUCIA: `ATMIFS`, `oceanx`).
    pub timing_name: String,
}

impl Naming {
    /// A naming from a model name and a timing name.
    pub fn new(name: impl Into<String>, timing_name: impl Into<String>) -> Naming {
        Naming {
            name: name.into(),
            timing_name: timing_name.into(),
        }
    }

    /// Does `label` (from a directory name or a flag) mean this component? Case-insensitive,
    /// by model name or timing name.
    pub fn is_called(&self, label: &str) -> bool {
        label.eq_ignore_ascii_case(&self.name) || label.eq_ignore_ascii_case(&self.timing_name)
    }
}

/// Reduces a measurement to a [`MeasuredRun`] of `components`; `nproc` (by model name)
/// completes PE counts the files do not carry.
pub fn from_measurement(
    label: &str,
    m: &Measurement,
    components: &[Naming],
    nproc: &BTreeMap<String, u32>,
) -> Result<MeasuredRun, String> {
    if let Some(reason) = &m.partial {
        return Err(format!("partial: {reason}"));
    }
    let coupled = m.coupled_sypd().ok_or_else(|| {
        let why = m.why_no_coupled_sypd().unwrap_or_default();
        if m.sim_s.is_none() {
            format!("no coupled SYPD: {why}; pass --period SECONDS (the coupling period)")
        } else {
            format!("no coupled SYPD: {why}")
        }
    })?;
    let mut parts = Vec::with_capacity(components.len());
    for c in components {
        let i = m.component_index(&c.timing_name).ok_or_else(|| {
            let found: Vec<&str> = m.components.iter().map(|c| c.name.as_str()).collect();
            format!(
                "no component {:?} (it has {}); map names with --timing-name {}=NAME",
                c.timing_name,
                found.join(", "),
                c.name
            )
        })?;
        let t = &m.components[i];
        let p = t
            .nproc
            .or_else(|| nproc.get(&c.name).copied())
            .ok_or_else(|| format!("PEs of {} unknown; pass --nproc {}=N", c.name, c.name))?;
        let sypd = m
            .component_sypd(i)
            .ok_or_else(|| format!("no SYPD for {}", c.timing_name))?;
        parts.push(MeasuredComponent {
            name: c.name.clone(),
            nproc: p,
            sypd,
            wait_s: Some(t.wait_s),
            interp_s: t.interp_s,
            send_s: t.send_s,
        });
    }
    Ok(MeasuredRun {
        path: label.to_string(),
        components: parts,
        coupled_sypd: coupled,
        simulated_s: m.sim_s,
    })
}

/// Reads one run directory (or timing file).
pub fn load_run(
    path: &Path,
    components: &[Naming],
    nproc: &BTreeMap<String, u32>,
    period_s: Option<f64>,
) -> Result<MeasuredRun, String> {
    // First as the files are: PE counts they carry win over a name or a flag.
    let mut opts = ReadOptions {
        period_s,
        ..ReadOptions::default()
    };
    let mut reading = timing::read(path, &opts).map_err(|e| e.to_string())?;
    let lacks_nproc = match &reading {
        Reading::Measured(m) => components.iter().any(|c| {
            m.component(&c.timing_name)
                .is_some_and(|t| t.nproc.is_none())
        }),
        Reading::Incomplete { .. } => true,
    };
    if lacks_nproc && !nproc.is_empty() {
        // Raw LUCIA files carry none; given PE counts also tell which rank files must exist.
        opts.nproc = components
            .iter()
            .filter_map(|c| nproc.get(&c.name).map(|&p| (c.timing_name.clone(), p)))
            .collect();
        reading = timing::read(path, &opts).map_err(|e| e.to_string())?;
    }
    match reading {
        // The caller names the path.
        Reading::Incomplete { reason } => Err(format!(
            "incomplete: {}",
            timing::reason_without_path(&reason, path)
        )),
        Reading::Measured(m) => {
            from_measurement(&path.display().to_string(), &m, components, nproc)
        }
    }
}

/// PE counts from a directory name like `240IFS_144NEMO_t2`: every `_`-separated token that is
/// digits followed by a component's name or timing name. `None` unless every component is named.
pub fn nproc_from_name(dir_name: &str, components: &[Naming]) -> Option<BTreeMap<String, u32>> {
    let out = nproc_named(dir_name, components);
    (out.len() == components.len()).then_some(out)
}

/// The PE counts a directory name gives, for whichever of `components` it names (by model name).
pub fn nproc_named(dir_name: &str, components: &[Naming]) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for token in dir_name.split('_') {
        let digits: String = token.chars().take_while(char::is_ascii_digit).collect();
        let label = &token[digits.len()..];
        if digits.is_empty() || label.is_empty() {
            continue;
        }
        if let (Ok(n), Some(c)) = (
            digits.parse::<u32>(),
            components.iter().find(|c| c.is_called(label)),
        ) {
            out.insert(c.name.clone(), n);
        }
    }
    out
}

/// One note per component whose PEs in the directory name (`named`, by model name) differ from
/// those its timing files give (`measured`, model name and PEs): the files win (see the module
/// doc), and the note says so, because the name is what a user reads.
pub fn name_disagreements<'a>(
    dir: &Path,
    named: &BTreeMap<String, u32>,
    measured: impl IntoIterator<Item = (&'a str, u32)>,
) -> Vec<String> {
    measured
        .into_iter()
        .filter_map(|(name, in_files)| {
            let &p = named.get(name)?;
            (p != in_files).then(|| {
                format!(
                    "{}: the name says {name} {p} PEs, its timing files {in_files}; using {in_files}",
                    dir.display()
                )
            })
        })
        .collect()
}

/// Reads every run directory inside `dir` (sorted by name). Sub-directories whose name does not
/// follow the `240IFS_144NEMO` pattern are still read when their files carry PE counts.
pub fn load_runs_dir(
    dir: &Path,
    components: &[Naming],
    period_s: Option<f64>,
) -> Result<(Vec<MeasuredRun>, Vec<String>), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    let mut skipped = Vec::new();
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        let nproc = nproc_from_name(&name, components).unwrap_or_default();
        match load_run(&e.path(), components, &nproc, period_s) {
            Ok(run) => {
                notes.extend(name_disagreements(
                    &e.path(),
                    &nproc,
                    run.components.iter().map(|c| (c.name.as_str(), c.nproc)),
                ));
                runs.push(run);
            }
            Err(why) => skipped.push((name, why)),
        }
    }
    notes.extend(skip_notes(dir, skipped));
    Ok((runs, notes))
}

/// One note per reason a run directory of `dir` was skipped: a reason shared by several (a
/// missing `--timing-name` skips all of them) is said once, with their count.
fn skip_notes(dir: &Path, skipped: Vec<(String, String)>) -> Vec<String> {
    let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
    for (name, why) in skipped {
        match by_reason.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) => names.push(name),
            None => by_reason.push((why, vec![name])),
        }
    }
    by_reason
        .into_iter()
        .map(|(why, names)| match names.as_slice() {
            [first, second] => format!(
                "{}: 2 run directories skipped ({first}, {second}): {why}",
                dir.display()
            ),
            [first, second, rest @ ..] => format!(
                "{}: {} run directories skipped ({first}, {second} and {} more): {why}",
                dir.display(),
                names.len(),
                rest.len()
            ),
            one => format!("{}: skipped: {why}", dir.join(one.concat()).display()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pe_counts_from_directory_names() {
        let comps = [Naming::new("IFS", "ATMIFS"), Naming::new("NEMO", "oceanx")];
        let got = nproc_from_name("384IFS_229NEMO_t1", &comps).unwrap();
        assert_eq!(got["IFS"], 384);
        assert_eq!(got["NEMO"], 229);
        assert!(nproc_from_name("384IFS_t1", &comps).is_none());
        let by_timing = nproc_from_name("96ATMIFS_48oceanx_1RNF", &comps).unwrap();
        assert_eq!(by_timing["NEMO"], 48);
        // A name may give some components only (a timing file lists the runoff mapper too).
        assert_eq!(nproc_named("384IFS_t1", &comps).len(), 1);
    }

    #[test]
    fn a_reason_shared_by_several_runs_is_one_note_with_their_count() {
        let why = "no component \"IFS\"; map names with --timing-name IFS=NAME";
        let skipped = ["a", "b", "c", "d"]
            .iter()
            .map(|n| (n.to_string(), why.to_string()))
            .chain([("e".to_string(), "partial: cut".to_string())])
            .collect();
        assert_eq!(
            skip_notes(Path::new("runs"), skipped),
            [
                format!("runs: 4 run directories skipped (a, b and 2 more): {why}"),
                format!("{}: skipped: partial: cut", Path::new("runs/e").display()),
            ]
        );
        let two = vec![("a".into(), "x".into()), ("b".into(), "x".into())];
        assert_eq!(
            skip_notes(Path::new("runs"), two),
            ["runs: 2 run directories skipped (a, b): x"]
        );
    }

    #[test]
    fn an_empty_run_directory_is_named_once() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("240IFS_144NEMO");
        std::fs::create_dir(&run).unwrap();
        let comps = [Naming::new("IFS", "ATMIFS"), Naming::new("NEMO", "oceanx")];
        let (runs, notes) = load_runs_dir(tmp.path(), &comps, None).unwrap();
        assert!(runs.is_empty());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(
            notes[0].matches("240IFS_144NEMO").count(),
            1,
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("skipped: incomplete: no timing output yet"));
    }

    #[test]
    fn a_note_for_each_component_the_name_gets_wrong() {
        let named = BTreeMap::from([("IFS".to_string(), 1008), ("NEMO".to_string(), 411)]);
        let notes = name_disagreements(
            Path::new("runs/1008IFS_411NEMO"),
            &named,
            [("IFS", 1008), ("NEMO", 144), ("RNF", 1)],
        );
        assert_eq!(
            notes,
            ["runs/1008IFS_411NEMO: the name says NEMO 411 PEs, its timing files 144; using 144"]
        );
    }
}
