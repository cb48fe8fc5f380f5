//! Command line.

pub mod eval;
