//! Emits `src/protocol/messages/mod.rs`: the module list, the `ApiKey` table and the
//! `RequestKind`/`ResponseKind` enums that decode and encode a body by API key.

use super::emit::module_name;
use super::emit_error_codes::emit_for_each_error_code;
use super::spec::Spec;
use std::fmt::Write;

fn api_name(spec: &Spec) -> String {
    spec.name.trim_end_matches("Request").to_string()
}

fn listener(l: &str) -> &'static str {
    match l {
        "zkBroker" => "c::Listener::ZkBroker",
        "broker" => "c::Listener::Broker",
        "controller" => "c::Listener::Controller",
        other => panic!("unknown listener {other}"),
    }
}

/// `ResponseKind::set_throttle_time_ms`, over the responses whose top level has Kafka's
/// `ThrottleTimeMs` field.
fn emit_set_throttle_time(out: &mut String, specs: &[Spec], requests: &[&Spec]) {
    out.push_str(
        "\n    /// Sets the top-level `throttle_time_ms` of a body that has the field (KIP-219: how\n    \
         /// long the broker mutes the connection for a quota); false for one without it.\n    \
         pub fn set_throttle_time_ms(&mut self, ms: i32) -> bool {\n        match self {\n",
    );
    for r in requests {
        let response = format!("{}Response", api_name(r));
        let has_field = specs
            .iter()
            .find(|s| s.name == response)
            .is_some_and(|s| s.fields.iter().any(|f| f.name == "ThrottleTimeMs"));
        if has_field {
            writeln!(
                out,
                "            ResponseKind::{}(m) => {{\n                m.throttle_time_ms = ms;\n                true\n            }}",
                api_name(r)
            )
            .ok();
        }
    }
    out.push_str("            _ => false,\n        }\n    }\n");
}

pub fn emit_mod(specs: &[Spec]) -> String {
    let mut out = String::new();
    out.push_str(
        "//! Every message of Kafka 3.9's specifications (`kafka-3.9-message-specs/`), generated\n\
         //! by `tests/it/codegen`: one module per spec, the [`ApiKey`] table (valid, flexible and\n\
         //! deprecated versions, listeners, header versions) and [`RequestKind`]/[`ResponseKind`],\n\
         //! which decode and encode a body by API key. Do not edit; regenerate with\n\
         //! `UPDATE_CODEGEN=1 cargo test --test it generated_protocol_code_is_fresh`.\n\n\
         // Generated code reads simplest with these patterns; the rules they relax are checked on\n\
         // the generator instead.\n\
         #![allow(unused_variables, unused_mut, clippy::field_reassign_with_default)]\n\
         #![allow(clippy::large_enum_variant, clippy::nonminimal_bool, clippy::overly_complex_bool_expr)]\n\n\
         use crate::protocol::codec as c;\n\n",
    );
    for s in specs {
        writeln!(out, "pub mod {};", module_name(s)).ok();
    }
    out.push('\n');
    for s in specs {
        writeln!(out, "pub use {}::{};", module_name(s), s.name).ok();
    }
    let requests: Vec<&Spec> = specs.iter().filter(|s| s.kind == "request").collect();
    let response_of = |req: &Spec| -> String { format!("{}Response", api_name(req)) };
    for r in &requests {
        assert!(
            specs
                .iter()
                .any(|s| s.name == response_of(r) && s.api_key == r.api_key),
            "{} has no matching response spec",
            r.name
        );
    }
    out.push_str("\n/// The API keys of Kafka 3.9.\n#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n#[repr(i16)]\npub enum ApiKey {\n");
    for r in &requests {
        writeln!(
            out,
            "    /// `{}` requests and responses.\n    {} = {},",
            r.name,
            api_name(r),
            r.api_key.unwrap_or(-1)
        )
        .ok();
    }
    out.push_str("}\n\nimpl ApiKey {\n    /// Every API key, in key order.\n");
    writeln!(out, "    pub const ALL: [ApiKey; {}] = [", requests.len()).ok();
    for r in &requests {
        writeln!(out, "        ApiKey::{},", api_name(r)).ok();
    }
    out.push_str("    ];\n\n    /// The key with this number, if Kafka 3.9 defines it.\n    pub fn from_i16(key: i16) -> Option<ApiKey> {\n        Some(match key {\n");
    for r in &requests {
        writeln!(
            out,
            "            {} => ApiKey::{},",
            r.api_key.unwrap_or(-1),
            api_name(r)
        )
        .ok();
    }
    out.push_str("            _ => return None,\n        })\n    }\n\n    /// The key's row of the API table.\n    pub fn info(self) -> &'static c::ApiInfo {\n        match self {\n");
    for (i, r) in requests.iter().enumerate() {
        writeln!(
            out,
            "            ApiKey::{} => &API_INFO[{i}],",
            api_name(r)
        )
        .ok();
    }
    out.push_str("        }\n    }\n}\n\n/// One row per API key, in [`ApiKey::ALL`] order.\npub static API_INFO: [c::ApiInfo; ");
    writeln!(out, "{}] = [", requests.len()).ok();
    for r in &requests {
        let resp = specs.iter().find(|s| s.name == response_of(r));
        let flex = if r.flexible.is_empty() {
            "None".into()
        } else {
            format!("Some({})", r.flexible.min)
        };
        if let Some(resp) = resp {
            assert_eq!(
                resp.flexible, r.flexible,
                "{}: request and response flexible versions differ",
                r.name
            );
            assert_eq!(
                resp.valid, r.valid,
                "{}: request and response versions differ",
                r.name
            );
        }
        let dep = r
            .deprecated
            .filter(|d| !d.is_empty())
            .map_or("None".into(), |d| {
                format!(
                    "Some(c::VersionRange {{ min: {}, max: {} }})",
                    d.min,
                    d.max.min(r.valid.max)
                )
            });
        let listeners: Vec<&str> = r.listeners.iter().map(|l| listener(l)).collect();
        // RequestHeader v0 is used only by ControlledShutdown v0 (see RequestHeader.json), and
        // ApiVersions responses always use header v0 so that any client can read them.
        let header_v0 = if r.name == "ControlledShutdownRequest" {
            "Some(c::VersionRange { min: 0, max: 0 })"
        } else {
            "None"
        };
        writeln!(
            out,
            "    c::ApiInfo {{\n        key: {},\n        name: \"{}\",\n        valid: c::VersionRange {{ min: {}, max: {} }},\n        flexible_min: {flex},\n        deprecated: {dep},\n        listeners: &[{}],\n        latest_version_unstable: {},\n        request_header_v0: {header_v0},\n        response_header_always_v0: {},\n    }},",
            r.api_key.unwrap_or(-1),
            api_name(r),
            r.valid.min,
            r.valid.max,
            listeners.join(", "),
            r.latest_unstable,
            r.name == "ApiVersionsRequest",
        )
        .ok();
    }
    out.push_str("];\n");
    for (kind, suffix) in [("RequestKind", "Request"), ("ResponseKind", "Response")] {
        writeln!(
            out,
            "\n/// A {} body of any API.\n#[derive(Debug, Clone, PartialEq)]\npub enum {kind} {{",
            suffix.to_lowercase()
        )
        .ok();
        for r in &requests {
            writeln!(
                out,
                "    /// `{0}{suffix}`.\n    {0}({0}{suffix}),",
                api_name(r)
            )
            .ok();
        }
        writeln!(out, "}}\n\nimpl {kind} {{\n    /// The API key of the body.\n    pub fn api_key(&self) -> ApiKey {{\n        match self {{").ok();
        for r in &requests {
            writeln!(
                out,
                "            {kind}::{0}(_) => ApiKey::{0},",
                api_name(r)
            )
            .ok();
        }
        writeln!(out, "        }}\n    }}\n\n    /// Decodes a body of API `key` at `version`.\n    pub fn decode(key: ApiKey, r: &mut c::Reader, version: i16) -> Result<Self, c::DecodeError> {{\n        use c::Message as _;\n        Ok(match key {{").ok();
        for r in &requests {
            writeln!(
                out,
                "            ApiKey::{0} => {kind}::{0}({0}{suffix}::decode(r, version)?),",
                api_name(r)
            )
            .ok();
        }
        writeln!(out, "        }})\n    }}\n\n    /// Encodes the body at `version`.\n    pub fn encode(&self, w: &mut c::Writer, version: i16) -> Result<(), c::EncodeError> {{\n        use c::Message as _;\n        match self {{").ok();
        for r in &requests {
            writeln!(
                out,
                "            {kind}::{0}(m) => m.encode(w, version),",
                api_name(r)
            )
            .ok();
        }
        writeln!(out, "        }}\n    }}").ok();
        if kind == "ResponseKind" {
            emit_set_throttle_time(&mut out, specs, &requests);
            emit_for_each_error_code(&mut out, specs, &requests, api_name);
        }
        writeln!(out, "}}").ok();
    }
    // The framing is hand-written (src/protocol/frame.rs); it is re-exported here so that
    // callers find every message-level entry point in one module.
    out.push_str(
        "\npub use super::frame::{\n    decode_request, decode_request_header, encode_request_frame, \
         encode_response_frame,\n    encode_response_segments,\n};\n",
    );
    out
}
