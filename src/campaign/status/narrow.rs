//! `campaign status` for a terminal of a given width (a login node's 80 columns): a one-line
//! summary first, so the one line a watcher glances at says where the campaign stands; then
//! who drives it, the iteration table with its least important columns given way, and the
//! best. No line is wider than the width.

use std::path::Path;

use super::table::cut;
use super::Status;
use crate::campaign::DriverState;

impl Status {
    /// Everything `campaign status` prints, in at most `width` columns.
    pub fn render(&self, driver: &DriverState, dir: &Path, width: usize) -> String {
        let mut lines = vec![self.summary_line(driver, width)];
        if !matches!(driver, DriverState::Done) {
            lines.extend(wrap(
                &format!("driver: {}", driver.text_for(dir, &self.executor)),
                width,
            ));
        }
        lines.push(String::new());
        lines.extend(self.table_lines(width));
        lines.push(String::new());
        if let Some(c) = &self.cold_start {
            lines.extend(wrap(&format!("cold start, {}", c.phase), width));
        }
        lines.extend(wrap(&self.best_text(), width));
        for note in &self.curve_notes {
            lines.extend(wrap(&format!("note: {note}"), width));
        }
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    /// `campaign: running (pid 12) · iteration 2 · runs 5 done, 1 running, 2 queued · best
    /// IFS 408 + NEMO 258 FN 0.963`, its least important parts shortened or dropped to fit
    /// `width`.
    pub fn summary_line(&self, driver: &DriverState, width: usize) -> String {
        let mut parts = Vec::new();
        let state = match driver {
            DriverState::Done => format!("campaign {}", self.state_label()),
            other => format!("campaign: {}", other.short_text_for(&self.executor)),
        };
        parts.push(Part::new(state, 10));
        if let Some(i) = self.iteration {
            parts.push(Part::new(format!("iteration {i}"), 7).or_short(format!("it {i}"), 6));
        }
        parts.push(Part::new(self.counts.text(), 9).or_short(self.counts.short_text(), 8));
        if let Some(b) = &self.best {
            parts.push(
                Part::new(
                    format!(
                        "best {} FN {:.3}",
                        crate::predict::ConfigurationText::pairs(&b.nproc.0),
                        b.fittingness
                    ),
                    5,
                )
                .or_short(format!("best FN {:.3}", b.fittingness), 4),
            );
        }
        fit_parts(parts, " · ", width)
    }
}

impl crate::campaign::CampaignAnswer {
    /// `campaign status`: the status, then the prediction beside the answer, labelled as
    /// predicted with its model and compared with the answer.
    pub fn render(&self, driver: &DriverState, dir: &Path, width: usize) -> String {
        let mut out = self.status.render(driver, dir, width);
        if let Some(line) = self.predicted_line() {
            out.push_str(&wrap(&line, width).join("\n"));
            out.push('\n');
        }
        out
    }

    /// `campaign best`: the answer with its means, where it was measured and the runs it
    /// pools, then the prediction beside it.
    pub fn best_text(&self) -> String {
        let Some(a) = &self.answer else {
            return String::new();
        };
        let mut out = format!(
            "best measured: {} ({} cores with the extras){}\n  {:.2} SYPD, {:.0} CHSY, coupling cost {:.1} %, FN {:.3} ({})\n  {}: {}\n",
            a.config,
            a.total_nproc,
            if a.provisional { ", so far: the campaign still runs" } else { "" },
            a.sypd,
            a.chsy,
            100.0 * a.coupling_cost,
            a.fittingness,
            a.fn_scale,
            if a.measured_in.len() > 1 {
                a.where_measured.clone()
            } else {
                format!(
                    "{}, mean of {} run{}",
                    a.where_measured,
                    a.runs,
                    if a.runs == 1 { "" } else { "s" }
                )
            },
            a.run_ids.join(", ")
        );
        if let Some(line) = self.predicted_line() {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// One part of a line: its text, an optional shorter form, and how long it stays (higher
/// stays longer; the short form is taken at its own priority).
struct Part {
    text: String,
    short: Option<(String, u8)>,
    priority: u8,
}

impl Part {
    fn new(text: String, priority: u8) -> Part {
        Part {
            text,
            short: None,
            priority,
        }
    }

    fn or_short(mut self, text: String, priority: u8) -> Part {
        self.short = Some((text, priority.min(self.priority)));
        self
    }

    fn standing(&self) -> u8 {
        self.short.as_ref().map_or(self.priority, |(_, p)| *p)
    }
}

/// The parts that fit in `width`, joined by `sep`: while too wide, the least important part
/// left (the rightmost of equals) takes its short form, else goes; the last one is cut.
fn fit_parts(mut parts: Vec<Part>, sep: &str, width: usize) -> String {
    let line = |parts: &[Part]| {
        parts
            .iter()
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join(sep)
    };
    while line(&parts).chars().count() > width && parts.len() > 1 {
        let Some(k) = (0..parts.len()).rev().min_by_key(|&k| parts[k].standing()) else {
            break;
        };
        match parts[k].short.take() {
            Some((short, _)) => parts[k].text = short,
            None => {
                parts.remove(k);
            }
        }
    }
    cut(&line(&parts), width)
}

/// `text` wrapped at spaces into lines of at most `width` columns, the lines after the first
/// indented by two; a word longer than a line (a long path) is cut.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let indent = if lines.is_empty() { "" } else { "  " };
        let candidate = if line.is_empty() {
            format!("{indent}{word}")
        } else {
            format!("{line} {word}")
        };
        if candidate.chars().count() <= width || line.is_empty() {
            line = candidate;
        } else {
            lines.push(cut(&line, width));
            line = format!("  {word}");
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(cut(&line, width));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::super::RunCounts;
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_summary_comes_first_and_nothing_is_wider_than_the_width() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = super::super::demo_state(tmp.path());
        let status = Status::from_state(&state, &dir);
        let lost = DriverState::Lost {
            pid: 4242,
            host: crate::campaign::heartbeat::host_name(),
            gone_s: 40,
        };
        for width in [160, 80, 50] {
            let text = status.render(&lost, &dir, width);
            for line in text.lines() {
                assert!(line.chars().count() <= width, "{width}: {line:?}");
            }
            let first = text.lines().next().unwrap();
            assert!(
                first.starts_with("campaign: driver lost (pid 4242 gone 40 s ago)"),
                "{width}: {first}"
            );
            let all = text.split_whitespace().collect::<Vec<_>>().join(" ");
            // The demo runs on the sim executor: its runs end with the driver.
            assert!(
                all.contains(
                    "runs of the sim executor ended with it; resume with autolb campaign run"
                ),
                "{width}: {text}"
            );
        }
        let wide = status.summary_line(&lost, 200);
        assert!(
            wide.contains("iteration 0") && wide.contains("runs 0 done, 0 running, 4 queued"),
            "{wide}"
        );
        let narrow = status.summary_line(&lost, 60);
        assert!(narrow.contains("runs 0/0/4"), "{narrow}");
    }

    /// The demo campaign (the `sim` executor, or `executor`) with its first run running, as
    /// every view shows it with `driver`.
    fn one_run_running(tmp: &Path, executor: &str, driver: &DriverState) -> (PathBuf, Status) {
        let (dir, mut state) = super::super::demo_state(tmp);
        state.run_mut((0, 0, 0)).state = crate::campaign::RunState::Running;
        let mut status = Status::from_state(&state, &dir);
        assert_eq!(status.executor, "sim");
        status.executor = executor.into();
        status.set_driver(driver);
        (dir, status)
    }

    fn lost() -> DriverState {
        DriverState::Lost {
            pid: 4242,
            host: crate::campaign::heartbeat::host_name(),
            gone_s: 40,
        }
    }

    #[test]
    fn a_lost_sim_driver_took_its_running_runs_along_in_every_view() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, status) = one_run_running(tmp.path(), "sim", &lost());
        let queued = status.counts.pending;
        assert!(queued > 0);
        assert_eq!(
            status.counts,
            RunCounts {
                pending: queued,
                running: 0,
                done: 0,
                failed: 0,
                cancelled: 0,
                stopped_with_driver: 1,
            }
        );
        // The narrow and the wide text.
        for width in [200, 80] {
            let text = status.render(&lost(), &dir, width);
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                words.contains(&format!(
                    "driver lost (pid 4242 gone 40 s ago; runs of the sim executor ended with it; resume with autolb campaign run {} to run them again)",
                    dir.display()
                )),
                "{width}: {text}"
            );
            assert!(!words.contains("may still be queued"), "{text}");
            assert!(
                !text
                    .lines()
                    .any(|l| !l.starts_with("campaign") && l.contains("running")),
                "{width}: {text}"
            );
            for line in text.lines() {
                assert!(line.chars().count() <= width, "{width}: {line:?}");
            }
        }
        // The row of the run (the demo's first iteration runs each test once).
        let row = &status.table_lines(200)[1];
        assert!(row.ends_with("  stopped with the driver"), "{row}");
        // Narrower, the short form goes before the coupling cost and CHSY.
        let header = &status.table_lines(55)[0];
        let row = &status.table_lines(55)[1];
        assert!(row.ends_with("  stopped"), "{header}\n{row}");
        assert!(header.contains("CHSY"), "{header}\n{row}");
        let wide = status.render(&lost(), &dir, 200);
        assert!(
            wide.contains(&format!(
                "runs 0 done, 0 running, {queued} queued, 1 stopped with the driver"
            )),
            "{wide}"
        );
        let narrow = status.render(&lost(), &dir, 80);
        assert!(
            narrow.contains(&format!("runs 0/0/{queued} 1 stopped")),
            "{narrow}"
        );
        let table = status.table();
        assert!(
            table.contains("  stopped with the driver\n")
                && table.contains(&format!(
                    "0 running, {queued} pending, 1 stopped with the driver"
                )),
            "{table}"
        );
        // `--json`: the state file's word stays under `state`, the view's beside it.
        let json = serde_json::to_value(&status).unwrap();
        let runs = &json["iterations"][0]["tests"][0]["runs"];
        assert_eq!(runs[0]["state"], "running");
        assert_eq!(runs[0]["stopped_with_driver"], true);
        assert!(runs[1].get("stopped_with_driver").is_none(), "{runs}");
        assert_eq!(json["counts"]["running"], 0);
        assert_eq!(json["counts"]["stopped_with_driver"], 1);
        assert_eq!(json["driver"]["state"], "lost");
        let back: Status = serde_json::from_value(json).unwrap();
        assert_eq!(back, status);
    }

    #[test]
    fn a_lost_command_driver_and_a_live_sim_one_leave_the_runs_running() {
        let live = DriverState::Running {
            pid: std::process::id(),
            host: crate::campaign::heartbeat::host_name(),
            seen_s: 1,
        };
        for (executor, driver) in [("command", lost()), ("slurm", lost()), ("sim", live)] {
            let tmp = tempfile::tempdir().unwrap();
            let (dir, status) = one_run_running(tmp.path(), executor, &driver);
            assert_eq!(
                (status.counts.running, status.counts.stopped_with_driver),
                (1, 0),
                "{executor}"
            );
            let text = status.render(&driver, &dir, 200);
            let row = &status.table_lines(200)[1];
            assert!(row.ends_with("  running"), "{executor}: {row}");
            assert!(!text.contains("stopped"), "{executor}: {text}");
            if executor != "sim" {
                let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(words.contains("runs may still be queued"), "{text}");
            }
            let json = serde_json::to_value(&status).unwrap();
            let run = &json["iterations"][0]["tests"][0]["runs"][0];
            assert_eq!(run["state"], "running");
            assert!(run.get("stopped_with_driver").is_none(), "{run}");
            assert_eq!(json["counts"]["stopped_with_driver"], 0);
        }
    }

    #[test]
    fn wrapping_keeps_every_word_and_cuts_only_what_cannot_fit() {
        assert_eq!(wrap("a bb ccc", 5), vec!["a bb", "  ccc"]);
        assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "  c…"]);
        assert_eq!(wrap("short", 80), vec!["short"]);
        assert_eq!(wrap("abcdefgh", 4), vec!["abc…"]);
        assert_eq!(wrap("", 4), vec![""]);
    }

    #[test]
    fn parts_shorten_then_drop_least_important_first() {
        let parts = || {
            vec![
                Part::new("aaaa".into(), 10),
                Part::new("bbbbbbbb".into(), 5).or_short("bb".into(), 4),
                Part::new("cccc".into(), 3),
            ]
        };
        assert_eq!(fit_parts(parts(), " ", 100), "aaaa bbbbbbbb cccc");
        assert_eq!(fit_parts(parts(), " ", 13), "aaaa bbbbbbbb");
        assert_eq!(fit_parts(parts(), " ", 8), "aaaa bb");
        assert_eq!(fit_parts(parts(), " ", 5), "aaaa");
        assert_eq!(fit_parts(parts(), " ", 3), "aa…");
    }
}
