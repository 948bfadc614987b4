//! What recording one run costs in a small and in a large campaign (docs/src/benchmarks.md,
//! "Recording a run").
//!
//! `cargo run --release --example record_cost` builds the demo campaign's state with 100 and
//! with 100,000 runs (one iteration, half of the runs done), then records 20 pending runs as
//! failed with `autolb campaign record`'s library call, and prints per size: the state file's
//! size, the time to read the state (snapshot and log), the time and bytes of writing one
//! record ([`State::commit`]: one appended line), the whole `record` call (which reads the state
//! as well), and for comparison the time and bytes of writing the whole state
//! ([`State::save`], what every record cost before the log). `-- --runs 100,1000000` measures
//! other sizes (at most [`MAX_RUNS`]); `-- --keep DIR` keeps the largest campaign in DIR.
//!
//! Bytes written are this process's `wchar` in `/proc/self/io`: every byte it handed to
//! `write`, whatever the page cache and disk then did with it.

use std::path::Path;
use std::time::{Duration, Instant};

use autolb::campaign::state::{run_id, RunState, State, TestRecord, LOG_FILE, STATE_FILE};
use autolb::campaign::RunMetrics;
use clap::Parser;

/// Most runs a measured campaign may have: the limits' largest campaign (10,000 proposed
/// configurations and the original, 100 repetitions each).
const MAX_RUNS: usize = 1_000_100;

/// Records timed per size.
const RECORDS: usize = 20;

/// Runs per test in the built states (the limit on `repetitions`).
const RUNS_PER_TEST: usize = 100;

/// What recording one run costs in a small and in a large campaign.
#[derive(Parser)]
struct Args {
    /// Campaign sizes in runs, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [100usize, 100_000])]
    runs: Vec<usize>,
    /// Keep the last (largest) campaign in this directory, for a look with `autolb campaign
    /// status` (it must not exist yet).
    #[arg(long)]
    keep: Option<std::path::PathBuf>,
}

/// Bytes this process has written so far.
fn written() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The demo campaign's state in `dir` with `runs` runs in its first iteration, every other
/// one done.
fn build(dir: &Path, runs: usize) -> State {
    let tmp = tempfile::tempdir().unwrap();
    let demo = autolb::campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    let mut state = State::load(&demo).unwrap();
    let template = state.iterations[0].tests[0].clone();
    let run_template = template.runs[0].clone();
    let n = state.components.len();
    state.tests.clear();
    state.iterations[0].tests.clear();
    for test in 0..runs.div_ceil(RUNS_PER_TEST) as u32 {
        state.tests.push(TestRecord {
            id: test,
            origin: format!("prediction #{}", test + 1),
        });
        let mut t = template.clone();
        t.test = test;
        let count = (runs - test as usize * RUNS_PER_TEST).min(RUNS_PER_TEST);
        t.runs = (1..=count as u32)
            .map(|rep| {
                let mut run = run_template.clone();
                run.id = run_id(0, test, rep);
                run.repetition = rep;
                if rep % 2 == 0 {
                    run.state = RunState::Done;
                    run.attempts = 1;
                    run.metrics = Some(RunMetrics {
                        sypd: 10.0 + f64::from(rep) / 7.0,
                        chsy: 1500.0 + f64::from(test) / 3.0,
                        coupling_cost: 0.07,
                        partial_coupling_cost: vec![0.03; n],
                    });
                    run.started_at = Some(1.7e9 + f64::from(rep));
                    run.ended_at = Some(1.7e9 + f64::from(rep) + 3600.0);
                }
                run
            })
            .collect();
        state.iterations[0].tests.push(t);
    }
    state.save(dir).unwrap();
    State::load(dir).unwrap()
}

struct Row {
    runs: usize,
    state_mb: f64,
    load: Duration,
    commit: Duration,
    commit_bytes: u64,
    record: Duration,
    save: Duration,
    save_bytes: u64,
}

fn measure(runs: usize, keep: Option<&Path>) -> Row {
    let tmp = tempfile::tempdir().unwrap();
    let dir = keep.map_or_else(|| tmp.path().join("campaign"), Path::to_path_buf);
    std::fs::create_dir(&dir).unwrap();
    let state = build(&dir, runs);
    let state_mb = std::fs::metadata(dir.join(STATE_FILE)).unwrap().len() as f64 / 1e6;
    let pending: Vec<_> = state
        .run_positions()
        .filter(|&p| state.run(p).state == RunState::Pending)
        .take(2 * RECORDS)
        .collect();
    drop(state);

    let started = Instant::now();
    let mut state = State::load(&dir).unwrap();
    let load = started.elapsed();

    // One record at a time, as `campaign record` writes it.
    let (mut commit, mut commit_bytes) = (Duration::ZERO, 0);
    for &pos in &pending[..RECORDS] {
        let run = state.run_mut(pos);
        run.state = RunState::Failed;
        run.failure = Some("recorded as failed".into());
        run.attempts = 1;
        let (t, w) = (Instant::now(), written());
        state.commit(&dir).unwrap();
        commit += t.elapsed();
        commit_bytes += written() - w;
    }

    // The whole library call: reads the state, checks the claim, writes the record.
    let started = Instant::now();
    for &pos in &pending[RECORDS..] {
        let id = state.run(pos).id.clone();
        autolb::campaign::record(&dir, &id, None, Some("failed"), Duration::from_secs(10)).unwrap();
    }
    let record = started.elapsed();
    assert!(dir.join(LOG_FILE).exists(), "the records went to the log");

    let (t, w) = (Instant::now(), written());
    state.save(&dir).unwrap();
    let (save, save_bytes) = (t.elapsed(), written() - w);
    Row {
        runs,
        state_mb,
        load,
        commit: commit / RECORDS as u32,
        commit_bytes: commit_bytes / RECORDS as u64,
        record: record / RECORDS as u32,
        save,
        save_bytes,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn main() {
    let args = Args::parse();
    if args.runs.is_empty() {
        eprintln!("--runs: give at least one campaign size");
        std::process::exit(2);
    }
    if let Some(&n) = args
        .runs
        .iter()
        .find(|&&n| !(2 * RECORDS..=MAX_RUNS).contains(&n))
    {
        eprintln!(
            "--runs {n}: each size must be {} to {MAX_RUNS} runs",
            2 * RECORDS
        );
        std::process::exit(2);
    }
    println!("| runs | state file | read state | write one record | bytes per record | `record` call | write whole state | bytes whole |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    let last = args.runs.len() - 1;
    let rows: Vec<Row> = args
        .runs
        .iter()
        .enumerate()
        .map(|(k, &n)| measure(n, args.keep.as_deref().filter(|_| k == last)))
        .collect();
    for r in &rows {
        println!(
            "| {} | {} | {} ms | {} ms | {} | {} ms | {} ms | {} |",
            r.runs,
            if r.state_mb < 1.0 {
                format!("{:.0} kB", r.state_mb * 1e3)
            } else {
                format!("{:.1} MB", r.state_mb)
            },
            ms(r.load),
            ms(r.commit),
            r.commit_bytes,
            ms(r.record),
            ms(r.save),
            r.save_bytes
        );
    }
    if let [small, .., large] = rows.as_slice() {
        println!();
        println!(
            "{} runs against {}: writing one record {:.2}x the time, {:.2}x the bytes; the whole `record` call {:.1}x; a whole save {:.0}x the bytes",
            large.runs,
            small.runs,
            large.commit.as_secs_f64() / small.commit.as_secs_f64(),
            large.commit_bytes as f64 / small.commit_bytes as f64,
            large.record.as_secs_f64() / small.record.as_secs_f64(),
            large.save_bytes as f64 / small.save_bytes as f64,
        );
    }
}
