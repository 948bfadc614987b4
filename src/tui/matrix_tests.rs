//! The fittingness matrix drawn at every width: its column labels.

#[test]
fn column_labels_are_evenly_spaced_and_off_the_border_at_every_width() {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::Modifier;
    use ratatui::widgets::Widget;
    let app = super::tests::app();
    for width in 12..=200u16 {
        let area = Rect::new(0, 0, width, 20);
        let mut buf = Buffer::empty(area);
        super::view::matrix::MatrixView { app: &app }.render(area, &mut buf);
        // The labels, as (start, text, the cursor's?), left to right.
        let mut labels: Vec<(u16, String, bool)> = Vec::new();
        for x in 0..width {
            let cell = &buf[(x, 0)];
            if cell.symbol() == " " {
                continue;
            }
            let cursor = cell.modifier.contains(Modifier::REVERSED);
            match labels.last_mut() {
                Some((start, text, c)) if *start + text.len() as u16 == x && *c == cursor => {
                    text.push_str(cell.symbol())
                }
                _ => labels.push((x, cell.symbol().to_string(), cursor)),
            }
        }
        if labels.is_empty() {
            continue;
        }
        assert_eq!(
            buf[(width - 1, 0)].symbol(),
            " ",
            "{width}: touches the border"
        );
        let starts: Vec<u16> = labels.iter().filter(|l| !l.2).map(|l| l.0).collect();
        let gaps: Vec<u16> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        let Some(&step) = gaps.iter().min() else {
            continue;
        };
        let longest = labels.iter().map(|l| l.1.len() as u16).max().unwrap();
        assert!(step > longest, "{width}: labels {labels:?} run together");
        // Even: every gap one step, or a whole number of steps where the cursor's label
        // took the place of others.
        assert!(
            gaps.iter().all(|g| g % step == 0),
            "{width}: uneven labels {labels:?}"
        );
    }
}
