//! Text the exporter writes as Java writes it: `Double.toString`, and the escapes and names of
//! client_java 1.x's `PrometheusTextFormatWriter` and `PrometheusNaming`.

use std::fmt::Write as _;

/// Java's `Double.toString`: the shortest digits that read back as `value`, as
/// `ddd.ddd` when 10^-3 <= |value| < 10^7 and as `d.dddE±n` otherwise, always with a
/// fractional digit (`1.0`, `1.0E7`); `NaN`, `Infinity`, `-Infinity`.
pub(super) fn write_java_double(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
        return;
    }
    if value.is_infinite() {
        out.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if value.is_sign_negative() {
        out.push('-');
    }
    let magnitude = value.abs();
    if magnitude == 0.0 {
        out.push_str("0.0");
        return;
    }
    // Most readings are counts: whole numbers below 10^7 need no digit search.
    if (1.0..1e7).contains(&magnitude) && magnitude.fract() == 0.0 {
        let _ = write!(out, "{}.0", magnitude as u64);
        return;
    }
    // `{:e}` gives the shortest round-trip digits: "1.2345e-5", "7e0".
    let scientific = format!("{magnitude:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (1e-3..1e7).contains(&magnitude) {
        if exponent >= 0 {
            let int_len = exponent as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        out.push_str(if digits.len() > 1 { &digits[1..] } else { "0" });
        let _ = write!(out, "E{exponent}");
    }
}

/// A sample's value as the text format writes it: Java's digits, infinities as `+Inf`/`-Inf`.
pub(super) fn write_sample_value(out: &mut String, value: f64) {
    if value == f64::INFINITY {
        out.push_str("+Inf");
    } else if value == f64::NEG_INFINITY {
        out.push_str("-Inf");
    } else {
        write_java_double(out, value);
    }
}

/// `# HELP` text: backslash and newline escaped.
pub(super) fn write_escaped_help(out: &mut String, help: &str) {
    for c in help.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A label value: backslash, quote and newline escaped.
pub(super) fn write_escaped_label_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// The exporter's `safeName`: every character but `[A-Za-z0-9_:]` to `_`, runs of `_` to one,
/// and a `_` before a leading digit.
pub(super) fn safe_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        out.push('_');
    }
    let mut previous_underscore = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == ':' {
            out.push(c);
            previous_underscore = false;
        } else if !previous_underscore {
            out.push('_');
            previous_underscore = true;
        }
    }
    out
}

/// client_java's `sanitizeMetricName`, which the exporter applies to every matched name: a
/// leading digit to `_`, then the reserved suffixes `_total`, `_created`, `_bucket`, `_info`
/// cut off for as long as one ends the name (`x_total` is the counter `x`, written `x_total`).
pub(super) fn sanitize_metric_name(name: &str) -> String {
    const RESERVED: [&str; 8] = [
        "_total", "_created", "_bucket", "_info", ".total", ".created", ".bucket", ".info",
    ];
    let mut sanitized: String = name
        .char_indices()
        .map(|(i, c)| {
            if c == ':' || c == '.' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut modified = true;
    while modified {
        modified = false;
        for suffix in RESERVED {
            if sanitized == suffix {
                return suffix[1..].to_string();
            }
            if sanitized.ends_with(suffix) {
                sanitized.truncate(sanitized.len() - suffix.len());
                modified = true;
            }
        }
    }
    sanitized
}

/// client_java's `isValidLabelName`: `[a-zA-Z_.][a-zA-Z0-9_.]*`, not starting `__`, `_.`,
/// `._` or `..`.
pub(super) fn is_valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && !["__", "_.", "._", ".."].iter().any(|p| name.starts_with(p))
}

/// The exporter's `toSnakeAndLowerCase` (`attrNameSnakeCase: true`): `_` before an upper-case
/// letter that follows neither an upper-case letter nor `_`, then all lower case.
pub(super) fn to_snake_and_lower_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous_upper_or_underscore = false;
    for (i, c) in name.chars().enumerate() {
        let upper = c.is_uppercase();
        if i > 0 && upper && !previous_upper_or_underscore {
            out.push('_');
        }
        out.extend(c.to_lowercase());
        previous_upper_or_underscore = upper || c == '_';
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(value: f64) -> String {
        let mut out = String::new();
        write_java_double(&mut out, value);
        out
    }

    #[test]
    fn doubles_read_as_java_writes_them() {
        assert_eq!(java(0.0), "0.0");
        assert_eq!(java(-0.0), "-0.0");
        assert_eq!(java(1.0), "1.0");
        assert_eq!(java(20000.0), "20000.0");
        assert_eq!(java(1.5), "1.5");
        assert_eq!(java(0.001), "0.001");
        assert_eq!(java(0.000_334_277_546_129_882_6), "3.342775461298826E-4");
        assert_eq!(java(9_999_999.0), "9999999.0");
        assert_eq!(java(1e7), "1.0E7");
        assert_eq!(java(1.0387038173e10), "1.0387038173E10");
        assert_eq!(java(9.223_372_036_854_776e18), "9.223372036854776E18");
        assert_eq!(java(-2.5e-5), "-2.5E-5");
        assert_eq!(java(123.456), "123.456");
        assert_eq!(java(f64::NAN), "NaN");
        assert_eq!(java(f64::NEG_INFINITY), "-Infinity");
    }

    #[test]
    fn names_are_made_safe_as_the_exporter_does() {
        assert_eq!(
            safe_name("kafka.server_socket-server-metrics__x"),
            "kafka_server_socket_server_metrics_x"
        );
        assert_eq!(safe_name("0abc"), "_0abc");
        assert_eq!(safe_name("a:b"), "a:b");
        assert_eq!(sanitize_metric_name("x_count_total"), "x_count");
        assert_eq!(sanitize_metric_name("x_info_total"), "x");
        assert_eq!(sanitize_metric_name("_total"), "total");
        assert!(is_valid_label_name("clientId"));
        assert!(!is_valid_label_name("__x"));
        assert!(!is_valid_label_name("a:b"));
        assert_eq!(to_snake_and_lower_case("OneMinuteRate"), "one_minute_rate");
        assert_eq!(to_snake_and_lower_case("ABCDef"), "abcdef");
        assert_eq!(to_snake_and_lower_case("a_B"), "a_b");
    }
}
