//! Emits one Rust module per spec: a struct per spec struct, with field docs from `about`, a
//! `Default` carrying the spec's defaults, and a `Codec` impl whose reads and writes follow the
//! version rules of Kafka's generator.

use super::spec::{Field, Spec, StructDef, Versions, field_ident, snake};
use std::fmt::Write;

const PRIMS: &[(&str, &str)] = &[
    ("bool", "bool"),
    ("int8", "i8"),
    ("int16", "i16"),
    ("uint16", "u16"),
    ("int32", "i32"),
    ("int64", "i64"),
    ("float64", "f64"),
    ("string", "c::StrBytes"),
    ("bytes", "c::Bytes"),
    ("records", "c::Bytes"),
    ("uuid", "c::Uuid"),
];

pub fn base_rust(ty: &str) -> String {
    if let Some(inner) = ty.strip_prefix("[]") {
        return format!("Vec<{}>", base_rust(inner));
    }
    PRIMS
        .iter()
        .find(|(k, _)| *k == ty)
        .map_or_else(|| ty.to_string(), |(_, r)| r.to_string())
}

pub fn nullable(f: &Field) -> bool {
    !f.nullable.intersect(f.versions).is_empty()
}

pub fn rust_type(f: &Field) -> String {
    if nullable(f) {
        format!("Option<{}>", base_rust(&f.ty))
    } else {
        base_rust(&f.ty)
    }
}

fn int_literal(d: &str, ctx: &str) -> String {
    let d = d.trim();
    let (neg, body) = d.strip_prefix('-').map_or((false, d), |b| (true, b));
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16)
    } else {
        body.parse::<i64>()
    }
    .unwrap_or_else(|_| panic!("{ctx}: bad integer default {d:?}"));
    (if neg { -v } else { v }).to_string()
}

fn base_default(f: &Field, ctx: &str) -> String {
    let d = f.default.as_deref().filter(|d| *d != "null");
    match f.ty.as_str() {
        "int8" | "int16" | "uint16" | "int32" | "int64" => int_literal(d.unwrap_or("0"), ctx),
        "bool" => d.unwrap_or("false").to_string(),
        "float64" => {
            let x: f64 = d
                .unwrap_or("0")
                .parse()
                .unwrap_or_else(|_| panic!("{ctx}: bad float"));
            format!("{x:?}")
        }
        "string" => match d {
            None | Some("") => "c::StrBytes::default()".into(),
            Some(s) => format!("c::StrBytes::from_static({s:?})"),
        },
        "bytes" | "records" => "c::Bytes::new()".into(),
        "uuid" => "c::Uuid::nil()".into(),
        t if t.starts_with("[]") => "Vec::new()".into(),
        t => format!("{t}::default()"),
    }
}

/// The spec default as a Rust expression (Java's `fieldDefault`: a nullable field is null only
/// when its default is "null", records are null by default).
pub fn default_expr(f: &Field, ctx: &str) -> String {
    if nullable(f) {
        if f.default.as_deref() == Some("null") || f.ty == "records" {
            "None".into()
        } else {
            format!("Some({})", base_default(f, ctx))
        }
    } else {
        base_default(f, ctx)
    }
}

fn trivial_default(e: &str) -> bool {
    matches!(
        e,
        "0" | "false"
            | "0.0"
            | "c::StrBytes::default()"
            | "c::Bytes::new()"
            | "c::Uuid::nil()"
            | "Vec::new()"
            | "None"
    ) || (e.ends_with("::default()") && !e.starts_with("Some("))
}

/// An expression that holds when `x` differs from the field's default.
pub fn nondefault(f: &Field, x: &str, ctx: &str) -> String {
    let d = default_expr(f, ctx);
    match d.as_str() {
        "None" => format!("{x}.is_some()"),
        "Vec::new()" | "c::Bytes::new()" | "c::StrBytes::default()" => format!("!{x}.is_empty()"),
        "c::Uuid::nil()" => format!("!{x}.is_nil()"),
        "false" => x.to_string(),
        "true" => format!("!{x}"),
        _ if f.ty == "float64" => format!("{x}.to_bits() != {d}_f64.to_bits()"),
        _ => format!("{x} != {d}"),
    }
}

/// The per-version facts of one field inside a struct whose versions are `ctx`.
pub struct Plan {
    pub present: Versions,
    pub tagged: Versions,
    pub regular: Versions,
    pub cx: String,
}

pub fn plan(f: &Field, spec: &Spec, ctx: Versions) -> Plan {
    let present = f.versions.intersect(ctx);
    let tagged = if f.tag.is_some() {
        f.tagged.intersect(present)
    } else {
        Versions::NONE
    };
    let regular = present.before(tagged);
    let compact = match f.flexible {
        Some(fv) => fv.intersect(spec.flexible).expr(present),
        None => "flex".into(),
    };
    let mut cx = format!("c::cx(v, {compact})");
    if nullable(f) {
        write!(cx, ".n({})", f.nullable.expr(present)).ok();
    }
    if f.ty == "records" {
        cx.push_str(".rec()");
    }
    Plan {
        present,
        tagged,
        regular,
        cx,
    }
}

/// All structs of a spec: the top-level one, nested ones in definition order, common ones.
pub fn structs(spec: &Spec) -> Vec<StructDef> {
    fn walk(fields: &[Field], out: &mut Vec<StructDef>, file: &str) {
        for f in fields {
            if let Some(inner) = &f.fields {
                let name = f.ty.trim_start_matches("[]").to_string();
                assert!(
                    !out.iter().any(|s| s.name == name),
                    "{file}: struct {name} is defined twice"
                );
                out.push(StructDef {
                    name,
                    versions: f.versions,
                    fields: inner.clone(),
                    about: f.about.clone(),
                });
                walk(inner, out, file);
            }
        }
    }
    let mut out = vec![StructDef {
        name: spec.name.clone(),
        versions: spec.valid,
        fields: spec.fields.clone(),
        about: String::new(),
    }];
    walk(&spec.fields, &mut out, &spec.file);
    for cs in &spec.common {
        out.push(cs.clone());
        walk(&cs.fields, &mut out, &spec.file);
    }
    for s in &out {
        assert!(
            ![
                "Result", "Option", "Vec", "Default", "Self", "Some", "None", "Ok", "Err", "Box"
            ]
            .contains(&s.name.as_str()),
            "{}: struct name {} shadows a prelude name",
            spec.file,
            s.name
        );
    }
    out
}

pub fn ctx_of(sd: &StructDef, spec: &Spec) -> Versions {
    sd.versions.intersect(spec.valid)
}

fn range_text(v: Versions) -> String {
    if v.is_empty() {
        "none".into()
    } else if v.max == i16::MAX {
        format!("{}+", v.min)
    } else if v.min == v.max {
        v.min.to_string()
    } else {
        format!("{}-{}", v.min, v.max)
    }
}

fn doc(out: &mut String, indent: &str, text: &str) {
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            writeln!(out, "{indent}///").ok();
        } else {
            writeln!(out, "{indent}/// {line}").ok();
        }
    }
}

fn emit_struct(out: &mut String, sd: &StructDef, spec: &Spec) {
    let ctx = ctx_of(sd, spec);
    let name = &sd.name;
    let has_tags = !spec.flexible.intersect(ctx).is_empty();
    let here = format!("{}:{name}", spec.file);
    let about = if sd.about.is_empty() {
        format!("`{name}`, versions {}.", range_text(ctx))
    } else {
        format!(
            "{} (versions {}).",
            sd.about.trim_end_matches('.'),
            range_text(ctx)
        )
    };
    doc(out, "", &about);
    let defaults: Vec<String> = sd.fields.iter().map(|f| default_expr(f, &here)).collect();
    let derive_default = defaults.iter().all(|d| trivial_default(d));
    let derives = if derive_default {
        "Debug, Clone, PartialEq, Default"
    } else {
        "Debug, Clone, PartialEq"
    };
    writeln!(out, "#[derive({derives})]\npub struct {name} {{").ok();
    for f in &sd.fields {
        let mut meta = format!("Versions {}", range_text(f.versions.intersect(ctx)));
        if nullable(f) {
            write!(meta, ", nullable {}", range_text(f.nullable)).ok();
        }
        if let Some(tag) = f.tag {
            write!(meta, ", tagged {} (tag {tag})", range_text(f.tagged)).ok();
        }
        if f.ignorable {
            meta.push_str(", ignorable");
        }
        if f.map_key {
            meta.push_str(", map key");
        }
        if let Some(e) = &f.entity_type {
            write!(meta, ", entity {e}").ok();
        }
        if let Some(d) = &f.default {
            write!(meta, ", default {d:?}").ok();
        }
        let about = if f.about.is_empty() {
            String::new()
        } else {
            format!("{}\n\n", f.about)
        };
        doc(out, "    ", &format!("{about}{meta}."));
        writeln!(out, "    pub {}: {},", field_ident(&f.name), rust_type(f)).ok();
    }
    if has_tags {
        writeln!(
            out,
            "    /// Tagged fields unknown at the decoded version, re-emitted in tag order."
        )
        .ok();
        writeln!(
            out,
            "    pub unknown_tagged_fields: Vec<c::RawTaggedField>,"
        )
        .ok();
    }
    writeln!(out, "}}\n").ok();
    if !derive_default {
        writeln!(
            out,
            "impl Default for {name} {{\n    fn default() -> Self {{\n        {name} {{"
        )
        .ok();
        for (f, d) in sd.fields.iter().zip(&defaults) {
            writeln!(out, "            {}: {d},", field_ident(&f.name)).ok();
        }
        if has_tags {
            writeln!(out, "            unknown_tagged_fields: Vec::new(),").ok();
        }
        writeln!(out, "        }}\n    }}\n}}\n").ok();
    }
    let flex = spec.flexible.expr(ctx);
    let tagged_ctx = ctx.intersect(spec.flexible);
    let mut tagged: Vec<(&Field, Plan)> = Vec::new();
    let mut read = String::new();
    let mut write = String::new();
    for f in &sd.fields {
        let id = field_ident(&f.name);
        let fname = format!("{name}.{}", snake(&f.name));
        let p = plan(f, spec, ctx);
        if !p.regular.is_empty() {
            let r = format!("s.{id} = r.read(\"{fname}\", {})?;", p.cx);
            let w = format!("w.put(\"{fname}\", &self.{id}, {})?;", p.cx);
            match p.regular.cond(ctx) {
                Some(c) => {
                    writeln!(read, "        if {c} {{\n            {r}\n        }}").ok();
                    writeln!(write, "        if {c} {{\n            {w}\n        }}").ok();
                }
                None => {
                    writeln!(read, "        {r}").ok();
                    writeln!(write, "        {w}").ok();
                }
            }
        }
        if !f.ignorable && p.present != ctx {
            let nd = nondefault(f, &format!("self.{id}"), &here);
            let cond = match p.present.neg_cond(ctx) {
                None => nd,
                Some(c) => format!("{c} && {nd}"),
            };
            writeln!(
                write,
                "        if {cond} {{\n            return Err(c::EncodeError::non_default(\"{fname}\", v));\n        }}"
            )
            .ok();
        }
        if !p.tagged.is_empty() {
            tagged.push((f, p));
        }
    }
    tagged.sort_by_key(|(f, _)| f.tag);
    if has_tags {
        let (open, close, ind) = if flex == "true" {
            (String::new(), String::new(), "        ")
        } else {
            (
                "        if flex {\n".to_string(),
                "        }\n".to_string(),
                "            ",
            )
        };
        read.push_str(&open);
        write.push_str(&open);
        if tagged.is_empty() {
            writeln!(
                read,
                "{ind}s.unknown_tagged_fields = r.tagged(\"{name}\", |_, _| Ok(false))?;"
            )
            .ok();
            writeln!(
                write,
                "{ind}w.tags(0, &self.unknown_tagged_fields)?.finish(w)?;"
            )
            .ok();
        } else {
            writeln!(
                read,
                "{ind}s.unknown_tagged_fields = r.tagged(\"{name}\", |tag, r| {{"
            )
            .ok();
            writeln!(read, "{ind}    match tag {{").ok();
            let mut counts = Vec::new();
            let mut puts = String::new();
            for (f, p) in &tagged {
                let id = field_ident(&f.name);
                let fname = format!("{name}.{}", snake(&f.name));
                let tag = f.tag.unwrap_or_default();
                let guard = p
                    .tagged
                    .cond(tagged_ctx)
                    .map(|c| format!(" if {c}"))
                    .unwrap_or_default();
                writeln!(
                    read,
                    "{ind}        {tag}{guard} => s.{id} = r.read(\"{fname}\", {})?,",
                    p.cx
                )
                .ok();
                let nd = nondefault(f, &format!("self.{id}"), &here);
                let cond = match p.tagged.cond(tagged_ctx) {
                    Some(c) => format!("{c} && {nd}"),
                    None => nd,
                };
                counts.push(format!("usize::from({cond})"));
                writeln!(
                    puts,
                    "{ind}if {cond} {{\n{ind}    t.put(w, {tag}, \"{fname}\", &self.{id}, {})?;\n{ind}}}",
                    p.cx
                )
                .ok();
            }
            writeln!(
                read,
                "{ind}        _ => return Ok(false),\n{ind}    }}\n{ind}    Ok(true)\n{ind}}})?;"
            )
            .ok();
            writeln!(
                write,
                "{ind}let mut t = w.tags({}, &self.unknown_tagged_fields)?;",
                counts.join(" + ")
            )
            .ok();
            write.push_str(&puts);
            writeln!(write, "{ind}t.finish(w)?;").ok();
        }
        read.push_str(&close);
        write.push_str(&close);
    }
    emit_json(out, sd, spec, ctx, &here);
    writeln!(out, "impl c::Codec for {name} {{").ok();
    writeln!(
        out,
        "    fn read(r: &mut c::Reader, cx: c::Cx) -> Result<Self, c::DecodeError> {{"
    )
    .ok();
    writeln!(out, "        let v = cx.version;\n        let flex = {flex};\n        let mut s = Self::default();").ok();
    out.push_str(&read);
    writeln!(out, "        Ok(s)\n    }}\n").ok();
    writeln!(
        out,
        "    fn write(&self, w: &mut c::Writer, cx: c::Cx) -> Result<(), c::EncodeError> {{"
    )
    .ok();
    writeln!(
        out,
        "        let v = cx.version;\n        let flex = {flex};"
    )
    .ok();
    out.push_str(&write);
    writeln!(out, "        Ok(())\n    }}\n}}\n").ok();
}

/// `ToJson` as Kafka's `JsonConverterGenerator` writes it: fields in spec order under their
/// camelCase names, present fields always, tagged fields only when not at their default.
fn emit_json(out: &mut String, sd: &StructDef, spec: &Spec, ctx: Versions, here: &str) {
    let name = &sd.name;
    writeln!(
        out,
        "impl c::ToJson for {name} {{\n    fn to_json(&self, j: &mut c::JsonWriter, cx: c::Cx) {{"
    )
    .ok();
    writeln!(
        out,
        "        let v = cx.version;\n        j.begin_object();"
    )
    .ok();
    for f in &sd.fields {
        let id = field_ident(&f.name);
        let mut camel = f.name.clone();
        if let Some(first) = camel.get(..1) {
            camel.replace_range(..1, &first.to_lowercase());
        }
        let p = plan(f, spec, ctx);
        let put = if f.ty == "records" {
            let value = if nullable(f) {
                format!("self.{id}.as_ref()")
            } else {
                format!("Some(&self.{id})")
            };
            format!("j.records_field(\"{camel}\", {value});")
        } else {
            format!("j.field(\"{camel}\", &self.{id}, cx);")
        };
        if !p.regular.is_empty() {
            match p.regular.cond(ctx) {
                Some(c) => writeln!(out, "        if {c} {{\n            {put}\n        }}").ok(),
                None => writeln!(out, "        {put}").ok(),
            };
        }
        if !p.tagged.is_empty() {
            let nd = nondefault(f, &format!("self.{id}"), here);
            let cond = match p.tagged.cond(ctx) {
                Some(c) => format!("{c} && {nd}"),
                None => nd,
            };
            writeln!(out, "        if {cond} {{\n            {put}\n        }}").ok();
        }
    }
    writeln!(out, "        j.end_object();\n    }}\n}}\n").ok();
}

pub fn kind_variant(kind: &str) -> &'static str {
    match kind {
        "request" => "Request",
        "response" => "Response",
        "header" => "Header",
        _ => "Data",
    }
}

pub fn module_name(spec: &Spec) -> String {
    snake(&spec.name)
}

pub fn emit_module(spec: &Spec) -> String {
    let mut out = String::new();
    let key = spec
        .api_key
        .map(|k| format!("api key {k}, "))
        .unwrap_or_default();
    writeln!(
        out,
        "//! `{}` ({}, {key}versions {}, flexible {}): generated by `tests/it/codegen` from\n\
         //! `kafka-3.9-message-specs/{}`. Do not edit; regenerate with\n\
         //! `UPDATE_CODEGEN=1 cargo test --test it generated_protocol_code_is_fresh`.\n",
        spec.name,
        spec.kind,
        range_text(spec.valid),
        range_text(spec.flexible),
        spec.file
    )
    .ok();
    writeln!(out, "use crate::protocol::codec as c;\n").ok();
    for sd in structs(spec) {
        emit_struct(&mut out, &sd, spec);
    }
    let flex_min = if spec.flexible.is_empty() {
        "None".into()
    } else {
        format!("Some({})", spec.flexible.min)
    };
    let api_key = spec.api_key.map_or("None".into(), |k| format!("Some({k})"));
    writeln!(
        out,
        "impl c::Message for {name} {{\n    const NAME: &'static str = \"{name}\";\n    \
         const KIND: c::MessageKind = c::MessageKind::{kind};\n    \
         const API_KEY: Option<i16> = {api_key};\n    \
         const VERSIONS: c::VersionRange = c::VersionRange {{ min: {min}, max: {max} }};\n    \
         const FLEXIBLE_MIN: Option<i16> = {flex_min};\n}}",
        name = spec.name,
        kind = kind_variant(&spec.kind),
        min = spec.valid.min,
        max = spec.valid.max,
    )
    .ok();
    out
}
