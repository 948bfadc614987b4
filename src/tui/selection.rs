//! `w`: writes the chosen configurations as a campaign start file (TOML that `autolb campaign
//! init --config` accepts) and as JSON.
//!
//! The TOML starts the campaign from exactly the selection (`start = [...]`) and carries the
//! prediction settings at the slider (TTS_w, `top` = the number selected), so the file also
//! tells how the selection was made; the JSON holds the selection with its figures. Files are
//! never overwritten: each `w` picks the next free `autolb-selection-N` name, and each file is
//! written atomically (the library's writer: synced file and directory, mode 0666 less the umask).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use autolb::config::{AllowedEntry, CampaignFile, ComponentEntry};
use autolb::fsutil::write_atomically;
use autolb::predict::{Scored, Settings};

/// Where a component's curve comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CurveSource {
    /// A file; written into the TOML as an absolute path.
    File(PathBuf),
    /// Compiled into the binary (the example); written next to the TOML.
    Builtin(&'static str),
    /// None: the component is learned from measured runs (`--component`); no `curve` key.
    Learned,
}

/// A component as the campaign file needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceComponent {
    pub name: String,
    pub timing_name: Option<String>,
    pub curve: CurveSource,
    pub allowed: Option<Vec<u32>>,
    pub min_nproc: Option<u32>,
    pub max_nproc: Option<u32>,
}

/// What the written campaign file is built from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectionSource {
    pub components: Vec<SourceComponent>,
    /// The user's campaign file, whose campaign keys (executor, steps, repetitions) are kept.
    pub base: Option<CampaignFile>,
    /// Coupling period in seconds, written as `period_s` when the base file has none (raw
    /// LUCIA output cannot be measured without it).
    pub period_s: Option<f64>,
}

/// The paths one `w` wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub toml: PathBuf,
    pub json: PathBuf,
}

/// One `w`: the configurations to write and what the files say about how they were chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The directory written into (created if missing).
    pub dir: PathBuf,
    /// The prediction settings the configurations were ranked with.
    pub settings: Settings,
    /// The components' names, in the order of each configuration's PEs.
    pub names: Vec<String>,
    pub source: SelectionSource,
    pub configs: Vec<Scored>,
    /// Each configuration's rank among all at `tts_w` (`None` when far down).
    pub ranks: Vec<Option<usize>>,
    pub tts_w: f64,
    /// The app's top N.
    pub top: usize,
}

/// Writes the selection's files into its directory, under the first free name.
pub fn write(selection: &Selection) -> std::io::Result<Written> {
    let Selection {
        dir,
        settings: s,
        names,
        source,
        configs,
        ranks,
        tts_w,
        top,
    } = selection;
    let (tts_w, top) = (*tts_w, *top);
    std::fs::create_dir_all(dir)?;
    let stem = free_stem(dir);
    let toml_path = dir.join(format!("{stem}.toml"));
    let json_path = dir.join(format!("{stem}.json"));

    let mut components = Vec::new();
    for c in &source.components {
        let curve = match &c.curve {
            CurveSource::File(p) => Some(std::path::absolute(p).unwrap_or_else(|_| p.clone())),
            CurveSource::Builtin(text) => {
                let name = format!("{stem}.{}.csv", c.name);
                write_atomically(&dir.join(&name), text.as_bytes())?;
                Some(PathBuf::from(name))
            }
            CurveSource::Learned => None,
        };
        components.push(ComponentEntry {
            name: c.name.clone(),
            curve,
            allowed: c.allowed.clone().map(AllowedEntry::List),
            min_nproc: c.min_nproc,
            max_nproc: c.max_nproc,
            timing_name: c.timing_name.clone(),
            // The base file's [[resource]] tables are kept: keep each component's resource.
            resource: source
                .base
                .iter()
                .flat_map(|b| &b.components)
                .find(|e| e.name == c.name)
                .and_then(|e| e.resource.clone()),
            pinned: None,
            nproc: None,
            threads: source
                .base
                .iter()
                .flat_map(|b| &b.components)
                .find(|e| e.name == c.name)
                .and_then(|e| e.threads.clone()),
        });
    }
    let mut file = source.base.clone().unwrap_or_default();
    file.max_nproc = Some(s.max_nproc);
    file.step = Some(s.step);
    file.tts_w = Some(tts_w);
    // The app's current top N (after `]` / `[`), not the count written.
    file.top = Some(top.max(1));
    file.interp = Some(s.interp);
    file.extra_pes = Some(s.extra_pes);
    file.components = components;
    // The base file's pinned helpers are written back as the [[component]] tables they were.
    let mut file = file.with_helpers_as_components();
    file.period_s = file.period_s.or(source.period_s);
    file.start = Some(
        configs
            .iter()
            .map(|c| names.iter().cloned().zip(c.nproc.iter().copied()).collect())
            .collect(),
    );

    let mut header = String::from(
        "# Campaign start file written by the autolb terminal app.\n\
         # Start it with: autolb campaign init DIR --config THIS_FILE && autolb campaign run DIR\n\
         # Selected configurations (PEs per component):\n",
    );
    for (i, c) in configs.iter().enumerate() {
        let pes: Vec<String> = names
            .iter()
            .zip(&c.nproc)
            .map(|(n, p)| format!("{n} = {p}"))
            .collect();
        header.push_str(&format!(
            "#   {}. {}  (SYPD {:.2}, CHSY {:.0}, FN {:.3})\n",
            i + 1,
            pes.join(", "),
            c.sypd,
            c.chsy,
            c.fittingness
        ));
    }
    let body = toml::to_string(&file).map_err(std::io::Error::other)?;
    write_atomically(&toml_path, format!("{header}\n{body}").as_bytes())?;

    let configurations: Vec<Value> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let nproc: Map<String, Value> = names
                .iter()
                .zip(&c.nproc)
                .map(|(n, p)| (n.clone(), json!(p)))
                .collect();
            json!({
                // Rank among every configuration at this TTS_w (null when far down).
                "rank": ranks.get(i).copied().flatten(),
                "nproc": nproc,
                "total_nproc": c.total_nproc,
                "sypd": c.sypd,
                "chsy": c.chsy,
                "coupling_cost": c.coupling_cost,
                "fittingness": c.fittingness,
            })
        })
        .collect();
    let doc = json!({
        "tts_w": tts_w,
        "max_nproc": s.max_nproc,
        "components": names,
        "campaign_file": toml_path,
        "configurations": configurations,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    write_atomically(&json_path, format!("{text}\n").as_bytes())?;
    Ok(Written {
        toml: toml_path,
        json: json_path,
    })
}

/// The first `autolb-selection-N` with neither a `.toml` nor a `.json` in `dir`.
fn free_stem(dir: &Path) -> String {
    (1..)
        .map(|n| format!("autolb-selection-{n}"))
        .find(|s| {
            !dir.join(format!("{s}.toml")).exists() && !dir.join(format!("{s}.json")).exists()
        })
        .unwrap_or_else(|| "autolb-selection".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use autolb::example;
    use autolb::predict::Problem;

    fn demo_source() -> SelectionSource {
        SelectionSource {
            components: vec![
                SourceComponent {
                    name: "IFS".into(),
                    timing_name: Some("ATMIFS".into()),
                    curve: CurveSource::Builtin(example::IFS_CURVE),
                    allowed: None,
                    min_nproc: None,
                    max_nproc: None,
                },
                SourceComponent {
                    name: "NEMO".into(),
                    timing_name: Some("oceanx".into()),
                    curve: CurveSource::Builtin(example::NEMO_CURVE),
                    allowed: None,
                    min_nproc: None,
                    max_nproc: None,
                },
            ],
            base: None,
            period_s: Some(2700.0),
        }
    }

    #[test]
    fn written_toml_is_a_valid_campaign_file_that_reproduces_the_top_n() {
        let dir = tempfile::tempdir().unwrap();
        let problem = Problem::new(&example::inputs(), &example::settings()).unwrap();
        let top = problem.rank(0.3, 3).top;
        let ranks: Vec<Option<usize>> = (1..=3).map(Some).collect();
        let selection = Selection {
            dir: dir.path().to_path_buf(),
            settings: problem.settings.clone(),
            names: problem.names(),
            source: demo_source(),
            configs: top.clone(),
            ranks,
            tts_w: 0.3,
            top: 3,
        };
        let w = write(&selection).unwrap();
        let file = CampaignFile::load(&w.toml).unwrap();
        assert_eq!(file.top, Some(3));
        assert_eq!(file.tts_w, Some(0.3));
        assert_eq!(file.period_s, Some(2700.0), "runs of it can be measured");
        let inputs = file.component_inputs(dir.path()).unwrap();
        let again = Problem::new(&inputs, &file.settings())
            .unwrap()
            .rank(0.3, 3)
            .top;
        assert_eq!(again, top, "the written file reproduces the selection");
        let start = file.start.clone().expect("the selection itself");
        assert_eq!(start.len(), 3);
        for (entry, config) in start.iter().zip(&top) {
            assert_eq!(entry["IFS"], config.nproc[0]);
            assert_eq!(entry["NEMO"], config.nproc[1]);
        }
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&w.json).unwrap()).unwrap();
        assert_eq!(json["configurations"].as_array().unwrap().len(), 3);
        assert_eq!(json["configurations"][0]["nproc"]["IFS"], top[0].nproc[0]);
        let second = write(&selection).unwrap();
        assert_ne!(second.toml, w.toml, "never overwrites an earlier selection");
    }
}
