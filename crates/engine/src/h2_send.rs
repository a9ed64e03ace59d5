//! The send side of an HTTP/2 session: a new stream's HEADERS, its body
//! in DATA frames as far as the connection's and the stream's windows and
//! the server's frame size allow, and the rest once a WINDOW_UPDATE or a
//! SETTINGS change opens room (oldest stream first). What the server says
//! about the windows is checked by `h2_flow`'s rules; a broken one ends the
//! stream (RST_STREAM) or the connection (GOAWAY) with the RFC's code.
//!
//! The common case costs what it did before flow control: the HEADERS
//! template and one DATA frame copied into the reused output buffer.

use super::{H2Conn, H2Fail, Stream};
use crate::checker::Checker;
use crate::h2::{self, code, flag, kind, put_frame, setting, H2Request};
use crate::h2_flow::{self, Breach, SendFlow};
use crate::job::Job;
use crate::stats::ErrorClass;

impl H2Conn {
    /// Queues a stream for `job`: its HEADERS now, its body as far as the
    /// windows allow (the rest waits for them to open).
    pub fn push(&mut self, job: Job) {
        let id = self.next;
        self.next += 2;
        if self.streams.is_empty() {
            self.first = id;
        }
        let check = self.expect.as_ref().and_then(Checker::for_expect);
        self.request.put_headers(&mut self.out, id);
        let mut stream = Stream {
            job,
            status: 0,
            check,
            window: self.flow.initial,
            unsent: self.request.body_len(),
        };
        send_body(
            &mut self.out,
            &mut self.flow,
            &self.request,
            &mut stream,
            id,
        );
        if stream.unsent > 0 {
            self.flow.waiting += 1;
        }
        self.streams.push_back(Some(stream));
        self.live += 1;
    }

    /// Sends what the windows now allow of the waiting bodies, oldest first.
    fn flush(&mut self) {
        if self.flow.waiting == 0 {
            return;
        }
        let (out, flow, request) = (&mut self.out, &mut self.flow, &self.request);
        for (i, slot) in self.streams.iter_mut().enumerate() {
            if flow.window <= 0 || flow.waiting == 0 {
                break;
            }
            let Some(stream) = slot.as_mut().filter(|s| s.unsent > 0) else {
                continue;
            };
            send_body(out, flow, request, stream, self.first + 2 * i as u32);
            if stream.unsent == 0 {
                flow.waiting -= 1;
            }
        }
    }

    /// A WINDOW_UPDATE for the connection (stream 0) or one stream.
    pub(super) fn window_update(&mut self, stream: u32, payload: &[u8]) -> Result<(), Breach> {
        let increment = h2_flow::increment(payload, stream != 0)?;
        if stream == 0 {
            let over = Breach::Connection(code::FLOW_CONTROL_ERROR);
            h2_flow::grow(&mut self.flow.window, increment, over)?;
        } else if stream >= self.next {
            // A stream we never opened (RFC 9113 §5.1, idle).
            return Err(Breach::Connection(code::PROTOCOL_ERROR));
        } else if let Some(s) = self.stream_mut(stream) {
            let over = Breach::Stream(code::FLOW_CONTROL_ERROR);
            h2_flow::grow(&mut s.window, increment, over)?;
        }
        self.flush();
        Ok(())
    }

    /// The server's SETTINGS: its stream limit, the initial window (every
    /// open stream's window moves by the change) and the frame size; then
    /// the ACK, and whatever the new windows let out after it.
    pub(super) fn settings(&mut self, payload: &[u8]) -> Result<(), Breach> {
        if payload.len() % 6 != 0 {
            return Err(Breach::Connection(code::FRAME_SIZE_ERROR));
        }
        let mut max = self.peer_max.unwrap_or(usize::MAX);
        let mut delta = 0;
        for pair in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let value = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
            if id == setting::MAX_CONCURRENT_STREAMS {
                max = value as usize;
            }
            delta += self.flow.setting(id, value)?;
        }
        if delta != 0 {
            let over = Breach::Connection(code::FLOW_CONTROL_ERROR);
            for s in self.streams.iter_mut().flatten() {
                h2_flow::grow(&mut s.window, delta, over)?;
            }
        }
        self.peer_max = Some(max);
        put_frame(&mut self.out, kind::SETTINGS, flag::ACK, 0, &[]);
        self.flush();
        Ok(())
    }

    /// Ends what a broken rule ends: the stream (RST_STREAM; it fails as
    /// `protocol`) or the whole connection (GOAWAY, then every stream fails).
    pub(super) fn breach(&mut self, stream: u32, result: Result<(), Breach>) -> Result<(), H2Fail> {
        match result {
            Ok(()) => Ok(()),
            Err(Breach::Stream(why)) => {
                if self.stream_mut(stream).is_some() {
                    h2::put_rst_stream(&mut self.out, stream, why);
                    self.finish(stream, Err(ErrorClass::Protocol));
                }
                Ok(())
            }
            Err(Breach::Connection(why)) => {
                h2::put_goaway(&mut self.out, why);
                Err(H2Fail::Violation(match why {
                    code::FLOW_CONTROL_ERROR => {
                        "a flow-control window grown past 2^31-1 (FLOW_CONTROL_ERROR)"
                    }
                    code::FRAME_SIZE_ERROR => "a frame of the wrong size (FRAME_SIZE_ERROR)",
                    _ => "a WINDOW_UPDATE of 0, a frame on a stream never opened or a SETTINGS value out of range (PROTOCOL_ERROR)",
                }))
            }
        }
    }
}

/// Writes DATA frames of `stream`'s body while every window has room.
fn send_body(
    out: &mut Vec<u8>,
    flow: &mut SendFlow,
    request: &H2Request,
    stream: &mut Stream,
    id: u32,
) {
    let total = request.body_len();
    loop {
        let n = flow.allowance(stream.window, stream.unsent);
        if n == 0 {
            return;
        }
        request.put_data(out, id, (total - stream.unsent) as usize, n);
        flow.spend(n);
        stream.window -= n as i64;
        stream.unsent -= n as u32;
    }
}
