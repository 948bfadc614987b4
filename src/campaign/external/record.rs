//! Recording a finished run: measured from its timing output, or as failed; exactly once (a
//! record again of the same outcome changes nothing, another outcome is refused); on the run's
//! slice of the state when that is enough, so that a record costs the same in a campaign of any
//! size ([`State::run_slice`]), and on the whole state when the record may plan the next
//! iteration.

use super::*;

/// What [`record`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The run's id.
    pub run: String,
    /// The state it was recorded as (done or failed).
    pub state: RunState,
    /// Its measurement, when it was recorded as done.
    pub metrics: Option<RunMetrics>,
    /// The decisions taken and the iteration created, when this record completed its iteration.
    pub advance: Advance,
    /// Whether the campaign is over after this record.
    pub done: bool,
    /// The run was already recorded with this same outcome; nothing changed.
    pub again: bool,
}

/// Records one finished run from its timing output (or as failed), waiting up to `wait` for
/// the campaign lock. Once every run of the iteration is recorded, the next iteration's runs
/// are created (they appear in [`next`]). A timing output that cannot be measured is refused
/// (nothing is recorded) so that a run recorded too early is not lost: record it later or as
/// failed.
///
/// Recording a run again with the outcome it has (failed again, or the same metrics from its
/// timing output) changes nothing and succeeds with `again` set: a retried job must not fail.
/// A different outcome is refused ([`CampaignError::Conflict`]).
///
/// A run that a live `campaign exec` claimed is refused ([`CampaignError::Claimed`]): that
/// exec records it; a dead holder's claim is recovered.
pub fn record(
    dir: &Path,
    run_id: &str,
    timing: Option<&Path>,
    failed: Option<&str>,
    wait: Duration,
) -> Result<Recorded, CampaignError> {
    record_as(dir, run_id, timing, failed, wait, None)
}

/// [`record`] by the holder of the run's claim ([`claim_run`]), which it releases.
pub fn record_claimed(
    dir: &Path,
    claim: &crate::campaign::claim::Claim,
    timing: Option<&Path>,
    failed: Option<&str>,
    wait: Duration,
) -> Result<Recorded, CampaignError> {
    record_as(dir, claim.run(), timing, failed, wait, Some(claim.token()))
}

fn record_as(
    dir: &Path,
    run_id: &str,
    timing: Option<&Path>,
    failed: Option<&str>,
    wait: Duration,
    token: Option<&str>,
) -> Result<Recorded, CampaignError> {
    let dir = &absolute_dir(dir)?;
    if let Some(recorded) = record_in_slice(dir, run_id, timing, failed, wait, token)? {
        return Ok(recorded);
    }
    // Measure on a snapshot, before taking the lock: what a measurement needs (components,
    // the test's PEs) never changes once a run exists, and the lock is then held only for
    // the write, milliseconds, however many jobs record at once.
    let snapshot = State::load(dir)?;
    let (i, t, r) = snapshot
        .find_run(run_id)
        .ok_or_else(|| CampaignError::UnknownRun {
            id: run_id.to_string(),
        })?;
    let it = &snapshot.iterations[i];
    let metrics = measure(&snapshot, it.index, &it.tests[t], r, dir, timing, failed)?;
    let _lock = lock_waiting(dir, wait)?;
    // What others recorded since the snapshot was read (its log's new lines, usually).
    let mut state = snapshot;
    state.refresh(dir)?;
    record_whole_locked(dir, state, (i, t, r), run_id, metrics, failed, token)
}

/// [`record_locked`] on `state`, refreshed under the lock, once it is checked that run `run_id`
/// is still at `pos`.
fn record_whole_locked(
    dir: &Path,
    state: State,
    pos: crate::campaign::state::RunPos,
    run_id: &str,
    metrics: Option<RunMetrics>,
    failed: Option<&str>,
    token: Option<&str>,
) -> Result<Recorded, CampaignError> {
    if state.find_run(run_id) != Some(pos) {
        return Err(CampaignError::BadState {
            file: dir.join(crate::campaign::state::STATE_FILE),
            reason: format!("run {run_id} moved while it was being recorded"),
        });
    }
    record_locked(dir, state, pos, run_id, metrics, failed, token)
}

/// The measurement of run `r` of `test` (in iteration `iteration`) from its timing output
/// (`timing`, or its run directory), or `None` for a run recorded as failed.
fn measure(
    state: &State,
    iteration: u32,
    test: &crate::campaign::state::TestIteration,
    r: usize,
    dir: &Path,
    timing: Option<&Path>,
    failed: Option<&str>,
) -> Result<Option<RunMetrics>, CampaignError> {
    if failed.is_some() {
        return Ok(None);
    }
    let path = match timing {
        Some(p) => p.to_path_buf(),
        None => state.request_in(dir, iteration, test, r).run_dir,
    };
    state
        .measure_test(test, &path)
        .map(Some)
        .map_err(|e| CampaignError::Unmeasurable(format!("{}: {e}", path.display())))
}

/// [`record_as`] reading only the run's slice of the state ([`State::run_slice`]), so that a
/// record costs the same in a campaign of any size. `None` when the record is not one the slice
/// can make alone: the run ended already (a record again, or a conflict), the campaign was
/// cancelled, it measures curves (rewritten from every run at each record), or this may be the
/// iteration's last open run (whose record plans the next iteration); the whole state is read
/// then.
fn record_in_slice(
    dir: &Path,
    run_id: &str,
    timing: Option<&Path>,
    failed: Option<&str>,
    wait: Duration,
    token: Option<&str>,
) -> Result<Option<Recorded>, CampaignError> {
    let fits = |s: &crate::campaign::state::RunSlice| {
        !s.run().state.is_terminal()
            && !s.head.cancelled
            && s.others_open
            && !s.head.measures_curves()
    };
    let Some(slice) = State::run_slice(dir, run_id)?.filter(fits) else {
        return Ok(None);
    };
    let (_, _, r) = slice.pos;
    let metrics = measure(
        &slice.head,
        slice.iteration,
        &slice.test,
        r,
        dir,
        timing,
        failed,
    )?;
    let _lock = lock_waiting(dir, wait)?;
    let whole = |metrics| {
        let state = State::load(dir)?;
        record_whole_locked(dir, state, slice.pos, run_id, metrics, failed, token).map(Some)
    };
    let Some(mut now) = State::run_slice(dir, run_id)?.filter(|s| s.pos == slice.pos && fits(s))
    else {
        return whole(metrics);
    };
    let run_dir = now
        .head
        .request_in(dir, now.iteration, &now.test, r)
        .run_dir;
    check_claim(dir, run_id, &run_dir, token)?;
    end_run(now.run_mut(), metrics.as_ref(), failed);
    if !now.commit_run(dir)? {
        return whole(metrics);
    }
    crate::campaign::claim::release_recorded(dir, run_id, token);
    #[cfg(debug_assertions)]
    check_slice_record(dir, &now);
    #[cfg(test)]
    SLICE_RECORDS.with(|n| n.set(n.get() + 1));
    Ok(Some(Recorded {
        run: run_id.to_string(),
        state: now.run().state,
        metrics,
        advance: Advance::default(),
        done: false,
        again: false,
    }))
}

#[cfg(test)]
thread_local! {
    /// Records this thread made on a slice, for tests that must know which way a record went.
    pub(crate) static SLICE_RECORDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Checks a record made on a slice against the whole state read back: the run as the slice
/// wrote it, and another run of its iteration still open (so that nothing was to be planned).
#[cfg(debug_assertions)]
fn check_slice_record(dir: &Path, slice: &crate::campaign::state::RunSlice) {
    let whole = State::load(dir).expect("the state reads back after a record on its slice");
    // Compared as read back: JSON does not give every float back to the last bit.
    let written: crate::campaign::state::Run =
        serde_json::from_str(&serde_json::to_string(slice.run()).unwrap()).unwrap();
    assert_eq!(
        whole.run(slice.pos),
        &written,
        "the slice's run is the state's"
    );
    let (i, _, _) = slice.pos;
    assert_eq!(
        i + 1,
        whole.iterations.len(),
        "the slice's iteration is the last"
    );
    assert!(
        whole.iterations[i]
            .tests
            .iter()
            .flat_map(|t| &t.runs)
            .any(|r| !r.state.is_terminal()),
        "a record on a slice left its iteration with an open run"
    );
    assert!(!whole.is_done());
}

/// Refuses a record of `run_id` while another holds its claim (a live `campaign exec` that is
/// not the holder of `token`), recovering a dead holder's claim.
fn check_claim(
    dir: &Path,
    run_id: &str,
    run_dir: &Path,
    token: Option<&str>,
) -> Result<(), CampaignError> {
    match crate::campaign::claim::recover_claim(dir, run_id, run_dir)? {
        Recovery::Free { .. } => Ok(()),
        // The holder of a claim holds its lock: a claim file cut or deleted under it is its own.
        Recovery::Live(holder)
            if token.is_some() && holder.token().is_none_or(|t| Some(t) == token) =>
        {
            Ok(())
        }
        Recovery::Live(holder) => Err(CampaignError::Claimed {
            run: run_id.to_string(),
            holder: holder.describe(),
        }),
        Recovery::Ending(what) => Err(CampaignError::Ending {
            run: run_id.to_string(),
            what,
        }),
    }
}

/// Ends `run` now: done with `metrics`, or failed for `failed`'s reason.
fn end_run(
    run: &mut crate::campaign::state::Run,
    metrics: Option<&RunMetrics>,
    failed: Option<&str>,
) {
    run.attempts = run.attempts.max(1);
    run.ended_at = Some(crate::campaign::state::unix_now());
    match metrics {
        Some(m) => {
            run.state = RunState::Done;
            run.metrics = Some(m.clone());
            run.failure = None;
        }
        None => {
            run.state = RunState::Failed;
            run.failure = Some(failed.unwrap_or("recorded as failed").to_string());
        }
    }
}

/// [`record`] once the lock is held and `state` loaded: records run `run_id` at `pos` as
/// measured (`metrics`) or failed, by the holder of claim `token` if any.
pub(super) fn record_locked(
    dir: &Path,
    mut state: State,
    (i, t, r): crate::campaign::state::RunPos,
    run_id: &str,
    metrics: Option<RunMetrics>,
    failed: Option<&str>,
    token: Option<&str>,
) -> Result<Recorded, CampaignError> {
    let run = &state.iterations[i].tests[t].runs[r];
    if run.state.is_terminal() {
        crate::campaign::claim::release_recorded(dir, run_id, token);
        return again(&state, run_id, run, metrics);
    }
    if state.cancelled {
        return Err(CampaignError::Cancelled);
    }
    let run_dir = state.request(dir, i, t, r).run_dir;
    check_claim(dir, run_id, &run_dir, token)?;
    let run = state.run_mut((i, t, r));
    end_run(run, metrics.as_ref(), failed);
    let run_state = run.state;
    // The run stays recorded when the next iteration cannot be planned yet.
    let advance = advance_in(&mut state, dir);
    state.commit(dir)?;
    crate::campaign::strategy::scaling::output::write_curves(&state, dir)?;
    crate::campaign::claim::release_recorded(dir, run_id, token);
    let advance = advance.map_err(|source| CampaignError::Plan {
        dir: dir.to_path_buf(),
        attempts: 1,
        source,
    })?;
    Ok(Recorded {
        run: run_id.to_string(),
        state: run_state,
        metrics,
        advance,
        done: state.is_done(),
        again: false,
    })
}

/// A record of a run already recorded: fine when the outcome is the same, else a conflict.
fn again(
    state: &State,
    run_id: &str,
    run: &crate::campaign::state::Run,
    metrics: Option<RunMetrics>,
) -> Result<Recorded, CampaignError> {
    let same = match (&metrics, run.state) {
        (None, RunState::Failed) => true,
        (Some(m), RunState::Done) => run.metrics.as_ref().is_some_and(|old| same_metrics(old, m)),
        _ => false,
    };
    if !same {
        let was = match (&run.metrics, run.state) {
            (Some(m), RunState::Done) => format!("done ({:.2} SYPD)", m.sypd),
            _ => format!(
                "failed ({})",
                run.failure.as_deref().unwrap_or("no reason given")
            ),
        };
        let now = match &metrics {
            Some(m) => format!("a measurement of {:.2} SYPD", m.sypd),
            None => "a failure".into(),
        };
        return Err(CampaignError::Conflict(format!(
            "run {run_id} is already recorded as {was}; refusing to record it now as {now}; a campaign keeps the first result of a run"
        )));
    }
    Ok(Recorded {
        run: run_id.to_string(),
        state: run.state,
        metrics: run.metrics.clone(),
        advance: Advance::default(),
        done: state.is_done(),
        again: true,
    })
}

/// The same measurement read twice from the same output (exactly, up to rounding).
fn same_metrics(a: &RunMetrics, b: &RunMetrics) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-300);
    close(a.sypd, b.sypd)
        && close(a.chsy, b.chsy)
        && close(a.coupling_cost, b.coupling_cost)
        && a.partial_coupling_cost.len() == b.partial_coupling_cost.len()
        && a.partial_coupling_cost
            .iter()
            .zip(&b.partial_coupling_cost)
            .all(|(x, y)| close(*x, *y))
}
