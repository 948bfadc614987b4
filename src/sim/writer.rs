//! Writes the model's events as raw LUCIA files, progressively when time is compressed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::model::{Exchange, Plan, SimOutcome, EPOCH};
use super::SimError;
use crate::timing::lucia_raw;

/// Shortest sleep worth taking; shorter debts accumulate.
const MIN_SLEEP: Duration = Duration::from_millis(5);

struct RankWriter {
    path: PathBuf,
    out: BufWriter<File>,
    /// The last line of the latest exchange (its final `After MPI get`), written only when the
    /// next exchange is: between exchanges a real model sits inside that get, so a file read
    /// mid-run ends on a `Before` with no `After`, as OASIS leaves it.
    held: Vec<u8>,
}

impl RankWriter {
    fn io(&self, source: std::io::Error) -> SimError {
        SimError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// Runs the plan, writing `lucia.CC.RRRRRR` files into `dir`.
pub(crate) fn run(plan: &Plan, dir: &Path) -> Result<SimOutcome, SimError> {
    let mut writers = open_all(plan, dir)?;
    let started = Instant::now();
    let outcome = plan.simulate_all(|x| {
        write_exchange(x, &mut writers)?;
        if plan.compression > 0.0 {
            let modelled = x.end.iter().copied().fold(EPOCH, f64::max) - EPOCH;
            // Saturate: a curve of absurdly slow points must not panic the writer.
            let due = Duration::try_from_secs_f64((modelled * plan.compression).max(0.0))
                .unwrap_or(Duration::MAX);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                if wait >= MIN_SLEEP {
                    flush_all(&mut writers)?;
                    std::thread::sleep(wait);
                }
            }
        }
        Ok(())
    })?;
    if outcome.failed.is_some() {
        cut_files(&mut writers)?;
    } else {
        release_held(&mut writers)?;
    }
    flush_all(&mut writers)?;
    Ok(outcome)
}

fn open_all(plan: &Plan, dir: &Path) -> Result<Vec<Vec<RankWriter>>, SimError> {
    let mut all = Vec::with_capacity(plan.components.len());
    for c in &plan.components {
        let mut ranks = Vec::with_capacity(c.ranks.len());
        for &rank in &c.ranks {
            let path = dir.join(lucia_raw::file_name(c.cc, rank));
            let file = File::create(&path).map_err(|source| SimError::Io {
                path: path.clone(),
                source,
            })?;
            let mut w = RankWriter {
                path,
                out: BufWriter::with_capacity(64 * 1024, file),
                held: Vec::with_capacity(64),
            };
            write_header(plan, c, &mut w.out).map_err(|e| w.io(e))?;
            ranks.push(w);
        }
        all.push(ranks);
    }
    Ok(all)
}

fn write_header(
    plan: &Plan,
    c: &super::model::CompPlan,
    w: &mut impl Write,
) -> std::io::Result<()> {
    // The time of `IT` starts at column 30, as OASIS writes it.
    writeln!(w, "Balance: IT                  {:16.5}", EPOCH)?;
    writeln!(w, "Balance: MD {}", c.name)?;
    for &f in &c.sends {
        writeln!(w, "Balance: SN {:04} {}_out{f}", f, c.name)?;
    }
    for &(f, from) in &c.receives {
        writeln!(
            w,
            "Balance: RC {:04} {}_out{f}",
            f, plan.components[from].name
        )?;
    }
    Ok(())
}

fn write_exchange(x: &Exchange, writers: &mut [Vec<RankWriter>]) -> Result<(), SimError> {
    for (ci, ranks) in writers.iter_mut().enumerate() {
        for (ri, w) in ranks.iter_mut().enumerate() {
            let ev = &x.events[ci][ri];
            write_rank_exchange(ev, w).map_err(|e| w.io(e))?;
        }
    }
    Ok(())
}

fn write_rank_exchange(ev: &super::model::RankEvents, w: &mut RankWriter) -> std::io::Result<()> {
    w.out.write_all(&w.held)?;
    w.held.clear();
    for &(f, ib, ia, pb, pa) in &ev.sends {
        writeln!(w.out, "Balance: {f:03} Before interpo {ib:16.5}")?;
        writeln!(w.out, "Balance: {f:03} After  interpo {ia:16.5}")?;
        writeln!(w.out, "Balance: {f:03} Before MPI put {pb:16.5}")?;
        writeln!(w.out, "Balance: {f:03} After  MPI put {pa:16.5}")?;
    }
    for (i, &(f, gb, ga)) in ev.gets.iter().enumerate() {
        writeln!(w.out, "Balance: {f:03} Before MPI get {gb:16.5}")?;
        if i + 1 == ev.gets.len() {
            writeln!(w.held, "Balance: {f:03} After  MPI get {ga:16.5}")?;
        } else {
            writeln!(w.out, "Balance: {f:03} After  MPI get {ga:16.5}")?;
        }
    }
    Ok(())
}

fn release_held(writers: &mut [Vec<RankWriter>]) -> Result<(), SimError> {
    for w in writers.iter_mut().flatten() {
        let held = std::mem::take(&mut w.held);
        w.out.write_all(&held).map_err(|e| w.io(e))?;
    }
    Ok(())
}

/// A failing model dies in the middle of writing: each file ends on half a line.
fn cut_files(writers: &mut [Vec<RankWriter>]) -> Result<(), SimError> {
    for w in writers.iter_mut().flatten() {
        w.out
            .write_all(b"Balance: 001 Before interpo 17000")
            .map_err(|e| w.io(e))?;
    }
    Ok(())
}

fn flush_all(writers: &mut [Vec<RankWriter>]) -> Result<(), SimError> {
    for w in writers.iter_mut().flatten() {
        w.out.flush().map_err(|e| w.io(e))?;
    }
    Ok(())
}
