//! The password of `kcli users add`: the first line of a file or of standard input, without its
//! line ending. It is held in a [`Password`] whose `Debug` hides it, and never printed.

use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, bail};

/// A secret; `Debug` prints `[hidden]`.
pub(super) struct Password(String);

impl Password {
    pub(super) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password([hidden])")
    }
}

/// The first line of `input`, `\n` or `\r\n` removed; an empty password is refused.
pub(super) fn from_reader(input: &mut dyn BufRead) -> anyhow::Result<Password> {
    let mut line = String::new();
    input
        .read_line(&mut line)
        .context("the password is not UTF-8 text")?;
    if line.ends_with('\n') {
        line.pop();
        if line.ends_with('\r') {
            line.pop();
        }
    }
    if line.is_empty() {
        bail!("the password is empty");
    }
    Ok(Password(line))
}

/// The first line of the file at `path`.
pub(super) fn from_file(path: &Path) -> anyhow::Result<Password> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open the password file {}", path.display()))?;
    from_reader(&mut std::io::BufReader::new(file))
        .with_context(|| format!("the password file {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &[u8]) -> anyhow::Result<String> {
        from_reader(&mut &input[..]).map(|p| p.0)
    }

    #[test]
    fn the_first_line_without_its_ending() {
        assert_eq!(read(b"s3cret\n").unwrap(), "s3cret");
        assert_eq!(read(b"s3cret\r\nsecond line\n").unwrap(), "s3cret");
        assert_eq!(read(b"no newline").unwrap(), "no newline");
        assert_eq!(read(b" spaces kept \n").unwrap(), " spaces kept ");
        assert!(read(b"").unwrap_err().to_string().contains("empty"));
        assert!(read(b"\n").unwrap_err().to_string().contains("empty"));
        assert!(read(b"\xff\n").is_err());
        let p = from_reader(&mut &b"hide-me"[..]).unwrap();
        assert!(!format!("{p:?}").contains("hide-me"));
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = from_file(Path::new("/nonexistent/pw")).unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent/pw"), "{err:#}");
    }
}
