//! What a campaign state read from disk must satisfy before anything uses it: settings within
//! the limits the campaign file is held to, and every per-component list as long as the
//! components, so that a hand-edited or damaged state is one error naming the key, never an
//! index out of bounds or an allocation abort later.

use super::State;
use crate::executor::ExecutorConfig;

impl State {
    /// Checks the settings against the limits the campaign file is held to ([`crate::limits`]),
    /// so that a hand-edited state is one error naming the key, not an allocation abort or a
    /// run retried forever.
    pub(super) fn check_limits(&self) -> Result<(), String> {
        use crate::limits::{MAX_PERIOD_S, MAX_REPETITIONS, MAX_RETRIES, MAX_TOP, MAX_TOTAL_PES};
        let s = &self.settings;
        let range = |key: &str, value: u64, low: u64, high: u64| {
            if (low..=high).contains(&value) {
                Ok(())
            } else {
                Err(format!(
                    "`settings.{key}` = {value} is outside the limits {low} to {high}; fix it in the file or make the campaign again with `autolb campaign init --force`"
                ))
            }
        };
        range("max_nproc", s.max_nproc.into(), 1, MAX_TOTAL_PES.into())?;
        range(
            "extra_pes",
            s.extra_pes.into(),
            0,
            u64::from(MAX_TOTAL_PES) - u64::from(s.max_nproc),
        )?;
        range(
            "repetitions",
            s.repetitions.into(),
            1,
            MAX_REPETITIONS.into(),
        )?;
        range("retries", s.retries.into(), 0, MAX_RETRIES.into())?;
        range(
            "initial_step",
            s.initial_step.into(),
            1,
            MAX_TOTAL_PES.into(),
        )?;
        range(
            "minimum_step",
            s.minimum_step.into(),
            1,
            s.initial_step.into(),
        )?;
        if let Some(step) = s.step {
            range("step", step.into(), 1, MAX_TOTAL_PES.into())?;
        }
        if let Some(top) = s.top {
            range("top", top as u64, 1, MAX_TOP as u64)?;
        }
        if !(0.0..=1.0).contains(&s.tts_w) {
            return Err(format!(
                "`settings.tts_w` = {} is outside 0 to 1",
                crate::limits::display_number(s.tts_w)
            ));
        }
        if let Some(p) = s.period_s {
            crate::limits::check_seconds("`settings.period_s`", p, MAX_PERIOD_S, false)?;
        }
        if let Some(executor) = &self.executor {
            check_executor_limits(executor).map_err(|e| format!("`executor`: {e}"))?;
        }
        if let Some(scaling) = &s.scaling {
            // The same checks as the campaign file's `[scaling]` table.
            crate::config::ScalingTable::from(scaling)
                .resolve()
                .map_err(|e| format!("`settings.scaling`: {e}"))?;
        }
        Ok(())
    }

    /// Checks that every per-component list has one entry per component and every decision
    /// names components that exist, so that an edited state file is refused with a message
    /// instead of making the algorithm index out of bounds.
    pub(super) fn check_shape(&self) -> Result<(), String> {
        let n = self.components.len();
        if n == 0 {
            return Err("`components` is empty; a campaign balances at least one".into());
        }
        // `init` always writes the first iteration: without one there is nothing to run and
        // nothing that could ever end the campaign.
        if self.iterations.is_empty() {
            return Err(
                "`iterations` is empty; the state is damaged: make the campaign again with \
                 `autolb campaign init --force`"
                    .into(),
            );
        }
        for it in &self.iterations {
            for test in &it.tests {
                let at = format!("iteration {} test {}", it.index, test.test);
                if test.nproc.len() != n {
                    return Err(format!(
                        "{at}: {} PE counts for {n} components",
                        test.nproc.len()
                    ));
                }
                match (test.component, self.is_scaling()) {
                    (Some(c), true) if c < n => {}
                    (None, false) => {}
                    (Some(c), _) => {
                        return Err(format!(
                            "{at}: measures component {c}, which a balancing campaign or one of {n} components cannot have"
                        ))
                    }
                    (None, true) if self.is_coupled_scaling() => {}
                    (None, true) => {
                        return Err(format!(
                            "{at}: a scaling campaign's test names the component it measures"
                        ))
                    }
                }
                // A standalone test gives PEs to its component alone.
                let measured = |k: usize| test.component.is_none_or(|c| c == k);
                if let Some(p) = test
                    .nproc
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| measured(k))
                    .map(|(_, p)| p)
                    .find(|&&p| p == 0 || p > crate::predict::MAX_TOTAL_PES)
                {
                    return Err(format!(
                        "{at}: {p} PEs is not a PE count (1 to {})",
                        crate::predict::MAX_TOTAL_PES
                    ));
                }
                for run in &test.runs {
                    if let Some(m) = &run.metrics {
                        if m.partial_coupling_cost.len() != n {
                            return Err(format!(
                                "run {}: {} partial coupling costs for {n} components",
                                run.id,
                                m.partial_coupling_cost.len()
                            ));
                        }
                    }
                }
                if let Some(d) = &test.decision {
                    let bad_index = [d.donor, d.recipient].into_iter().flatten().any(|c| c >= n);
                    let bad_next = d.next.as_ref().is_some_and(|next| next.len() != n);
                    if bad_index || bad_next {
                        return Err(format!(
                            "{at}: the decision names components this campaign does not have"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Checks `[executor]` `jobs`, `retries` and `timeout_s` against their limits (campaign file
/// and state alike).
pub(crate) fn check_executor_limits(executor: &ExecutorConfig) -> Result<(), String> {
    use crate::limits::{MAX_JOBS, MAX_RETRIES};
    match executor.jobs {
        Some(0) => {
            return Err(
                "[executor] `jobs` is 0; at least one run must go at a time, e.g. jobs = 4".into(),
            )
        }
        Some(n) if n > MAX_JOBS => {
            return Err(format!(
                "[executor] `jobs` = {n} is more than the limit of {MAX_JOBS} runs at a time"
            ))
        }
        _ => {}
    }
    if let Some(r) = executor.retries.filter(|&r| r > MAX_RETRIES) {
        return Err(format!(
            "[executor] `retries` = {r} is more than the limit of {MAX_RETRIES}; a run that failed that often will not succeed by itself"
        ));
    }
    Ok(())
}
