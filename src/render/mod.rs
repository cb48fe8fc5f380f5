//! Rendering (in progress).
