//! Lays out a line of prioritised items into a width: the status line, the matrix cursor
//! line and title, the curves legend and the zoomed matrix legend all go through [`fit`], so
//! a narrow terminal loses the least important items first and never shows half a word.
//!
//! Items keep their order on the line. While the line is too wide, the least important item
//! left (the rightmost of equals) gives way: to its short form when it has one, else it is
//! dropped. The last item standing, if still too wide, is cut after its last whole word and
//! ends with `…`.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// One item of a line: its spans, an optional shorter form, and how much it matters (higher
/// stays longer).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub spans: Vec<Span<'static>>,
    pub short: Option<Vec<Span<'static>>>,
    pub priority: u8,
    /// When the item gives way to its short form (its `priority` unless told otherwise).
    pub short_priority: u8,
}

impl Item {
    /// A plain item.
    pub fn new(text: impl Into<String>, priority: u8) -> Item {
        Item::styled(text, Style::default(), priority)
    }

    /// An item in one style.
    pub fn styled(text: impl Into<String>, style: Style, priority: u8) -> Item {
        Item {
            spans: vec![Span::styled(text.into(), style)],
            short: None,
            priority,
            short_priority: priority,
        }
    }

    /// An item made of several spans (a colour swatch and its words).
    pub fn spans(spans: Vec<Span<'static>>, priority: u8) -> Item {
        Item {
            spans,
            short: None,
            priority,
            short_priority: priority,
        }
    }

    /// The same item with a shorter form (in the first span's style) to fall back to.
    pub fn or_short(mut self, short: impl Into<String>) -> Item {
        let style = self.spans.first().map(|s| s.style).unwrap_or_default();
        self.short = Some(vec![Span::styled(short.into(), style)]);
        self
    }

    /// The same item shortened as early as an item of `priority` would go: a long title
    /// word gives way before the facts beside it.
    pub fn or_short_early(self, short: impl Into<String>, priority: u8) -> Item {
        let mut item = self.or_short(short);
        item.short_priority = priority.min(item.priority);
        item
    }

    /// Where the item stands now: its short form's turn while it has one, else its own.
    fn standing(&self) -> u8 {
        if self.short.is_some() {
            self.short_priority
        } else {
            self.priority
        }
    }

    fn width(&self) -> usize {
        self.spans.iter().map(Span::width).sum()
    }
}

/// The items that fit in `width` columns joined by `sep`, as a line.
pub fn fit(items: Vec<Item>, sep: &str, width: usize) -> Line<'static> {
    let sep_w = Span::raw(sep).width();
    let mut items = items;
    let total = |items: &[Item]| -> usize {
        items.iter().map(Item::width).sum::<usize>() + sep_w * items.len().saturating_sub(1)
    };
    while items.len() > 1 && total(&items) > width {
        let (k, _) = items
            .iter()
            .enumerate()
            .min_by_key(|(k, it)| (it.standing(), usize::MAX - k))
            .expect("at least two items");
        match items[k].short.take() {
            Some(short) => items[k].spans = short,
            None => {
                items.remove(k);
            }
        }
    }
    if let [only] = items.as_mut_slice() {
        if only.width() > width {
            if let Some(short) = only.short.take() {
                only.spans = short;
            }
        }
        if only.width() > width {
            only.spans = cut_at_word(&only.spans, width);
        }
    }
    let mut spans = Vec::new();
    for (k, item) in items.into_iter().enumerate() {
        if k > 0 {
            spans.push(Span::raw(sep.to_string()));
        }
        spans.extend(item.spans);
    }
    Line::from(spans)
}

/// The plain text of a line.
#[cfg(test)]
pub fn text_of(line: &Line) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// `spans` cut after the last whole word that leaves room for `…` in `width` columns.
fn cut_at_word(spans: &[Span<'static>], width: usize) -> Vec<Span<'static>> {
    let room = width.saturating_sub(1);
    // Characters (and their span) up to the room, then back to the last space.
    let mut chars: Vec<(usize, char)> = Vec::new();
    let mut used = 0;
    'outer: for (k, s) in spans.iter().enumerate() {
        for ch in s.content.chars() {
            let w = Span::raw(ch.to_string()).width();
            if used + w > room {
                break 'outer;
            }
            used += w;
            chars.push((k, ch));
        }
    }
    let keep = chars.iter().rposition(|&(_, ch)| ch == ' ').unwrap_or(0);
    let chars = &chars[..keep];
    let mut out: Vec<Span<'static>> = Vec::new();
    for (k, s) in spans.iter().enumerate() {
        let text: String = chars
            .iter()
            .filter(|&&(i, _)| i == k)
            .map(|&(_, ch)| ch)
            .collect();
        if !text.is_empty() {
            out.push(Span::styled(text, s.style));
        }
    }
    out.push(Span::raw("…"));
    out
}

#[cfg(test)]
mod tests {
    use super::{fit, text_of, Item};

    fn line(items: Vec<Item>, width: usize) -> String {
        text_of(&fit(items, " │ ", width))
    }

    #[test]
    fn everything_shows_when_it_fits() {
        let items = vec![Item::new("budget 800", 8), Item::new("title", 1)];
        assert_eq!(line(items, 80), "budget 800 │ title");
    }

    #[test]
    fn the_least_important_item_goes_first_and_order_is_kept() {
        let items = vec![
            Item::new("aaaa", 9),
            Item::new("bbbb", 1),
            Item::new("cccc", 5),
        ];
        assert_eq!(line(items.clone(), 11), "aaaa │ cccc");
        assert_eq!(line(items, 10), "aaaa");
    }

    #[test]
    fn an_item_shortens_before_it_is_dropped() {
        let items = vec![
            Item::new("aaaa", 9),
            Item::new("budget 800 ({/})", 3).or_short("b 800"),
        ];
        assert_eq!(line(items.clone(), 40), "aaaa │ budget 800 ({/})");
        assert_eq!(line(items.clone(), 12), "aaaa │ b 800");
        assert_eq!(line(items, 11), "aaaa");
    }

    #[test]
    fn a_lone_item_too_wide_is_cut_after_a_whole_word() {
        let items = vec![Item::new("wrote top 5: /a/b.toml and /a/b.json", 9)];
        let text = line(items, 20);
        assert_eq!(text, "wrote top 5:…");
        assert!(text.chars().count() <= 20);
    }

    #[test]
    fn an_early_short_form_goes_before_a_less_important_item() {
        let items = vec![
            Item::new("Fittingness: IFS", 9).or_short_early("FN: IFS", 2),
            Item::new("Z: all", 5),
        ];
        assert_eq!(line(items.clone(), 30), "Fittingness: IFS │ Z: all");
        assert_eq!(line(items.clone(), 20), "FN: IFS │ Z: all");
        assert_eq!(line(items, 12), "FN: IFS");
    }

    #[test]
    fn ties_drop_the_rightmost() {
        let items = vec![Item::new("xx", 2), Item::new("yy", 2), Item::new("zz", 9)];
        assert_eq!(line(items, 10), "xx │ zz");
    }
}
