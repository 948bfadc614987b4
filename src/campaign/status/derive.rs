//! How a [`Status`] is derived from the state and kept up to date: the table built from the
//! iterations, the run counts, the means, FN and the best recomputed from the runs, and the
//! driver's liveness applied to the runs it took along. The types themselves, the JSON form of
//! `campaign status`, are in the parent module.

use super::*;

impl Status {
    /// Builds the view of a state; `dir` is the campaign directory (for run directories).
    pub fn from_state(state: &State, dir: &Path) -> Status {
        let names = state.component_names();
        let named = |v: &[u32]| NameMap::zip(&names, v.iter().copied());
        let mut iterations = Vec::new();
        for it in &state.iterations {
            let mut tests = Vec::new();
            for test in &it.tests {
                let runs = test
                    .runs
                    .iter()
                    .map(|run| {
                        let m = run.metrics.as_ref();
                        RunView {
                            state: run.state,
                            sypd: m.map(|m| m.sypd),
                            chsy: m.map(|m| m.chsy),
                            coupling_cost: m.map(|m| m.coupling_cost),
                            run: run.id.clone(),
                            repetition: run.repetition,
                            partial_coupling_cost: m
                                .map(|m| NameMap::zip(&names, m.partial_coupling_cost.clone()))
                                .unwrap_or_default(),
                            run_dir: dir.join(run_dir_relative(
                                it.index,
                                test.test,
                                run.repetition,
                            )),
                            job: run.ticket.as_ref().map(|t| t.0.clone()),
                            attempts: run.attempts,
                            failure: run.failure.clone(),
                            started_at: run.started_at,
                            ended_at: run.ended_at,
                            stopped_with_driver: false,
                        }
                    })
                    .collect();
                let decision = test.decision.as_ref();
                let mut notes = decision.map(|d| d.notes.clone()).unwrap_or_default();
                match decision.map(|d| &d.outcome) {
                    Some(Outcome::Finished { reason }) | Some(Outcome::Failed { reason }) => {
                        notes.push(reason.clone())
                    }
                    _ => {}
                }
                tests.push(TestView {
                    test: test.test,
                    nproc: named(&test.nproc),
                    step: test.step,
                    state: TestState::Pending,
                    runs,
                    sypd: None,
                    chsy: None,
                    coupling_cost: None,
                    partial_coupling_cost: NameMap::default(),
                    fittingness: None,
                    donor: decision
                        .and_then(|d| d.donor)
                        .and_then(|i| names.get(i).cloned()),
                    recipient: decision
                        .and_then(|d| d.recipient)
                        .and_then(|i| names.get(i).cloned()),
                    total_nproc: total_pes(state, &test.nproc),
                    origin: state.origin_of(test.test).unwrap_or_default().into(),
                    next_step: decision
                        .filter(|d| d.outcome == Outcome::Continue)
                        .map(|d| d.step),
                    next_nproc: decision.and_then(|d| d.next.as_deref()).map(named),
                    notes,
                    reason: test
                        .reason
                        .clone()
                        .or_else(|| implied_reason(state, it.index, test.test)),
                });
            }
            iterations.push(IterationView {
                iteration: it.index,
                tests,
            });
        }
        let limit = crate::campaign::bound::iteration_limit(state);
        let mut status = Status {
            state: if state.cancelled {
                Phase::Cancelled
            } else if state.is_done() {
                Phase::Done
            } else {
                Phase::Running
            },
            iteration: state.iterations.last().map(|it| it.index),
            done: state.is_done(),
            iterations,
            best: None,
            components: names,
            tts_w: state.settings.tts_w,
            extra_pes: state.settings.extra_pes,
            initial_step: state.settings.initial_step,
            minimum_step: state.settings.minimum_step,
            repetitions: state.settings.repetitions,
            executor: state
                .executor
                .as_ref()
                .map(|e| format!("{:?}", e.kind).to_lowercase())
                .unwrap_or_else(|| crate::campaign::heartbeat::EXTERNAL_EXECUTOR.into()),
            counts: RunCounts::default(),
            timing_names: state
                .components
                .iter()
                .map(|c| c.timing_name.clone())
                .collect(),
            period_s: state.settings.period_s,
            cost_model: state.settings.cost_model.clone(),
            layout: state.settings.layout.clone(),
            strategy: state.settings.strategy,
            driver: None,
            iterations_at_most: Some(limit.at_most),
            bound_proven: limit.proven,
            curves: None,
            scaling: None,
            design: state.settings.scaling.as_ref().map(|s| s.design),
            scaling_settings: state
                .settings
                .scaling
                .clone()
                .filter(|_| state.is_scaling()),
            cold_start: None,
            curve_notes: if state.measures_curves() {
                scaling_output::curve_file_notes(state, dir)
            } else {
                Vec::new()
            },
            threads: state.components.iter().any(|c| c.threads > 1).then(|| {
                NameMap::zip(
                    &state.component_names(),
                    state.components.iter().map(|c| c.threads),
                )
            }),
        };
        if state.is_scaling() {
            status.curves = Some(NameMap(scaling_output::curves(state)));
            let noise = pooled_noise(state);
            status.scaling = Some(NameMap::zip(
                &status.components,
                (0..state.components.len()).map(|c| {
                    let points = points_of(state, c, noise);
                    ScalingCounts {
                        measured: points
                            .iter()
                            .filter(|p| p.runs > 0)
                            .map(|p| p.nproc)
                            .collect(),
                        queued: points
                            .iter()
                            .filter(|p| p.queued > 0)
                            .map(|p| p.nproc)
                            .collect(),
                        outliers: points.iter().flat_map(|p| p.outliers.clone()).collect(),
                        features: points
                            .iter()
                            .filter(|p| p.feature)
                            .map(|p| p.nproc)
                            .collect(),
                    }
                }),
            ));
            // Scaling tests are not configurations: no iteration bound and no best.
            status.iterations_at_most = None;
        }
        if state.is_cold_start() {
            status.curves = Some(NameMap(scaling_output::curves(state)));
            status.cold_start = Some(Box::new(ColdStartView {
                phase: crate::campaign::strategy::cold_start::phase_words(state)
                    .unwrap_or_default(),
                normalisation: state
                    .iterations
                    .iter()
                    .rev()
                    .find_map(|it| it.normalisation),
            }));
            // Algorithm 1's bound does not hold for the guided strategy's choices; only an
            // enforced `max_iterations` bounds a cold start.
            if state.settings.max_iterations.is_none() {
                status.iterations_at_most = None;
            }
        }
        status.recompute();
        status
    }

    /// Shows the runs a live `campaign exec` claim holds as running, with the holder as their
    /// job (`exec pid 12 on node7`) and the claim's time as their start. The state file keeps
    /// such a run waiting until `exec` records it (a workflow manager's job, not a driver, runs
    /// it), so without this every view would call a run in flight queued. Call it before
    /// [`Status::set_driver`], which recomputes the counts. Reads `DIR/claims` only, and only
    /// the claims there.
    pub fn set_claimed(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir.join(crate::campaign::claim::CLAIMS_DIR)) else {
            return;
        };
        let claimed: std::collections::BTreeSet<String> = entries
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".json")
                    .map(str::to_string)
            })
            .collect();
        if claimed.is_empty() {
            return;
        }
        for run in self
            .iterations
            .iter_mut()
            .flat_map(|it| it.tests.iter_mut())
            .flat_map(|t| t.runs.iter_mut())
            .filter(|r| r.state == RunState::Pending && claimed.contains(&r.run))
        {
            use crate::campaign::claim::ClaimHolder;
            match crate::campaign::claim::live_claim(dir, &run.run) {
                Some(ClaimHolder::Known(holder)) => {
                    run.state = RunState::Running;
                    run.job = Some(format!("exec pid {} on {}", holder.pid, holder.host));
                    run.started_at = Some(holder.started);
                }
                // Its lock is held, its file cut or deleted: running, by an unnamed exec.
                Some(ClaimHolder::Unnamed { .. }) => {
                    run.state = RunState::Running;
                    run.job = Some("exec (claim file unreadable)".into());
                }
                None => {}
            }
        }
    }

    /// Sets who drives the campaign (`"driver"`) and what that means for its runs: when the
    /// driver is lost and took its runs along
    /// ([`crate::campaign::DriverState::took_runs_with_it`], the `sim` executor), every run the
    /// state file has as running is [`RunView::stopped_with_driver`]; then recomputes the
    /// derived columns. The state file is not touched: this is a view.
    pub fn set_driver(&mut self, driver: &crate::campaign::DriverState) {
        self.driver = Some(Box::new(driver.view()));
        let stopped = driver.took_runs_with_it(&self.executor);
        for run in self
            .iterations
            .iter_mut()
            .flat_map(|it| it.tests.iter_mut())
            .flat_map(|t| t.runs.iter_mut())
        {
            run.stopped_with_driver = stopped && run.state == RunState::Running;
        }
        self.recompute();
    }

    /// Recomputes every derived column from the runs: each test's state and means, the
    /// fittingness of every measured configuration (normalised over all of them), the best,
    /// and the run counts.
    pub fn recompute(&mut self) {
        let names = self.components.clone();
        let mut counts = RunCounts::default();
        // Every run of a configuration counts for it, whichever row (iteration) made it: the
        // guided strategy repeats a configuration in a later iteration. Algorithm 1 never runs
        // a configuration twice, so there each configuration is one row.
        let mut groups: Vec<ConfigRuns> = Vec::new();
        for (i, it) in self.iterations.iter_mut().enumerate() {
            for (t, test) in it.tests.iter_mut().enumerate() {
                counts.merge(&test.counts());
                let metrics: Vec<RunMetrics> =
                    test.runs.iter().filter_map(|r| r.metrics(&names)).collect();
                let means = algorithm1::mean_metrics(&metrics);
                test.sypd = means.as_ref().map(|m| m.sypd);
                test.chsy = means.as_ref().map(|m| m.chsy);
                test.coupling_cost = means.as_ref().map(|m| m.coupling_cost);
                test.partial_coupling_cost = means
                    .as_ref()
                    .map(|m| NameMap::zip(&names, m.partial_coupling_cost.clone()))
                    .unwrap_or_default();
                test.fittingness = None;
                test.state = test_state(test);
                if metrics.is_empty() {
                    continue;
                }
                let nproc: Vec<u32> = test.nproc.values().copied().collect();
                match groups.iter_mut().find(|g| g.0 == nproc) {
                    Some(g) => {
                        g.2.extend(metrics);
                        g.3.push((i, t));
                    }
                    None => groups.push((nproc, test.total_nproc, metrics, vec![(i, t)])),
                }
            }
        }
        // A cold start scores on the model's landscape, once it has one. Before, it has no
        // best while it runs (its scaling runs are spread over the ranges to learn the curves,
        // not to be chosen); once it is over without a landscape, its answer is the best of
        // what it measured, on their own FN scale, as in any other campaign.
        let normalisation = self.cold_start.as_ref().map(|c| c.normalisation);
        if normalisation == Some(None) && self.state == Phase::Running {
            groups.clear();
        }
        let pooled: Vec<algorithm1::Means> = groups
            .iter()
            .filter_map(|g| algorithm1::mean_metrics(&g.2))
            .collect();
        let measured: Vec<Measured> = groups
            .iter()
            .zip(&pooled)
            .map(|(g, m)| Measured {
                nproc: g.0.clone(),
                total_nproc: g.1,
                sypd: m.sypd,
                // FN weighs the cost the centre bills: CHSY, or the machine's cost.
                chsy: match &self.cost_model {
                    Some(model) => {
                        crate::metrics::chsy(model.weight_of(&g.0, self.extra_pes), m.sypd)
                    }
                    None => m.chsy,
                },
            })
            .collect();
        let (fns, best) = match normalisation.flatten() {
            Some(n) => algorithm1::fittingness_and_best_in(&measured, self.tts_w, &n.sypd, &n.cost),
            None => algorithm1::fittingness_and_best(&measured, self.tts_w),
        };
        // A scaling campaign's standalone runs are no configurations: no FN, no best.
        for (g, f) in groups.iter().zip(&fns).filter(|_| self.scaling.is_none()) {
            for &(i, t) in &g.3 {
                self.iterations[i].tests[t].fittingness = Some(*f);
            }
        }
        let best = best.filter(|_| self.scaling.is_none());
        self.best = best.map(|b| {
            let (i, t) = groups[b].3[0];
            let test = &self.iterations[i].tests[t];
            BestView {
                nproc: test.nproc.clone(),
                sypd: pooled[b].sypd,
                chsy: pooled[b].chsy,
                coupling_cost: pooled[b].coupling_cost,
                fittingness: fns[b],
                iteration: self.iterations[i].iteration,
                test: test.test,
                total_nproc: test.total_nproc,
                runs: groups[b].2.len() as u32,
                measured_in: groups[b]
                    .3
                    .iter()
                    .map(|&(i, t)| {
                        [
                            self.iterations[i].iteration,
                            self.iterations[i].tests[t].test,
                        ]
                    })
                    .collect(),
            }
        });
        self.counts = counts;
    }

    /// The campaign's state in words: `done: no successful run` when it ended without one
    /// measured run (every run failed), else the phase. A scaling campaign has no best, so
    /// its runs decide.
    pub fn state_label(&self) -> String {
        let nothing = match self.scaling {
            None => self.best.is_none(),
            Some(_) => self.counts.done == 0,
        };
        match self.state {
            Phase::Done if nothing => "done: no successful run".into(),
            phase => phase.as_str().into(),
        }
    }

    /// A warning when the best rests on fewer runs than `repetitions` (some failed or are
    /// still running), so its means are less sure than the others'.
    pub fn best_caveat(&self) -> Option<String> {
        let b = self.best.as_ref()?;
        (b.runs < self.repetitions)
            .then(|| format!("rests on {} of {} runs", b.runs, self.repetitions))
    }

    /// Component `c`'s OpenMP threads per MPI rank (1 for pure MPI).
    pub fn threads_of(&self, c: usize) -> u32 {
        self.threads
            .as_ref()
            .and_then(|t| t.0.get(c))
            .map_or(1, |(_, t)| (*t).max(1))
    }

    /// Reads the timing output in a run's directory as the driver would: `Ok(None)` while it
    /// is incomplete (the run is still going), `Err` when it can never be measured.
    pub fn measure_run(&self, id: &str) -> Result<Option<RunMetrics>, String> {
        use measure::Unmeasured;
        let (test, run) = self
            .iterations
            .iter()
            .flat_map(|it| it.tests.iter())
            .find_map(|t| t.runs.iter().find(|r| r.run == id).map(|r| (t, r)))
            .ok_or_else(|| format!("no run {id:?}"))?;
        if !run.run_dir.exists() {
            return Ok(None);
        }
        let nproc: Vec<u32> = test.nproc.values().copied().collect();
        let components: Vec<(String, u32)> = (0..self.timing_names.len())
            .map(|c| (self.timing_names[c].clone(), self.threads_of(c)))
            .collect();
        let measured = match crate::campaign::tree::tree_of(self.layout.as_deref()) {
            Some(tree) => crate::campaign::tree::measure(
                &run.run_dir,
                &components,
                &self.components,
                &nproc,
                &tree,
                self.extra_pes,
                self.cost_model.as_ref(),
            ),
            None => measure::measure_billed(
                &run.run_dir,
                &components,
                &nproc,
                self.extra_pes,
                self.period_s,
                self.cost_model.as_ref(),
            ),
        };
        match measured {
            Ok(m) => Ok(Some(m)),
            Err(Unmeasured::Incomplete(_)) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Shows a run's measurement before the driver records it (a viewer watching run
    /// directories): when its timing output is complete, marks it done with its metrics and
    /// recomputes the derived columns. Returns whether it did.
    pub fn overlay_run(&mut self, id: &str) -> bool {
        let Ok(Some(m)) = self.measure_run(id) else {
            return false;
        };
        let components = self.components.clone();
        match self.run_mut(id) {
            Some(run) if run.state != RunState::Done => run.set_measured(&m, &components),
            _ => return false,
        }
        self.recompute();
        true
    }

    /// A run by id, for updating it before [`Status::recompute`].
    pub fn run_mut(&mut self, id: &str) -> Option<&mut RunView> {
        self.iterations
            .iter_mut()
            .flat_map(|it| it.tests.iter_mut())
            .flat_map(|t| t.runs.iter_mut())
            .find(|r| r.run == id)
    }
}

/// One configuration's PEs, total PEs with extras, every measured run, and the rows
/// `(iteration, test)` that ran it.
type ConfigRuns = (Vec<u32>, u32, Vec<RunMetrics>, Vec<(usize, usize)>);

/// Why an Algorithm 1 test runs in an iteration: its origin in the first, else the move its
/// previous decision made.
fn implied_reason(state: &State, iteration: u32, test: u32) -> Option<String> {
    let names = state.component_names();
    let origin = || state.origin_of(test).map(String::from);
    let Some(previous) = iteration.checked_sub(1) else {
        return origin();
    };
    let d = state
        .iterations
        .iter()
        .find(|it| it.index == previous)?
        .tests
        .iter()
        .find(|t| t.test == test)?
        .decision
        .as_ref()?;
    match (d.donor, d.recipient) {
        (Some(a), Some(b)) => Some(format!(
            "donor/recipient: {} PEs {} -> {}",
            d.step,
            names.get(a)?,
            names.get(b)?
        )),
        _ => origin(),
    }
}

/// A row's state from its run counts ([`TestView::counts`], which the summary adds up), so a
/// row is running only while one of its runs is, and waits while a run waits (for a driver or a
/// workflow manager), whatever its other runs did. The decision shows in `donor` / `notes`.
fn test_state(test: &TestView) -> TestState {
    let c = test.counts();
    if c.running > 0 || c.stopped_with_driver > 0 {
        return TestState::Running;
    }
    if c.pending > 0 || test.runs.is_empty() {
        return TestState::Pending;
    }
    if c.done == 0 {
        return if c.failed > 0 {
            TestState::Failed
        } else {
            TestState::Cancelled
        };
    }
    if test.next_step.is_none() && (test.donor.is_some() || !test.notes.is_empty()) {
        TestState::Finished
    } else {
        TestState::Done
    }
}

/// All PEs of a configuration, the extra PEs included: the sum of the components' PEs, or on a
/// layout tree the PEs the layout spans.
fn total_pes(state: &State, nproc: &[u32]) -> u32 {
    crate::campaign::tree::used_pes(state, nproc).saturating_add(state.settings.extra_pes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::claim::create_claim;
    use crate::campaign::DriverState;

    #[test]
    fn a_run_a_live_exec_holds_shows_as_running_and_a_released_one_as_queued() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = super::super::demo_state(tmp.path());
        let ids: Vec<String> = state.iterations[0]
            .tests
            .iter()
            .flat_map(|t| &t.runs)
            .map(|r| r.id.clone())
            .collect();
        let held = create_claim(&dir, &ids[0]).unwrap();
        drop(create_claim(&dir, &ids[1]).unwrap());

        let mut status = Status::from_state(&state, &dir);
        status.set_claimed(&dir);
        status.set_driver(&DriverState::None);
        let runs: Vec<&RunView> = status.iterations[0]
            .tests
            .iter()
            .flat_map(|t| &t.runs)
            .collect();
        assert_eq!(runs[0].run, held.run());
        assert_eq!(runs[0].state, RunState::Running);
        assert_eq!(
            runs[0].job.as_deref(),
            Some(
                format!(
                    "exec pid {} on {}",
                    std::process::id(),
                    crate::campaign::claim::hostname()
                )
                .as_str()
            )
        );
        assert!(runs[0].started_at.is_some());
        assert_eq!(runs[1].state, RunState::Pending);
        assert_eq!(status.counts.running, 1);
        assert_eq!(status.counts.pending, ids.len() - 1);
        assert_eq!(status.iterations[0].tests[0].state, TestState::Running);

        // Once released, the run is queued again: the view follows the claim.
        drop(held);
        let mut status = Status::from_state(&state, &dir);
        status.set_claimed(&dir);
        status.set_driver(&DriverState::None);
        assert_eq!(status.counts.running, 0);
        assert_eq!(status.counts.pending, ids.len());
    }
}
