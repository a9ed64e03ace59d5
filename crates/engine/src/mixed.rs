//! A mix in the worker: each request taken draws its kind from the
//! worker's seeded generator and is written into its connection's own
//! [`Wire`] (reused, so no request allocates once each has grown to its
//! longest). A mix is never pipelined (the plan refuses it), so a
//! connection's wire holds exactly its one request in flight. Without a
//! mix every connection shares the setup's wire and the draw is a no-op.

use super::{Setup, Worker};
use crate::conn::Wire;
use crate::mix::EncodedMix;

/// A worker's mix: the kinds, its generator, and one wire per connection.
#[derive(Debug)]
pub(crate) struct Mixed<'a> {
    kinds: &'a EncodedMix,
    rng: fastrand::Rng,
    wires: Vec<Wire>,
}

/// The bytes connection `idx` writes.
pub(super) fn wire<'w>(setup: &'w Setup<'_>, mix: &'w Option<Mixed<'_>>, idx: usize) -> &'w Wire {
    match mix {
        Some(m) => &m.wires[idx],
        None => &setup.wire,
    }
}

impl Worker<'_> {
    /// Draws from `rng` (the worker's request stream) when the setup has a mix.
    pub fn with_mix(mut self, rng: fastrand::Rng) -> Self {
        if let Some(kinds) = self.setup.mix {
            self.mix = Some(Mixed {
                kinds,
                rng,
                wires: self.conns.iter().map(|_| Wire::empty()).collect(),
            });
        }
        self
    }

    /// The kind of the request about to be queued on connection `idx`,
    /// its bytes written into the connection's wire; 0 without a mix.
    pub(super) fn draw(&mut self, idx: usize) -> u16 {
        let Some(m) = &mut self.mix else { return 0 };
        let kind = m.kinds.draw(&mut m.rng);
        let encoded = &m.kinds.kinds[kind];
        let wire = &mut m.wires[idx];
        encoded.write(&mut wire.batch, &mut m.rng);
        wire.len = wire.batch.len();
        self.conns[idx].set_head_request(encoded.is_head);
        // At most MAX_KINDS kinds, so the index fits.
        kind as u16
    }
}
