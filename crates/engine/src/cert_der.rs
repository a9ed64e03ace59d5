//! The few fields of an X.509 certificate shootout reads itself, of any
//! version (v1 certificates included, which webpki refuses to parse): the
//! subject public key info, to check that `--key` fits `--cert`, and the
//! validity dates and subject common name, to check a server certificate
//! trusted as an exact match of `--cacert`. A minimal DER walk over `Certificate ::= SEQUENCE {
//! tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber, signature,
//! issuer, validity, subject, subjectPublicKeyInfo, .. }, .. }`.

/// What shootout reads of a certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CertFields<'a> {
    /// The whole SubjectPublicKeyInfo element, tag and length included (as
    /// rustls' `SigningKey::public_key` gives it).
    pub spki: &'a [u8],
    /// notBefore and notAfter, in seconds since the Unix epoch.
    pub not_before: i64,
    pub not_after: i64,
    /// The subject's first common name (CN), if any.
    pub common_name: Option<&'a str>,
}

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const VERSION: u8 = 0xa0;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// The fields of a DER certificate; None when it is not one.
pub(crate) fn fields(der: &[u8]) -> Option<CertFields<'_>> {
    let (tag, cert, _, _) = element(der)?;
    let (tbs_tag, tbs, _, _) = element(cert)?;
    if tag != SEQUENCE || tbs_tag != SEQUENCE {
        return None;
    }
    let mut rest = tbs;
    let (first, _, _, after) = element(rest)?;
    if first == VERSION {
        rest = after;
    }
    let (serial, _, _, after) = element(rest)?;
    let (_signature, _, _, after) = element(after)?;
    let (_issuer, _, _, after) = element(after)?;
    let (validity_tag, validity, _, after) = element(after)?;
    let (_subject, subject, _, after) = element(after)?;
    let (spki_tag, _, spki, _) = element(after)?;
    if serial != INTEGER || validity_tag != SEQUENCE || spki_tag != SEQUENCE {
        return None;
    }
    let (before_tag, before, _, after) = element(validity)?;
    let (after_tag, not_after, _, _) = element(after)?;
    Some(CertFields {
        spki,
        not_before: time(before_tag, before)?,
        not_after: time(after_tag, not_after)?,
        common_name: common_name(subject),
    })
}

/// The first CN (OID 2.5.4.3) of a Name's RDN sequence.
fn common_name(mut rdns: &[u8]) -> Option<&str> {
    while let Some((_, set, _, rest)) = element(rdns) {
        let mut attrs = set;
        while let Some((_, attr, _, more)) = element(attrs) {
            let (_, oid, _, value) = element(attr)?;
            if oid == [0x55, 0x04, 0x03] {
                let (_, text, _, _) = element(value)?;
                return std::str::from_utf8(text).ok();
            }
            attrs = more;
        }
        rdns = rest;
    }
    None
}

/// A DER element: its tag, contents, the whole element and what follows it.
type Element<'a> = (u8, &'a [u8], &'a [u8], &'a [u8]);

/// The first DER element of `input`.
fn element(input: &[u8]) -> Option<Element<'_>> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    let header = input.len() - rest.len();
    Some((tag, &rest[..len], &input[..header + len], &rest[len..]))
}

/// A UTCTime (`YYMMDDHHMMSSZ`, years 1950 to 2049) or GeneralizedTime
/// (`YYYYMMDDHHMMSSZ`) in seconds since the Unix epoch.
fn time(tag: u8, text: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(text).ok()?.strip_suffix('Z')?;
    let (year, rest) = match (tag, text.len()) {
        (UTC_TIME, 12) => {
            let yy: i32 = text[..2].parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, &text[2..])
        }
        (GENERALIZED_TIME, 14) => (text[..4].parse().ok()?, &text[4..]),
        _ => return None,
    };
    let n = |i: usize| -> Option<u8> { rest.get(i..i + 2)?.parse().ok() };
    let month = ::time::Month::try_from(n(0)?).ok()?;
    let date = ::time::Date::from_calendar_date(year, month, n(2)?).ok()?;
    let at = date.with_hms(n(4)?, n(6)?, n(8)?).ok()?;
    Some(at.assume_utc().unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_both_forms_are_seconds_since_the_epoch() {
        assert_eq!(time(UTC_TIME, b"700101000000Z"), Some(0));
        assert_eq!(time(UTC_TIME, b"000301000000Z"), Some(951_868_800));
        assert_eq!(
            time(GENERALIZED_TIME, b"20380119031408Z"),
            Some(2_147_483_648)
        );
        assert_eq!(time(UTC_TIME, b"701301000000Z"), None);
        assert_eq!(time(UTC_TIME, b"7001010000Z"), None);
    }

    #[test]
    fn a_generated_certificate_gives_its_key_and_dates() {
        let dir = std::env::temp_dir().join(format!("shootout-cert-der-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let certs = shootout_certs::write(&dir).unwrap_or_else(|e| panic!("{e}"));
        let pem = std::fs::read(&certs.server_cert).unwrap_or_default();
        use rustls::pki_types::pem::PemObject;
        let der = rustls::pki_types::CertificateDer::from_pem_slice(&pem)
            .unwrap_or_else(|e| panic!("{e}"));
        let f = fields(&der).unwrap_or_else(|| panic!("parsed"));
        assert_eq!(f.spki[0], SEQUENCE);
        assert!(f.not_before < f.not_after);
        assert!(f.common_name.is_some());
        assert!(fields(&der[..der.len() / 2]).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
