//! `--format json`: the proposal as Kafka's reassignment JSON alone on stdout, so it can go
//! straight to `--execute` (kcli's or Kafka's); the draws, moves and skew go to stderr.

use crate::admin::reassignment_json::format_reassignment_json;

use super::propose::Plan;
use super::text;

/// (stdout, stderr).
pub(super) fn render(plan: &Plan) -> (String, String) {
    let stdout = format_reassignment_json(&plan.proposed()) + "\n";
    let mut stderr = String::new();
    for line in text::notes(plan) {
        stderr.push_str(&line);
        stderr.push('\n');
    }
    stderr.push_str(&text::skew_line(&plan.balance().0));
    stderr.push('\n');
    (stdout, stderr)
}
