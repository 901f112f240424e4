//! The one error type of the core.

use std::fmt;

/// Why a scenario could not be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The scenario is malformed or impossible: `path` names the field (dotted,
    /// list items by index, e.g. `links.1.period_ms`), `message` what is allowed.
    Scenario { path: String, message: String },
    /// The run was stopped from outside (e.g. Ctrl-C) before it finished.
    Interrupted,
    /// A file the run writes (a packet capture) could not be written: which and why.
    Io(String),
}

impl Error {
    /// A scenario error at `path`.
    pub fn scenario(path: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Scenario { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Scenario { path, message } if path.is_empty() => write!(f, "{message}"),
            Error::Scenario { path, message } => write!(f, "{path}: {message}"),
            Error::Interrupted => write!(f, "run interrupted"),
            Error::Io(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<crate::bond::Error> for Error {
    fn from(err: crate::bond::Error) -> Error {
        Error::Scenario { path: err.path, message: err.message }
    }
}

/// Result alias of the core.
pub type Result<T> = std::result::Result<T, Error>;
