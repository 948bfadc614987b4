//! The table part of the app: the watched campaign's iteration table, the rows it lists (a `/`
//! filter and an `s` order, as in the tools a login node offers: k9s, htop), the selected row,
//! whether the selection follows new rows, and what the watcher last said.

use std::time::SystemTime;

use autolb::watch::{ActiveMode, WatchEvent};

use super::campaign_view::{CampaignView, IterRow};

/// What the status line says about watching.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchStatus {
    pub mode: Option<ActiveMode>,
    pub reason: String,
    pub last_scan: Option<SystemTime>,
    pub pending_files: usize,
    pub error: Option<String>,
}

pub struct TableState {
    pub campaign: CampaignView,
    /// Position of the selection in [`TableState::visible`].
    pub selected: usize,
    /// The rows listed, as indices into the campaign's rows, filtered and in order.
    pub visible: Vec<usize>,
    pub filter: Option<RowFilter>,
    pub order: RowOrder,
    /// The selection stays on the newest row as rows arrive (true while at the end).
    pub follow: bool,
    pub watch: WatchStatus,
}

impl Default for TableState {
    fn default() -> TableState {
        TableState {
            campaign: CampaignView {
                state: "no campaign".into(),
                ..CampaignView::default()
            },
            selected: 0,
            visible: Vec::new(),
            filter: None,
            order: RowOrder::default(),
            follow: true,
            watch: WatchStatus::default(),
        }
    }
}

impl TableState {
    /// Shows a reloaded campaign (its fitted model already taken out); the selection follows
    /// the newest row while it follows, and stays within the rows.
    pub fn show(&mut self, view: CampaignView) {
        let kept = self.selected_row();
        self.campaign = view;
        self.relist(kept);
    }

    /// The selected row (an index into the campaign's rows), if any row is listed.
    pub fn selected_row(&self) -> Option<usize> {
        self.visible.get(self.selected).copied()
    }

    /// Lists the rows anew (filter, order); the selection stays on row `kept` when it is still
    /// listed, and on the last row while it follows.
    fn relist(&mut self, kept: Option<usize>) {
        let names = &self.campaign.components;
        let mut visible: Vec<usize> = (0..self.campaign.rows.len())
            .filter(|&i| {
                self.filter
                    .as_ref()
                    .is_none_or(|f| f.matches(&self.campaign.rows[i], names))
            })
            .collect();
        let rows = &self.campaign.rows;
        self.order.sort(&mut visible, rows);
        self.visible = visible;
        let last = self.last();
        if self.follow {
            self.selected = last;
        } else if let Some(at) = kept.and_then(|k| self.visible.iter().position(|&i| i == k)) {
            self.selected = at;
        } else {
            self.selected = self.selected.min(last);
        }
    }

    /// Filters the listed rows (`None` lists every row).
    pub fn set_filter(&mut self, filter: Option<RowFilter>) {
        let kept = self.selected_row();
        self.filter = filter;
        self.relist(kept);
    }

    /// The next order (`s`).
    pub fn cycle_order(&mut self) {
        let kept = self.selected_row();
        self.order = self.order.next();
        self.relist(kept);
    }

    /// What the pane's title says about the listing: `3 of 12 rows match "failed"`, `by FN`.
    pub fn listing(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(f) = &self.filter {
            parts.push(format!(
                "{} of {} match {:?}",
                self.visible.len(),
                self.campaign.rows.len(),
                f.text
            ));
        }
        if self.order != RowOrder::Run {
            parts.push(format!("by {}", self.order.label()));
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }

    /// Selects a row; the table follows new rows while the last one is selected.
    pub fn select_row(&mut self, i: usize) {
        let last = self.last();
        self.selected = i.min(last);
        self.follow = self.selected == last;
    }

    fn last(&self) -> usize {
        self.visible.len().saturating_sub(1)
    }

    pub fn on_watch(&mut self, event: WatchEvent, at: SystemTime) {
        let watch = &mut self.watch;
        match event {
            WatchEvent::Mode { mode, reason } => {
                watch.mode = Some(mode);
                watch.reason = reason;
            }
            WatchEvent::Changes(o) => {
                watch.last_scan = Some(at);
                watch.pending_files = o.pending;
                watch.error = o.errors.first().cloned();
            }
            WatchEvent::Quiet { pending, .. } => {
                watch.last_scan = Some(at);
                watch.pending_files = pending;
            }
            WatchEvent::Error(e) => watch.error = Some(e),
        }
    }
}

/// The order the table lists its rows in; `s` cycles through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowOrder {
    /// As the runs were made: lb-iteration, then test.
    #[default]
    Run,
    /// Highest FN first.
    Fn,
    /// Fastest first.
    Sypd,
    /// Cheapest (lowest CHSY) first.
    Cost,
}

impl RowOrder {
    pub fn next(self) -> RowOrder {
        match self {
            RowOrder::Run => RowOrder::Fn,
            RowOrder::Fn => RowOrder::Sypd,
            RowOrder::Sypd => RowOrder::Cost,
            RowOrder::Cost => RowOrder::Run,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RowOrder::Run => "run order",
            RowOrder::Fn => "FN",
            RowOrder::Sypd => "SYPD",
            RowOrder::Cost => "cost",
        }
    }

    /// Sorts row indices; rows without the value go last, ties keep the run order.
    fn sort(self, visible: &mut [usize], rows: &[IterRow]) {
        let key = |r: &IterRow| -> Option<f64> {
            match self {
                RowOrder::Run => None,
                RowOrder::Fn => r.fittingness.map(|f| -f),
                RowOrder::Sypd => r.sypd.map(|s| -s),
                RowOrder::Cost => r.chsy,
            }
        };
        if self == RowOrder::Run {
            return;
        }
        visible.sort_by(|&a, &b| match (key(&rows[a]), key(&rows[b])) {
            (Some(x), Some(y)) => x.total_cmp(&y).then(a.cmp(&b)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.cmp(&b),
        });
    }
}

/// A `/` filter: the rows every word of which matches one of the row's words (case does not
/// matter). A row's words: its state words (`done`, `running`, `pending`, `failed`, `finished`;
/// `failed` also for a row with a failed repetition), its lb-iteration (`it2`), its place (`2/3`),
/// its label, and each component's PEs (`408`, `ifs=408`, `408ifs`).
#[derive(Debug, Clone, PartialEq)]
pub struct RowFilter {
    pub text: String,
    words: Vec<String>,
}

impl RowFilter {
    /// The filter of a query; `None` for an empty one (every row).
    pub fn new(text: &str) -> Option<RowFilter> {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        (!words.is_empty()).then(|| RowFilter {
            text: text.trim().to_string(),
            words,
        })
    }

    pub fn matches(&self, row: &IterRow, names: &[String]) -> bool {
        let own = row_words(row, names);
        self.words.iter().all(|w| own.contains(w))
    }
}

/// The words a filter can match in a row (see [`RowFilter`]).
fn row_words(row: &IterRow, names: &[String]) -> Vec<String> {
    let mut words: Vec<String> = row
        .state
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    if row.failed > 0 || row.runs.iter().any(|r| r.state == "failed") {
        words.push("failed".into());
    }
    words.push(format!("it{}", row.iteration));
    words.push(format!("{}/{}", row.iteration, row.test));
    if let Some(label) = &row.label {
        words.push(label.to_lowercase());
    }
    for (name, p) in names.iter().zip(&row.nproc) {
        let name = name.to_lowercase();
        words.push(p.to_string());
        words.push(format!("{name}={p}"));
        words.push(format!("{p}{name}"));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(iteration: u32, test: u32, nproc: [u32; 2], state: &str, sypd: Option<f64>) -> IterRow {
        IterRow {
            iteration,
            test,
            nproc: nproc.to_vec(),
            state: state.into(),
            failed: usize::from(state.contains('✗')),
            sypd,
            chsy: sypd.map(|s| 24.0 * f64::from(nproc[0] + nproc[1]) / s),
            fittingness: sypd.map(|s| s / 20.0),
            ..IterRow::default()
        }
    }

    fn table() -> TableState {
        let mut t = TableState::default();
        t.show(CampaignView {
            components: vec!["IFS".into(), "NEMO".into()],
            rows: vec![
                row(0, 0, [408, 240], "done 2/2", Some(16.0)),
                row(0, 1, [384, 242], "done 1/2 ✗1", Some(17.0)),
                row(1, 0, [432, 216], "running 1/2", None),
                row(1, 1, [408, 264], "failed 0/2 ✗2", None),
                row(1, 2, [360, 288], "done 2/2", Some(18.0)),
            ],
            ..CampaignView::default()
        });
        t
    }

    #[test]
    fn a_filter_lists_the_rows_whose_words_all_match() {
        let mut t = table();
        let only = |t: &mut TableState, q: &str| {
            t.set_filter(RowFilter::new(q));
            t.visible.clone()
        };
        assert_eq!(only(&mut t, "failed"), [1, 3], "a failed repetition counts");
        assert_eq!(only(&mut t, "running"), [2]);
        assert_eq!(only(&mut t, "it1"), [2, 3, 4]);
        assert_eq!(only(&mut t, "408"), [0, 3]);
        assert_eq!(only(&mut t, "IFS=408 it1"), [3]);
        assert_eq!(only(&mut t, "264nemo"), [3]);
        assert_eq!(only(&mut t, "nemo=408"), Vec::<usize>::new());
        assert_eq!(t.listing().as_deref(), Some("0 of 5 match \"nemo=408\""));
        assert_eq!(
            only(&mut t, "  "),
            [0, 1, 2, 3, 4],
            "an empty query lists all"
        );
        assert_eq!(t.listing(), None);
    }

    #[test]
    fn the_orders_put_unmeasured_rows_last_and_keep_the_selected_row() {
        let mut t = table();
        t.select_row(1);
        assert_eq!(t.selected_row(), Some(1));
        t.cycle_order();
        assert_eq!(t.order, RowOrder::Fn);
        assert_eq!(t.visible, [4, 1, 0, 2, 3]);
        assert_eq!(t.selected_row(), Some(1), "the selection stays on its row");
        t.cycle_order();
        assert_eq!(t.visible, [4, 1, 0, 2, 3], "SYPD: the same here");
        t.cycle_order();
        assert_eq!(t.order, RowOrder::Cost);
        assert_eq!(t.visible[3..], [2, 3]);
        assert_eq!(t.listing().as_deref(), Some("by cost"));
        t.cycle_order();
        assert_eq!(t.visible, [0, 1, 2, 3, 4]);
    }
}
