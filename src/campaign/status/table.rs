//! The campaign status as plain text: the iteration table `campaign status` prints, and the
//! short run summaries (`done 1/2 ✗1`) the table and the terminal app share. The status
//! types and how they are derived from the state are the parent module's.

use super::*;
use crate::predict::ConfigurationText;

impl Status {
    /// The iteration table as plain text with every column, then the run counts and the best
    /// (`campaign init` and `campaign run` print it; the terminal app draws its own).
    pub fn table(&self) -> String {
        let mut out = self.table_lines(usize::MAX).join("\n");
        out.push('\n');
        let c = &self.counts;
        out.push_str(&format!(
            "\ncampaign {}: {} runs done, {} failed, {} running, {} pending{}{}\n",
            self.state_label(),
            c.done,
            c.failed,
            c.running,
            c.pending,
            if c.cancelled > 0 {
                format!(", {} cancelled", c.cancelled)
            } else {
                String::new()
            },
            if c.stopped_with_driver > 0 {
                format!(", {} {STOPPED_WITH_DRIVER}", c.stopped_with_driver)
            } else {
                String::new()
            }
        ));
        if let Some(c) = &self.cold_start {
            out.push_str(&format!("cold start, {}\n", c.phase));
        }
        out.push_str(&self.best_text());
        out.push('\n');
        out
    }

    /// A scaling campaign's counts per component, one line each: `IFS: 5 counts measured
    /// (48 96 192 384 768), 1 queued (288)`; empty for a balancing campaign.
    pub fn scaling_text(&self) -> String {
        let Some(scaling) = &self.scaling else {
            return String::new();
        };
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
        let mut out = String::new();
        for (name, counts) in &scaling.0 {
            out.push_str(&format!(
                "{name}: {} counts measured ({}), {} queued{}",
                counts.measured.len(),
                list(&counts.measured),
                counts.queued.len(),
                if counts.queued.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", list(&counts.queued))
                }
            ));
            if !counts.outliers.is_empty() {
                out.push_str(&format!(
                    "; outliers left out: {}",
                    counts.outliers.join(", ")
                ));
            }
            if !counts.features.is_empty() {
                out.push_str(&format!(
                    "; real dips kept (far below their neighbours, every run agreeing): {}",
                    list(&counts.features)
                ));
            }
            out.push('\n');
        }
        out
    }

    /// The iteration table in at most `width` columns: the least important columns (the
    /// partial coupling costs, the step, the move, the coupling cost, CHSY) give way first,
    /// and a failed run's reason is cut at the width.
    pub fn table_lines(&self, width: usize) -> Vec<String> {
        let comp = self.components.join("/");
        let mut columns = vec![
            Column::new("iter", 10, Align::Right),
            Column::new("test", 10, Align::Right),
            Column::new(&format!("PEs {comp}"), 10, Align::Left),
            Column::new("step", 2, Align::Right),
            Column::new("SYPD", 7, Align::Right),
            Column::new("CHSY", 6, Align::Right),
            Column::new("cpl%", 5, Align::Right),
            Column::new(&format!("partial% {comp}"), 1, Align::Left),
            Column::new("FN", 8, Align::Right),
            Column::new("donor -> recipient", 4, Align::Left).or_short("d -> r", 3),
            // A run its driver took along reads `stopped with the driver` and gives way to
            // `stopped` before the coupling cost goes.
            Column::new("state", 9, Align::Left).or_short("state", 5),
        ];
        // Under each row, the reasons of its failed runs (not columns: they are long).
        let mut notes: Vec<Vec<String>> = Vec::new();
        for it in &self.iterations {
            for t in &it.tests {
                let pes = self.pes_texts(t.nproc.values());
                let partial: Vec<String> = t
                    .partial_coupling_cost
                    .values()
                    .map(|v| format!("{:.1}", v * 100.0))
                    .collect();
                let opt = |v: Option<f64>, prec: usize| {
                    v.map(|v| format!("{v:.prec$}"))
                        .unwrap_or_else(|| "-".into())
                };
                // A guided test has no step (0): no step and no "PEs moved" to show.
                let next_step = t.next_step.filter(|&s| s > 0);
                let (direction, short_direction) = match (&t.donor, &t.recipient, next_step) {
                    (Some(d), Some(r), Some(moved)) => {
                        (format!("{d} -> {r} ({moved})"), format!("{d}>{r}"))
                    }
                    (Some(d), Some(r), None) => (format!("{d} -> {r}"), format!("{d}>{r}")),
                    _ => ("-".into(), "-".into()),
                };
                let cells = [
                    it.iteration.to_string(),
                    t.test.to_string(),
                    pes.join("/"),
                    if t.step > 0 {
                        t.step.to_string()
                    } else {
                        "-".into()
                    },
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
                ];
                for (column, cell) in columns.iter_mut().zip(cells) {
                    column.cells.push(cell);
                }
                columns[9].short_cells.push(short_direction);
                columns[10].short_cells.push(t.short_summary());
                notes.push(
                    t.runs
                        .iter()
                        .filter(|r| r.state == RunState::Failed)
                        .map(|r| {
                            format!(
                                "    rep {} failed: {}",
                                r.repetition,
                                r.failure.as_deref().unwrap_or("no reason recorded")
                            )
                        })
                        .collect(),
                );
            }
        }
        let columns = fit_columns(columns, width);
        let mut lines = vec![row_line(&columns, None, width)];
        for (row, row_notes) in notes.iter().enumerate() {
            lines.push(row_line(&columns, Some(row), width));
            lines.extend(row_notes.iter().map(|n| cut(n, width)));
        }
        lines
    }

    /// `IFS 432 / NEMO 216`, or `OpenIFS 64x4 / oceanx 200` with a hybrid component, joined
    /// by `separator`.
    pub fn configuration_text(&self, nproc: &[u32], separator: &str) -> String {
        if self.threads.is_none() {
            let text = ConfigurationText::new(&self.components, nproc);
            return if separator == " / " {
                text.slashed().to_string()
            } else {
                text.to_string()
            };
        }
        self.components
            .iter()
            .zip(self.pes_texts(nproc))
            .map(|(name, pes)| format!("{name} {pes}"))
            .collect::<Vec<_>>()
            .join(separator)
    }

    /// `best so far: IFS 432 / NEMO 216 (654 PEs with extras) -- 16.80 SYPD, ...`.
    pub fn best_text(&self) -> String {
        if self.scaling.is_some() {
            // What a scaling campaign has instead of a best: its counts and curves.
            let mode = match self.design {
                Some(crate::config::ScalingDesign::Coupled) => "coupled mode",
                _ => "standalone",
            };
            return format!(
                "scaling campaign ({mode}): curves in curves/NAME.csv\n{}",
                self.scaling_text().trim_end()
            );
        }
        match &self.best {
            Some(b) => format!(
                "best so far: {} ({} PEs with extras) -- {:.2} SYPD, {:.0} CHSY, coupling cost {:.1}%, FN {:.3} ({}{})",
                self.configuration_text(&b.nproc.values().copied().collect::<Vec<_>>(), " / "),
                b.total_nproc,
                b.sypd,
                b.chsy,
                b.coupling_cost * 100.0,
                b.fittingness,
                b.measured_in_text(),
                self.best_caveat()
                    .map(|c| format!("; {c}"))
                    .unwrap_or_default()
            ),
            // Over without one measured run: no "yet" to promise.
            None if self.done && self.counts.done == 0 => "best: none, no run succeeded".into(),
            None => "best so far: nothing measured yet".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

/// One column of the table, with how long it stays when the width is short (higher stays
/// longer) and an optional shorter form it gives way to first.
#[derive(Debug, Clone)]
struct Column {
    header: String,
    cells: Vec<String>,
    align: Align,
    priority: u8,
    short: Option<(String, u8)>,
    short_cells: Vec<String>,
}

impl Column {
    fn new(header: &str, priority: u8, align: Align) -> Column {
        Column {
            header: header.to_string(),
            cells: Vec::new(),
            align,
            priority,
            short: None,
            short_cells: Vec::new(),
        }
    }

    /// A shorter header (its cells come in `short_cells`) taken at `priority`.
    fn or_short(mut self, header: &str, priority: u8) -> Column {
        self.short = Some((header.to_string(), priority));
        self
    }

    fn width(&self) -> usize {
        self.cells
            .iter()
            .chain(std::iter::once(&self.header))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
    }

    /// Where the column stands now: its short form's turn while it has one.
    fn standing(&self) -> u8 {
        self.short.as_ref().map_or(self.priority, |(_, p)| *p)
    }
}

/// Between two columns.
const GAP: &str = "  ";

/// The columns that fit in `width`: while the table is too wide, the least important column
/// left (the rightmost of equals) takes its short form when it has one, else goes. The
/// last column standing is kept (its lines are cut).
fn fit_columns(mut columns: Vec<Column>, width: usize) -> Vec<Column> {
    let total = |cols: &[Column]| {
        cols.iter().map(Column::width).sum::<usize>() + GAP.len() * cols.len().saturating_sub(1)
    };
    while total(&columns) > width && columns.len() > 1 {
        let Some(k) = (0..columns.len())
            .rev()
            .min_by_key(|&k| columns[k].standing())
        else {
            break;
        };
        let column = &mut columns[k];
        match column.short.take() {
            Some((header, _)) => {
                column.header = header;
                column.cells = std::mem::take(&mut column.short_cells);
            }
            None => {
                columns.remove(k);
            }
        }
    }
    columns
}

/// The header (`row` None) or one row, padded into its columns, cut at `width`.
fn row_line(columns: &[Column], row: Option<usize>, width: usize) -> String {
    let cells: Vec<String> = columns
        .iter()
        .map(|c| {
            let text = row.map_or(c.header.as_str(), |r| c.cells[r].as_str());
            let pad = c.width().saturating_sub(text.chars().count());
            match c.align {
                Align::Left => format!("{text}{}", " ".repeat(pad)),
                Align::Right => format!("{}{text}", " ".repeat(pad)),
            }
        })
        .collect();
    cut(cells.join(GAP).trim_end(), width)
}

/// `text` in at most `width` columns: cut, with `…` for what is left out.
pub(crate) fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
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
    use super::*;

    #[test]
    fn a_guided_test_shows_no_step_and_no_pes_moved() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = super::super::demo_state(tmp.path());
        let mut status = Status::from_state(&state, &dir);
        let t = &mut status.iterations[0].tests[0];
        t.step = 0;
        t.next_step = Some(0);
        t.donor = Some("NEMO".into());
        t.recipient = Some("IFS".into());
        let lines = status.table_lines(usize::MAX);
        let header = &lines[0];
        let row = &lines[1];
        let step_at = header.find("step").unwrap();
        assert_eq!(row[step_at..].split_whitespace().next(), Some("-"), "{row}");
        assert!(row.contains("NEMO -> IFS") && !row.contains("(0)"), "{row}");
    }

    #[test]
    fn columns_give_way_least_important_first_and_no_line_is_wider_than_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = super::super::demo_state(tmp.path());
        let failed = (0, 0, 0);
        state.run_mut(failed).state = RunState::Failed;
        state.run_mut(failed).failure = Some(format!("exit status 1: {}", "x".repeat(200)));
        let status = Status::from_state(&state, &dir);
        let wide = status.table_lines(usize::MAX);
        assert!(wide[0].contains("partial% IFS/NEMO"), "{}", wide[0]);
        assert!(wide[0].contains("donor -> recipient"), "{}", wide[0]);
        for width in [100, 80, 60, 40] {
            let lines = status.table_lines(width);
            for line in &lines {
                assert!(line.chars().count() <= width, "{width}: {line:?}");
            }
            let header = &lines[0];
            assert!(!header.contains("partial%"), "{width}: {header}");
            assert!(lines
                .iter()
                .any(|l| l.contains("rep 1 failed: exit status 1")));
            if width < 60 {
                continue;
            }
            for kept in ["iter", "test", "PEs IFS/NEMO", "FN", "state"] {
                assert!(header.contains(kept), "{width}: {kept} dropped: {header}");
            }
        }
        // At 80 the move is shortened before the coupling cost goes.
        let header = &status.table_lines(80)[0];
        assert!(
            header.contains("d -> r") && header.contains("cpl%"),
            "{header}"
        );
    }

    #[test]
    fn the_best_says_which_rows_its_means_pool() {
        let best = |runs: u32, rows: &[[u32; 2]]| BestView {
            nproc: NameMap::default(),
            sypd: 20.87,
            chsy: 1035.0,
            coupling_cost: 0.05,
            fittingness: 0.869,
            iteration: rows[0][0],
            test: rows[0][1],
            total_nproc: 900,
            runs,
            measured_in: rows.to_vec(),
        };
        let one = best(2, &[[1, 4]]);
        assert!(!one.pools_rows());
        assert_eq!(one.measured_in_text(), "iteration 1, test 4");
        let repeated = best(2, &[[1, 4], [13, 4]]);
        assert!(repeated.pools_rows());
        assert_eq!(
            repeated.measured_in_text(),
            "mean of 2 runs in iterations 1 and 13, test 4"
        );
        assert_eq!(
            best(4, &[[1, 4], [5, 4], [13, 4]]).measured_in_text(),
            "mean of 4 runs in iterations 1, 5 and 13, test 4"
        );
        assert_eq!(
            best(3, &[[1, 4], [5, 6]]).measured_in_text(),
            "mean of 3 runs in iterations/tests 1/4 and 5/6"
        );
        // A state written before the rows were recorded reads as one row.
        let old: BestView = serde_json::from_str(
            r#"{"nproc": {}, "sypd": 1, "chsy": 1, "coupling_cost": 0, "fittingness": 1,
                "iteration": 2, "test": 3, "total_nproc": 9}"#,
        )
        .unwrap();
        assert_eq!(old.measured_in_text(), "iteration 2, test 3");
    }

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
