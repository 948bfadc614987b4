//! Reading a one-year EC-Earth3 SR leg of raw LUCIA files: 11 680 coupling steps, IFS on 400
//! and NEMO on 288 PEs (20 and 21 sampled rank files), three fields each way, a few hundred MB,
//! generated with the stand-in model's writer. The target is under 2 s; criterion prints the
//! time and the throughput (MB/s).
//!
//! `cargo bench --bench timing`

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use autolb::sim::{self, SimComponent, SimRun, SimSettings};
use autolb::timing::{self, ReadOptions, Reading};

/// Coupling steps in a 365-day year at EC-Earth3 SR's 2700 s period (minus the initial one).
const YEAR_STEPS: u32 = 11_680;

fn leg() -> (tempfile::TempDir, u64, ReadOptions) {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = SimSettings {
        steps: Some(YEAR_STEPS - 1),
        fields: Some(3),
        ..SimSettings::default()
    };
    let comps = [("ATMIFS", 400), ("oceanx", 288)]
        .map(|(name, nproc)| SimComponent {
            name: name.into(),
            nproc,
            curve: sim::builtin_curve(name).expect("built-in curve"),
            threads: 1,
        })
        .to_vec();
    let started = Instant::now();
    sim::simulate(&SimRun::new(&settings, comps, 1), dir.path()).expect("simulate");
    let (files, bytes) = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").metadata().expect("metadata").len())
        .fold((0, 0), |(n, b), len| (n + 1, b + len));
    eprintln!(
        "generated a one-year leg: {files} rank files, {:.0} MB, in {:.1} s",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let mut opts = ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    };
    opts.nproc.insert("ATMIFS".into(), 400);
    opts.nproc.insert("oceanx".into(), 288);
    (dir, bytes, opts)
}

fn read_leg(c: &mut Criterion) {
    let (dir, bytes, opts) = leg();
    // One timed read outside criterion, with its MB/s, for the log.
    let started = Instant::now();
    let reading = timing::read(dir.path(), &opts).expect("read");
    let secs = started.elapsed().as_secs_f64();
    match reading {
        Reading::Measured(m) => {
            assert_eq!(m.partial, None);
            assert_eq!(m.components[0].steps, u64::from(YEAR_STEPS) - 4);
        }
        other => panic!("{other:?}"),
    }
    eprintln!(
        "first read: {secs:.3} s, {:.0} MB/s (target: under 2 s)",
        bytes as f64 / 1e6 / secs
    );
    let mut group = c.benchmark_group("timing");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("raw LUCIA, one-year SR leg", |b| {
        b.iter(|| timing::read(dir.path(), &opts).expect("read"))
    });
    group.finish();
}

criterion_group!(benches, read_leg);
criterion_main!(benches);
