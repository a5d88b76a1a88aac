//! A certificate's subject as Java's `X500Principal.getName()` prints it (RFC 2253), the
//! string Kafka's `SslPrincipalMapper` rules see and, by default, the principal's name.
//!
//! Java's format, followed here: the RDNs in reverse order of their DER encoding, joined by
//! `,`; the attributes of a multi-valued RDN in encoding order, joined by `+`; each attribute as
//! `KEYWORD=value` for the RFC 2253 keywords (CN, C, L, ST, O, OU, STREET, DC, UID) and as the
//! dotted OID otherwise (emailAddress is `1.2.840.113549.1.9.1`). A value whose type is one of
//! the directory string types (PrintableString, TeletexString, IA5String, GeneralString,
//! BMPString, UTF8String) under a keyword is printed as text with `,=+<>#;"\` escaped by a
//! backslash, NUL as `\00`, and leading or trailing spaces (and CRs) escaped; any other value,
//! and every value of an OID-named attribute, is `#` and the lowercase hex of its DER encoding.

use x509_parser::der_parser::asn1_rs::{Any, Class, Tag};
use x509_parser::prelude::{FromDer, X509Certificate};

/// The RFC 2253 keywords Java prints by name, by OID.
const KEYWORDS: &[(&str, &str)] = &[
    ("2.5.4.3", "CN"),
    ("2.5.4.6", "C"),
    ("2.5.4.7", "L"),
    ("2.5.4.8", "ST"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.9", "STREET"),
    ("0.9.2342.19200300.100.1.25", "DC"),
    ("0.9.2342.19200300.100.1.1", "UID"),
];

/// The characters Java's `AVA.toRFC2253String` escapes with a backslash.
const ESCAPED: &str = ",=+<>#;\"\\";

/// The subject of the DER certificate `der` in Java's RFC 2253 form; the error says why the
/// certificate could not be read.
pub(crate) fn subject_rfc2253(der: &[u8]) -> Result<String, String> {
    let (_, cert) =
        X509Certificate::from_der(der).map_err(|e| format!("cannot parse the certificate: {e}"))?;
    let mut rdns = Vec::new();
    for rdn in cert.subject().iter() {
        let mut avas = Vec::new();
        for ava in rdn.iter() {
            let oid = ava.attr_type().to_id_string();
            let value = ava.attr_value();
            let keyword = KEYWORDS.iter().find(|(id, _)| *id == oid).map(|(_, k)| *k);
            let text = match keyword {
                Some(keyword) => match directory_string(value) {
                    Some(text) => format!("{keyword}={}", escape(&text)),
                    None => format!("{keyword}=#{}", der_hex(value)),
                },
                None => format!("{oid}=#{}", der_hex(value)),
            };
            avas.push(text);
        }
        rdns.push(avas.join("+"));
    }
    rdns.reverse();
    Ok(rdns.join(","))
}

/// The text of a directory string value (as Java decodes each type), `None` for other types.
fn directory_string(value: &Any<'_>) -> Option<String> {
    if value.class() != Class::Universal {
        return None;
    }
    let data = value.data;
    match value.tag() {
        Tag::PrintableString | Tag::Ia5String | Tag::GeneralString | Tag::Utf8String => {
            Some(String::from_utf8_lossy(data).into_owned())
        }
        // Java reads TeletexString as ISO-8859-1.
        Tag::TeletexString => Some(data.iter().map(|&b| char::from(b)).collect()),
        Tag::BmpString => {
            let units: Vec<u16> = data
                .chunks(2)
                .map(|pair| u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]))
                .collect();
            Some(String::from_utf16_lossy(&units))
        }
        _ => None,
    }
}

/// Java's escaping of a string value (see the module doc).
fn escape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let is_blank = |c: &char| *c == ' ' || *c == '\r';
    let lead = chars.iter().take_while(|c| is_blank(c)).count();
    let trail = chars.len() - chars.iter().rev().take_while(|c| is_blank(c)).count();
    let mut out = String::with_capacity(text.len() + 4);
    for (i, c) in chars.iter().enumerate() {
        if *c == '\0' {
            out.push_str("\\00");
            continue;
        }
        if ESCAPED.contains(*c) || i < lead || i >= trail {
            out.push('\\');
        }
        out.push(*c);
    }
    out
}

/// The lowercase hex of the value's DER encoding (tag, length, contents).
fn der_hex(value: &Any<'_>) -> String {
    let data = value.data;
    let mut der = Vec::with_capacity(data.len() + 6);
    let class_bits = (value.class() as u8) << 6;
    let constructed = if value.header.is_constructed() {
        0x20
    } else {
        0
    };
    let tag = value.tag().0;
    if tag < 31 {
        der.push(class_bits | constructed | tag as u8);
    } else {
        der.push(class_bits | constructed | 0x1f);
        let mut groups = Vec::new();
        let mut rest = tag;
        loop {
            groups.push((rest & 0x7f) as u8);
            rest >>= 7;
            if rest == 0 {
                break;
            }
        }
        for (i, group) in groups.iter().enumerate().rev() {
            der.push(if i == 0 { *group } else { group | 0x80 });
        }
    }
    let len = data.len();
    if len < 0x80 {
        der.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        der.push(0x80 | (bytes.len() - skip) as u8);
        der.extend_from_slice(&bytes[skip..]);
    }
    der.extend_from_slice(data);
    der.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert_with(subject: rcgen::DistinguishedName) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = subject;
        let key = rcgen::KeyPair::generate().unwrap();
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn prints_rdns_in_reverse_with_keywords() {
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CountryName, "US");
        dn.push(rcgen::DnType::OrganizationName, "acme");
        dn.push(rcgen::DnType::OrganizationalUnitName, "eng");
        dn.push(rcgen::DnType::CommonName, "alice");
        assert_eq!(
            subject_rfc2253(&cert_with(dn)).unwrap(),
            "CN=alice,OU=eng,O=acme,C=US"
        );
    }

    #[test]
    fn escapes_as_java_does() {
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::OrganizationName, " a,b=c+d<e>f#g;h\"i\\j ");
        dn.push(rcgen::DnType::CommonName, "#x");
        assert_eq!(
            subject_rfc2253(&cert_with(dn)).unwrap(),
            r#"CN=\#x,O=\ a\,b\=c\+d\<e\>f\#g\;h\"i\\j\ "#
        );
    }

    #[test]
    fn other_attributes_are_hex_of_their_der() {
        let mut dn = rcgen::DistinguishedName::new();
        // emailAddress (IA5String "a@b"): Java prints it by OID, as DER hex.
        dn.push(
            rcgen::DnType::CustomDnType(vec![1, 2, 840, 113549, 1, 9, 1]),
            rcgen::DnValue::Ia5String("a@b".try_into().unwrap()),
        );
        dn.push(rcgen::DnType::CommonName, "bob");
        assert_eq!(
            subject_rfc2253(&cert_with(dn)).unwrap(),
            "CN=bob,1.2.840.113549.1.9.1=#1603614062"
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(subject_rfc2253(b"not a certificate").is_err());
    }
}
