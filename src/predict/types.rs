//! The prediction's data: what goes in (the components' curves and the settings), what comes
//! out (scored configurations, the top N, a 2-D grid of cells) and why a prediction is
//! refused. The problem that connects them is the parent module's.

use super::*;

/// One component to balance.
#[derive(Debug, Clone)]
pub struct ComponentInput {
    /// The component's name (its curve's, when it has one).
    pub name: String,
    /// Its standalone scalability curve; `None` for a component known from measured coupled
    /// runs only, whose coupled-mode curve the calibrated model learns
    /// ([`crate::model::scaling_law`]): its range then comes from `min_nproc` and `max_nproc`
    /// or `allowed`.
    pub curve: Option<Curve>,
    /// PE counts the component can run on (e.g. NEMO's land-domain elimination list).
    pub allowed: Option<Vec<u32>>,
    /// Lower limit on this component's PEs, on top of the curve's first point.
    pub min_nproc: Option<u32>,
    /// Upper limit on this component's PEs, on top of the curve's last point.
    pub max_nproc: Option<u32>,
    /// Its curves at further thread counts per MPI rank, beside `curve`'s, ascending by
    /// threads; empty for a component measured at one thread count. For a hybrid component
    /// `allowed`, `min_nproc` and `max_nproc` count MPI ranks, as its curves do, while the
    /// budget counts cores (ranks x threads).
    pub thread_curves: Vec<Curve>,
}

impl ComponentInput {
    /// A component with its standalone curve and no other limit.
    pub fn new(curve: Curve) -> ComponentInput {
        ComponentInput {
            name: curve.name.clone(),
            curve: Some(curve),
            allowed: None,
            min_nproc: None,
            max_nproc: None,
            thread_curves: Vec::new(),
        }
    }

    /// A component measured at several thread counts per rank: one curve per thread count
    /// (as [`Curve::load_series`] reads them), kept when `allowed_threads` lists its thread
    /// count (every one without a list). Errors, saying which thread counts there are, when
    /// none is left or the list names a thread count no curve measures.
    pub fn threaded(
        mut series: Vec<Curve>,
        allowed_threads: Option<&[u32]>,
    ) -> Result<ComponentInput, String> {
        series.sort_by_key(Curve::threads);
        let measured: Vec<String> = series.iter().map(|c| c.threads().to_string()).collect();
        if let Some(list) = allowed_threads {
            if let Some(missing) = list
                .iter()
                .find(|&&t| !series.iter().any(|c| c.threads() == t))
            {
                let name = series.first().map_or("", |c| c.name.as_str());
                return Err(format!(
                    "{name}: threads {missing} is allowed but its curve measures only {} \
                     thread(s) per rank; add rows at {missing} threads or drop it from the list",
                    measured.join(", ")
                ));
            }
            series.retain(|c| list.contains(&c.threads()));
        }
        if series.is_empty() {
            return Err("no thread count left to search; allow at least one".into());
        }
        let first = series.remove(0);
        Ok(ComponentInput {
            thread_curves: series,
            ..ComponentInput::new(first)
        })
    }

    /// A component without a curve, searched between `min_nproc` and `max_nproc` PEs.
    pub fn without_curve(
        name: impl Into<String>,
        min_nproc: u32,
        max_nproc: u32,
    ) -> ComponentInput {
        ComponentInput {
            name: name.into(),
            curve: None,
            allowed: None,
            min_nproc: Some(min_nproc),
            max_nproc: Some(max_nproc),
            thread_curves: Vec::new(),
        }
    }

    /// Keeps only the curves at the thread counts `allowed` lists, as [`ComponentInput::threaded`]
    /// does (an error when one is not measured); a component without a curve may allow 1 only.
    pub fn restrict_threads(&mut self, allowed: &[u32]) -> Result<(), String> {
        let series: Vec<Curve> = self.series().cloned().collect();
        if series.is_empty() {
            return match allowed {
                [1] => Ok(()),
                _ => Err(format!(
                    "{}: threads other than 1 need a curve with a threads column",
                    self.name
                )),
            };
        }
        let kept = ComponentInput::threaded(series, Some(allowed))?;
        self.curve = kept.curve;
        self.thread_curves = kept.thread_curves;
        Ok(())
    }

    /// Every curve of the component, one per thread count per rank, ascending by threads.
    pub fn series(&self) -> impl Iterator<Item = &Curve> {
        self.curve.iter().chain(&self.thread_curves)
    }

    /// Whether the component runs more than one thread per rank at some measured point.
    pub fn is_threaded(&self) -> bool {
        self.series().any(|c| c.threads() > 1)
    }

    /// The component's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The PE range the search covers for it: its curve's first and last points (or its
    /// allowed list's ends, without a curve) narrowed by its limits; `None` for a component
    /// without a curve whose range nothing gives.
    pub fn range(&self) -> Option<(u32, u32)> {
        let listed = self.allowed.as_ref().and_then(|v| {
            let lo = v.iter().copied().filter(|&p| p > 0).min()?;
            Some((lo, v.iter().copied().max()?))
        });
        let (first, last) = match (&self.curve, listed) {
            (Some(c), _) => (c.first_nproc(), c.last_nproc()),
            (None, Some(ends)) => ends,
            (None, None) => (self.min_nproc?, self.max_nproc?),
        };
        Some((
            first.max(self.min_nproc.unwrap_or(0)),
            last.min(self.max_nproc.unwrap_or(u32::MAX)),
        ))
    }
}

impl crate::model::ComponentCurve for ComponentInput {
    fn name(&self) -> &str {
        &self.name
    }

    fn standalone(&self) -> Option<&Curve> {
        self.curve.as_ref()
    }
}

/// The prediction's settings (the inputs listed in the guide's `method/prediction.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Budget for the balanced components together.
    pub max_nproc: u32,
    /// Distance between candidate PE counts when no allowed list is given.
    pub step: u32,
    /// Weight of time to solution in fittingness, in [0, 1].
    pub tts_w: f64,
    /// How many configurations to propose.
    pub top: usize,
    /// How SYPD is interpolated between a curve's measured points (PCHIP unless chosen).
    pub interp: Method,
    /// PEs that count in CHSY but are not balanced (XIOS, runoff mapper).
    pub extra_pes: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            max_nproc: 0,
            step: 1,
            tts_w: 0.5,
            top: 5,
            interp: Method::default(),
            extra_pes: 0,
        }
    }
}

/// Why a prediction cannot be made. Messages say what to change.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PredictError {
    /// No component was given at all.
    #[error("no components given; pass at least one --curve NAME=PATH (or --component NAME with --measured runs)")]
    NoComponents,
    /// A component without a curve that no range or model covers.
    #[error("{name} has no curve and {why}")]
    NoCurve {
        /// The component.
        name: String,
        /// What is missing and how to give it.
        why: String,
    },
    /// More components than [`MAX_COMPONENTS`] (the count given).
    #[error("{0} curves given; at most {MAX_COMPONENTS} components can be balanced together")]
    TooManyComponents(usize),
    /// Two components share a name (the name).
    #[error("component {0:?} is given twice; each --curve needs its own name")]
    DuplicateComponent(String),
    /// `step` is 0: candidate PE counts need a positive spacing.
    #[error("the step is 0; use a positive number of PEs, e.g. --step 24")]
    ZeroStep,
    /// TTS_w outside [0, 1] (the value given).
    #[error("TTS_w {0} is outside [0, 1]; 1 weighs only speed, 0 only cost")]
    TtsWOutOfRange(f64),
    /// `top` is 0: nothing would be proposed.
    #[error("top is 0; ask for at least one configuration")]
    ZeroTop,
    /// `top` above [`MAX_TOP`] (the value given).
    #[error("top {0} is more than the {MAX_TOP} configurations autolb proposes at most")]
    TopTooLarge(usize),
    /// A component would have more than [`MAX_CANDIDATES`] candidate PE counts.
    #[error("{name}: {count} candidate PE counts between {low} and {high} (step {step}); at most {MAX_CANDIDATES} are searched: check the curve's PE counts for a typo, or raise --step")]
    TooManyCandidates {
        /// The component.
        name: String,
        /// How many candidates its range and step give.
        count: u64,
        /// Lowest candidate PE count of its range.
        low: u32,
        /// Highest candidate PE count of its range.
        high: u32,
        /// The step between candidates, in PEs.
        step: u32,
    },
    /// Three or more components whose exact search would take more than [`MAX_SEARCH_WORK`] steps.
    #[error("{components} components with {candidates} candidates in all and a budget of {budget} PEs (PE sums in units of {unit}) are too many to search exactly; raise --step or lower --max-nproc")]
    SearchTooLarge {
        /// How many components.
        components: usize,
        /// Candidates of all components together.
        candidates: u64,
        /// The budget `max_nproc`, in PEs.
        budget: u32,
        /// The unit PE sums are counted in (the greatest common divisor of the candidate spacing).
        unit: u32,
    },
    /// The budget plus the extra PEs exceed [`MAX_TOTAL_PES`].
    #[error("the budget {max_nproc} plus --extra-pes {extra_pes} is more PEs than autolb counts ({max}); lower them")]
    TotalTooLarge {
        /// The budget for the balanced components, in PEs.
        max_nproc: u32,
        /// The extra (unbalanced) PEs.
        extra_pes: u32,
        /// The largest total autolb counts ([`MAX_TOTAL_PES`]).
        max: u32,
    },
    /// A component has no candidate with a positive interpolated speed within its limits.
    #[error("{name}: no candidate PE count between {low} and {high}{why}; check its allowed list and limits")]
    NoCandidates {
        /// The component.
        name: String,
        /// Lower end of its range after its limits, in PEs.
        low: u32,
        /// Upper end of its range after its limits and the budget, in PEs.
        high: u32,
        /// Empty, or " in its allowed list" when the allowed list left nothing.
        why: String,
    },
    /// The machine, queue or resource description is invalid.
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// Every thread count of a component is more than one node's cores.
    #[error("{name}: every thread count per rank ({threads}) is more than the {cores_per_node} cores of one node; a rank's threads must share its node: allow fewer threads")]
    ThreadsExceedNode {
        /// The component.
        name: String,
        /// Its thread counts, comma-separated.
        threads: String,
        /// Cores of one node.
        cores_per_node: u32,
    },
    /// No feasible configuration better than the base case fits the chosen queue (its name; empty
    /// without a queue).
    #[error("no configuration within the budget fits queue {0:?}; choose a larger queue or lower the budget")]
    NothingFitsQueue(String),
    /// The cost model places some but not all components on a `[[resource]]`.
    #[error("{components} components but {assigned} of them are placed on a [[resource]]; give every component a resource")]
    ResourceCount {
        /// Components being balanced.
        components: usize,
        /// Components given a resource.
        assigned: usize,
    },
    /// A resource's budget is below what its components' base case takes.
    #[error("the budget of resource {resource:?} ({budget} units) is below the base case ({base} units: {detail}); raise its max_units (or max_nproc) to at least {base}")]
    ResourceBelowBase {
        /// The resource's name.
        resource: String,
        /// The resource's budget, in its units.
        budget: u32,
        /// Units the base case takes on it.
        base: u32,
        /// The base case on that resource as text (`IFS 48 + NEMO 48`).
        detail: String,
    },
    /// The budget `max_nproc` is below the base case's PE sum.
    #[error("the budget --max-nproc {budget} is below the base case ({base} PEs: {detail}); raise it to at least {base}")]
    BudgetBelowBase {
        /// The budget, in PEs.
        budget: u32,
        /// PEs the base case takes (the components' first candidates).
        base: u32,
        /// The base case as text (`IFS 48 + NEMO 48`).
        detail: String,
    },
}

/// The candidate PE counts of one component with their interpolated SYPD.
#[derive(Debug, Clone, Serialize)]
pub struct Candidates {
    /// The component's name.
    pub name: String,
    /// PEs (cores: MPI ranks x threads per rank), ascending; the search sums and bills these.
    /// A hybrid component may have two candidates of the same cores at different threads.
    pub nproc: Vec<u32>,
    /// Interpolated SYPD at each PE count.
    pub sypd: Vec<f64>,
    /// OpenMP threads per rank of each candidate (all 1 for a pure-MPI component); ascending
    /// within equal `nproc`.
    #[serde(skip_serializing_if = "all_single")]
    pub threads: Vec<u32>,
}

impl Candidates {
    /// MPI ranks of candidate `i`.
    pub fn ranks(&self, i: usize) -> u32 {
        self.nproc[i] / self.threads[i]
    }
}

/// Whether every thread count is 1 (pure MPI), when outputs look as they did before threads.
pub fn all_single(threads: &[u32]) -> bool {
    threads.iter().all(|&t| t == 1)
}

/// One scored configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scored {
    /// PEs per component, in component order: cores, i.e. MPI ranks x `threads`.
    pub nproc: Vec<u32>,
    /// OpenMP threads per rank of each component (all 1 for pure MPI, when it is left out of
    /// the JSON so that it reads as before threads).
    #[serde(skip_serializing_if = "all_single")]
    pub threads: Vec<u32>,
    /// All PEs the run takes: the balanced components plus the extra PEs.
    pub total_nproc: u32,
    /// Coupled SYPD: the slowest component's.
    pub sypd: f64,
    /// Core-hours per simulated year, `24 x P / SYPD` with `P` every PE of the run including the
    /// extra PEs (in CPU core equivalents when components run on several resources).
    pub chsy: f64,
    /// Fraction of core time spent waiting for the slowest component.
    pub coupling_cost: f64,
    /// Fittingness FN in [0, 1] at the prediction's TTS_w, normalised over the kept configurations
    /// (higher is better).
    pub fittingness: f64,
    /// Nodes, billed and idle cores, the chosen cost and the queue; only with a `[machine]` or
    /// `[[queue]]` tables (absent otherwise, so the output is as it always was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub billing: Option<Billing>,
}

impl Scored {
    /// MPI ranks per component (`nproc / threads`).
    pub fn ranks(&self) -> Vec<u32> {
        self.nproc
            .iter()
            .zip(&self.threads)
            .map(|(&p, &t)| p / t.max(1))
            .collect()
    }

    /// Whether any component runs more than one thread per rank.
    pub fn is_threaded(&self) -> bool {
        !all_single(&self.threads)
    }

    /// The cost FN weighs: the billed cost when a machine is described, else CHSY.
    pub fn cost(&self) -> f64 {
        self.billing.as_ref().map_or(self.chsy, |b| b.cost)
    }
}

/// The answer of a prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// The components' names, in the order of every `nproc` vector.
    pub components: Vec<String>,
    /// Feasible configurations (sum of PEs within the budget); serialised under its older
    /// name, which the report's JSON carries.
    #[serde(rename = "candidates")]
    pub configurations: u64,
    /// Kept configurations (feasible and at least as good as the base case).
    pub considered: u64,
    /// The base case (every component at its first candidate), scored like the others.
    pub baseline: Scored,
    /// Min-max bounds of the coupled SYPD over the kept configurations (the normalisation of
    /// fittingness).
    pub sypd_bounds: Bounds,
    /// Bounds of the chosen cost (CHSY by default) over the kept configurations; serialised
    /// under its older name, which the report's JSON carries.
    #[serde(rename = "chsy_bounds")]
    pub cost_bounds: Bounds,
    /// The TTS_w the top N was ranked at, in [0, 1].
    pub tts_w: f64,
    /// The top N configurations, best first (FN descending, then total PEs, then PE counts).
    pub top: Vec<Scored>,
    /// The cost FN weighed, when a machine or queues are described (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostKind>,
}

/// One cell of a 2-D slice of the configuration space.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cell {
    /// The PEs add up to more than the budget.
    OverBudget,
    /// Feasible but worse than the base case (grey in the matrix).
    WorseThanBase {
        /// Coupled SYPD of the configuration.
        sypd: f64,
        /// Its core-hours per simulated year.
        chsy: f64,
    },
    /// Kept and scored.
    Scored {
        /// Coupled SYPD of the configuration.
        sypd: f64,
        /// Its core-hours per simulated year.
        chsy: f64,
        /// Fraction of core time spent waiting for the slowest component, in [0, 1].
        coupling_cost: f64,
        /// Fittingness at the grid's TTS_w, in [0, 1].
        fittingness: f64,
    },
}

/// A 2-D slice: component `rows` down, component `cols` across, the others fixed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// Index of the component whose PE counts run down the rows.
    pub rows: usize,
    /// Index of the component whose PE counts run across the columns.
    pub cols: usize,
    /// The row component's candidate PE counts, ascending (one per row).
    pub row_nproc: Vec<u32>,
    /// The column component's candidate PE counts, ascending (one per column).
    pub col_nproc: Vec<u32>,
    /// Row-major cells, `row_nproc.len() * col_nproc.len()`.
    pub cells: Vec<Cell>,
}

impl Grid {
    /// The cell at row `row` and column `col`, indices into `row_nproc` and `col_nproc` that the
    /// caller keeps in range.
    pub fn cell(&self, row: usize, col: usize) -> Cell {
        self.cells[row * self.col_nproc.len() + col]
    }
}
