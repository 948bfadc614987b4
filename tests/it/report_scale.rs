//! A large campaign's report stays small and quick: 5 components, 200 runs, under 2 MB and
//! written in under a second (the whole path: prediction, report model, HTML, atomic write).

use crate::common;

use std::time::Instant;

use autolb::report::source;

#[test]
fn a_five_component_two_hundred_run_report_is_under_2_mb_and_a_second() {
    let (inputs, settings, status) = common::synthetic_campaign(5, 10, 10, 2);
    assert_eq!(common::status_runs(&status), 200);
    assert!(status.counts.failed > 0, "the fixture has failed runs");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("big.html");
    let start = Instant::now();
    let r = common::synthetic_report(&inputs, &settings, &status);
    source::write_html(&r, &out).unwrap();
    let took = start.elapsed();
    let size = std::fs::metadata(&out).unwrap().len();
    eprintln!("5 components, 200 runs: {size} bytes in {took:?}");
    assert!(size < 2 * 1024 * 1024, "{size} bytes");
    assert!(took.as_secs_f64() < 1.0, "took {took:?}");
    let html = std::fs::read_to_string(&out).unwrap();
    // Five curve figures, the matrix, the speed/cost front and the campaign.
    assert_eq!(html.matches("<svg ").count(), 8);
    assert!(
        html.contains("FAILED"),
        "a test whose runs all failed is shown as failed"
    );
    assert!(html.contains(">failed</text>"));
    assert!(html.contains("The other components are fixed at C2"));
}

#[test]
fn a_running_campaigns_report_is_provisional_and_shows_tests_not_yet_measured() {
    let (inputs, settings, mut status) = common::synthetic_campaign(3, 3, 4, 2);
    status.state = autolb::campaign::Phase::Running;
    status.done = false;
    for t in &mut status.iterations.last_mut().unwrap().tests {
        for r in &mut t.runs {
            r.state = autolb::campaign::RunState::Pending;
            (r.sypd, r.chsy, r.coupling_cost) = (None, None, None);
        }
        (t.donor, t.recipient, t.next_step) = (None, None, None);
    }
    status.recompute();
    assert_eq!(status.counts.pending, 8);
    let r = common::synthetic_report(&inputs, &settings, &status);
    let html = r.to_html();
    assert!(html.contains("The best configuration measured so far is C"));
    assert!(html.contains("<td>pending</td>"));
    // A dashed placeholder per pending test in each of the four panels.
    let placeholder = r##"fill="none" stroke="#666" stroke-dasharray="2 2""##;
    assert_eq!(html.matches(placeholder).count(), 4 * 4);
    assert!(html.contains(">…</text>"));
}
