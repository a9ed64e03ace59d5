//! Property test of the URL check (a child module of `url`): whatever text
//! follows a loopback `http://host:port`, an accepted URL encodes to a
//! request whose request line is `METHOD SP target SP HTTP/1.1` with no
//! CR, LF, space or fragment in the target, and a Host line that is one
//! line: no URL can inject a header or break the request line.

use crate::plan::{Endpoint, RequestSpec};
use crate::props::config;
use crate::request::encode;
use proptest::prelude::*;

/// Characters that matter to a request line, and a few that do not.
const PICKS: &[char] = &[
    '\r', '\n', ' ', '\t', '\0', '/', '?', '#', '%', '@', ':', '[', ']', '"', '<', 'é', 'a', 'Z',
    '0', 'f', '.', '-', '=', '&', '\u{85}', '\u{2028}',
];

fn tail() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(PICKS), 0..24)
            .prop_map(|v| v.into_iter().collect()),
        any::<String>(),
        "[ -~]{0,24}",
    ]
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn no_accepted_url_breaks_the_request_line(
        base in prop::sample::select(&["http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9"][..]),
        tail in tail(),
    ) {
        let url = format!("{base}{tail}");
        if let Ok(endpoint) = Endpoint::parse(&url) {
            let bytes = encode(&endpoint, &RequestSpec::default(), true).bytes;
            let text = String::from_utf8(bytes).expect("an accepted URL is ASCII");
            let mut lines = text.split("\r\n");
            let line = lines.next().unwrap();
            let words: Vec<&str> = line.split(' ').collect();
            prop_assert_eq!(words.len(), 3, "{:?}", line);
            prop_assert_eq!(words[0], "GET");
            prop_assert_eq!(words[2], "HTTP/1.1");
            let target = words[1];
            prop_assert!(target.starts_with('/'), "{:?}", target);
            prop_assert!(!target.contains(['\r', '\n', ' ', '#']), "{:?}", target);
            prop_assert!(target.bytes().all(|b| b.is_ascii_graphic()), "{:?}", target);
            let host = lines.next().unwrap();
            prop_assert!(host.starts_with("Host: "), "{:?}", host);
            prop_assert!(!host[6..].contains([' ', '\r', '\n']), "{:?}", host);
            prop_assert_eq!(lines.next(), Some(""), "no third line: {:?}", text);
        }
    }
}
