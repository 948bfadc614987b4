//! The integration tests, as one test binary: each topic is a module, and the fixtures they
//! share are in [`common`] (and [`slurm_common`] for the tests that need a real Slurm). One
//! binary links the library once instead of once per topic.
//!
//! Tests run on threads in parallel, so a test must not change process-wide state (PATH, the
//! working directory, signal handlers); the one test that must is its own binary
//! (`tests/slurm_fake_tools.rs`). Tests that share the one real Slurm take
//! [`slurm_common::exclusive`] so they do not run at the same time.

mod common;
mod doc_links;
mod slurm_common;

mod autosubmit_e2e;
mod campaign_algorithm;
mod campaign_bounds;
mod campaign_cime;
mod campaign_claims;
mod campaign_cli;
mod campaign_cold_start;
mod campaign_command;
mod campaign_counts;
mod campaign_coupled;
mod campaign_demo;
mod campaign_driver_state;
mod campaign_ecearth4;
mod campaign_file_doc;
mod campaign_guided;
mod campaign_kill;
mod campaign_liveness;
mod campaign_outside;
mod campaign_processes;
mod campaign_resource;
mod campaign_scaling;
mod cli_output;
mod cli_written_output;
mod cylc_e2e;
mod ecearth4_path;
mod example_cli;
mod exec_signals;
mod hardening_cli;
mod interp_scipy;
mod model_accuracy;
mod model_cli;
mod one_answer;
mod pictures;
mod predict_cli;
mod predict_exact;
mod predict_front;
mod predict_front_cli;
mod predict_full_model;
mod predict_layout_cli;
mod predict_machine;
mod predict_packing;
mod predict_packing_measured;
mod predict_resource;
mod predict_threads;
mod predict_threads_cli;
mod predict_threads_measured;
mod readme_examples;
mod report_browser;
mod report_cli;
mod report_scale;
mod shell_injection;
mod simulate_cli;
mod simulate_model;
mod slurm_campaign;
mod slurm_ecearth3;
mod slurm_ecearth4;
mod slurm_executor;
mod timing_cime;
mod timing_cime_curves;
mod timing_cli;
mod timing_consistency;
mod timing_ecearth4;
mod timing_fuzz;
mod timing_legs;
mod timing_robustness;
mod timing_samples;
mod tui_e2e;
