//! Emits `ResponseKind::for_each_error_code`: the walk over every `ErrorCode` field of a
//! response body, at any depth, in spec order. It is what Kafka's `AbstractResponse.errorCounts()`
//! counts for most responses; `src/protocol/error_counts.rs` overrides the few whose
//! `errorCounts()` does otherwise.

use super::emit::nullable;
use super::spec::{Field, Spec, StructDef, field_ident};
use std::fmt::Write;

/// Kafka's error code field: named `ErrorCode`, an int16. `PartitionErrorCode`,
/// `TopicConfigErrorCode` and the like are not counted by a generic walk (Kafka's
/// `errorCounts()` counts them only where it says so).
fn is_error_code(f: &Field) -> bool {
    f.name == "ErrorCode" && f.ty == "int16"
}

/// The fields of `f`'s struct type: inline, or a common struct of the spec.
fn sub_fields<'a>(f: &'a Field, common: &'a [StructDef]) -> Option<&'a [Field]> {
    f.fields.as_deref().or_else(|| {
        let name = f.ty.trim_start_matches("[]");
        common
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.fields.as_slice())
    })
}

fn has_error_code(fields: &[Field], common: &[StructDef]) -> bool {
    fields.iter().any(|f| {
        is_error_code(f) || sub_fields(f, common).is_some_and(|sub| has_error_code(sub, common))
    })
}

/// Emits the walk of `fields` of the struct reached by `expr`.
fn walk(out: &mut String, fields: &[Field], common: &[StructDef], expr: &str, depth: usize) {
    let pad = "    ".repeat(depth + 4);
    for f in fields {
        let ident = field_ident(&f.name);
        if is_error_code(f) {
            writeln!(out, "{pad}f({expr}.{ident});").ok();
            continue;
        }
        let Some(sub) = sub_fields(f, common).filter(|sub| has_error_code(sub, common)) else {
            continue;
        };
        let var = format!("x{depth}");
        let head = match (f.ty.starts_with("[]"), nullable(f)) {
            (true, false) => format!("for {var} in &{expr}.{ident} {{"),
            (true, true) => format!("for {var} in {expr}.{ident}.iter().flatten() {{"),
            (false, false) => format!("{{\n{pad}    let {var} = &{expr}.{ident};"),
            (false, true) => format!("if let Some({var}) = &{expr}.{ident} {{"),
        };
        writeln!(out, "{pad}{head}").ok();
        walk(out, sub, common, &var, depth + 1);
        writeln!(out, "{pad}}}").ok();
    }
}

/// `ResponseKind::for_each_error_code`, for the responses of `requests`.
pub fn emit_for_each_error_code(
    out: &mut String,
    specs: &[Spec],
    requests: &[&Spec],
    api_name: fn(&Spec) -> String,
) {
    out.push_str(
        "\n    /// Calls `f` with every `ErrorCode` field of the body, at any depth and whatever the\n    \
         /// version (an absent field holds its default, as in Kafka's response data): what\n    \
         /// Kafka's `errorCounts()` counts for most responses (see `protocol::error_counts`).\n    \
         pub fn for_each_error_code(&self, mut f: impl FnMut(i16)) {\n        match self {\n",
    );
    let mut without = 0;
    for r in requests {
        let response = format!("{}Response", api_name(r));
        let Some(spec) = specs
            .iter()
            .find(|s| s.name == response)
            .filter(|s| has_error_code(&s.fields, &s.common))
        else {
            without += 1;
            continue;
        };
        writeln!(out, "            ResponseKind::{}(m) => {{", api_name(r)).ok();
        walk(out, &spec.fields, &spec.common, "m", 0);
        out.push_str("            }\n");
    }
    if without > 0 {
        out.push_str("            _ => {}\n");
    }
    out.push_str("        }\n    }\n");
}
