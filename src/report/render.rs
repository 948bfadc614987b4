//! Sections to blocks, and blocks to one self-contained HTML page or to Markdown with the
//! figures as SVG files beside it.
//!
//! The HTML page has no script and fetches nothing: inline SVG, system fonts, inline CSS with a
//! print style. It opens offline, prints, and attaches to an email as one file.

use std::fmt::Write;

use super::figures;
use super::svg::escape;
use super::{
    Block, CurvesSection, FrontSection, MatrixSection, ModelSection, PredictionSection, Report,
    Section, Settings,
};
use crate::campaign::{Status, TestState};
use crate::model::ModelKind;

impl Report {
    /// The report as neutral blocks, in order.
    pub fn blocks(&self) -> Vec<Block> {
        let mut out = Vec::new();
        for section in &self.sections {
            match section {
                Section::Recommendation(r) => {
                    out.push(Block::Heading("Recommendation".into()));
                    let mut lines = vec![r.headline()];
                    lines.extend(r.over_years());
                    if r.original.is_none() {
                        lines.push(match r.basis {
                            super::Basis::Measured => "The campaign has no measured original configuration to compare with; give it one with an [original] table in the campaign file.".into(),
                            super::Basis::Predicted => "No original configuration was given; add an [original] table to the campaign file to compare with it.".into(),
                        });
                    }
                    // A prediction beside the measured answer says it is one, by which
                    // model, and how it compares.
                    lines.extend(r.predicted.iter().map(|p| {
                        let mut c = p.clone();
                        if let Some(f) = c.get_mut(..1) {
                            f.make_ascii_uppercase();
                        }
                        format!("{c}.")
                    }));
                    // A curve file edited after the campaign changed nothing: say so where
                    // the answer is read.
                    lines.extend(self.campaign_curve_notes().map(|n| format!("Note: {n}.")));
                    out.push(Block::Callout(lines));
                }
                Section::Settings(s) => settings_blocks(s, &mut out),
                Section::Curves(c) => curves_blocks(c, &mut out),
                Section::Matrix(m) => matrix_blocks(m, &mut out),
                Section::Front(f) => front_blocks(f, &mut out),
                Section::Model(m) => model_blocks(m, &mut out),
                Section::Prediction(p) => prediction_blocks(p, &mut out),
                Section::Campaign(s) => campaign_blocks(s, &mut out),
            }
        }
        out
    }

    /// The campaign's notes on curve files that disagree with its state.
    fn campaign_curve_notes(&self) -> impl Iterator<Item = &String> {
        self.sections
            .iter()
            .filter_map(|s| match s {
                Section::Campaign(status) => Some(&status.curve_notes),
                _ => None,
            })
            .flatten()
    }

    /// One self-contained HTML page.
    pub fn to_html(&self) -> String {
        let mut body = String::new();
        for block in self.blocks() {
            match block {
                Block::Heading(h) => {
                    let _ = writeln!(body, "<h2>{}</h2>", escape(&h));
                }
                Block::Paragraph(p) => {
                    let _ = writeln!(body, "<p>{}</p>", escape(&p));
                }
                Block::Callout(lines) => {
                    body.push_str("<div class=\"callout\" id=\"recommendation\">\n");
                    for l in lines {
                        let _ = writeln!(body, "<p>{}</p>", escape(&l));
                    }
                    body.push_str("</div>\n");
                }
                Block::Table { header, rows } => {
                    body.push_str("<table>\n<thead><tr>");
                    for h in header {
                        let _ = write!(body, "<th>{}</th>", escape(&h));
                    }
                    body.push_str("</tr></thead>\n<tbody>\n");
                    for row in rows {
                        body.push_str("<tr>");
                        for c in row {
                            let _ = write!(body, "<td>{}</td>", escape(&c));
                        }
                        body.push_str("</tr>\n");
                    }
                    body.push_str("</tbody></table>\n");
                }
                Block::Pairs(pairs) => {
                    body.push_str("<table class=\"kv\">\n<tbody>\n");
                    for (k, v) in pairs {
                        let _ = writeln!(
                            body,
                            "<tr><th scope=\"row\">{}</th><td>{}</td></tr>",
                            escape(&k),
                            escape(&v)
                        );
                    }
                    body.push_str("</tbody></table>\n");
                }
                Block::Code(text) => {
                    let _ = writeln!(body, "<pre><code>{}</code></pre>", escape(&text));
                }
                Block::Figure { id, svg, caption } => {
                    let _ = writeln!(
                        body,
                        "<figure id=\"{}\">\n{svg}\n<figcaption>{}</figcaption>\n</figure>",
                        escape(&id),
                        escape(&caption)
                    );
                }
            }
        }
        format!(
            concat!(
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
                "<meta name=\"generator\" content=\"autolb {version}\">\n",
                "<title>{title}</title>\n<style>\n{css}</style>\n</head>\n<body>\n",
                "<h1>{title}</h1>\n<p class=\"source\">{source}</p>\n{body}",
                "<footer>Written by autolb {version}. Figures after Palomas et al., Geosci. Model Dev. 18, 3661 (2025): ",
                "curves as Figs. 7, 9, 12; matrix as Fig. 5; campaign as Figs. 8, 10, 11.</footer>\n",
                "</body>\n</html>\n"
            ),
            version = env!("CARGO_PKG_VERSION"),
            title = escape(&self.title),
            source = escape(&self.source),
            css = CSS,
            body = body
        )
    }

    /// Markdown, with each figure as `{stem}-{id}.svg` beside it: returns the text and the
    /// (file name, SVG) pairs to write.
    pub fn to_markdown(&self, stem: &str) -> (String, Vec<(String, String)>) {
        let mut md = format!(
            "# {}\n\n{}\n\n",
            md_text(&self.title),
            md_text(&self.source)
        );
        let mut files = Vec::new();
        for block in self.blocks() {
            match block {
                Block::Heading(h) => {
                    let _ = writeln!(md, "## {}\n", md_text(&h));
                }
                Block::Paragraph(p) => {
                    let _ = writeln!(md, "{}\n", md_text(&p));
                }
                Block::Callout(lines) => {
                    for l in lines {
                        let _ = writeln!(md, "> {}\n>", md_text(&l));
                    }
                    md.push('\n');
                }
                Block::Table { header, rows } => {
                    let cell = |c: &String| md_text(c).replace('|', "\\|");
                    let _ = writeln!(
                        md,
                        "| {} |",
                        header.iter().map(cell).collect::<Vec<_>>().join(" | ")
                    );
                    let _ = writeln!(md, "|{}", "---|".repeat(header.len()));
                    for row in rows {
                        let _ = writeln!(
                            md,
                            "| {} |",
                            row.iter().map(cell).collect::<Vec<_>>().join(" | ")
                        );
                    }
                    md.push('\n');
                }
                Block::Pairs(pairs) => {
                    md.push_str("| setting | value |\n|---|---|\n");
                    for (k, v) in pairs {
                        let cell = |c: &str| md_text(c).replace('|', "\\|");
                        let _ = writeln!(md, "| {} | {} |", cell(&k), cell(&v));
                    }
                    md.push('\n');
                }
                Block::Code(text) => {
                    // A fence longer than any run of backticks in the text.
                    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                    let fence = "`".repeat(longest.max(2) + 1);
                    let _ = writeln!(md, "{fence}yaml\n{}\n{fence}\n", text.trim_end());
                }
                Block::Figure { id, svg, caption } => {
                    let name = format!("{stem}-{id}.svg");
                    let _ = writeln!(
                        md,
                        "![{}]({name})\n\n*{}*\n",
                        md_text(&caption),
                        md_text(&caption)
                    );
                    files.push((name, svg));
                }
            }
        }
        (md, files)
    }
}

/// Markdown text with the characters that would start markup escaped.
fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '_' | '[' | ']' | '<' | '>' | '`' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

const CSS: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;max-width:980px;margin:1.5em auto;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em;margin-bottom:0.2em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:1.6em}
.source{color:#555;margin-top:0}
.callout{border-left:5px solid #31688e;background:#f2f6f8;padding:0.4em 1em;font-size:1.05em}
table{border-collapse:collapse;font-size:0.85em;margin:0.6em 0}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f0f0f0}
td:first-child,th:first-child{text-align:left}
table.kv th{background:none;font-weight:normal;color:#444}table.kv td{text-align:left}
figure{margin:1em 0;page-break-inside:avoid;break-inside:avoid}figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:0.85em;color:#444;margin-top:0.3em}
footer{margin-top:2em;font-size:0.8em;color:#666}
@media print{body{max-width:none;margin:0}.callout{background:none}h2{page-break-after:avoid}tr{page-break-inside:avoid}}
";

fn settings_blocks(s: &Settings, out: &mut Vec<Block>) {
    out.push(Block::Heading("Settings".into()));
    out.push(Block::Pairs(s.0.clone()));
}

fn curves_blocks(c: &CurvesSection, out: &mut Vec<Block>) {
    out.push(Block::Heading("Scalability curves".into()));
    out.push(Block::Paragraph(
        "Each component's speed (SYPD) and cost (CHSY, counting only its own PEs) against its PEs, as in the paper's Figs. 7, 9 and 12. Circles are measured; the line is the interpolation the prediction uses; vertical lines mark the proposed (#k), original and best configurations.".into(),
    ));
    for (i, curve) in c.curves.iter().enumerate() {
        out.push(Block::Figure {
            id: format!("curves-{}", slug(&curve.name)),
            svg: figures::curves(curve, i, &c.marks),
            caption: format!(
                "{}: SYPD and CHSY against PEs ({} measured points, {} interpolation).",
                curve.name,
                curve.measured.len(),
                curve.method.name()
            ),
        });
    }
}

fn matrix_blocks(m: &MatrixSection, out: &mut Vec<Block>) {
    out.push(Block::Heading("Fittingness matrix".into()));
    let (svg, stride) = figures::matrix(m);
    let mut caption = format!(
        "Fittingness (FN) of every {} x {} configuration at TTS_w {:.2}, as the paper's Fig. 5: {} PEs down, {} PEs across; viridis from worst (dark) to best (yellow), grey where worse than the base case ({}), blank over the budget. Outlined: the proposals #k (and the original, dashed, when it is a candidate).",
        m.row_name, m.col_name, m.tts_w, m.row_name, m.col_name, m.base_case
    );
    if !m.fixed.is_empty() {
        caption.push_str(&format!(" The other components are fixed at {}.", m.fixed));
    }
    if stride > 1 {
        caption.push_str(&format!(
            " Every {stride}th candidate is drawn (plus the marked ones) to keep the page small."
        ));
    }
    out.push(Block::Figure {
        id: "matrix".into(),
        svg,
        caption,
    });
}

fn front_blocks(f: &FrontSection, out: &mut Vec<Block>) {
    out.push(Block::Heading("Speed and cost: the trade-off".into()));
    out.push(Block::Paragraph(format!(
        "The {} configurations that no other kept configuration beats in both speed and cost (the Pareto front), and the range of TTS_w in which each winner is the top-1, as the paper's Table 1 and Fig. 3 show it: moving TTS_w towards 1 buys speed with core hours.",
        f.front.len()
    )));
    out.push(Block::Figure {
        id: "front".into(),
        svg: figures::front(f),
        caption: format!(
            "SYPD against {} of the front (circles, cheapest left); lettered points win for some TTS_w (A from TTS_w 0), the filled one at TTS_w {:.2}.",
            f.cost, f.tts_w
        ),
    });
    let mut header = vec!["".to_string(), "TTS_w".to_string()];
    header.extend(f.components.iter().cloned());
    header.extend(["total PEs", "SYPD", "CHSY"].map(String::from));
    // With a machine the front was computed on its bill: show that cost too.
    let billed = f.cost != "CHSY";
    if billed {
        header.push(f.cost.clone());
    }
    let rows = f
        .winners
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let open = if i == 0 { '[' } else { '(' };
            let mut r = vec![
                figures::winner_letter(i),
                format!("{open}{:.3}, {:.3}]", w.tts_w_from, w.tts_w_to),
            ];
            r.extend(w.config.nproc.iter().map(|n| n.to_string()));
            r.extend([
                w.config.total_nproc.to_string(),
                format!("{:.2}", w.config.sypd),
                format!("{:.0}", w.config.chsy),
            ]);
            if billed {
                r.push(format!("{:.0}", w.config.cost()));
            }
            r
        })
        .collect();
    out.push(Block::Table { header, rows });
}

fn prediction_blocks(section: &PredictionSection, out: &mut Vec<Block>) {
    let p = &section.prediction;
    out.push(Block::Heading(format!(
        "Prediction: the top {}",
        p.top.len()
    )));
    let mut header = vec!["rank".to_string()];
    header.extend(p.components.iter().cloned());
    header.extend(["total PEs", "SYPD", "CHSY", "coupling cost", "FN"].map(String::from));
    let against = section
        .against
        .as_ref()
        .filter(|a| a.configs.iter().any(|c| c.against.is_some()));
    if against.is_some() {
        // Beside a campaign's FN, this one says its scale.
        if let Some(fn_header) = header.last_mut() {
            *fn_header = "FN (prediction's scale)".into();
        }
        header.push("against the best measured".into());
    }
    // With a hybrid component each cell is `ranks x threads = cores`; totals count cores.
    let threaded = p
        .top
        .iter()
        .chain(std::iter::once(&p.baseline))
        .any(crate::predict::Scored::is_threaded);
    let row = |label: String, c: &crate::predict::Scored| {
        let mut r = vec![label];
        r.extend(c.nproc.iter().enumerate().map(|(k, n)| {
            match c.threads.get(k).copied().filter(|_| threaded) {
                Some(t) => format!("{}x{t}={n}", n / t.max(1)),
                None => n.to_string(),
            }
        }));
        r.extend([
            c.total_nproc.to_string(),
            format!("{:.2}", c.sypd),
            format!("{:.0}", c.chsy),
            format!("{:.1} %", 100.0 * c.coupling_cost),
            format!("{:.3}", c.fittingness),
        ]);
        r
    };
    let mut rows: Vec<Vec<String>> = p
        .top
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut r = row(format!("#{}", i + 1), c);
            if let Some(a) = against {
                r.push(
                    a.configs
                        .get(i)
                        .and_then(|c| c.against.as_ref())
                        .map(|x| x.text())
                        .unwrap_or_default(),
                );
            }
            r
        })
        .collect();
    let mut base = row("base case".into(), &p.baseline);
    if against.is_some() {
        base.push(String::new());
    }
    rows.push(base);
    out.push(Block::Table { header, rows });
    out.push(Block::Paragraph(format!(
        "{} feasible configurations within the budget, {} at least as good as the base case; TTS_w {:.2}. The model that predicted them is named under \"The model\".",
        p.configurations, p.considered, p.tts_w
    )));
    if let Some(a) = &section.against {
        out.push(Block::Paragraph(format!(
            "Every row is predicted by {}, not measured unless its last column says so; its FN is {}, so it is not comparable with the campaign's FN.",
            a.model, a.fn_scale
        )));
    }
    if threaded {
        out.push(Block::Paragraph(
            "Each component's cell is its MPI ranks x OpenMP threads per rank = cores; total PEs, CHSY and every cost count cores.".into(),
        ));
    }
}

fn model_blocks(m: &ModelSection, out: &mut Vec<Block>) {
    out.push(Block::Heading("The model".into()));
    out.push(Block::Paragraph(m.ranked_by.clone()));
    if !m.bands.is_empty() {
        out.push(Block::Table {
            header: ["rank", "configuration", "SYPD", "band (90 %)"]
                .map(String::from)
                .into(),
            rows: m
                .bands
                .iter()
                .map(|b| {
                    vec![
                        format!("#{}", b.rank),
                        b.nproc
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(" + "),
                        format!("{:.2}", b.sypd),
                        format!("{:.2} .. {:.2}", b.low, b.high),
                    ]
                })
                .collect(),
        });
    }
    if m.checks.is_empty() {
        return;
    }
    let own = if m.kind == ModelKind::Calibrated {
        "calibrated"
    } else {
        "this model"
    };
    out.push(Block::Table {
        header: vec![
            "run".into(),
            "configuration".into(),
            "measured SYPD".into(),
            own.to_string(),
            format!("{own} error"),
            "band".into(),
            "standalone".into(),
            "standalone error".into(),
        ],
        rows: m
            .checks
            .iter()
            .map(|c| {
                vec![
                    c.run.clone(),
                    c.nproc
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(" + "),
                    format!("{:.2}", c.measured_sypd),
                    format!("{:.2}", c.predicted_sypd),
                    format!("{:+.1} %", c.error_pct(c.predicted_sypd)),
                    format!(
                        "{:.2} .. {:.2}{}",
                        c.low,
                        c.high,
                        if c.inside() { "" } else { " (outside)" }
                    ),
                    format!("{:.2}", c.standalone_sypd),
                    format!("{:+.1} %", c.error_pct(c.standalone_sypd)),
                ]
            })
            .collect(),
    });
    if let Some((own_median, alone_median)) = m.median_errors() {
        out.push(Block::Paragraph(format!(
            "Predicted against measured on {} runs: median absolute error {:.1} % for the {} model, {:.1} % for the standalone model (a calibrated model is checked here on the runs it was fitted on; autolb model check gives its leave-one-out errors).",
            m.checks.len(),
            own_median,
            m.kind,
            alone_median
        )));
    }
}

/// A scaling campaign's curves, where they came from: each component measured alone, its PE
/// counts with the runs kept and their spread, and the runs left out as outliers.
fn curve_origin_blocks(s: &Status, out: &mut Vec<Block>) {
    let (Some(curves), Some(counts)) = (&s.curves, &s.scaling) else {
        return;
    };
    out.push(Block::Heading("Where the curves came from".into()));
    let how = match s.design {
        Some(crate::config::ScalingDesign::Coupled) => "Measured by this scaling campaign in coupled mode: each run is a coupled configuration holding every component, chosen near balance, and a component's SYPD at its PE count comes from its computing time in the run (waiting for the others left out), so these curves include the slowdown a component shows when coupled.",
        _ => "Measured by this scaling campaign in standalone mode: each run is one component alone at one PE count, so these curves do not include the slowdown a component shows when coupled.",
    };
    out.push(Block::Paragraph(format!(
        "{how} SYPD is the mean of the runs kept at a count; sd is their standard deviation; an outlier (a slow run: slower than its count's fastest runs by more than the noise over every count) is left out and made up for; a count far below the curve through its neighbours is run again, and kept as a real dip when every run agrees. The curve files are DIR/curves/NAME.csv."
    )));
    for (name, points) in &curves.0 {
        let queued = counts.get(name).map_or(0, |c| c.queued.len());
        let outliers = counts.get(name).map_or(0, |c| c.outliers.len());
        let runs: u32 = points.iter().map(|p| p.runs).sum();
        let dips: Vec<String> = points
            .iter()
            .filter(|p| p.feature)
            .map(|p| p.nproc.to_string())
            .collect();
        let dips = if dips.is_empty() {
            String::new()
        } else {
            format!(
                " Real dips kept (far below their neighbours, every run agreeing): {}.",
                dips.join(", ")
            )
        };
        out.push(Block::Paragraph(format!(
            "{name}: {} PE counts measured with {runs} runs kept, {outliers} outlier run(s) left out, {queued} count(s) still queued.{dips}",
            points.len()
        )));
        out.push(Block::Table {
            header: ["PEs", "SYPD", "sd", "sd %", "runs"]
                .map(String::from)
                .to_vec(),
            rows: points
                .iter()
                .map(|p| {
                    vec![
                        p.nproc.to_string(),
                        format!("{:.3}", p.sypd),
                        format!("{:.3}", p.sd),
                        format!("{:.1}", 100.0 * p.sd / p.sypd),
                        p.runs.to_string(),
                    ]
                })
                .collect(),
        });
    }
}

fn campaign_blocks(s: &Status, out: &mut Vec<Block>) {
    curve_origin_blocks(s, out);
    for note in &s.curve_notes {
        out.push(Block::Paragraph(format!("Note: {note}.")));
    }
    out.push(Block::Heading("The campaign".into()));
    if s.iterations.is_empty() {
        out.push(Block::Paragraph("No lb-iteration yet.".into()));
        return;
    }
    out.push(Block::Figure {
        id: "campaign".into(),
        svg: figures::campaign(s),
        caption: if s.scaling.is_some() {
            "Every test of the scaling campaign, in the order it ran (a test is one PE count of a component, or one coupled configuration): bars are the means over the runs, dots the single runs; hatched bars are tests whose runs all failed, × a failed run, dashed outlines tests not yet measured."
        } else {
            "Every test in every lb-iteration, as the paper's Figs. 8, 10 and 11: bars are the means over the runs, dots the single runs; ★ and the bold outline mark the best (highest FN over the whole campaign); hatched bars are tests whose runs all failed, × a failed run, dashed outlines tests not yet measured. Under the bars: the test and its move, donor→recipient and the PEs moved next."
        }
        .into(),
    });
    let mut header = vec!["lb-iter".to_string(), "test".into()];
    header.push(format!("PEs {}", s.components.join("/")));
    header.extend(["SYPD", "CHSY", "coupling cost", "FN", "move", "state"].map(String::from));
    let mut rows = Vec::new();
    let best = s.best.as_ref().map(|b| (b.iteration, b.test));
    for it in &s.iterations {
        for t in &it.tests {
            let nproc = s.pes_texts(t.nproc.values());
            let f = |v: Option<f64>, d: usize| v.map_or("-".into(), |v| format!("{v:.d$}"));
            let mv = match (&t.donor, &t.recipient) {
                (Some(d), Some(r)) => match t.next_step {
                    Some(step) => format!("{d} → {r} ({step} PEs)"),
                    None => format!("{d} → {r}"),
                },
                _ => String::new(),
            };
            let failed = t.runs_failed();
            // Upper case stands out in the table, in print too.
            let mut state = match t.state {
                TestState::Failed => "FAILED".to_string(),
                other => other.as_str().to_string(),
            };
            if failed > 0 && t.state != TestState::Failed {
                state.push_str(&format!(", {failed} run(s) failed"));
            }
            if best == Some((it.iteration, t.test)) {
                state.push_str(", ★ best");
            }
            rows.push(vec![
                it.iteration.to_string(),
                format!("{} ({})", t.test, t.origin),
                nproc.join("/"),
                f(t.sypd, 2),
                f(t.chsy, 0),
                f(t.coupling_cost.map(|c| 100.0 * c), 1),
                f(t.fittingness, 3),
                mv,
                state,
            ]);
        }
    }
    out.push(Block::Table { header, rows });
    if let Some(a) = crate::campaign::Answer::of(s) {
        out.push(Block::Paragraph(format!(
            "Best: {} ({} PEs with the extras), {:.2} SYPD, {:.0} CHSY, coupling cost {:.1} %, FN {:.3}, {}.",
            a.config,
            a.total_nproc,
            a.sypd,
            a.chsy,
            100.0 * a.coupling_cost,
            a.fittingness,
            if a.measured_in.len() > 1 {
                format!("the {}", super::answer_source(&a))
            } else {
                format!("measured in {}", super::answer_source(&a))
            }
        )));
        if s.threads.is_some() {
            ecearth4_blocks(s, &a, out);
        }
    }
}

/// A campaign with a hybrid component (EC-Earth4's OpenIFS): its answer as the
/// experiment-config fragment `campaign best --emit ecearth4` writes.
fn ecearth4_blocks(s: &Status, a: &crate::campaign::Answer, out: &mut Vec<Block>) {
    out.push(Block::Heading("EC-Earth4".into()));
    match a.ecearth4(s) {
        Ok(text) => {
            out.push(Block::Paragraph(
                "The best configuration as resources for EC-Earth4's experiment configuration, as autolb campaign best --emit ecearth4 writes them: paste it into the experiment's YAML.".into(),
            ));
            out.push(Block::Code(text));
        }
        Err(why) => out.push(Block::Paragraph(format!(
            "The best configuration cannot be written as EC-Earth4 resources: {why}"
        ))),
    }
}

/// A file-name-safe form of a component name.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
