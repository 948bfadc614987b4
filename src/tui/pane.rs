//! The panes of the main screen. Their own module because the key table (which panes a key
//! acts on) and the app's focus both name them, and neither should depend on the other.

/// The panes Tab cycles through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Matrix,
    Slider,
    Table,
    Curves,
    /// The speed/cost trade-off; shares the curves' place on screen.
    Front,
}

impl Pane {
    const ORDER: [Pane; 5] = [
        Pane::Matrix,
        Pane::Slider,
        Pane::Table,
        Pane::Curves,
        Pane::Front,
    ];

    /// The next pane (or the previous one) in Tab's order.
    pub fn step(self, forward: bool) -> Pane {
        let i = Pane::ORDER.iter().position(|p| *p == self).unwrap_or(0);
        let n = Pane::ORDER.len();
        Pane::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}
