//! Rendering (in progress).

pub mod flame;
