//! The campaign status as plain text: the iteration table `campaign status` prints, and the
//! short run summaries (`done 1/2 ✗1`) the table and the terminal app share. The status
//! types and how they are derived from the state are the parent module's.

use super::*;

impl Status {
    /// The iteration table as plain text (the CLI prints it; the terminal app draws its own).
    pub fn table(&self) -> String {
        let mut out = String::new();
        let comp = self.components.join("/");
        out.push_str(&format!(
            "{:>4} {:>4}  {:<width$}  {:>5}  {:>7} {:>8} {:>6}  {:<w2$}  {:>6}  {:<18} {}\n",
            "iter",
            "test",
            format!("PEs {comp}"),
            "step",
            "SYPD",
            "CHSY",
            "cpl%",
            format!("partial% {comp}"),
            "FN",
            "donor -> recipient",
            "state",
            width = 18,
            w2 = 16,
        ));
        for it in &self.iterations {
            for t in &it.tests {
                let pes: Vec<String> = t.nproc.values().map(|p| p.to_string()).collect();
                let partial: Vec<String> = t
                    .partial_coupling_cost
                    .values()
                    .map(|v| format!("{:.1}", v * 100.0))
                    .collect();
                let opt = |v: Option<f64>, prec: usize| {
                    v.map(|v| format!("{v:.prec$}"))
                        .unwrap_or_else(|| "-".into())
                };
                let direction = match (&t.donor, &t.recipient, t.next_step) {
                    (Some(d), Some(r), Some(moved)) => format!("{d} -> {r} ({moved})"),
                    (Some(d), Some(r), None) => format!("{d} -> {r}"),
                    _ => "-".into(),
                };
                out.push_str(&format!(
                    "{:>4} {:>4}  {:<18}  {:>5}  {:>7} {:>8} {:>6}  {:<16}  {:>6}  {:<18} {}\n",
                    it.iteration,
                    t.test,
                    pes.join("/"),
                    t.step,
                    opt(t.sypd, 2),
                    opt(t.chsy, 0),
                    opt(t.coupling_cost.map(|c| c * 100.0), 1),
                    if partial.is_empty() {
                        "-".into()
                    } else {
                        partial.join("/")
                    },
                    opt(t.fittingness, 3),
                    direction,
                    t.summary(),
                ));
                for r in t.runs.iter().filter(|r| r.state == RunState::Failed) {
                    out.push_str(&format!(
                        "{:>11}rep {} failed: {}\n",
                        "",
                        r.repetition,
                        r.failure.as_deref().unwrap_or("no reason recorded")
                    ));
                }
            }
        }
        let c = &self.counts;
        out.push_str(&format!(
            "\ncampaign {}: {} runs done, {} failed, {} running, {} pending\n",
            self.state_label(),
            c.done,
            c.failed,
            c.running,
            c.pending
        ));
        match &self.best {
            Some(b) => out.push_str(&format!(
                "best so far: {} ({} PEs with extras) -- {:.2} SYPD, {:.0} CHSY, coupling cost {:.1}%, FN {:.3} (iteration {}, test {}{})\n",
                describe(&self.components, &b.nproc.values().copied().collect::<Vec<_>>()),
                b.total_nproc,
                b.sypd,
                b.chsy,
                b.coupling_cost * 100.0,
                b.fittingness,
                b.iteration,
                b.test,
                self.best_caveat()
                    .map(|c| format!("; {c}"))
                    .unwrap_or_default()
            )),
            None => out.push_str("best so far: nothing measured yet\n"),
        }
        out
    }
}

/// A test's state with its runs: `done` for one run that succeeded, else the state, the runs
/// measured out of all (`done 2/2`), and `✗N` when N failed (`done 1/2 ✗1`, `failed 0/2 ✗2`),
/// so a failed repetition is never hidden behind "done".
pub fn runs_summary(state: &str, done: usize, failed: usize, total: usize) -> String {
    let mut s = state.to_string();
    if total > 1 || failed > 0 {
        s.push_str(&format!(" {done}/{total}"));
    }
    if failed > 0 {
        s.push_str(&format!(" ✗{failed}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::runs_summary;

    #[test]
    fn a_failed_repetition_is_never_hidden_behind_done() {
        assert_eq!(runs_summary("done", 1, 0, 1), "done");
        assert_eq!(runs_summary("done", 2, 0, 2), "done 2/2");
        assert_eq!(runs_summary("done", 1, 1, 2), "done 1/2 ✗1");
        assert_eq!(runs_summary("failed", 0, 2, 2), "failed 0/2 ✗2");
        assert_eq!(runs_summary("failed", 0, 1, 1), "failed 0/1 ✗1");
        assert_eq!(runs_summary("running", 1, 0, 2), "running 1/2");
    }
}
