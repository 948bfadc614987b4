//! What the command line ([`crate::cli`]) and the terminal app ([`crate::tui`]) share, so that
//! neither borrows from the other: the user-error type, value parsers, and the prediction flags.

pub mod error;
pub mod hybrid_model;
pub mod output;
pub mod packing_model;
pub mod parse;
pub mod prediction_flags;
