//! `predict --config FILE` and the terminal app opened on the same file recommend one
//! configuration: `predict`'s text, made by the command's own code, against the app's whole
//! screen, on a file that packs nodes and on a plain one.

use clap::Parser;

use crate::tui::emit_tests::{cursor_config, open_on, repo, screen, GROUPS_FILE, PLAIN_FILE};

/// `autolb predict --config FILE --json`, through the command's code.
fn predict_json(file: &str) -> serde_json::Value {
    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        predict: super::PredictArgs,
    }
    let config = repo(file).display().to_string();
    let args = Command::try_parse_from(["predict", "--config", &config, "--json"]).unwrap();
    serde_json::from_str(&super::output(&args.predict).unwrap()).unwrap()
}

/// The configuration `predict --json` puts first: `oifs 368x2 + nemo 259`.
fn predicted_first(json: &serde_json::Value) -> String {
    let names: Vec<&str> = json["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let top = &json["top"][0];
    let (ranks, threads): (Vec<u64>, Vec<u64>) = match top.get("packing") {
        Some(p) => (
            p["ranks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_u64().unwrap())
                .collect(),
            p["threads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_u64().unwrap())
                .collect(),
        ),
        None => names
            .iter()
            .map(|n| {
                (
                    top["ranks"][n].as_u64().unwrap(),
                    top["threads"][n].as_u64().unwrap(),
                )
            })
            .unzip(),
    };
    names
        .iter()
        .zip(ranks.iter().zip(&threads))
        .map(|(n, (r, t))| match t {
            1 => format!("{n} {r}"),
            t => format!("{n} {r}x{t}"),
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

#[test]
fn the_app_recommends_what_predict_does_for_one_file() {
    let tmp = tempfile::tempdir().unwrap();
    for file in [GROUPS_FILE, PLAIN_FILE] {
        let predicted = predicted_first(&predict_json(file));
        let app = open_on(file, tmp.path());
        let screen = screen(&app, 200, 50);
        let recommended = screen
            .lines()
            .find(|l| l.contains("recommended"))
            .unwrap_or_else(|| panic!("{file}: no recommended line in\n{screen}"));
        assert!(
            recommended.contains(&predicted),
            "{file}: predict says {predicted}, the app {recommended:?}"
        );
        // The cursor starts on it.
        assert_eq!(cursor_config(&screen), predicted, "{file}");
        if file == GROUPS_FILE {
            // The matrix and the top N rank PE counts, and the screen says so.
            assert!(screen.contains("PE counts, not node packings"), "{screen}");
            assert!(
                recommended.contains("node packing as `autolb predict`"),
                "{recommended}"
            );
            assert!(screen.contains("#1 by PE count"), "{screen}");
            let packing = &predict_json(file)["top"][0]["packing"];
            let nodes = packing["nodes"].as_u64().unwrap();
            assert!(
                recommended.contains(&format!("{nodes} nodes")),
                "{recommended}"
            );
        }
    }
    // The whole screen at 120 columns on the groups file, as a user sees it.
    let app = open_on(GROUPS_FILE, tmp.path());
    let screen = screen(&app, 120, 40);
    insta::assert_snapshot!("groups_file_recommends_the_packing", screen);
}
