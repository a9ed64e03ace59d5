//! What one request looks like before it is encoded: the method, extra
//! headers and body of `shootout load`'s request or of a mix's kind.

/// What every request looks like. Encoded once into bytes before the run
/// (`crate::request`), or once per kind of a mix.
#[derive(Debug, Clone, Default)]
pub struct RequestSpec {
    pub method: String,
    /// Extra headers, in order. `Host`, `Content-Length` and `Connection`
    /// are added by the engine unless given here.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}
