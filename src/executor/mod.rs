//! Executors: what actually runs one configuration of the coupled model.
//!
//! The campaign engine talks to every executor through one trait, so the algorithm never knows
//! whether a run is a local process, the built-in stand-in model or a Slurm job.

pub mod sim;
pub mod slurm;
