//! Scheduler parameters: declared once per scheduler (name, kind, default,
//! help), checked against that declaration, and printed back in the
//! `name[key=value,...]` form that parses to the same values.

use std::fmt;

use crate::error::{did_you_mean, one_of, Error, Result};

/// The kind and allowed range of a parameter.
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    /// An integer in `[min, max]`.
    Int { min: i64, max: i64 },
    /// A number in `[min, max]`.
    Float { min: f64, max: f64 },
    /// `true` or `false`.
    Bool,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// Any text (e.g. a link name); the empty text means "none".
    Text,
    /// A set of these names, written `a+b` (or a list of names in TOML).
    List(&'static [&'static str]),
}

/// One declared parameter of a scheduler.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Key in the bond table or in brackets.
    pub name: &'static str,
    /// Kind and range.
    pub kind: ParamKind,
    /// Default value, written as in brackets (`"1"`, `"layer2"`).
    pub default: &'static str,
    /// One line for `bondsim schedulers`.
    pub help: &'static str,
}

/// A parameter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// Integer value.
    Int(i64),
    /// Floating-point value.
    Float(f64),
    /// Boolean value.
    Bool(bool),
    /// One of the choices.
    Choice(&'static str),
    /// Free text.
    Text(String),
    /// Names from the allowed set, in the order given.
    List(Vec<&'static str>),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Bool(v) => write!(f, "{v}"),
            ParamValue::Choice(v) => write!(f, "{v}"),
            ParamValue::Text(v) => write!(f, "{v}"),
            ParamValue::List(v) => write!(f, "{}", v.join("+")),
        }
    }
}

impl ParamKind {
    /// What values are allowed, for error messages and help.
    pub fn describe(&self) -> String {
        match self {
            ParamKind::Int { min, max } => format!("an integer from {min} to {max}"),
            ParamKind::Float { min, max } => format!("a number from {min} to {max}"),
            ParamKind::Bool => "true or false".into(),
            ParamKind::Choice(names) => format!("one of {}", names.join(", ")),
            ParamKind::Text => "text (no `,` `[` `]`)".into(),
            ParamKind::List(names) => format!("names joined by + from {}", names.join(", ")),
        }
    }

    /// Parses the text form (brackets, defaults).
    fn parse_text(&self, text: &str) -> Option<ParamValue> {
        let value = match self {
            ParamKind::Int { .. } => ParamValue::Int(text.parse().ok()?),
            ParamKind::Float { .. } => ParamValue::Float(text.parse().ok()?),
            ParamKind::Bool => ParamValue::Bool(text.parse().ok()?),
            ParamKind::Choice(names) => ParamValue::Choice(names.iter().find(|n| **n == text)?),
            ParamKind::Text => {
                if text.contains([',', '[', ']']) {
                    return None;
                }
                ParamValue::Text(text.to_string())
            }
            ParamKind::List(names) => ParamValue::List(
                text.split('+')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(|t| names.iter().find(|n| **n == t).copied())
                    .collect::<Option<Vec<_>>>()?,
            ),
        };
        self.check(value)
    }

    /// Takes a JSON value (keys in the bond table).
    fn parse_json(&self, value: &serde_json::Value) -> Option<ParamValue> {
        let value = match self {
            ParamKind::Int { .. } => ParamValue::Int(value.as_i64()?),
            ParamKind::Float { .. } => ParamValue::Float(value.as_f64()?),
            ParamKind::Bool => ParamValue::Bool(value.as_bool()?),
            ParamKind::Choice(names) => {
                let text = value.as_str()?;
                ParamValue::Choice(names.iter().find(|n| **n == text)?)
            }
            ParamKind::Text | ParamKind::List(_) => match value {
                serde_json::Value::Array(items) => {
                    let texts = items.iter().map(|v| v.as_str()).collect::<Option<Vec<_>>>()?;
                    return self.parse_text(&texts.join("+"));
                }
                other => return self.parse_text(other.as_str()?),
            },
        };
        self.check(value)
    }

    /// The message for a value this kind does not take: `shown` as the user gave it, `text` its text
    /// (a name to find the one meant of a choice or list).
    fn refusal(&self, shown: &str, text: Option<&str>) -> String {
        match (self, text) {
            (ParamKind::Choice(names), Some(text)) => one_of(names, text),
            (ParamKind::List(names), Some(text)) => {
                let bad = text.split('+').map(str::trim).find(|t| !t.is_empty() && !names.contains(t));
                let hint = bad.map_or_else(String::new, |bad| did_you_mean(bad, names));
                format!("must be {}, got {shown}{hint}", self.describe())
            }
            _ => format!("must be {}, got {shown}", self.describe()),
        }
    }

    fn check(&self, value: ParamValue) -> Option<ParamValue> {
        let ok = match (self, &value) {
            (ParamKind::Int { min, max }, ParamValue::Int(v)) => (min..=max).contains(&v),
            (ParamKind::Float { min, max }, ParamValue::Float(v)) => v.is_finite() && (min..=max).contains(&v),
            _ => true,
        };
        ok.then_some(value)
    }
}

/// The checked parameter values of one scheduler, in declaration order.
#[derive(Debug, Clone)]
pub struct Params {
    specs: &'static [ParamSpec],
    values: Vec<ParamValue>,
}

impl PartialEq for Params {
    fn eq(&self, other: &Params) -> bool {
        std::ptr::eq(self.specs, other.specs) && self.values == other.values
    }
}

impl Params {
    /// Every parameter at its default.
    pub fn defaults(specs: &'static [ParamSpec]) -> Params {
        let values = specs
            .iter()
            .map(|s| s.kind.parse_text(s.default).unwrap_or_else(|| panic!("bad default for {}", s.name)))
            .collect();
        Params { specs, values }
    }

    fn index(&self, name: &str) -> usize {
        self.specs.iter().position(|s| s.name == name).unwrap_or_else(|| panic!("undeclared parameter {name}"))
    }

    /// Sets `name` from its text form; `path` names the field in errors.
    pub fn set_text(&mut self, path: &str, name: &str, text: &str, owner: &str) -> Result<()> {
        let spec = self.spec(path, name, owner)?;
        let value = spec.kind.parse_text(text).ok_or_else(|| {
            Error::at(path, format!("{name} {}", spec.kind.refusal(&format!("`{text}`"), Some(text))))
        })?;
        let i = self.index(name);
        self.values[i] = value;
        Ok(())
    }

    /// Sets `name` from a JSON value; `path` names the field in errors.
    pub fn set_json(&mut self, path: &str, name: &str, value: &serde_json::Value, owner: &str) -> Result<()> {
        let spec = self.spec(path, name, owner)?;
        let text = match value {
            serde_json::Value::String(text) => Some(text.clone()),
            serde_json::Value::Array(items) => {
                items.iter().map(|v| v.as_str()).collect::<Option<Vec<_>>>().map(|t| t.join("+"))
            }
            _ => None,
        };
        let parsed = spec
            .kind
            .parse_json(value)
            .ok_or_else(|| Error::at(path, spec.kind.refusal(&value.to_string(), text.as_deref())))?;
        let i = self.index(name);
        self.values[i] = parsed;
        Ok(())
    }

    fn spec(&self, path: &str, name: &str, owner: &str) -> Result<&'static ParamSpec> {
        self.specs.iter().find(|s| s.name == name).ok_or_else(|| {
            let allowed: Vec<&str> = self.specs.iter().map(|s| s.name).collect();
            let allowed = if allowed.is_empty() {
                "it takes none".to_string()
            } else {
                format!("allowed: {}{}", allowed.join(", "), did_you_mean(name, &allowed))
            };
            Error::at(path, format!("`{name}` is not a parameter of {owner}; {allowed}"))
        })
    }

    /// Integer parameter `name`.
    pub fn int(&self, name: &str) -> i64 {
        match &self.values[self.index(name)] {
            ParamValue::Int(v) => *v,
            other => panic!("{name} is not an integer: {other:?}"),
        }
    }

    /// Numeric parameter `name`.
    pub fn float(&self, name: &str) -> f64 {
        match &self.values[self.index(name)] {
            ParamValue::Float(v) => *v,
            ParamValue::Int(v) => *v as f64,
            other => panic!("{name} is not a number: {other:?}"),
        }
    }

    /// Boolean parameter `name`.
    pub fn flag(&self, name: &str) -> bool {
        match &self.values[self.index(name)] {
            ParamValue::Bool(v) => *v,
            other => panic!("{name} is not a boolean: {other:?}"),
        }
    }

    /// Choice parameter `name`.
    pub fn choice(&self, name: &str) -> &'static str {
        match &self.values[self.index(name)] {
            ParamValue::Choice(v) => v,
            other => panic!("{name} is not a choice: {other:?}"),
        }
    }

    /// Text parameter `name`.
    pub fn text(&self, name: &str) -> &str {
        match &self.values[self.index(name)] {
            ParamValue::Text(v) => v,
            other => panic!("{name} is not text: {other:?}"),
        }
    }

    /// List parameter `name`.
    pub fn list(&self, name: &str) -> &[&'static str] {
        match &self.values[self.index(name)] {
            ParamValue::List(v) => v,
            other => panic!("{name} is not a list: {other:?}"),
        }
    }

    /// `key=value` for every parameter that differs from its default.
    pub fn non_default(&self) -> Vec<String> {
        let defaults = Params::defaults(self.specs);
        self.specs
            .iter()
            .zip(&self.values)
            .zip(&defaults.values)
            .filter(|((_, v), d)| v != d)
            .map(|((s, v), _)| format!("{}={v}", s.name))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec { name: "n", kind: ParamKind::Int { min: 0, max: 10 }, default: "1", help: "" },
        ParamSpec { name: "x", kind: ParamKind::Float { min: 0.0, max: 1.0 }, default: "0.5", help: "" },
        ParamSpec { name: "p", kind: ParamKind::Choice(&["a", "b"]), default: "a", help: "" },
        ParamSpec { name: "l", kind: ParamKind::List(&["a", "b"]), default: "a", help: "" },
        ParamSpec { name: "who", kind: ParamKind::Text, default: "", help: "" },
    ];

    #[test]
    fn text_and_json_forms_agree_and_are_checked() {
        let mut p = Params::defaults(SPECS);
        assert_eq!((p.int("n"), p.float("x"), p.choice("p")), (1, 0.5, "a"));
        assert_eq!(p.list("l"), ["a"]);
        p.set_json("bond.l", "l", &serde_json::json!(["b", "a"]), "t").unwrap();
        assert_eq!(p.list("l"), ["b", "a"]);
        p.set_text("bond.mode", "l", "a", "t").unwrap();
        assert!(p.set_text("bond.mode", "l", "a+z", "t").is_err());
        p.set_text("bond.mode", "who", "eth1", "t").unwrap();
        assert_eq!(p.text("who"), "eth1");
        p.set_text("bond.mode", "n", "3", "t").unwrap();
        p.set_json("bond.x", "x", &serde_json::json!(0.25), "t").unwrap();
        p.set_json("bond.p", "p", &serde_json::json!("b"), "t").unwrap();
        assert_eq!(p.non_default(), ["n=3", "x=0.25", "p=b", "who=eth1"]);
        assert!(p.set_text("bond.mode", "n", "11", "t").unwrap_err().to_string().contains("from 0 to 10"));
        assert!(p
            .set_json("bond.p", "p", &serde_json::json!("c"), "t")
            .unwrap_err()
            .to_string()
            .contains("one of `a`, `b`, got \"c\""));
        let e = p.set_text("bond.mode", "l", "a+bb", "t").unwrap_err().to_string();
        assert!(e.ends_with("got `a+bb`; did you mean `b`?"), "{e}");
        let e = p.set_json("bond.l", "l", &serde_json::json!(["a", "bb"]), "t").unwrap_err().to_string();
        assert!(e.ends_with("; did you mean `b`?"), "{e}");
        let err = p.set_text("bond.mode", "zz", "1", "t").unwrap_err().to_string();
        assert!(err.contains("allowed: n, x, p, l, who"), "{err}");
    }
}
