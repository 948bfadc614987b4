//! autolb: automatic load balancing of coupled Earth system models.
//!
//! The library is the whole method; the binary's CLI and terminal app are thin layers on top.
//! It never touches the terminal.
//!
//! * [`curve`]: measured scalability curves (nproc -> SYPD) and their validation.
//! * [`interp`]: interpolation of a curve between measured points.
//! * [`layout`]: layouts as trees (side by side, one after the other) and the layout model.
//! * [`metrics`]: CPMIP metrics and fittingness, exactly as the guide's `method/prediction.md`
//!   defines them.
//! * [`model`]: the performance model (standalone or calibrated from measured runs).
//! * [`predict`]: scoring every configuration within a budget and proposing the top N.
//! * [`machine`]: nodes, queues and what a configuration is billed (cores, nodes or power).
//! * [`timing`]: reading what a coupled run measured (LUCIA and the other timing formats).
//! * [`report`]: a shareable report (one HTML page, or Markdown + SVG) of a prediction and a
//!   campaign, with the paper's figures.
//! * [`campaign`]: the load-balance campaign (Algorithm 1), its state on disk and its driver.
//! * [`executor`]: what runs one configuration: a local command, the stand-in model, Slurm.
//! * [`sim`]: the stand-in coupled model that writes raw LUCIA files.
//! * [`config`]: the campaign file (TOML) shared by `predict --config` and campaigns.
//! * [`watch`]: watching campaign directories on local and parallel filesystems.
//! * [`example`]: the built-in EC-Earth3 example, compiled in.
//! * [`limits`]: the documented bounds on every size a user controls.
//! * [`fsutil`]: bounded reading of the small files a user names (no FIFOs, no devices).
//!
//! A prediction on the built-in example (EC-Earth3 on MareNostrum4, 672 PEs):
//!
//! ```
//! use autolb::{example, predict};
//!
//! let prediction = predict::predict(&example::inputs(), &example::settings())
//!     .expect("the built-in example is valid");
//! let best = &prediction.top[0];
//! assert_eq!(best.nproc.len(), 2); // PEs of IFS and of NEMO
//! assert!(best.nproc.iter().sum::<u32>() <= 672);
//! assert!(best.sypd > 0.0 && best.chsy > 0.0);
//! ```
//!
//! # Layers
//!
//! Imports run one way, from a module to the modules before it in this list, never up
//! (`src/layering_tests.rs` reads every path in `src/` and fails on an upward import, and on
//! two sibling modules of one parent that import each other):
//!
//! 1. base: [`limits`] < [`fsutil`];
//! 2. core: [`metrics`] < [`curve`] < [`interp`] < [`machine`] < [`layout`] < [`timing`] <
//!    [`model`] < [`predict`]: the method itself, from plain formulas to the search;
//! 3. services: [`example`] < [`sim`] < [`executor`] < [`config`] < [`watch`] < [`campaign`] <
//!    [`report`]: the built-in example and the stand-in model, what runs a configuration, the
//!    campaign file, and the campaign and its report on top;
//! 4. the binary (its own crate, on top of all of the library): `shared` < `tui` < `cli`.

pub mod campaign;
pub mod config;
pub mod curve;
pub mod example;
pub mod executor;
pub mod fsutil;
pub mod interp;
pub mod layout;
pub mod limits;
pub mod machine;
pub mod metrics;
pub mod model;
pub mod predict;
pub mod report;
pub mod sim;
pub mod timing;
pub mod watch;

#[cfg(test)]
mod layering_tests;
