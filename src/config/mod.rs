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
use crate::machine::{CostKind, CostModel, Machine, Placement, Queue, Resource};
use crate::predict::packing::{Pinned, PinnedHelper};
use crate::predict::{ComponentInput, Settings};

mod allowed;
pub mod scaling;
mod synthetic;
mod toml_words;

pub use allowed::{load_allowed, parse_allowed};
pub use scaling::{ScalingDesign, ScalingSettings, ScalingTable, ScalingTiming};
use toml_words::one_line_toml_error;

/// The whole campaign file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    /// Budget for the balanced components together, in PEs (required here or as `--max-nproc`).
    pub max_nproc: Option<u32>,
    /// Distance between candidate PE counts without an allowed list (default 1).
    pub step: Option<u32>,
    /// Weight of time to solution in FN, in [0, 1] (default 0.5).
    pub tts_w: Option<f64>,
    /// Configurations proposed, and the campaign's first tests (default 5).
    pub top: Option<usize>,
    /// Interpolation between measured points (default `pchip`).
    pub interp: Option<Method>,
    /// PEs that count in CHSY but are never balanced (XIOS, runoff mapper; default 0).
    pub extra_pes: Option<u32>,
    /// PEs moved in the first lb-iteration (Algorithm 1).
    pub initial_step: Option<u32>,
    /// A test finishes once its step falls below this.
    pub minimum_step: Option<u32>,
    /// Runs per test and iteration.
    pub repetitions: Option<u32>,
    /// The most lb-iterations the campaign takes (default 12; guided 24, a cold start 48).
    pub max_iterations: Option<u32>,
    /// Coupling period in seconds (simulated time per coupling step).
    pub period_s: Option<f64>,
    /// How the campaign chooses its tests after each iteration (default Algorithm 1).
    pub strategy: Option<Strategy>,
    /// Where the components run relative to each other, as a layout expression
    /// ([`crate::layout::Layout`]): `a | b` side by side, `a ; b` one after the other on the
    /// same PEs. Absent: every component side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// The `[[component]]` tables, in order (1 to 5).
    #[serde(default, rename = "component")]
    pub components: Vec<ComponentEntry>,
    /// Start the campaign from exactly these configurations (`NAME = nproc` each) instead of
    /// the predicted top N; the terminal app's `w` writes the configurations you marked here.
    pub start: Option<Vec<BTreeMap<String, u32>>>,
    /// The user's current configuration, run as one more test.
    pub original: Option<BTreeMap<String, u32>>,
    /// How runs are run (`[executor]`); without it the campaign is driven from outside (`next` /
    /// `record`).
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
    /// The `[[component]]` tables with `pinned`: helpers that take fixed ranks on every node or
    /// on the first and are never balanced. [`CampaignFile::parse`] moves them here from
    /// `components`, so everything that balances sees only the balanced components; whoever
    /// writes the file again puts them back ([`CampaignFile::with_helpers_as_components`]).
    #[serde(skip)]
    pub helpers: Vec<ComponentEntry>,
    /// Measure the components' scalability curves instead of balancing them (`[scaling]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<ScalingTable>,
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
    /// The strategy's name as the campaign file writes it (`algorithm1`, `guided`).
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
    /// The component's name (up to 64 characters of `A-Za-z0-9_-`; unique).
    pub name: String,
    /// Scalability curve, relative to the campaign file. Without one the component is learned
    /// from measured coupled runs (`--measured`), and its range must be given: `min_nproc` and
    /// `max_nproc`, or `allowed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<PathBuf>,
    /// PE counts it can run on: a list, or a file of them.
    pub allowed: Option<AllowedEntry>,
    /// Fewest PEs a move may leave it with (without a curve: the low end of the range searched).
    pub min_nproc: Option<u32>,
    /// Most PEs a move may give it (without a curve: the high end of the range searched).
    pub max_nproc: Option<u32>,
    /// The component's name in the timing output (e.g. `ATMIFS` for IFS); default `name`.
    pub timing_name: Option<String>,
    /// The `[[resource]]` it runs on (its curve counts that resource's units); required when
    /// the file has `[[resource]]` tables, refused without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// A helper that uses cores but is never balanced (`per-node`: XIOS, one per node;
    /// `first-node`: the runoff mapper): needs `[machine] placement = "groups"` and `nproc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<Pinned>,
    /// A pinned helper's ranks on each node it is pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nproc: Option<u32>,
    /// OpenMP threads per MPI rank the search may give it (its curve carries a `threads`
    /// column then); left out: every thread count its curve measures (1 without the column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Vec<u32>>,
}

impl ComponentEntry {
    /// Its name in the timing output: `timing_name`, else `name`.
    pub fn timing_name(&self) -> &str {
        self.timing_name.as_deref().unwrap_or(&self.name)
    }
}

/// An allowed-PE list: inline, or a file of numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AllowedEntry {
    /// The PE counts written in the file.
    List(Vec<u32>),
    /// A file of PE counts (relative to the campaign file), or NEMO's `ocean.output` with its
    /// `ln_listonly` list.
    File(PathBuf),
}

/// Why a campaign file or an allowed list could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The campaign file or an allowed-list file could not be read.
    #[error("{file}: cannot read: {reason}")]
    Unreadable {
        /// The file.
        file: String,
        /// What the filesystem or the bounded reader said.
        reason: String,
    },
    /// toml's message already names the line, column and key.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// A component's curve could not be loaded.
    #[error(transparent)]
    Curve(#[from] CurveError),
    /// An allowed-list file holds something that is not a positive PE count.
    #[error("{file}: line {line}: {value:?} is not a positive PE count; list whole numbers separated by spaces, commas or newlines")]
    BadAllowed {
        /// The file.
        file: String,
        /// 1-based line of the value.
        line: usize,
        /// The value as written.
        value: String,
    },
    /// The file parses but a value cannot work (a limit, a reference to an unknown name); the
    /// message names the key.
    #[error("{file}: {message}")]
    Semantics {
        /// The campaign file.
        file: String,
        /// What is wrong and how to fix it.
        message: String,
    },
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
        let mut parsed: CampaignFile = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            file: file.to_string(),
            message: one_line_toml_error(&e, text),
        })?;
        let semantics = |message: String| ConfigError::Semantics {
            file: file.to_string(),
            message,
        };
        let learns_curves = parsed.learns_curves();
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
            if c.pinned.is_some() || c.nproc.is_some() {
                let at = |key: &str| {
                    line_in_table(text, "[[component]]", k, key)
                        .map(|l| format!("line {l}: "))
                        .unwrap_or_default()
                };
                check_pinned(&parsed, c, &at).map_err(semantics)?;
                continue;
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
                if c.curve.is_none() {
                    check_threads_without_curve(&c.name, threads, learns_curves)
                        .map_err(|why| semantics(format!("{at}{why}")))?;
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
        let (helpers, balanced) = std::mem::take(&mut parsed.components)
            .into_iter()
            .partition(|c| c.pinned.is_some());
        parsed.helpers = helpers;
        parsed.components = balanced;
        if parsed.components.is_empty() && !parsed.helpers.is_empty() {
            return Err(semantics(
                "every [[component]] is pinned; at least one must be balanced (drop its pinned key)"
                    .into(),
            ));
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
        check_scaling(&parsed, text).map_err(semantics)?;
        check_layout(&parsed, text).map_err(semantics)?;
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

    /// The file's components as it would be written again: the balanced ones, then the pinned
    /// helpers [`CampaignFile::parse`] set apart.
    pub fn with_helpers_as_components(mut self) -> CampaignFile {
        let helpers = std::mem::take(&mut self.helpers);
        self.components.extend(helpers);
        self
    }

    /// The pinned helpers as the packing search takes them.
    pub fn pinned_helpers(&self) -> Vec<PinnedHelper> {
        self.helpers
            .iter()
            .filter_map(|c| {
                Some(PinnedHelper {
                    name: c.name.clone(),
                    ranks: c.nproc?,
                    pinned: c.pinned?,
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

/// `threads` of a component without a curve: a campaign that learns its curves
/// (`learns_curves`) keeps one thread count, at which its runs measure the speed; anything else
/// needs the speed at each thread count from a curve.
fn check_threads_without_curve(
    name: &str,
    threads: &[u32],
    learns_curves: bool,
) -> Result<(), String> {
    if threads.iter().all(|&t| t == 1) {
        return Ok(());
    }
    if !learns_curves {
        return Err(format!(
            "component {name}: threads other than 1 need a curve with a threads column (speeds \
             at each thread count); add curve = \"PATH\", or learn the curve at one thread \
             count in a cold start (strategy = \"guided\", no component with a curve) or a \
             scaling campaign ([scaling])"
        ));
    }
    match threads {
        [_] => Ok(()),
        _ => Err(format!(
            "component {name}: threads = {threads:?} without a curve; a campaign that learns \
             the curve keeps one thread count per rank, e.g. threads = [{}]: run a campaign per \
             thread count to compare them",
            threads.iter().max().copied().unwrap_or(1)
        )),
    }
}

/// A pinned helper's table: `pinned` with `nproc` ranks and nothing a balanced component has,
/// on a machine that packs node groups. `at(key)` gives the line prefix of a key.
fn check_pinned(
    file: &CampaignFile,
    c: &ComponentEntry,
    at: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    let name = &c.name;
    let Some(pinned) = c.pinned else {
        return Err(format!(
            "{}component {name}: nproc is for pinned helpers; add pinned = \"per-node\" or \"first-node\", or drop nproc (a balanced component's PEs come from the search)",
            at("nproc")
        ));
    };
    match c.nproc {
        None | Some(0) => {
            return Err(format!(
                "{}component {name}: pinned = \"{}\" needs nproc, its ranks on each node it is pinned to, e.g. nproc = 1",
                at("pinned"),
                pinned.label()
            ))
        }
        Some(_) => {}
    }
    let balanced_keys = [
        ("curve", c.curve.is_some()),
        ("allowed", c.allowed.is_some()),
        ("min_nproc", c.min_nproc.is_some()),
        ("max_nproc", c.max_nproc.is_some()),
        ("resource", c.resource.is_some()),
        ("threads", c.threads.is_some()),
    ];
    if let Some((key, _)) = balanced_keys.iter().find(|(_, given)| *given) {
        return Err(format!(
            "{}component {name}: a pinned helper is never balanced, so it takes no {key}; drop {key} or drop pinned",
            at(key)
        ));
    }
    if file
        .machine
        .is_none_or(|m| m.placement != Placement::Groups)
    {
        return Err(format!(
            "{}component {name}: pinned helpers are placed on nodes, so they need [machine] with cores_per_node and placement = \"groups\"; otherwise count their cores in extra_pes",
            at("pinned")
        ));
    }
    Ok(())
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

/// `layout`: an expression that reads, naming every balanced `[[component]]` once and nothing
/// else.
fn check_layout(file: &CampaignFile, text: &str) -> Result<(), String> {
    let Some(expr) = &file.layout else {
        return Ok(());
    };
    // The key is top level: before the first table header.
    let at = text
        .lines()
        .take_while(|l| !l.trim_start().starts_with('['))
        .position(|l| {
            l.trim_start()
                .strip_prefix("layout")
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|n| format!("line {}: ", n + 1))
        .unwrap_or_default();
    let tree = file
        .layout_tree()
        .map_err(|e| format!("{at}{e}"))?
        .expect("layout is given");
    let named = tree.components();
    if let Some(stranger) = named
        .iter()
        .find(|n| !file.components.iter().any(|c| c.name == **n))
    {
        return Err(format!(
            "{at}layout {expr:?} names {stranger}, which is not a balanced [[component]]; use one of {}",
            component_list(file)
        ));
    }
    if let Some(left_out) = file
        .components
        .iter()
        .find(|c| !named.contains(&c.name.as_str()))
    {
        return Err(format!(
            "{at}layout {expr:?} leaves out component {}; name every [[component]] in it",
            left_out.name
        ));
    }
    Ok(())
}

impl CampaignFile {
    /// The `layout` expression as a tree (`None` without the key).
    pub fn layout_tree(&self) -> Result<Option<crate::layout::Layout>, crate::layout::LayoutError> {
        self.layout
            .as_deref()
            .map(crate::layout::Layout::parse)
            .transpose()
    }
}

/// A `[scaling]` table: its keys resolve, and the rest of the file is one a scaling campaign
/// can run: every component has a range to measure (`min_nproc` and `max_nproc`, or
/// `allowed`) and no curve, and nothing chooses configurations to balance.
fn check_scaling(file: &CampaignFile, text: &str) -> Result<(), String> {
    let Some(table) = &file.scaling else {
        return Ok(());
    };
    let at = |key: &str| {
        line_in_table(text, "[scaling]", 0, key)
            .map(|l| format!("line {l}: "))
            .unwrap_or_default()
    };
    // A cold start's table resolves with its defaults (coupled, fewer counts, one run each):
    // any subset of its keys may be written.
    let resolved = if file.strategy == Some(Strategy::Guided) && table.design.is_none() {
        file.cold_start_scaling()
    } else {
        table.resolve()
    };
    if let Err(message) = resolved {
        // The message names its key first: `[scaling] KEY = ...`.
        let key = message
            .strip_prefix("[scaling] ")
            .and_then(|rest| rest.split([' ', ',']).next())
            .unwrap_or("design");
        return Err(format!("{}{message}", at(key)));
    }
    for (k, c) in file.components.iter().enumerate() {
        let at = |key: &str| {
            line_in_table(text, "[[component]]", k, key)
                .map(|l| format!("line {l}: "))
                .unwrap_or_default()
        };
        if c.curve.is_some() {
            return Err(format!(
                "{}component {}: a scaling campaign measures the curve; drop `curve` and give min_nproc and max_nproc (or allowed)",
                at("curve"),
                c.name
            ));
        }
    }
    if file.start.is_some() {
        return Err("`start` cannot go with [scaling]: a scaling campaign chooses its own PE counts; drop one of them".into());
    }
    match file.strategy {
        None => {}
        // A cold start: the coupled design first, then guided balancing.
        Some(Strategy::Guided) if table.design != Some(ScalingDesign::Standalone) => {}
        Some(Strategy::Guided) => {
            return Err(format!(
                "{}strategy = \"guided\" with [scaling] is a cold start, whose first phase runs coupled configurations: set design = \"coupled\", or drop strategy for a standalone scaling campaign",
                at("design")
            ))
        }
        Some(_) => {
            return Err("`strategy` cannot go with [scaling]: a scaling campaign measures curves, it balances nothing; drop one of them (strategy = \"guided\" with design = \"coupled\" is a cold start)".into());
        }
    }
    if file.components.is_empty() {
        return Err(
            "[scaling] needs at least one [[component]] table with name, min_nproc and max_nproc"
                .into(),
        );
    }
    Ok(())
}

impl CampaignFile {
    /// Whether the campaign learns its components' curves from its own runs: a cold start, or
    /// a scaling campaign (`[scaling]`). Only then may a component without a curve run more
    /// than one thread per rank: its runs measure the speed at that thread count.
    pub fn learns_curves(&self) -> bool {
        self.scaling.is_some()
            || (self.strategy == Some(Strategy::Guided)
                && self
                    .components
                    .iter()
                    .filter(|c| c.pinned.is_none())
                    .all(|c| c.curve.is_none()))
    }

    /// Whether this file is a cold start: `strategy = "guided"`, components and none of them
    /// with a curve (a `[scaling]` table, if any, is coupled: checked when the file is read).
    /// Such a campaign learns the curves in coupled runs first, then balances.
    pub fn is_cold_start(&self) -> bool {
        self.strategy == Some(Strategy::Guided)
            && !self.components.is_empty()
            && self.components.iter().all(|c| c.curve.is_none())
    }

    /// The `[scaling]` settings of a cold start's first phase: the file's `[scaling]` table,
    /// or (without one) the coupled design with 4 counts and 1 run each, since the guided
    /// phase repeats what comes close to the best. `counts` and `repetitions` left out of a
    /// table take these defaults too.
    pub fn cold_start_scaling(&self) -> Result<ScalingSettings, String> {
        let mut table = self.scaling.clone().unwrap_or(ScalingTable {
            design: None,
            repetitions: None,
            counts: None,
            max_runs: None,
            max_core_hours: None,
            simulated_days: None,
            timing: None,
        });
        table.design = table.design.or(Some(ScalingDesign::Coupled));
        table.counts = table.counts.or(Some(COLD_START_COUNTS));
        table.repetitions = table.repetitions.or(Some(1));
        table.resolve()
    }
}

/// PE counts of a cold start's first series per component (fewer than a scaling campaign's:
/// the model needs three per component, and the guided phase adds more where they matter).
pub const COLD_START_COUNTS: u32 = 4;

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
