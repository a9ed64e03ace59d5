//! HTTP/2 send-side flow control (RFC 9113 §6.9), without I/O: the
//! connection's send window, the window each new stream starts with
//! (SETTINGS_INITIAL_WINDOW_SIZE), the largest DATA frame the server takes
//! (SETTINGS_MAX_FRAME_SIZE), and the checks of what the server says about
//! them. The session (`h2_conn`) keeps each stream's own window beside its
//! request and asks [`SendFlow::allowance`] how much of a body may go now;
//! a body that does not fit waits for a WINDOW_UPDATE (or a larger initial
//! window) and is sent as the session reads it, so nothing polls.
//!
//! The server's SETTINGS apply from the moment we process them, which is
//! also where our ACK sits in the byte stream: DATA sent before it counted
//! against the old values, as §6.5.3 has it, and a change of the initial
//! window moves every open stream's window by the difference, possibly
//! below zero (§6.9.2).

use crate::h2::{code, setting, MIN_MAX_FRAME};

/// The largest a flow-control window may be (2^31 - 1).
pub(crate) const MAX_WINDOW: i64 = (1 << 31) - 1;
/// Every window's size before the server's SETTINGS say otherwise.
const DEFAULT_WINDOW: i64 = 65_535;
/// SETTINGS_MAX_FRAME_SIZE's ceiling (2^24 - 1).
const MAX_FRAME_CEILING: u32 = (1 << 24) - 1;

/// A rule the server broke, and how RFC 9113 ends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Breach {
    /// The whole connection: GOAWAY with this code.
    Connection(u32),
    /// Only the stream: RST_STREAM with this code.
    Stream(u32),
}

/// The connection's side of send flow control.
#[derive(Debug, Clone)]
pub(crate) struct SendFlow {
    /// DATA bytes the server takes on the connection before its next
    /// WINDOW_UPDATE.
    pub window: i64,
    /// The window a new stream starts with (SETTINGS_INITIAL_WINDOW_SIZE).
    pub initial: i64,
    /// The largest DATA payload to send (SETTINGS_MAX_FRAME_SIZE).
    pub max_frame: usize,
    /// Streams whose body is not all sent.
    pub waiting: usize,
}

impl Default for SendFlow {
    fn default() -> SendFlow {
        SendFlow {
            window: DEFAULT_WINDOW,
            initial: DEFAULT_WINDOW,
            max_frame: MIN_MAX_FRAME,
            waiting: 0,
        }
    }
}

impl SendFlow {
    /// How many body bytes the next DATA frame of a stream with `window`
    /// and `unsent` bytes left may carry; 0 when it must wait.
    pub fn allowance(&self, window: i64, unsent: u32) -> usize {
        let fits = self.window.min(window).max(0);
        usize::try_from(fits)
            .unwrap_or(0)
            .min(unsent as usize)
            .min(self.max_frame)
    }

    /// Takes `n` sent bytes off the connection's window.
    pub fn spend(&mut self, n: usize) {
        self.window -= n as i64;
    }

    /// One SETTINGS parameter the flow depends on; the change to every
    /// open stream's window when it is the initial window (§6.9.2).
    pub fn setting(&mut self, id: u16, value: u32) -> Result<i64, Breach> {
        match id {
            setting::INITIAL_WINDOW_SIZE => {
                let value = i64::from(value);
                if value > MAX_WINDOW {
                    return Err(Breach::Connection(code::FLOW_CONTROL_ERROR));
                }
                let delta = value - self.initial;
                self.initial = value;
                Ok(delta)
            }
            setting::MAX_FRAME_SIZE => {
                if !(MIN_MAX_FRAME as u32..=MAX_FRAME_CEILING).contains(&value) {
                    return Err(Breach::Connection(code::PROTOCOL_ERROR));
                }
                self.max_frame = value as usize;
                Ok(0)
            }
            _ => Ok(0),
        }
    }
}

/// A WINDOW_UPDATE's increment (§6.9): four bytes, not 0.
pub(crate) fn increment(payload: &[u8], on_stream: bool) -> Result<i64, Breach> {
    let bytes: [u8; 4] = payload
        .try_into()
        .map_err(|_| Breach::Connection(code::FRAME_SIZE_ERROR))?;
    let increment = u32::from_be_bytes(bytes) & 0x7fff_ffff;
    match (increment, on_stream) {
        (0, true) => Err(Breach::Stream(code::PROTOCOL_ERROR)),
        (0, false) => Err(Breach::Connection(code::PROTOCOL_ERROR)),
        _ => Ok(i64::from(increment)),
    }
}

/// Moves `window` by `delta`; past 2^31 - 1 the stream's window is a
/// stream error, the connection's (or any by a SETTINGS change) a
/// connection error (§6.9.1, §6.9.2).
pub(crate) fn grow(window: &mut i64, delta: i64, breach: Breach) -> Result<(), Breach> {
    if *window + delta > MAX_WINDOW {
        return Err(breach);
    }
    *window += delta;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_carries_what_every_window_and_the_frame_size_allow() {
        let mut flow = SendFlow::default();
        assert_eq!(flow.allowance(100, 1000), 100);
        assert_eq!(flow.allowance(-5, 1000), 0);
        assert_eq!(flow.allowance(1 << 20, 100_000), MIN_MAX_FRAME);
        flow.spend(65_535 - 10);
        assert_eq!(flow.allowance(1 << 20, 1000), 10);
        flow.spend(20);
        assert_eq!(flow.allowance(1 << 20, 1000), 0);
    }

    #[test]
    fn settings_move_open_windows_by_the_difference() {
        let mut flow = SendFlow::default();
        assert_eq!(
            flow.setting(setting::INITIAL_WINDOW_SIZE, 100),
            Ok(100 - 65_535)
        );
        assert_eq!(flow.setting(setting::INITIAL_WINDOW_SIZE, 0), Ok(-100));
        assert_eq!(flow.initial, 0);
        assert_eq!(
            flow.setting(setting::INITIAL_WINDOW_SIZE, 1 << 31),
            Err(Breach::Connection(code::FLOW_CONTROL_ERROR))
        );
        assert_eq!(flow.setting(setting::MAX_FRAME_SIZE, 1 << 20), Ok(0));
        assert_eq!(flow.max_frame, 1 << 20);
        for bad in [16_383, 1 << 24] {
            assert_eq!(
                flow.setting(setting::MAX_FRAME_SIZE, bad),
                Err(Breach::Connection(code::PROTOCOL_ERROR))
            );
        }
    }

    #[test]
    fn window_updates_are_checked_as_the_rfc_says() {
        assert_eq!(increment(&5u32.to_be_bytes(), true), Ok(5));
        assert_eq!(
            increment(&0u32.to_be_bytes(), true),
            Err(Breach::Stream(code::PROTOCOL_ERROR))
        );
        assert_eq!(
            increment(&0u32.to_be_bytes(), false),
            Err(Breach::Connection(code::PROTOCOL_ERROR))
        );
        assert_eq!(
            increment(&[0, 1], false),
            Err(Breach::Connection(code::FRAME_SIZE_ERROR))
        );
        let mut w = MAX_WINDOW - 1;
        let over = Breach::Stream(code::FLOW_CONTROL_ERROR);
        assert_eq!(grow(&mut w, 1, over), Ok(()));
        assert_eq!(grow(&mut w, 1, over), Err(over));
        let mut w = -50;
        assert_eq!(grow(&mut w, 30, over), Ok(()));
        assert_eq!(w, -20);
    }
}
