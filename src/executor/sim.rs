//! The `sim` executor: runs the built-in stand-in coupled model ([`crate::sim`]) in-process, on
//! one thread per run, writing raw LUCIA files into the run directory.
//!
//! Truth curves: `[executor.sim] curves` when given for a component (by its name or timing
//! name), else the campaign's own curve. Each run gets its own seed (from its id and the
//! `seed` setting), so repetitions differ like real runs do. A run whose model fails (as the
//! settings may ask) ends with exit status 1 and a note in `stderr`; an error of the model
//! itself is a failed run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::ExecutorConfig;
use super::{
    recover_ended, status_on_disk, write_exit_status, Executor, ExecutorContext, ExecutorError,
    RunRequest, RunStatus, Ticket,
};
use crate::curve::Curve;
use crate::sim::cime::{simulate_tree, Flavour, TreeComponent, TreeRun};
use crate::sim::{simulate, SimComponent, SimOutput, SimRun, SimSettings};

/// Runs each run as a simulator thread.
pub struct SimExecutor {
    settings: SimSettings,
    /// (campaign name, timing name, truth curve in ranks, threads per rank) per component.
    components: Vec<(String, String, Curve, u32)>,
    /// Standalone speed per component, in the same order (standalone runs).
    standalone: Vec<Curve>,
    statuses: Arc<Mutex<HashMap<String, RunStatus>>>,
    threads: HashMap<String, JoinHandle<()>>,
    /// The campaign's layout tree and the summary flavour written: runs of a tree write a CIME
    /// timing summary ([`crate::sim::cime`]) instead of LUCIA files.
    tree: Option<(crate::layout::Layout, crate::sim::cime::Flavour)>,
}

impl std::fmt::Debug for SimExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimExecutor")
            .field("settings", &self.settings)
            .finish()
    }
}

impl SimExecutor {
    /// Builds the executor: checks the settings and loads the truth curves.
    pub fn from_config(
        cfg: &ExecutorConfig,
        ctx: &ExecutorContext,
    ) -> Result<SimExecutor, ExecutorError> {
        let mut settings = cfg.sim.clone().unwrap_or_default();
        if settings.period_s.is_none() {
            settings.period_s = ctx.period_s;
        }
        settings
            .validate()
            .map_err(|e| ExecutorError::Config(e.to_string()))?;
        let mut components = Vec::new();
        let mut standalone = Vec::new();
        for c in &ctx.components {
            let names = [c.name.as_str(), c.timing_name.as_str()];
            let threads = c.threads.max(1);
            // A hybrid component's campaign curve counts cores: read it at its thread count.
            let campaign_curve = match (&c.curve, threads) {
                (Some(curve), t) if t > 1 => Some(
                    crate::sim::curve_at_threads(vec![curve.clone()], t)
                        .map_err(|e| ExecutorError::Config(format!("[executor.sim] {e}")))?,
                ),
                (curve, _) => curve.clone(),
            };
            let truth = settings
                .configured_curve_at(&names, &ctx.base_dir, threads)
                .map_err(|e| ExecutorError::Config(format!("[executor.sim] curves: {e}")))?
                .or(campaign_curve)
                .or_else(|| {
                    names
                        .iter()
                        .filter(|_| threads == 1)
                        .find_map(|n| crate::sim::builtin_curve(n))
                })
                .ok_or_else(|| {
                    ExecutorError::Config(format!(
                        "[executor.sim] has no truth curve for {}: give curves.{} = \"PATH\" (a file of nproc,SYPD rows)",
                        c.name, c.name
                    ))
                })?;
            let alone = settings
                .configured_standalone_curve(&names, &ctx.base_dir)
                .map_err(|e| {
                    ExecutorError::Config(format!("[executor.sim] standalone_curves: {e}"))
                })?
                .unwrap_or_else(|| truth.clone());
            components.push((c.name.clone(), c.timing_name.clone(), truth, threads));
            standalone.push(alone);
        }
        let configured = settings.curves.iter().chain(&settings.standalone_curves);
        for curves in configured {
            for key in curves.keys() {
                if !ctx
                    .components
                    .iter()
                    .any(|c| &c.name == key || &c.timing_name == key)
                {
                    return Err(ExecutorError::Config(format!(
                        "[executor.sim] curves names {key:?}, which is not a component; use one of {}",
                        ctx.components.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                }
            }
        }
        let tree = match (&ctx.layout, settings.output) {
            (None, Some(SimOutput::Mct | SimOutput::Cmeps)) => {
                return Err(ExecutorError::Config(
                    "[executor.sim] output = \"mct\" or \"cmeps\" writes CIME summaries of a layout tree: give the campaign a `layout`, or use output = \"lucia\"".into(),
                ))
            }
            (None, _) => None,
            (Some(_), Some(SimOutput::Lucia | SimOutput::Oasis5)) => {
                return Err(ExecutorError::Config(
                    "[executor.sim] output: a campaign on a layout tree reads CIME timing summaries; use output = \"cmeps\" (the default with a layout) or \"mct\"".into(),
                ))
            }
            (Some(tree), Some(SimOutput::Mct)) => Some((tree.clone(), Flavour::Mct)),
            (Some(tree), _) => Some((tree.clone(), Flavour::Cmeps)),
        };
        Ok(SimExecutor {
            settings,
            components,
            standalone,
            statuses: Arc::new(Mutex::new(HashMap::new())),
            threads: HashMap::new(),
            tree,
        })
    }

    /// The model run for a request: components by timing name with their PEs. A standalone
    /// run (`run.component`) is its one component at its standalone speed, without coupling.
    pub fn sim_run(&self, run: &RunRequest) -> Result<SimRun, ExecutorError> {
        let components = run
            .nproc
            .iter()
            .map(|(name, nproc)| {
                let k = self
                    .components
                    .iter()
                    .position(|(n, _, _, _)| n == name)
                    .ok_or_else(|| {
                        ExecutorError::Config(format!("run {}: unknown component {name}", run.id))
                    })?;
                let (_, timing, truth, threads) = &self.components[k];
                let curve = if run.component.is_some() {
                    &self.standalone[k]
                } else {
                    truth
                };
                // The request counts cores; the model runs ranks of `threads` threads.
                Ok(SimComponent {
                    name: timing.clone(),
                    nproc: *nproc / threads,
                    curve: curve.clone(),
                    threads: *threads,
                })
            })
            .collect::<Result<Vec<_>, ExecutorError>>()?;
        let settings = if run.component.is_some() {
            self.settings.standalone()
        } else {
            self.settings.clone()
        };
        Ok(SimRun::new(&settings, components, run_seed(&run.id)))
    }
}

impl SimExecutor {
    /// The tree run for a request of a campaign on a layout tree: each component by its class
    /// (its timing name in lower case) with its tasks and truth curve.
    fn tree_run(
        &self,
        run: &RunRequest,
        tree: &crate::layout::Layout,
        flavour: Flavour,
    ) -> Result<TreeRun, ExecutorError> {
        let sim = self.sim_run(run)?;
        // The tree names the campaign's components; the summary names their classes.
        let mut classes = Vec::new();
        let mut components = Vec::new();
        for ((name, _), c) in run.nproc.iter().zip(sim.components) {
            let class = c.name.to_ascii_lowercase();
            classes.push((name.clone(), class.clone()));
            components.push(TreeComponent {
                class,
                tasks: c.nproc,
                curve: c.curve,
            });
        }
        let tree = rename(tree, &classes);
        let seed = run_seed(&run.id) ^ self.settings.seed.unwrap_or(0);
        Ok(TreeRun {
            case: "autolb.stand-in".into(),
            tree,
            components,
            days: self.settings.period() * f64::from(self.settings.steps())
                / crate::metrics::SECONDS_PER_DAY,
            noise: self.settings.noise.unwrap_or(crate::sim::defaults::NOISE),
            flavour,
            seed,
        })
    }

    /// Starts a tree run on its own thread: the summary goes into the run directory's
    /// `timing/` folder, what the model did to `stdout`, then the exit status.
    fn start_tree(&mut self, run: &RunRequest, tree_run: TreeRun) -> Result<Ticket, ExecutorError> {
        // With time compression the run lasts its modelled TOT times the compression, and
        // its summary appears at the end, as a case's does.
        let compression = self.settings.compression.unwrap_or(0.0);
        self.spawn(run, move |run_dir| {
            if compression > 0.0 {
                if let Ok(outcome) = crate::sim::cime::run_tree(&tree_run) {
                    let pause = (outcome.tot_s * compression).min(60.0);
                    std::thread::sleep(Duration::from_secs_f64(pause));
                }
            }
            match simulate_tree(&tree_run, run_dir) {
                Ok(outcome) => Ended {
                    status: RunStatus::Finished { exit_code: 0 },
                    stdout: serde_json::to_string_pretty(&outcome).unwrap_or_default(),
                    stderr: String::new(),
                    wall_s: None,
                },
                Err(e) => Ended::failed(&e),
            }
        })
    }

    /// Runs `work` on a thread of its own for `run` (its directory made first), then writes
    /// what it ended with: `stdout`, `stderr`, the modelled wall time when known, and last the
    /// exit status, which is what a restarted driver looks for.
    fn spawn(
        &mut self,
        run: &RunRequest,
        work: impl FnOnce(&std::path::Path) -> Ended + Send + 'static,
    ) -> Result<Ticket, ExecutorError> {
        let run_dir = run.run_dir.clone();
        std::fs::create_dir_all(&run_dir).map_err(|source| ExecutorError::Io {
            what: format!("cannot create {}", run_dir.display()),
            source,
        })?;
        let id = run.id.clone();
        let statuses = Arc::clone(&self.statuses);
        if let Ok(mut s) = statuses.lock() {
            s.insert(id.clone(), RunStatus::Running);
        }
        let handle = std::thread::Builder::new()
            .name(format!("sim {id}"))
            .spawn(move || {
                let ended = work(&run_dir);
                if let Some(wall) = ended.wall_s {
                    // The modelled wall time, initialisation included (`timing = "wall"`).
                    let _ = std::fs::write(run_dir.join(super::WALL_FILE), format!("{wall}\n"));
                }
                let _ = std::fs::write(run_dir.join("stdout"), ended.stdout);
                let _ = std::fs::write(run_dir.join("stderr"), ended.stderr);
                let _ = write_exit_status(&run_dir, &ended.status);
                if let Ok(mut s) = statuses.lock() {
                    s.insert(id, ended.status);
                }
            })
            .map_err(|source| ExecutorError::Io {
                what: format!("cannot start a thread for run {}", run.id),
                source,
            })?;
        self.threads.insert(run.id.clone(), handle);
        Ok(Ticket(format!("thread {}", run.id)))
    }
}

/// How a stand-in run ended: its status, what it wrote to stdout and stderr, and its modelled
/// wall time when the model gives one.
struct Ended {
    status: RunStatus,
    stdout: String,
    stderr: String,
    wall_s: Option<f64>,
}

impl Ended {
    /// An error of the model itself: a failed run.
    fn failed(e: &dyn std::fmt::Display) -> Ended {
        Ended {
            status: RunStatus::Failed {
                reason: format!("stand-in model: {e}"),
            },
            stdout: String::new(),
            stderr: format!("{e}\n"),
            wall_s: None,
        }
    }
}

/// `tree` with every component renamed by `names` (`(from, to)` pairs).
fn rename(tree: &crate::layout::Layout, names: &[(String, String)]) -> crate::layout::Layout {
    use crate::layout::Layout;
    match tree {
        Layout::Component(n) => Layout::Component(
            names
                .iter()
                .find(|(from, _)| from == n)
                .map_or_else(|| n.clone(), |(_, to)| to.clone()),
        ),
        Layout::Beside(parts) => Layout::Beside(parts.iter().map(|p| rename(p, names)).collect()),
        Layout::After(parts) => Layout::After(parts.iter().map(|p| rename(p, names)).collect()),
    }
}

/// A stable seed per run id: FNV-1a of its bytes followed by `0xff` (the bytes `str`'s `Hash`
/// used to feed, kept so that seeds, and so the demo's runs, stay as they were).
fn run_seed(id: &str) -> u64 {
    super::fnv1a(id.bytes().chain([0xff]))
}

impl Executor for SimExecutor {
    fn kind(&self) -> &'static str {
        "sim"
    }

    fn start(&mut self, run: &RunRequest) -> Result<Ticket, ExecutorError> {
        if let Some((tree, flavour)) = &self.tree {
            let tree_run = self.tree_run(run, tree, *flavour)?;
            return self.start_tree(run, tree_run);
        }
        let sim_run = self.sim_run(run)?;
        self.spawn(run, move |run_dir| match simulate(&sim_run, run_dir) {
            // Like `autolb simulate --json`: what the model did on stdout, why it failed on
            // stderr.
            Ok(outcome) => {
                let stdout = serde_json::to_string_pretty(&outcome).unwrap_or_default();
                let (exit_code, stderr) = match &outcome.failed {
                    None => (0, String::new()),
                    Some(reason) => (1, format!("{reason}\n")),
                };
                Ended {
                    status: RunStatus::Finished { exit_code },
                    stdout,
                    stderr,
                    wall_s: Some(outcome.total_wall_s),
                }
            }
            Err(e) => Ended::failed(&e),
        })
    }

    fn poll(&mut self, runs: &[(&RunRequest, &Ticket)]) -> Result<Vec<RunStatus>, ExecutorError> {
        let known = self.statuses.lock().map(|s| s.clone()).unwrap_or_default();
        Ok(runs
            .iter()
            .map(|(run, _)| match known.get(&run.id) {
                Some(s) => s.clone(),
                None => status_on_disk(&run.run_dir),
            })
            .collect())
    }

    /// The model cannot be interrupted: cancelling waits for the run's thread (short with
    /// time compression), so nothing writes into the run directory afterwards. The run keeps
    /// the status it ended with; `campaign cancel` marks it cancelled anyway.
    fn cancel(&mut self, run: &RunRequest, _ticket: &Ticket) -> Result<(), ExecutorError> {
        if let Some(handle) = self.threads.remove(&run.id) {
            let _ = handle.join();
        }
        Ok(())
    }

    fn recover(
        &mut self,
        run: &RunRequest,
        ticket: Option<&Ticket>,
    ) -> Result<Option<Ticket>, ExecutorError> {
        // Threads die with the driver; only a run that wrote its exit status had finished.
        Ok(recover_ended(run, ticket))
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(50)
    }

    fn runs_outlive_driver(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::executor::ComponentContext;
    use crate::executor::ExecutorKind;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    fn ctx(base: &Path) -> ExecutorContext {
        let comp = |name: &str, timing: &str| ComponentContext {
            name: name.into(),
            timing_name: timing.into(),
            curve: crate::sim::builtin_curve(name),
            threads: 1,
        };
        ExecutorContext {
            base_dir: base.to_path_buf(),
            components: vec![comp("IFS", "ATMIFS"), comp("NEMO", "oceanx")],
            period_s: Some(2700.0),
            standalone: false,
            layout: None,
        }
    }

    fn cfg(sim: SimSettings) -> ExecutorConfig {
        ExecutorConfig {
            kind: ExecutorKind::Sim,
            command: None,
            timeout_s: None,
            jobs: None,
            retries: None,
            sim: Some(sim),
            slurm: None,
        }
    }

    #[test]
    fn runs_the_model_on_a_thread_and_keeps_the_exit_status() {
        let dir = tempfile::tempdir().unwrap();
        let mut exec =
            SimExecutor::from_config(&cfg(SimSettings::default()), &ctx(dir.path())).unwrap();
        let run = RunRequest {
            component: None,
            id: "i00-t00-r1".into(),
            iteration: 0,
            test: 0,
            repetition: 1,
            nproc: vec![("IFS".into(), 408), ("NEMO".into(), 229)],
            threads: Vec::new(),
            extra_pes: 0,
            run_dir: dir.path().join("rep-1"),
        };
        let ticket = exec.start(&run).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            let s = exec.poll(&[(&run, &ticket)]).unwrap().remove(0);
            if s != RunStatus::Running || Instant::now() > deadline {
                break s;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status, RunStatus::Finished { exit_code: 0 });
        for f in ["lucia.01.000000", "stdout", "stderr", "exit_status"] {
            assert!(run.run_dir.join(f).exists(), "{f}");
        }
        // A restarted driver finds it finished.
        let mut fresh =
            SimExecutor::from_config(&cfg(SimSettings::default()), &ctx(dir.path())).unwrap();
        assert!(fresh.recover(&run, Some(&ticket)).unwrap().is_some());
        assert_eq!(fresh.poll(&[(&run, &ticket)]).unwrap()[0], status);
    }

    #[test]
    fn truth_curves_must_name_components() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("fast.csv"), "nproc,SYPD\n48,10\n960,100\n").unwrap();
        let with = |name: &str| SimSettings {
            curves: Some(BTreeMap::from([(
                name.to_string(),
                PathBuf::from("fast.csv"),
            )])),
            ..SimSettings::default()
        };
        let exec = SimExecutor::from_config(&cfg(with("oceanx")), &ctx(dir.path())).unwrap();
        assert_eq!(exec.components[1].2.points()[0].sypd, 10.0);
        let e = SimExecutor::from_config(&cfg(with("FESOM")), &ctx(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("FESOM") && e.contains("IFS, NEMO"), "{e}");
    }

    #[test]
    fn seeds_are_stable_and_differ_per_run() {
        assert_eq!(run_seed("i00-t00-r1"), run_seed("i00-t00-r1"));
        assert_ne!(run_seed("i00-t00-r1"), run_seed("i00-t00-r2"));
    }
}
