//! Placeholder; see the crate description.
