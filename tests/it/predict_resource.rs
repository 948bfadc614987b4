//! Components on different hardware (`[[resource]]` tables): the fast search with per-resource
//! budgets and equivalent-unit cost against the naive enumeration, on two resources.

use crate::common;
use crate::common::autolb;

use crate::common::predict::{problem_strategy, resource_model_strategy, Speeds};
use autolb::predict::{naive, PredictError, Problem, ProblemOptions};
use proptest::prelude::*;

fn check(
    inputs: &[autolb::predict::ComponentInput],
    settings: &autolb::predict::Settings,
    model: &autolb::machine::CostModel,
) -> Result<(), TestCaseError> {
    let problem = match Problem::build(
        inputs,
        settings,
        ProblemOptions {
            model: None,
            cost_model: Some(model),
        },
    ) {
        Ok(p) => p,
        // A base case over some resource's budget, or an allowed list with nothing in range:
        // refused up front, as the input is unusable.
        Err(
            PredictError::ResourceBelowBase { .. }
            | PredictError::BudgetBelowBase { .. }
            | PredictError::NoCandidates { .. },
        ) => return Ok(()),
        Err(e) => return Err(TestCaseError::fail(format!("unexpected error: {e}"))),
    };
    let top = common::predict::same_as_naive(&problem, settings)?;
    // Every proposal fits every budget, and the bill adds up per resource.
    for c in &top {
        prop_assert!(problem.fits(&c.nproc));
        let bill = c.billing.as_ref().expect("resources are billed");
        prop_assert_eq!(bill.resources.len(), 2);
        let share: f64 = bill.resources.iter().map(|r| r.cost_share).sum();
        prop_assert!((share - 1.0).abs() < 1e-9, "shares add up to {}", share);
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(1000))]

    /// Two components (the CPU atmosphere with a GPU ocean, or both on one resource): the
    /// decoupled pair sweep is exact.
    #[test]
    fn two_components_on_two_resources_equal_naive_enumeration(
        (inputs, settings) in problem_strategy(2..=2, Speeds::Coarse),
        model in resource_model_strategy(2),
    ) {
        check(&inputs, &settings, &model)?;
    }

    /// The same with continuous speeds (few ties, the general case).
    #[test]
    fn two_components_continuous_speeds(
        (inputs, settings) in problem_strategy(2..=2, Speeds::Continuous),
        model in resource_model_strategy(2),
    ) {
        check(&inputs, &settings, &model)?;
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(300))]

    /// One and three components on two resources: the walk with per-resource cuts is exact.
    #[test]
    fn one_and_three_components_equal_naive_enumeration(
        (inputs, settings, model) in (1usize..=3).prop_filter("not the pair", |&k| k != 2)
            .prop_flat_map(|k| (
                problem_strategy(k..=k, Speeds::Coarse),
                resource_model_strategy(k),
            ))
            .prop_map(|((inputs, settings), model)| (inputs, settings, model)),
    ) {
        check(&inputs, &settings, &model)?;
    }
}

/// Without `[[resource]]` tables nothing changes; one `cpu` resource at unit cost 1 and no
/// budget of its own ranks exactly as the plain model (the same configurations, CHSY and FN).
#[test]
fn one_cpu_resource_at_unit_cost_one_is_the_plain_model() {
    use autolb::machine::{CostModel, Resource};
    use common::predict::bundled;
    let inputs = [
        bundled("IFS", "mn4_sr_cmip6_ifs.csv"),
        bundled("NEMO", "mn4_sr_cmip6_nemo.csv"),
    ];
    let settings = autolb::predict::Settings {
        max_nproc: 672,
        step: 24,
        extra_pes: 96,
        top: 10,
        ..Default::default()
    };
    let plain = Problem::new(&inputs, &settings).unwrap().rank(0.5, 10);
    let model = CostModel {
        resources: vec![Resource {
            name: "cpu".into(),
            units_per_node: 48,
            unit_cost: 1.0,
            max_units: None,
        }],
        component_resource: vec![0, 0],
        ..CostModel::default()
    };
    let one = Problem::build(
        &inputs,
        &settings,
        ProblemOptions {
            model: None,
            cost_model: Some(&model),
        },
    )
    .unwrap()
    .rank(0.5, 10);
    assert_eq!(one.configurations, plain.configurations);
    assert_eq!(one.considered, plain.considered);
    let strip = |p: &autolb::predict::Prediction| -> Vec<(Vec<u32>, f64, f64)> {
        p.top
            .iter()
            .map(|c| (c.nproc.clone(), c.chsy, c.fittingness))
            .collect()
    };
    assert_eq!(strip(&one), strip(&plain));
}

/// The worked example predicts: both resources within their budgets, the ocean's GPUs matched
/// to the atmosphere's speed, and the bill per resource adding up.
#[test]
fn the_cpu_gpu_example_predicts_within_both_budgets() {
    let out = autolb()
        .args(["predict", "--config"])
        .arg(common::resources::cpu_gpu_file())
        .arg("--json")
        .stdout_ok();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let top = v["top"].as_array().unwrap();
    assert_eq!(top.len(), 3);
    for c in top {
        let (atm, oce) = (
            c["nproc"]["ATM"].as_u64().unwrap(),
            c["nproc"]["OCE"].as_u64().unwrap(),
        );
        assert!(atm <= 768 && oce <= 16, "{c}");
        let cpu = &c["resources"]["cpu"];
        let gpu = &c["resources"]["gpu"];
        // The extras (32 XIOS cores) run on the first resource.
        assert_eq!(cpu["units"].as_u64(), Some(atm + 32));
        assert_eq!(gpu["units"].as_u64(), Some(oce));
        assert_eq!(gpu["nodes"].as_u64(), Some(oce.div_ceil(4)));
        assert_eq!(gpu["idle_units"].as_u64(), Some(oce.div_ceil(4) * 4 - oce));
        let share = cpu["cost_share"].as_f64().unwrap() + gpu["cost_share"].as_f64().unwrap();
        assert!((share - 1.0).abs() < 1e-9);
        // CHSY in CPU core-hour equivalents: a GPU-hour costs 32 core-hours.
        let sypd = c["sypd"].as_f64().unwrap();
        let chsy = 24.0 * ((atm + 32) as f64 + 32.0 * oce as f64) / sypd;
        assert!((c["chsy"].as_f64().unwrap() - chsy).abs() < 1e-9 * chsy);
    }
    // The best keeps the two components' own speeds close (a balanced pair): the ocean's GPUs
    // are not simply maxed out.
    assert_eq!(top[0]["nproc"]["OCE"].as_u64(), Some(12));
    assert!(top[0]["coupling_cost"].as_f64().unwrap() < 0.01);
    let table = autolb()
        .args(["predict", "--config"])
        .arg(common::resources::cpu_gpu_file())
        .stdout_ok();
    assert!(table.contains("per resource: units used / nodes / idle units / cost share"));
    assert!(table.contains("cpu") && table.contains("gpu"));
}

/// Bad `[[resource]]` input: one clear line naming the key (and the line where it can be
/// found), exit code 2.
#[test]
fn bad_resource_tables_are_refused_naming_the_key() {
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "resource = \"gpu\"",
            "resource = \"tpu\"",
            &["line 42", "resource = \"tpu\"", "cpu, gpu"],
        ),
        (
            "resource = \"gpu\"\n",
            "",
            &["line 41", "OCE", "no resource"],
        ),
        (
            "unit_cost = 32\n",
            "unit_cost = 0\n",
            &["line 32", "unit_cost = 0", "\"gpu\""],
        ),
        (
            "unit_cost = 32\n",
            "unit_cost = -2.5\n",
            &["unit_cost = -2.5", "positive"],
        ),
        (
            "units_per_node = 4",
            "units_per_node = 0",
            &["line 31", "units_per_node = 0"],
        ),
        (
            "units_per_node = 4",
            "units_per_node = -4",
            &["line 31", "units_per_node"],
        ),
    ];
    for (from, to, wanted) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let file = common::resources::cpu_gpu_variant(tmp.path(), from, to);
        let out = autolb()
            .args(["predict", "--config"])
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{to}: one line: {err}");
        assert!(err.contains("campaign.toml"), "{to}: names the file: {err}");
        for w in wanted {
            assert!(err.contains(w), "{to}: {w:?} missing from: {err}");
        }
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(200))]

    /// The speed/cost front (`predict --front`, the app's trade-off pane) with resources: the
    /// (SYPD, cost) points nobody dominates among every kept configuration of the enumeration.
    #[test]
    fn the_front_with_resources_equals_brute_force(
        (inputs, settings) in problem_strategy(1..=3, Speeds::Coarse),
        model in (1usize..=3).prop_flat_map(resource_model_strategy),
    ) {
        if model.component_resource.len() != inputs.len() {
            return Ok(());
        }
        let Ok(problem) = Problem::build(&inputs, &settings, ProblemOptions { model: None, cost_model: Some(&model) }) else { return Ok(()) };
        let all = naive::enumerate(&problem, settings.tts_w, usize::MAX).top;
        let dominated = |a: &autolb::predict::Scored| {
            all.iter().any(|b| {
                b.sypd >= a.sypd && b.cost() <= a.cost() && (b.sypd > a.sypd || b.cost() < a.cost())
            })
        };
        let mut want: Vec<(f64, f64)> = all
            .iter()
            .filter(|a| !dominated(a))
            .map(|a| (a.sypd, a.cost()))
            .collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        want.dedup();
        let got: Vec<(f64, f64)> = problem
            .front(settings.tts_w)
            .iter()
            .map(|c| (c.sypd, c.cost()))
            .collect();
        prop_assert_eq!(got, want);
    }
}
