//! The fittingness matrix (paper Fig. 5): a 2-D slice of the configuration space, thinned to
//! a readable number of rows and columns.

use super::*;

/// Most rows or columns the matrix draws; larger axes show every k-th candidate (plus the
/// marked ones), which keeps the page small for fine candidate steps.
pub const MATRIX_MAX_AXIS: usize = 80;

/// Candidate indices to draw along an axis: every k-th of `indices` plus the `keep` ones.
pub fn thin_axis(indices: &[usize], keep: &[usize]) -> (Vec<usize>, usize) {
    let stride = indices.len().div_ceil(MATRIX_MAX_AXIS).max(1);
    let mut v: Vec<usize> = indices.iter().copied().step_by(stride).collect();
    v.extend(keep.iter().copied());
    v.sort_unstable();
    v.dedup();
    (v, stride)
}

/// The fittingness matrix: rows down, columns across, viridis by FN, grey where worse than
/// the base case, blank over the budget (rows and columns entirely over it are left out); the
/// marks drawn as outlines with their labels in a column beside the matrix. Returns the SVG and
/// the thinning stride (1 when every candidate is drawn).
pub fn matrix(m: &MatrixSection) -> (String, usize) {
    let g = &m.grid;
    let (nr, nc) = (g.row_nproc.len(), g.col_nproc.len());
    let feasible = |r: usize, c: usize| g.cell(r, c) != Cell::OverBudget;
    let live_rows: Vec<usize> = (0..nr)
        .filter(|&r| (0..nc).any(|c| feasible(r, c)))
        .collect();
    let live_cols: Vec<usize> = (0..nc)
        .filter(|&c| (0..nr).any(|r| feasible(r, c)))
        .collect();
    let (rows, rs) = thin_axis(&live_rows, &m.marks.iter().map(|x| x.0).collect::<Vec<_>>());
    let (cols, cs) = thin_axis(&live_cols, &m.marks.iter().map(|x| x.1).collect::<Vec<_>>());
    let cell = (520.0 / cols.len().max(rows.len()).max(1) as f64).clamp(4.0, 28.0);
    let (x0, y0) = (70.0, 20.0);
    let (pw, ph) = (cell * cols.len() as f64, cell * rows.len() as f64);
    let label_col = x0 + pw + 34.0;
    let bx = label_col + 90.0;
    let (w, h) = (bx + 110.0, y0 + ph.max(330.0) + 50.0);
    let mut svg = Svg::new(w, h);
    let levels = 64.0;
    svg.raw("<g shape-rendering=\"crispEdges\">\n");
    for (ri, &r) in rows.iter().enumerate() {
        // Runs of equal colour in a row become one rectangle: fewer shapes, same picture.
        let mut run: Option<(usize, String)> = None;
        let y = y0 + ri as f64 * cell;
        let flush = |svg: &mut Svg, start: usize, end: usize, fill: &str| {
            if !fill.is_empty() {
                let x = x0 + start as f64 * cell;
                svg.rect(
                    x,
                    y,
                    (end - start) as f64 * cell,
                    cell,
                    &format!(r#"fill="{fill}""#),
                );
            }
        };
        for (ci, &c) in cols.iter().enumerate() {
            let fill = match g.cell(r, c) {
                Cell::OverBudget => String::new(),
                Cell::WorseThanBase { .. } => "#bbb".to_string(),
                Cell::Scored { fittingness, .. } => {
                    viridis((fittingness * levels).round() / levels)
                }
            };
            match &run {
                Some((_, f)) if *f == fill => {}
                Some((start, f)) => {
                    flush(&mut svg, *start, ci, f);
                    run = Some((ci, fill));
                }
                None => run = Some((ci, fill)),
            }
        }
        if let Some((start, f)) = run {
            flush(&mut svg, start, cols.len(), &f);
        }
    }
    svg.raw("</g>\n");
    svg.rect(x0, y0, pw, ph, &format!(r#"fill="none" stroke="{INK}""#));
    // Axis labels: about 10 per axis.
    let every = |n: usize| n.div_ceil(10).max(1);
    for (ri, &r) in rows.iter().enumerate().step_by(every(rows.len())) {
        let y = y0 + (ri as f64 + 0.5) * cell + 3.5;
        svg.text(x0 - 4.0, y, Anchor::End, "", &g.row_nproc[r].to_string());
    }
    for (ci, &c) in cols.iter().enumerate().step_by(every(cols.len())) {
        let x = x0 + (ci as f64 + 0.5) * cell;
        svg.text(
            x,
            y0 + ph + 14.0,
            Anchor::Middle,
            "",
            &g.col_nproc[c].to_string(),
        );
    }
    svg.text(
        x0 + pw / 2.0,
        y0 + ph + 30.0,
        Anchor::Middle,
        "",
        &format!("{} PEs", m.col_name),
    );
    svg.vtext(
        x0 - 42.0,
        y0 + ph / 2.0,
        Anchor::Middle,
        "",
        &format!("{} PEs", m.row_name),
    );
    // Marks: outlines on the cells, labels (merged per cell) in a column with leader lines.
    let mut at: BTreeMap<(usize, usize), Vec<&Mark>> = BTreeMap::new();
    for (r, c, mark) in &m.marks {
        if let (Some(ri), Some(ci)) = (
            rows.iter().position(|x| x == r),
            cols.iter().position(|x| x == c),
        ) {
            at.entry((ri, ci)).or_default().push(mark);
        }
    }
    let wants: Vec<f64> = at
        .keys()
        .map(|(ri, _)| y0 + (*ri as f64 + 0.5) * cell)
        .collect();
    let placed = spread(&wants, &vec![13.0; wants.len()], y0, y0 + ph.max(330.0));
    for (((ri, ci), marks), &ly) in at.iter().zip(&placed) {
        let (x, y) = (x0 + *ci as f64 * cell, y0 + *ri as f64 * cell);
        let dash = if marks.iter().all(|m| m.kind == MarkKind::Original) {
            r#" stroke-dasharray="3 2""#
        } else {
            ""
        };
        svg.rect(
            x,
            y,
            cell,
            cell,
            &format!(r#"fill="none" stroke="white" stroke-width="3"{dash}"#),
        );
        svg.rect(
            x,
            y,
            cell,
            cell,
            &format!(r#"fill="none" stroke="{INK}" stroke-width="1.5"{dash}"#),
        );
        let label = marks
            .iter()
            .map(|m| m.label())
            .collect::<Vec<_>>()
            .join(" ");
        svg.line(
            x + cell,
            y + cell / 2.0,
            label_col - 3.0,
            ly,
            r##"stroke="#555" stroke-width="0.8""##,
        );
        svg.text(
            label_col,
            ly + 3.5,
            Anchor::Start,
            r#"font-size="10" font-weight="bold""#,
            &label,
        );
    }
    // Colour bar.
    let (by, bh) = (y0, 240.0);
    for i in 0..32 {
        let t = 1.0 - f64::from(i) / 32.0;
        svg.rect(
            bx,
            by + f64::from(i) * bh / 32.0,
            14.0,
            bh / 32.0 + 0.5,
            &format!(r#"fill="{}""#, viridis(t)),
        );
    }
    svg.rect(bx, by, 14.0, bh, &format!(r#"fill="none" stroke="{INK}""#));
    svg.text(bx + 18.0, by + 8.0, Anchor::Start, "", "FN 1");
    svg.text(bx + 18.0, by + bh, Anchor::Start, "", "0");
    svg.rect(bx, by + bh + 10.0, 14.0, 10.0, r##"fill="#bbb""##);
    svg.text(bx + 18.0, by + bh + 19.0, Anchor::Start, "", "worse than");
    svg.text(bx + 18.0, by + bh + 31.0, Anchor::Start, "", "base case");
    svg.rect(
        bx,
        by + bh + 40.0,
        14.0,
        10.0,
        &format!(r#"fill="white" stroke="{INK}""#),
    );
    svg.text(bx + 18.0, by + bh + 49.0, Anchor::Start, "", "over budget");
    let stride = rs.max(cs);
    (
        svg.finish(&format!(
            "Fittingness of {} x {} configurations at TTS_w {:.2}",
            m.row_name, m.col_name, m.tts_w
        )),
        stride,
    )
}
