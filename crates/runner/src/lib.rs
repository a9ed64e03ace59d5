//! Studies: parse a study file, schedule its measurements (rotated order,
//! restarts), and for each target start, load, measure and stop the server,
//! recording everything to the store the moment it is measured.

pub mod study;
