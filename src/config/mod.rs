//! The campaign file (TOML): one file describes the prediction and the campaign that follows it.
//!
//! `autolb predict --config` reads the prediction part, `autolb campaign init` all of it.
//! Unknown keys and wrong types are errors that name the key and the line. Paths inside the
//! file (curves, allowed lists) are relative to the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::curve::{validate_component_name, Curve, CurveError};
use crate::executor::ExecutorConfig;
use crate::interp::Method;
use crate::machine::{CostKind, CostModel, Machine, Queue, Resource};
use crate::predict::{ComponentInput, Settings};

mod allowed;
mod toml_words;

pub use allowed::{load_allowed, parse_allowed};
use toml_words::one_line_toml_error;

/// The whole campaign file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    pub max_nproc: Option<u32>,
    pub step: Option<u32>,
    pub tts_w: Option<f64>,
    pub top: Option<usize>,
    pub interp: Option<Method>,
    pub extra_pes: Option<u32>,
    /// PEs moved in the first lb-iteration (Algorithm 1).
    pub initial_step: Option<u32>,
    /// A test finishes once its step falls below this.
    pub minimum_step: Option<u32>,
    /// Runs per test and iteration.
    pub repetitions: Option<u32>,
    /// Coupling period in seconds (simulated time per coupling step).
    pub period_s: Option<f64>,
    /// How the campaign chooses its tests after each iteration (default Algorithm 1).
    pub strategy: Option<Strategy>,
    #[serde(default, rename = "component")]
    pub components: Vec<ComponentEntry>,
    /// Start the campaign from exactly these configurations (`NAME = nproc` each) instead of
    /// the predicted top N; the terminal app's `w` writes the configurations you marked here.
    pub start: Option<Vec<BTreeMap<String, u32>>>,
    /// The user's current configuration, run as one more test.
    pub original: Option<BTreeMap<String, u32>>,
    pub executor: Option<ExecutorConfig>,
    /// Nodes of the machine (see [`crate::machine`]); without it cost is counted in used PEs.
    pub machine: Option<Machine>,
    /// The cost FN weighs: `core-hours` (default), `node-hours` or `energy`.
    pub cost: Option<CostKind>,
    /// Queue limits (`[[queue]]` tables).
    #[serde(default, rename = "queue", skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<Queue>,
    /// Keep only configurations that fit this `[[queue]]` (TOML cannot hold both `queue =
    /// "NAME"` and `[[queue]]` tables, hence the name).
    pub use_queue: Option<String>,
    /// Components on different hardware (`[[resource]]` tables, see
    /// [`crate::machine::Resource`]); each `[[component]]` then names its `resource`.
    #[serde(default, rename = "resource", skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
}

/// How a campaign chooses the next iteration's tests (`strategy = "algorithm1" | "guided"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// The paper's Algorithm 1: every test walks by donor/recipient moves in halving steps.
    #[default]
    Algorithm1,
    /// The calibrated model, refitted after every iteration, chooses where to measure next.
    Guided,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Algorithm1 => "algorithm1",
            Strategy::Guided => "guided",
        }
    }

    /// True for the default, so the state file of an Algorithm 1 campaign does not mention it.
    pub fn is_default(&self) -> bool {
        *self == Strategy::Algorithm1
    }
}

/// One `[[component]]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentEntry {
    pub name: String,
    /// Scalability curve, relative to the campaign file. Without one the component is learned
    /// from measured coupled runs (`--measured`), and its range must be given: `min_nproc` and
    /// `max_nproc`, or `allowed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<PathBuf>,
    pub allowed: Option<AllowedEntry>,
    pub min_nproc: Option<u32>,
    pub max_nproc: Option<u32>,
    /// The component's name in the timing output (e.g. `ATMIFS` for IFS); default `name`.
    pub timing_name: Option<String>,
    /// The `[[resource]]` it runs on (its curve counts that resource's units); required when
    /// the file has `[[resource]]` tables, refused without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// OpenMP threads per MPI rank the search may give it (its curve carries a `threads`
    /// column then); left out: every thread count its curve measures (1 without the column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Vec<u32>>,
}

impl ComponentEntry {
    pub fn timing_name(&self) -> &str {
        self.timing_name.as_deref().unwrap_or(&self.name)
    }
}

/// An allowed-PE list: inline, or a file of numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AllowedEntry {
    List(Vec<u32>),
    File(PathBuf),
}

/// Why a campaign file or an allowed list could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {reason}")]
    Unreadable { file: String, reason: String },
    /// toml's message already names the line, column and key.
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error(transparent)]
    Curve(#[from] CurveError),
    #[error("{file}: line {line}: {value:?} is not a positive PE count; list whole numbers separated by spaces, commas or newlines")]
    BadAllowed {
        file: String,
        line: usize,
        value: String,
    },
    #[error("{file}: {message}")]
    Semantics { file: String, message: String },
}

/// The first two components that share a timing name, as `(earlier, later, timing_name)`
/// from `(name, timing_name)` pairs: their timing output could not be told apart. The
/// campaign file and the command line's `--timing-name` flags both refuse this.
pub fn shared_timing_name<'a>(names: &[(&'a str, &'a str)]) -> Option<(&'a str, &'a str, &'a str)> {
    names.iter().enumerate().find_map(|(k, &(name, timing))| {
        names[..k]
            .iter()
            .find(|(_, t)| *t == timing)
            .map(|&(earlier, _)| (earlier, name, timing))
    })
}

impl CampaignFile {
    /// Reads and parses a campaign file.
    pub fn load(path: &Path) -> Result<CampaignFile, ConfigError> {
        let text = crate::fsutil::read_small_text(path).map_err(|e| ConfigError::Unreadable {
            file: path.display().to_string(),
            reason: e.to_string(),
        })?;
        CampaignFile::parse(&text, &path.display().to_string())
    }

    /// Parses campaign-file text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<CampaignFile, ConfigError> {
        let parsed: CampaignFile = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            file: file.to_string(),
            message: one_line_toml_error(&e, text),
        })?;
        let semantics = |message: String| ConfigError::Semantics {
            file: file.to_string(),
            message,
        };
        for (k, c) in parsed.components.iter().enumerate() {
            validate_component_name(&c.name).map_err(semantics)?;
            if let Some(t) = &c.timing_name {
                validate_component_name(t).map_err(|why| {
                    semantics(format!(
                        "component {}: timing_name {t:?}: {}",
                        c.name,
                        why.replace("component name", "name")
                    ))
                })?;
            }
            let earlier = &parsed.components[..k];
            if earlier.iter().any(|o| o.name == c.name) {
                return Err(semantics(format!(
                    "[[component]] {:?} is given twice; each component needs its own name",
                    c.name
                )));
            }
            if let Some(threads) = &c.threads {
                let at = line_in_table(text, "[[component]]", k, "threads")
                    .map(|l| format!("line {l}: "))
                    .unwrap_or_default();
                if threads.is_empty() || threads.contains(&0) {
                    return Err(semantics(format!(
                        "{at}component {}: threads = {threads:?} must list positive thread counts \
                         per MPI rank, e.g. threads = [1, 2, 4]",
                        c.name
                    )));
                }
                if c.curve.is_none() && threads.iter().any(|&t| t != 1) {
                    return Err(semantics(format!(
                        "{at}component {}: threads other than 1 need a curve with a threads \
                         column (speeds at each thread count); add curve = \"PATH\"",
                        c.name
                    )));
                }
            }
            let has_range = c.allowed.is_some() || (c.min_nproc.is_some() && c.max_nproc.is_some());
            if c.curve.is_none() && !has_range {
                let at = line_in_table(text, "[[component]]", k, "name")
                    .map(|l| format!("line {l}: "))
                    .unwrap_or_default();
                return Err(semantics(format!(
                    "{at}component {} has no curve, so the search needs its range: add min_nproc \
                     and max_nproc (or allowed), or curve = \"PATH\"",
                    c.name
                )));
            }
        }
        let timing_names: Vec<(&str, &str)> = parsed
            .components
            .iter()
            .map(|c| (c.name.as_str(), c.timing_name()))
            .collect();
        if let Some((first, second, timing)) = shared_timing_name(&timing_names) {
            return Err(semantics(format!(
                "components {first} and {second} have the same timing_name {timing:?}; each \
                 component's timing output must be told apart (e.g. ATMIFS and oceanx)"
            )));
        }
        for (k, config) in parsed.start.iter().flatten().enumerate() {
            check_configuration(&parsed, config, &format!("start entry {}", k + 1)).map_err(
                |message| ConfigError::Semantics {
                    file: file.to_string(),
                    message,
                },
            )?;
        }
        if let Some(original) = &parsed.original {
            for name in original.keys() {
                if !parsed.components.iter().any(|c| &c.name == name) {
                    return Err(ConfigError::Semantics {
                        file: file.to_string(),
                        message: format!(
                            "[original] names {name:?}, which is not a [[component]]; use one of {}",
                            component_list(&parsed)
                        ),
                    });
                }
            }
        }
        check_resources(&parsed, text).map_err(semantics)?;
        parsed
            .cost_model()
            .validate()
            .map_err(|e| ConfigError::Semantics {
                file: file.to_string(),
                message: e.to_string(),
            })?;
        Ok(parsed)
    }

    /// The machine, cost and queues of this file ([`CostModel::default`] without them).
    pub fn cost_model(&self) -> CostModel {
        CostModel {
            machine: self.machine,
            cost: self.cost.unwrap_or_default(),
            queues: self.queues.clone(),
            queue: self.use_queue.clone(),
            resources: self.resources.clone(),
            component_resource: if self.resources.is_empty() {
                Vec::new()
            } else {
                // Checked at parse time: every component names a defined resource.
                self.components
                    .iter()
                    .map(|c| {
                        self.resources
                            .iter()
                            .position(|r| Some(&r.name) == c.resource.as_ref())
                            .unwrap_or(0)
                    })
                    .collect()
            },
        }
    }

    /// The resource index of each of `names` (components in the order they are balanced, e.g.
    /// `--curve` flags'); empty without `[[resource]]` tables. A name without a `[[component]]`
    /// table naming its resource is an error saying what to add.
    pub fn component_resources(&self, names: &[&str]) -> Result<Vec<usize>, String> {
        if self.resources.is_empty() {
            return Ok(Vec::new());
        }
        names
            .iter()
            .map(|name| {
                self.components
                    .iter()
                    .find(|c| c.name == *name)
                    .and_then(|c| c.resource.as_ref())
                    .and_then(|r| self.resources.iter().position(|x| &x.name == r))
                    .ok_or_else(|| {
                        format!(
                            "component {name} has no resource: with [[resource]] tables every component needs a [[component]] table with name = {name:?} and resource = one of {}",
                            self.resources
                                .iter()
                                .map(|r| r.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    })
            })
            .collect()
    }

    /// Loads the curves and allowed lists (paths relative to `base_dir`) as prediction inputs;
    /// a component without `curve` gets none (the calibrated model learns it from runs).
    pub fn component_inputs(&self, base_dir: &Path) -> Result<Vec<ComponentInput>, ConfigError> {
        self.components
            .iter()
            .map(|c| {
                let (curve, thread_curves) = match &c.curve {
                    Some(path) => {
                        let path = base_dir.join(path);
                        let series = Curve::load_series(c.name.clone(), &path)?;
                        let input = ComponentInput::threaded(series, c.threads.as_deref())
                            .map_err(|message| ConfigError::Semantics {
                                file: path.display().to_string(),
                                message,
                            })?;
                        (input.curve, input.thread_curves)
                    }
                    None => (None, Vec::new()),
                };
                let allowed = match &c.allowed {
                    None => None,
                    Some(AllowedEntry::List(v)) => Some(v.clone()),
                    Some(AllowedEntry::File(p)) => Some(load_allowed(&base_dir.join(p))?),
                };
                Ok(ComponentInput {
                    name: c.name.clone(),
                    curve,
                    allowed,
                    min_nproc: c.min_nproc,
                    max_nproc: c.max_nproc,
                    thread_curves,
                })
            })
            .collect()
    }

    /// The prediction settings of this file, defaults filled in (budget 0 when missing: the
    /// caller must have one from the command line).
    pub fn settings(&self) -> Settings {
        let d = Settings::default();
        Settings {
            max_nproc: self.max_nproc.unwrap_or(d.max_nproc),
            step: self.step.unwrap_or(d.step),
            tts_w: self.tts_w.unwrap_or(d.tts_w),
            top: self.top.unwrap_or(d.top),
            interp: self.interp.unwrap_or(d.interp),
            extra_pes: self.extra_pes.unwrap_or(d.extra_pes),
        }
    }
}

/// `[[resource]]` tables and the components' `resource` keys: every component names a defined
/// resource when there are any, none does without; each table's numbers are positive. Each
/// message names the key and, where it can be found, the line.
fn check_resources(file: &CampaignFile, text: &str) -> Result<(), String> {
    let names = || {
        file.resources
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (k, r) in file.resources.iter().enumerate() {
        let at = |key: &str| {
            line_in_table(text, "[[resource]]", k, key)
                .map(|l| format!("line {l}: "))
                .unwrap_or_default()
        };
        if file.resources[..k].iter().any(|o| o.name == r.name) {
            return Err(format!(
                "{}[[resource]] {:?} is given twice; each resource needs its own name",
                at("name"),
                r.name
            ));
        }
        if r.units_per_node == 0 {
            return Err(format!(
                "{}resource {:?}: units_per_node = 0; give the units (cores, GPUs) of one node, e.g. units_per_node = 4",
                at("units_per_node"),
                r.name
            ));
        }
        if !(r.unit_cost.is_finite() && r.unit_cost > 0.0) {
            return Err(format!(
                "{}resource {:?}: unit_cost = {} is not a positive number; give what an hour of one unit costs against a CPU core-hour, e.g. unit_cost = 1 for cores",
                at("unit_cost"),
                r.name,
                r.unit_cost
            ));
        }
        if r.max_units == Some(0) {
            return Err(format!(
                "{}resource {:?}: max_units = 0; give its budget in units, or leave max_units out to use max_nproc",
                at("max_units"),
                r.name
            ));
        }
    }
    for (k, c) in file.components.iter().enumerate() {
        let at = |key: &str| {
            line_in_table(text, "[[component]]", k, key)
                .map(|l| format!("line {l}: "))
                .unwrap_or_default()
        };
        match (&c.resource, file.resources.is_empty()) {
            (Some(name), true) => {
                return Err(format!(
                    "{}component {}: resource = {name:?}, but there are no [[resource]] tables; add one with name = {name:?}, units_per_node and unit_cost, or drop the key",
                    at("resource"),
                    c.name
                ))
            }
            (Some(name), false) if !file.resources.iter().any(|r| &r.name == name) => {
                return Err(format!(
                    "{}component {}: resource = {name:?} is not a [[resource]]; use one of {}",
                    at("resource"),
                    c.name,
                    names()
                ))
            }
            (None, false) => {
                return Err(format!(
                    "{}component {}: no resource; with [[resource]] tables every [[component]] names one, e.g. resource = {:?} (one of {})",
                    at("name"),
                    c.name,
                    file.resources[0].name,
                    names()
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The line (1-based) of `key = ...` inside the `index`-th `header` table of `text`, if found.
fn line_in_table(text: &str, header: &str, index: usize, key: &str) -> Option<usize> {
    let mut seen = 0;
    let mut inside = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == header && {
                seen += 1;
                seen == index + 1
            };
            continue;
        }
        let is_key = t
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='));
        if inside && is_key {
            return Some(n + 1);
        }
    }
    None
}

/// A configuration table must give PEs to every component and to nothing else.
fn check_configuration(
    file: &CampaignFile,
    config: &BTreeMap<String, u32>,
    what: &str,
) -> Result<(), String> {
    if let Some(unknown) = config
        .keys()
        .find(|n| !file.components.iter().any(|c| &c.name == *n))
    {
        return Err(format!(
            "{what} names {unknown:?}, which is not a [[component]]; use {}",
            component_list(file)
        ));
    }
    if let Some(missing) = file
        .components
        .iter()
        .find(|c| !config.contains_key(&c.name))
    {
        return Err(format!(
            "{what} gives no PEs to {:?}; list every component: {}",
            missing.name,
            component_list(file)
        ));
    }
    if let Some((name, _)) = config.iter().find(|(_, &p)| p == 0) {
        return Err(format!(
            "{what} gives 0 PEs to {name:?}; use a positive count"
        ));
    }
    Ok(())
}

fn component_list(file: &CampaignFile) -> String {
    file.components
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
