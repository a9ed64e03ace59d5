//! What a target serves besides cleartext HTTP/1.1, as its manifest's
//! `protocols` key declares it (a closed vocabulary: `http/1.1`, `tls`,
//! `mtls`, `h2`, `ws`; targets/SPEC.md "TLS" and "WebSocket"), and the
//! environment that asks a server for its TLS port (`TLS_PORT`,
//! `TLS_CERT`, `TLS_KEY`, `TLS_CLIENT_CA`) or its WebSocket port
//! (`WS_PORT`, for a target whose `/ws` is a second process). The runner
//! and the verifier build that environment here, so a target is only ever
//! asked for what it claims.

use std::path::PathBuf;

/// One value of `protocols` in `target.toml`: the contract's vocabulary.
pub use shootout_contract::protocol::Protocol;

/// The protocols a target claims. The default (no `protocols` key) is
/// cleartext HTTP/1.1 only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Protocols {
    pub tls: bool,
    pub mtls: bool,
    pub h2: bool,
    /// The WebSocket echo at `/ws`.
    pub ws: bool,
}

impl Protocols {
    /// Checks a manifest's list: `http/1.1` present (the cleartext port is
    /// never optional), no value twice, `mtls` and `h2` only with `tls`
    /// (both live on the TLS port). The error is the message for the key.
    pub fn from_list(list: &[Protocol]) -> Result<Protocols, ProtocolsError> {
        for (i, p) in list.iter().enumerate() {
            if list[..i].contains(p) {
                return Err(ProtocolsError::Twice(p.name()));
            }
        }
        if !list.contains(&Protocol::Http1) {
            return Err(ProtocolsError::NoHttp1);
        }
        let has = |p| list.contains(&p);
        for needs_tls in [Protocol::Mtls, Protocol::H2] {
            if has(needs_tls) && !has(Protocol::Tls) {
                return Err(ProtocolsError::WithoutTls(needs_tls.name()));
            }
        }
        Ok(Protocols {
            tls: has(Protocol::Tls),
            mtls: has(Protocol::Mtls),
            h2: has(Protocol::H2),
            ws: has(Protocol::Ws),
        })
    }

    /// True when the target claims `p`.
    pub fn has(self, p: Protocol) -> bool {
        match p {
            Protocol::Http1 => true,
            Protocol::Tls => self.tls,
            Protocol::Mtls => self.mtls,
            Protocol::H2 => self.h2,
            Protocol::Ws => self.ws,
        }
    }

    /// The claimed protocols, in manifest order.
    pub fn list(self) -> Vec<Protocol> {
        Protocol::ALL.into_iter().filter(|&p| self.has(p)).collect()
    }
}

/// Why a manifest's `protocols` list is refused: the message for the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolsError {
    #[error("lists {0:?} twice")]
    Twice(&'static str),
    #[error("must list \"http/1.1\": every target serves cleartext HTTP/1.1 on PORT")]
    NoHttp1,
    /// `mtls` or `h2` without `tls`.
    #[error("lists {0:?} without \"tls\": it is served on the TLS port")]
    WithoutTls(&'static str),
}

/// The PEM files a TLS port is started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server's certificate chain (`TLS_CERT`).
    pub cert: PathBuf,
    /// The server's private key (`TLS_KEY`).
    pub key: PathBuf,
    /// The CA that signs accepted client certificates (`TLS_CLIENT_CA`);
    /// `Some` asks for mutual TLS.
    pub client_ca: Option<PathBuf>,
}

/// Why a target cannot be asked for a TLS port.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target} does not claim {protocol:?} in its manifest's protocols")]
pub struct Unsupported {
    pub target: String,
    pub protocol: &'static str,
}

/// The variables (targets/SPEC.md "TLS") that start `target`'s TLS port on
/// `tls_port` with `files`, to pass beside `PORT`; an error when the target
/// does not claim `tls` (or `mtls`, when `files.client_ca` is set).
pub fn tls_env(
    target: &str,
    protocols: Protocols,
    tls_port: u16,
    files: &TlsFiles,
) -> Result<Vec<(String, String)>, Unsupported> {
    let unsupported = |p: Protocol| Unsupported {
        target: target.to_owned(),
        protocol: p.name(),
    };
    if !protocols.tls {
        return Err(unsupported(Protocol::Tls));
    }
    let path = |p: &PathBuf| p.to_string_lossy().into_owned();
    let mut env = vec![
        ("TLS_PORT".to_owned(), tls_port.to_string()),
        ("TLS_CERT".to_owned(), path(&files.cert)),
        ("TLS_KEY".to_owned(), path(&files.key)),
    ];
    if let Some(ca) = &files.client_ca {
        if !protocols.mtls {
            return Err(unsupported(Protocol::Mtls));
        }
        env.push(("TLS_CLIENT_CA".to_owned(), path(ca)));
    }
    Ok(env)
}

/// Where a target serves `/ws`: on `PORT` with every other route, or, for
/// a manifest with `ws_port = true`, on a port of its own (`WS_PORT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsPlace {
    Port,
    OwnPort,
}

/// The variable that starts `target`'s WebSocket process on `ws_port`
/// (none when `/ws` is served on `PORT`); an error when the target does
/// not claim `ws`.
pub fn ws_env(
    target: &str,
    protocols: Protocols,
    place: WsPlace,
    ws_port: u16,
) -> Result<Vec<(String, String)>, Unsupported> {
    if !protocols.ws {
        return Err(Unsupported {
            target: target.to_owned(),
            protocol: Protocol::Ws.name(),
        });
    }
    Ok(match place {
        WsPlace::Port => Vec::new(),
        WsPlace::OwnPort => vec![("WS_PORT".to_owned(), ws_port.to_string())],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Protocol::*;

    #[test]
    fn a_list_needs_cleartext_and_tls_under_mtls_and_h2() {
        assert_eq!(Protocols::from_list(&[Http1]), Ok(Protocols::default()));
        let all = Protocols::from_list(&[Http1, Tls, Mtls, H2, Ws]).unwrap();
        assert_eq!(all.list(), Protocol::ALL);
        let why = |list: &[Protocol]| Protocols::from_list(list).unwrap_err().to_string();
        assert!(why(&[Tls]).contains("http/1.1"));
        assert!(why(&[Http1, H2]).contains("\"h2\" without \"tls\""));
        assert!(Protocols::from_list(&[Http1, Mtls]).is_err());
        assert!(why(&[Http1, Tls, Tls]).contains("twice"));
    }

    #[test]
    fn every_value_and_variable_is_in_spec_md() {
        let spec = include_str!("../../../targets/SPEC.md");
        for p in Protocol::ALL {
            assert!(
                spec.contains(&format!("| `{p}` |")),
                "{p} not in SPEC.md's table"
            );
        }
        for var in [
            "TLS_PORT",
            "TLS_CERT",
            "TLS_KEY",
            "TLS_CLIENT_CA",
            "WS_PORT",
        ] {
            assert!(
                spec.contains(&format!("| `{var}` |")),
                "{var} not in SPEC.md"
            );
        }
    }

    #[test]
    fn the_env_asks_only_for_what_is_claimed() {
        let files = TlsFiles {
            cert: "/c/server.pem".into(),
            key: "/c/server.key".into(),
            client_ca: None,
        };
        let tls = Protocols::from_list(&[Http1, Tls]).unwrap();
        let env = tls_env("t", tls, 8443, &files).unwrap();
        let names: Vec<_> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["TLS_PORT", "TLS_CERT", "TLS_KEY"]);
        assert_eq!(env[0].1, "8443");
        let err = tls_env("t", Protocols::default(), 8443, &files).unwrap_err();
        assert_eq!(err.protocol, "tls");
        let mutual = TlsFiles {
            client_ca: Some("/c/ca.pem".into()),
            ..files
        };
        assert_eq!(
            tls_env("t", tls, 8443, &mutual).unwrap_err().to_string(),
            "t does not claim \"mtls\" in its manifest's protocols"
        );
        let mtls = Protocols::from_list(&[Http1, Tls, Mtls]).unwrap();
        let env = tls_env("t", mtls, 8443, &mutual).unwrap();
        assert_eq!(env[3], ("TLS_CLIENT_CA".into(), "/c/ca.pem".into()));
    }

    #[test]
    fn ws_port_is_asked_only_of_a_second_process() {
        let ws = Protocols::from_list(&[Http1, Ws]).unwrap();
        assert_eq!(ws_env("t", ws, WsPlace::Port, 9000).unwrap(), vec![]);
        assert_eq!(
            ws_env("t", ws, WsPlace::OwnPort, 9000).unwrap(),
            vec![("WS_PORT".to_owned(), "9000".to_owned())]
        );
        let err = ws_env("t", Protocols::default(), WsPlace::Port, 9000).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t does not claim \"ws\" in its manifest's protocols"
        );
    }
}
