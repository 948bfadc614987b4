//! The table part of the app: the watched campaign's iteration table, the selected row, whether
//! the selection follows new rows, and what the watcher last said.

use std::time::SystemTime;

use autolb::watch::{ActiveMode, WatchEvent};

use super::campaign_view::CampaignView;

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
    pub selected: usize,
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
            follow: true,
            watch: WatchStatus::default(),
        }
    }
}

impl TableState {
    /// Shows a reloaded campaign (its fitted model already taken out); the selection follows
    /// the newest row while it follows, and stays within the rows.
    pub fn show(&mut self, view: CampaignView) {
        self.campaign = view;
        let last = self.last();
        if self.follow || self.selected > last {
            self.selected = last;
        }
    }

    /// Selects a row; the table follows new rows while the last one is selected.
    pub fn select_row(&mut self, i: usize) {
        let last = self.last();
        self.selected = i.min(last);
        self.follow = self.selected == last;
    }

    fn last(&self) -> usize {
        self.campaign.rows.len().saturating_sub(1)
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
