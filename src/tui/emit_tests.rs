//! What `y` writes is what the screen shows, and the app recommends what `predict` does.
//!
//! Each test draws the whole app, reads the configuration off the screen (the matrix cursor
//! line, a table row, the recommended line), writes it with `y`, parses the YAML back and
//! compares it count by count with the screen: ranks, `omp_num_threads`, node groups and the
//! helpers the file pins. (That the app recommends what `predict` does is tested beside
//! `predict`, in `cli::predict::app_tests`.)

use std::path::{Path, PathBuf};

use super::app::App;
use super::effect::{Effect, Outcome};
use super::event::Event;
use super::keys::KeyTable;
use super::pane::Pane;
use super::tests::{draw, key, text};
use super::theme::{ColorDepth, Theme};
use crate::shared::prediction_flags::{self, PredictionFlags};

/// The EC-Earth4 example: node groups, XIOS on every node, the runoff mapper on the first.
pub(crate) const GROUPS_FILE: &str = "assets/examples/ecearth4-mn5/campaign.toml";
/// The same model as a plain file: OpenIFS at 4 threads, PEs packed, helpers in extra_pes.
pub(crate) const PLAIN_FILE: &str = "assets/examples/ecearth4-mn5/campaign-sim.toml";

pub(crate) fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The app opened on a campaign file as `autolb tui --config FILE` opens it.
pub(crate) fn open_on(file: &str, out_dir: &Path) -> App {
    let flags = PredictionFlags {
        config: Some(repo(file)),
        ..PredictionFlags::default()
    };
    let args = super::args::TuiArgs {
        prediction: flags,
        ..super::args::TuiArgs::default()
    };
    let setup = super::resolve(&args).unwrap();
    let cost_model = prediction_flags::resolve_cost_model(&args.prediction).unwrap();
    let view = super::View {
        keys: KeyTable::default(),
        theme: Theme::new(ColorDepth::Mono),
        out_dir: out_dir.to_path_buf(),
    };
    super::standalone_app(&setup, &cost_model, view).unwrap()
}

/// The whole app drawn at `width` x `height`, as text.
pub(crate) fn screen(app: &App, width: u16, height: u16) -> String {
    text(&draw(app, width, height))
}

/// Presses `y`, runs the write, and returns the YAML and the status line's message.
fn press_y(app: &mut App) -> (serde_norway::Value, String, String) {
    let Some(effect @ Effect::WriteText { .. }) = app.update(key('y')) else {
        panic!("y writes nothing: {:?}", app.ui.error);
    };
    let outcome = effect.run();
    let Outcome::TextWritten { path, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    let text = std::fs::read_to_string(path).unwrap();
    let yaml = serde_norway::from_str(&text).unwrap();
    app.update(Event::Done(outcome));
    (yaml, text, app.ui.message.clone().unwrap_or_default())
}

/// `(name, ranks, threads)` of each component in a configuration as the screen writes it
/// (`oifs 191x4 + nemo 259`), or `None` for text that is not one.
fn try_counts(config: &str) -> Option<Vec<(String, u64, u64)>> {
    config
        .split(" + ")
        .map(|p| {
            let (name, cell) = p.trim().split_once(' ')?;
            let word =
                |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_');
            if !word(name) {
                return None;
            }
            let (ranks, threads) = cell.split_once('x').unwrap_or((cell, "1"));
            Some((name.to_string(), ranks.parse().ok()?, threads.parse().ok()?))
        })
        .collect()
}

fn counts(config: &str) -> Vec<(String, u64, u64)> {
    try_counts(config).unwrap_or_else(|| panic!("not a configuration: {config:?}"))
}

/// The configuration the matrix cursor line names on screen: the first line whose text before
/// ` · SYPD` is a configuration and nothing else.
pub(crate) fn cursor_config(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|l| {
            let before = &l[..l.find(" · SYPD")?];
            let item = before.rsplit(['│', '┃']).next()?.trim();
            try_counts(item).map(|_| item.to_string())
        })
        .next()
        .unwrap_or_else(|| panic!("no cursor line in\n{screen}"))
}

/// The het-job YAML holds exactly these counts: `ntasks`, and `omp_num_threads` for a hybrid
/// component only.
fn assert_hetjob(yaml: &serde_norway::Value, shown: &[(String, u64, u64)]) {
    let job = &yaml["job"];
    assert_eq!(job["launch"]["method"].as_str(), Some("slurm-hetjob"));
    for (name, ranks, threads) in shown {
        let c = &job[name.to_ascii_lowercase().as_str()];
        assert_eq!(c["ntasks"].as_u64(), Some(*ranks), "{name}: {c:?}");
        let omp = c["omp_num_threads"].as_u64();
        assert_eq!(omp, (*threads > 1).then_some(*threads), "{name}: {c:?}");
    }
}

/// The `job.groups` YAML holds exactly these counts over its groups, each node within its
/// cores, XIOS on every node and the runoff mapper on the first only.
fn assert_groups(yaml: &serde_norway::Value, shown: &[(String, u64, u64)], cores_per_node: u64) {
    let job = &yaml["job"];
    assert_eq!(
        job["launch"]["method"].as_str(),
        Some("slurm-wrapper-taskset")
    );
    let groups = job["groups"].as_sequence().unwrap();
    let per_node = |g: &serde_norway::Value, k: &str| g[k].as_u64().unwrap_or(0);
    for (name, ranks, threads) in shown {
        let placed: u64 = groups
            .iter()
            .map(|g| per_node(g, "nodes") * per_node(g, name))
            .sum();
        assert_eq!(placed, *ranks, "{name} in {groups:?}");
        let omp = job[name.as_str()]["omp_num_threads"].as_u64();
        assert_eq!(omp, (*threads > 1).then_some(*threads), "{name}");
    }
    for (i, g) in groups.iter().enumerate() {
        assert_eq!(per_node(g, "xios"), 1, "group {i}");
        assert_eq!(per_node(g, "rnfm"), u64::from(i == 0), "group {i}");
        let cores: u64 = shown
            .iter()
            .map(|(n, _, t)| per_node(g, n) * t)
            .sum::<u64>()
            + per_node(g, "xios")
            + per_node(g, "rnfm");
        assert!(cores <= cores_per_node, "group {i}: {cores} cores");
    }
    assert_eq!(
        per_node(&groups[0], "nodes"),
        1,
        "the first node is a group"
    );
}

#[test]
fn y_on_a_hybrid_campaign_writes_the_cursor_line_and_the_rows_ranks_and_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = super::tests::app_with(ColorDepth::Mono, tmp.path().to_path_buf());
    // A campaign that runs IFS at 4 threads per rank: its PEs are cores, written RxT.
    let mut view = super::screen_tests::watched();
    view.threads = vec![4, 1];
    app.update(Event::Campaign(Box::new(view)));
    // On a candidate whose IFS cores are whole ranks of 4 threads.
    let at = (0..app.ranking.problem.components[0].nproc.len())
        .find(|&i| app.ranking.problem.components[0].nproc[i].is_multiple_of(4))
        .unwrap();
    app.matrix.cursor[0] = at;
    let screen = text(&draw(&app, 160, 50));
    let config = cursor_config(&screen);
    let shown = counts(&config);
    assert_eq!(shown[0].2, 4, "the cursor line writes IFS as RxT: {config}");
    let (yaml, written, said) = press_y(&mut app);
    assert_hetjob(&yaml, &shown);
    assert!(
        written.contains(&config) || written.contains("x 4 threads"),
        "{written}"
    );
    assert!(said.contains(super::emit::ECEARTH4_FILE), "{said}");

    // The table's ★ best row, with the table focused.
    app.ui.set_focus(Pane::Table);
    let best = app.table.campaign.best.unwrap();
    let at = app.table.visible.iter().position(|&i| i == best).unwrap();
    app.table.select_row(at);
    let screen = text(&draw(&app, 160, 50));
    let row = screen
        .lines()
        .find(|l| l.contains('★') && !l.contains("★ best"))
        .unwrap_or_else(|| panic!("no ★ row in\n{screen}"));
    // The row's cells after the ★: it/t, then IFS as RxT and NEMO.
    let cells: Vec<&str> = row
        .split([' ', '│', '┃'])
        .filter(|c| !c.is_empty())
        .skip_while(|c| *c != "★")
        .collect();
    let ifs = counts(&format!("IFS {}", cells[2]));
    let nemo = counts(&format!("NEMO {}", cells[3]));
    assert_eq!(ifs[0].2, 4, "the row writes IFS as RxT: {row:?}");
    let shown = [ifs, nemo].concat();
    let (yaml, written, _) = press_y(&mut app);
    assert_hetjob(&yaml, &shown);
    assert!(
        written.starts_with("# autolb tui: the table's row it/t 0/2 (the ★ best measured)"),
        "{written}"
    );
}

#[test]
fn y_on_a_groups_file_writes_node_groups_with_the_pinned_helpers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = open_on(GROUPS_FILE, tmp.path());
    // The cursor starts on the recommendation: the best node packing.
    let screen = text(&draw(&app, 160, 50));
    let config = cursor_config(&screen);
    let shown = counts(&config);
    let (yaml, written, said) = press_y(&mut app);
    assert_groups(&yaml, &shown, 112);
    assert_eq!(
        yaml["model_config"]["oasis"]["load_balancing"].as_u64(),
        Some(1)
    );
    // The file sets groups already: no advice to set them.
    assert!(!written.contains("placement = \"groups\""), "{written}");
    assert!(
        written.contains("a node packing autolb predict ranks"),
        "{written}"
    );
    assert!(said.starts_with("wrote "), "{said}");
    // Elsewhere on the matrix: that configuration, laid out on nodes.
    app.update(key('j'));
    app.update(key('l'));
    app.update(key('l'));
    let screen = text(&draw(&app, 160, 50));
    let moved = cursor_config(&screen);
    assert_ne!(moved, config);
    let (yaml, written, _) = press_y(&mut app);
    assert_groups(&yaml, &counts(&moved), 112);
    assert!(
        written.contains("laid out on the fewest nodes"),
        "{written}"
    );
}

#[test]
fn the_written_files_name_fits_an_80_column_status_line() {
    let deep = tempfile::tempdir().unwrap();
    let out = deep
        .path()
        .join("projects/bsc32/ecearth4/experiments/cmip7-piControl-mn5/autolb-out");
    std::fs::create_dir_all(&out).unwrap();
    let mut app = open_on(PLAIN_FILE, &out);
    let (_, _, said) = press_y(&mut app);
    assert!(said.chars().count() <= 80, "{said}");
    let screen = text(&draw(&app, 80, 24));
    assert!(
        screen.contains("ecearth4-job.yml"),
        "the file name on the 80-column screen:\n{screen}"
    );
}
