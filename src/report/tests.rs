use super::*;
use crate::example;
use crate::predict::ProblemOptions;

fn example_report(original: Option<Vec<u32>>) -> Report {
    let problem = Problem::new(&example::inputs(), &example::settings()).unwrap();
    report_of(&problem, original)
}

/// The report of the built-in example's curves and settings on `problem`.
fn report_of(problem: &Problem, original: Option<Vec<u32>>) -> Report {
    let inputs = example::inputs();
    let settings = example::settings();
    build(&ReportRequest {
        title: "EC-Earth3 SR".into(),
        source: "built-in example".into(),
        problem: Some(problem),
        inputs: &inputs,
        tts_w: settings.tts_w,
        top: settings.top,
        axes: (0, 1),
        fixed: None,
        original,
        campaign: None,
        years: 14_020.0,
        model: None,
    })
}

fn svg_count(html: &str) -> usize {
    html.matches("<svg ").count()
}

#[test]
fn a_prediction_report_has_settings_curves_matrix_and_top_n_but_no_campaign() {
    let r = example_report(None);
    let kinds: Vec<&str> = r
        .sections
        .iter()
        .map(|s| match s {
            Section::Recommendation(_) => "recommendation",
            Section::Settings(_) => "settings",
            Section::Curves(_) => "curves",
            Section::Matrix(_) => "matrix",
            Section::Front(_) => "front",
            Section::Model(_) => "model",
            Section::Prediction(_) => "prediction",
            Section::Campaign(_) => "campaign",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "recommendation",
            "settings",
            "curves",
            "matrix",
            "front",
            "model",
            "prediction"
        ]
    );
    let html = r.to_html();
    // Two curve figures, the matrix and the front.
    assert_eq!(svg_count(&html), 4);
    assert!(!html.contains("<script"));
    assert!(!html.contains("http://") || html.matches("http://").count() == svg_count(&html));
    assert!(!html.contains("https://"));
    assert!(html.contains("The predicted best configuration is IFS"));
}

#[test]
fn the_matrix_marks_every_proposal_of_a_two_component_prediction() {
    let r = example_report(None);
    let Some(Section::Matrix(m)) = r.sections.iter().find(|s| matches!(s, Section::Matrix(_)))
    else {
        panic!("no matrix");
    };
    let Some(Section::Prediction(PredictionSection { prediction: p, .. })) = r
        .sections
        .iter()
        .find(|s| matches!(s, Section::Prediction(_)))
    else {
        panic!("no prediction");
    };
    let predicted = m
        .marks
        .iter()
        .filter(|(_, _, mk)| matches!(mk.kind, MarkKind::Predicted(_)))
        .count();
    assert_eq!(predicted, p.top.len());
    for (row, col, mark) in &m.marks {
        assert_eq!(m.grid.row_nproc[*row], mark.nproc[0]);
        assert_eq!(m.grid.col_nproc[*col], mark.nproc[1]);
    }
    let (svg, _) = figures::matrix(m);
    for k in 1..=p.top.len() {
        assert!(svg.contains(&format!(">#{k}</text>")), "#{k} not drawn");
    }
}

#[test]
fn an_original_is_compared_in_the_papers_terms() {
    let r = example_report(Some(vec![384, 240]));
    let Some(Section::Recommendation(rec)) = r.sections.first() else {
        panic!("no recommendation first");
    };
    let o = rec.original.as_ref().expect("original figures");
    assert_eq!(o.config, "IFS 384 + NEMO 240");
    let html = r.to_html();
    assert!(
        html.contains("Against the original IFS 384 + NEMO 240"),
        "{html}"
    );
    assert!(html.contains("Over 14020 simulated years"));
}

#[test]
fn markdown_carries_the_same_figures_as_files() {
    let r = example_report(None);
    let (md, files) = r.to_markdown("rep");
    assert_eq!(files.len(), svg_count(&r.to_html()));
    for (name, svg) in &files {
        assert!(md.contains(&format!("]({name})")), "{name} not linked");
        assert!(svg.starts_with("<svg xmlns"));
    }
    assert!(md.contains("## Recommendation"));
    assert!(md.contains("| rank | IFS | NEMO |"));
}

#[test]
fn thinning_keeps_marked_rows_and_bounds_the_axis() {
    let all: Vec<usize> = (0..1000).collect();
    let (v, stride) = figures::thin_axis(&all, &[3, 999]);
    assert!(v.len() <= figures::MATRIX_MAX_AXIS + 2);
    assert!(v.contains(&3) && v.contains(&999));
    assert_eq!(stride, 13);
    let (v, stride) = figures::thin_axis(&all[..10], &[]);
    assert_eq!((v.len(), stride), (10, 1));
}

#[test]
fn curve_samples_interpolate_between_measured_ends() {
    let inputs = example::inputs();
    let c = CurveData::sample(&inputs[0], Method::Linear);
    let (x0, y0) = c.measured[0];
    let (x1, y1) = *c.measured.last().unwrap();
    assert_eq!(c.line.first(), Some(&(x0, y0)));
    assert_eq!(c.line.last().map(|p| p.0), Some(x1));
    assert!((c.line.last().unwrap().1 - y1).abs() < 1e-9);
    assert_eq!(c.line.len(), 201);
}

#[test]
fn a_calibrated_curve_is_drawn_dashed_with_its_legend_only_when_present() {
    let inputs = example::inputs();
    let mut c = CurveData::sample(&inputs[0], Method::Pchip);
    let plain = figures::curves(&c, 0, &[]);
    assert!(!plain.contains("stroke-dasharray=\"6 3\""));
    c.calibrated = Some((
        "calibrated model".into(),
        c.line.iter().map(|&(x, y)| (x, 0.9 * y)).collect(),
    ));
    let svg = figures::curves(&c, 0, &[]);
    // One dashed line per panel plus the legend swatch.
    assert_eq!(svg.matches("stroke-dasharray=\"6 3\"").count(), 3);
    assert!(svg.contains(">calibrated model</text>"));
}

#[test]
fn the_front_section_holds_the_winners_of_every_tts_w_and_marks_the_current_one() {
    let r = example_report(None);
    let Some(Section::Front(f)) = r.sections.iter().find(|s| matches!(s, Section::Front(_))) else {
        panic!("no front section");
    };
    // The winners tile [0, 1] in order, and the one at the report's TTS_w is the top-1.
    assert_eq!(f.winners.first().map(|w| w.tts_w_from), Some(0.0));
    assert_eq!(f.winners.last().map(|w| w.tts_w_to), Some(1.0));
    for pair in f.winners.windows(2) {
        assert_eq!(pair[0].tts_w_to, pair[1].tts_w_from);
    }
    let top1 = match r
        .sections
        .iter()
        .find(|s| matches!(s, Section::Prediction(_)))
    {
        Some(Section::Prediction(p)) => p.prediction.top[0].nproc.clone(),
        _ => panic!("no prediction"),
    };
    let current = f.current().expect("a winner at the report's TTS_w");
    assert_eq!(f.winners[current].config.nproc, top1);
    let html = r.to_html();
    assert!(html.contains("Speed and cost: the trade-off"));
    // One table row per winner, lettered from A.
    assert!(html.contains("<td>A</td>"));
}

/// With a machine billing whole nodes the front is computed on node-hours, and the figure and
/// the winners' table say so: the x axis is NHSY (each point at its bill, not its CHSY) and the
/// table gains an NHSY column.
#[test]
fn the_front_is_drawn_on_the_bill_it_was_computed_on() {
    use crate::machine::{CostKind, CostModel, Machine, Placement};
    let cost_model = CostModel {
        machine: Some(Machine {
            cores_per_node: 48,
            placement: Placement::Packed,
            extras_share_node: true,
            node_power_w: None,
        }),
        cost: CostKind::NodeHours,
        ..CostModel::default()
    };
    let problem = Problem::build(
        &example::inputs(),
        &example::settings(),
        ProblemOptions {
            model: None,
            cost_model: Some(&cost_model),
        },
    )
    .unwrap();
    let r = report_of(&problem, None);
    let Some(Section::Front(f)) = r.sections.iter().find(|s| matches!(s, Section::Front(_))) else {
        panic!("no front section");
    };
    assert_eq!(f.cost, "NHSY");
    // NHSY counts whole nodes' cores: never below CHSY, and the figure plots the bill.
    for c in &f.front {
        let billed = c.billing.as_ref().expect("a billed front").cost;
        assert_eq!(c.cost(), billed);
        assert!(billed >= c.chsy * (1.0 - 1e-12), "{billed} < {}", c.chsy);
    }
    let svg = figures::front(f);
    assert!(
        svg.contains("NHSY (node hours per simulated year)"),
        "{svg}"
    );
    assert!(!svg.contains("CHSY"), "{svg}");
    let html = r.to_html();
    assert!(html.contains("<th>NHSY</th>"), "no NHSY column");
    // The plain example keeps its CHSY axis.
    let plain = example_report(None);
    let Some(Section::Front(p)) = plain
        .sections
        .iter()
        .find(|s| matches!(s, Section::Front(_)))
    else {
        panic!("no front section");
    };
    assert_eq!(p.cost, "CHSY");
    assert!(figures::front(p).contains("CHSY (core hours per simulated year)"));
}

#[test]
fn the_footer_cites_the_paper_the_readme_and_the_guide_cite() {
    const CITATION: &str = "Palomas et al.";
    let html = example_report(None).to_html();
    let footer = html.split("<footer>").nth(1).expect("a footer");
    assert!(
        footer.contains(CITATION) && footer.contains("18, 3661"),
        "{footer}"
    );
    let readme = include_str!("../../README.md");
    let guide = include_str!("../../docs/src/introduction.md");
    for text in [readme, guide] {
        assert!(text.contains(CITATION) && text.contains("18, 3661, 2025"));
    }
}
