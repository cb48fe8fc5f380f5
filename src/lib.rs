//! perfdash: turns an archive of load-test runs into a static site for the
//! weekly performance review, and gates CI on the same verdicts.
//!
//! The pipeline is ingest → model → analyse → render → write; each stage is
//! one module, and [`build`](pipeline::build) runs them in order.

pub mod analyse;
pub mod cache;
pub mod calendar;
pub mod cleanup;
pub mod cli;
pub mod config;
pub mod decimal;
pub mod demo;
pub mod doc_section;
pub mod error;
pub mod escape;
pub mod eval;
#[doc(hidden)]
pub mod fuzzing;
pub mod hash;
pub mod ingest;
pub mod lookalike;
pub mod model;
#[cfg(test)]
mod module_layers;
pub mod pipeline;
pub mod profile;
pub mod record;
pub mod remote;
pub mod render;
pub mod report;
#[doc(hidden)]
pub mod shared_fixtures;
pub mod slug;
pub mod stat_stamp;
pub mod stats;
pub mod term;
#[cfg(test)]
pub(crate) mod test_support;
pub mod write;
