//! The few fields of an X.509 certificate that keyless verification needs and `rustls-webpki`
//! does not give: the subject alternative names of kinds email (`rfc822Name`) and URI, the
//! Fulcio OIDC issuer extension, and the subject and issuer names (to tell a self-signed root
//! from an intermediate). webpki parses and checks the whole certificate (chain, validity, key
//! usage, signature); this reader only walks DER that webpki has accepted (or rejects), and is
//! bounded: definite lengths only, at most `MAX_CERTIFICATE_BYTES`, at most
//! `MAX_EXTENSIONS` extensions and `MAX_NAMES` names. A general X.509 crate (`x509-cert` with
//! `der`, `spki`, `const-oid`; or `x509-parser` with `asn1-rs`, `der-parser`, `nom`, `time`)
//! would add crates for four fields (DEVELOPERS.md, dependencies).

/// Certificates larger than this are refused (Fulcio's leaves are ~1 KB, roots under 1 KB).
pub const MAX_CERTIFICATE_BYTES: usize = 16 * 1024;
/// Extensions read at most in one certificate.
const MAX_EXTENSIONS: usize = 64;
/// Subject alternative names read at most.
const MAX_NAMES: usize = 64;

/// DER of the OID 2.5.29.17 (subjectAltName).
const OID_SAN: &[u8] = &[0x55, 0x1d, 0x11];
/// DER of 1.3.6.1.4.1.57264.1.8: Fulcio's OIDC issuer (V2, a DER UTF8String).
const OID_ISSUER_V2: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xbf, 0x30, 0x01, 0x08];
/// DER of 1.3.6.1.4.1.57264.1.1: Fulcio's OIDC issuer (V1, the raw string bytes).
const OID_ISSUER_V1: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xbf, 0x30, 0x01, 0x01];

/// One DER element: its tag byte and contents.
#[derive(Debug, Clone, Copy)]
struct Tlv<'a> {
    tag: u8,
    value: &'a [u8],
}

/// Read one element from the front of `input`: (element, rest). Only single-byte tags and
/// definite lengths of at most four bytes (DER).
fn read(input: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let (&tag, rest) = input.split_first()?;
    if tag & 0x1f == 0x1f {
        return None;
    }
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, after) = rest.split_at(count);
        rest = after;
        bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b))
    };
    if rest.len() < len {
        return None;
    }
    let (value, rest) = rest.split_at(len);
    Some((Tlv { tag, value }, rest))
}

/// The elements of a constructed value, in order (`None` if any is malformed).
fn children(mut input: &[u8]) -> Option<Vec<Tlv<'_>>> {
    let mut out = Vec::new();
    while !input.is_empty() {
        let (tlv, rest) = read(input)?;
        out.push(tlv);
        input = rest;
    }
    Some(out)
}

/// What keyless verification reads from a certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    /// The DER of the issuer Name.
    pub issuer: Vec<u8>,
    /// The DER of the subject Name.
    pub subject: Vec<u8>,
    /// Email (`rfc822Name`) and URI subject alternative names, in order.
    pub names: Vec<String>,
    /// The Fulcio OIDC issuer: extension 1.3.6.1.4.1.57264.1.8, else 1.1.
    pub oidc_issuer: Option<String>,
}

impl Fields {
    /// Whether the certificate names itself as its issuer (a root).
    pub fn self_issued(&self) -> bool {
        self.issuer == self.subject
    }
}

const SEQUENCE: u8 = 0x30;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const BOOLEAN: u8 = 0x01;
const UTF8_STRING: u8 = 0x0c;
/// `[3] EXPLICIT` (the extensions of a TBSCertificate).
const EXTENSIONS_TAG: u8 = 0xa3;
/// `[0] EXPLICIT` (the version of a TBSCertificate).
const VERSION_TAG: u8 = 0xa0;
/// GeneralName `[1] IMPLICIT IA5String` (rfc822Name).
const SAN_EMAIL: u8 = 0x81;
/// GeneralName `[6] IMPLICIT IA5String` (uniformResourceIdentifier).
const SAN_URI: u8 = 0x86;

/// Read the fields of a DER certificate; `None` if it is not one (or is too large).
pub fn fields(der: &[u8]) -> Option<Fields> {
    if der.len() > MAX_CERTIFICATE_BYTES {
        return None;
    }
    let (cert, rest) = read(der)?;
    if cert.tag != SEQUENCE || !rest.is_empty() {
        return None;
    }
    let (tbs, _) = read(cert.value)?;
    if tbs.tag != SEQUENCE {
        return None;
    }
    let parts = children(tbs.value)?;
    // version [0]? serial, signature, issuer, validity, subject, spki, ...
    let skip = usize::from(parts.first()?.tag == VERSION_TAG);
    let field = |i: usize| parts.get(skip + i).copied();
    let (issuer, subject) = (field(2)?, field(4)?);
    if issuer.tag != SEQUENCE || subject.tag != SEQUENCE {
        return None;
    }
    let mut out = Fields {
        issuer: issuer.value.to_vec(),
        subject: subject.value.to_vec(),
        ..Fields::default()
    };
    let Some(extensions) = parts.iter().find(|p| p.tag == EXTENSIONS_TAG) else {
        return Some(out);
    };
    let (list, _) = read(extensions.value)?;
    let mut v1 = None;
    for (i, ext) in children(list.value)?.into_iter().enumerate() {
        if i >= MAX_EXTENSIONS {
            return None;
        }
        let items = children(ext.value)?;
        let oid = items.first().filter(|t| t.tag == OID)?;
        let value = match items.get(1) {
            Some(t) if t.tag == BOOLEAN => items.get(2)?,
            Some(t) => t,
            None => return None,
        };
        if value.tag != OCTET_STRING {
            return None;
        }
        match oid.value {
            OID_SAN => {
                let (names, _) = read(value.value)?;
                for (n, name) in children(names.value)?.into_iter().enumerate() {
                    if n >= MAX_NAMES {
                        return None;
                    }
                    if name.tag == SAN_EMAIL || name.tag == SAN_URI {
                        out.names
                            .push(String::from_utf8_lossy(name.value).into_owned());
                    }
                }
            }
            OID_ISSUER_V2 => {
                let (text, _) = read(value.value)?;
                if text.tag != UTF8_STRING {
                    return None;
                }
                out.oidc_issuer = Some(std::str::from_utf8(text.value).ok()?.to_owned());
            }
            OID_ISSUER_V1 => v1 = Some(String::from_utf8_lossy(value.value).into_owned()),
            _ => {}
        }
    }
    if out.oidc_issuer.is_none() {
        out.oidc_issuer = v1;
    }
    Some(out)
}

/// The DER bodies of the PEM `CERTIFICATE` blocks of `text`, at most `max` (`Err`: more than
/// that, or a block that is not base64).
pub fn pem_certificates(text: &str, max: usize) -> Result<Vec<Vec<u8>>, String> {
    use base64::Engine as _;
    let mut out = Vec::new();
    let mut body: Option<String> = None;
    for line in text.lines().map(str::trim) {
        match (&mut body, line) {
            (None, "-----BEGIN CERTIFICATE-----") => body = Some(String::new()),
            (Some(b), "-----END CERTIFICATE-----") => {
                if out.len() == max {
                    return Err(format!("more than {max} certificates"));
                }
                let der = base64::engine::general_purpose::STANDARD
                    .decode(b.as_bytes())
                    .map_err(|e| format!("certificate {} is not base64: {e}", out.len() + 1))?;
                if der.len() > MAX_CERTIFICATE_BYTES {
                    return Err(format!(
                        "certificate {} has {} bytes, more than {MAX_CERTIFICATE_BYTES}",
                        out.len() + 1,
                        der.len()
                    ));
                }
                out.push(der);
                body = None;
            }
            (Some(b), l) => b.push_str(l),
            (None, _) => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue24_der_reader_refuses_what_is_not_der() {
        assert!(fields(&[]).is_none());
        assert!(fields(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]).is_none());
        assert!(fields(&[0x30, 0x85, 0, 0, 0, 0, 1]).is_none());
        assert!(fields(&[0x1f, 0x00]).is_none());
        assert!(fields(&vec![0x30; MAX_CERTIFICATE_BYTES + 1]).is_none());
        // A SEQUENCE of a SEQUENCE that is not a TBSCertificate.
        assert!(fields(&[0x30, 0x02, 0x30, 0x00]).is_none());
        assert_eq!(
            pem_certificates(
                "-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----",
                4
            )
            .unwrap_err(),
            "certificate 1 is not base64: Invalid symbol 33, offset 0."
        );
        let one = "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n";
        assert_eq!(pem_certificates(one, 1).unwrap(), vec![vec![0x30, 0x00]]);
        assert_eq!(
            pem_certificates(&one.repeat(2), 1).unwrap_err(),
            "more than 1 certificates"
        );
    }
}
