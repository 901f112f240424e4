//! The bond's one error: an option that does not fit, named by its path.

use std::fmt;

/// A bond option is unknown, malformed or impossible for this bond: `path`
/// names it as the configuration does (`bond.mode`, `bond.primary`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Dotted path of the option.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl Error {
    /// An error at `path`.
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Error {
        Error { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for Error {}

/// Result alias of the bond.
pub type Result<T> = std::result::Result<T, Error>;
