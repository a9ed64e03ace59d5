//! A mix in a worker: each request taken draws its kind from the worker's
//! seeded generator and is written into its connection's own [`Wire`]
//! (reused, so no request allocates once each has grown to its longest). A
//! mix is never pipelined (the plan refuses it), so a connection's wire
//! holds exactly its one request in flight. Without a mix the worker has no
//! `Mixed` and every connection shares the run's one wire.

use crate::conn::Wire;
use crate::request::{EncodedKind, EncodedMix};

/// A worker's mix: the kinds, its generator, and one wire per connection.
#[derive(Debug)]
pub(crate) struct Mixed<'a> {
    kinds: &'a EncodedMix,
    rng: fastrand::Rng,
    wires: Vec<Wire>,
}

impl<'a> Mixed<'a> {
    /// Draws from `rng` (the worker's request stream) for `conns` connections.
    pub fn new(kinds: &'a EncodedMix, rng: fastrand::Rng, conns: usize) -> Mixed<'a> {
        Mixed {
            kinds,
            rng,
            wires: (0..conns).map(|_| Wire::empty()).collect(),
        }
    }

    /// The bytes connection `idx` writes.
    pub fn wire(&self, idx: usize) -> &Wire {
        &self.wires[idx]
    }

    /// Draws the kind of connection `idx`'s next request and writes the
    /// request into its wire. Returns the kind's index and encoding.
    pub fn draw(&mut self, idx: usize) -> (u16, &EncodedKind) {
        let kind = self.kinds.draw(&mut self.rng);
        let encoded = &self.kinds.kinds[kind];
        let wire = &mut self.wires[idx];
        encoded.write(&mut wire.batch, &mut self.rng);
        wire.len = wire.batch.len();
        // A mix has at most MAX_KINDS kinds, so the index fits.
        (kind as u16, encoded)
    }
}
