//! `semver` and `semverCompare` with Masterminds/semver v3's rules (what Sprig uses): versions
//! parsed loosely (`v1.2` is 1.2.0), constraints as `||` of comma- or space-separated
//! comparisons with `=`, `!=`, `>`, `<`, `>=`, `<=`, `~` (same minor), `^` (same major, or
//! minor for 0.x), wildcards (`1.2.x`, `*`) and ranges (`1.2 - 1.4.5`); a prerelease version
//! matches only a constraint that has a prerelease itself.

use std::cmp::Ordering;
use std::sync::OnceLock;

use minijinja::value::Value;
use minijinja::{Error, ErrorKind};
use regex::Regex;

/// Constraints longer than this are refused (they are a few comparisons in practice).
const MAX_CONSTRAINT_LEN: usize = 1024;

const CV: &str = concat!(
    r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?",
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
);
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

struct Patterns {
    version: Regex,
    constraint: Regex,
    range: Regex,
    find: Regex,
    valid: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let re = |p: String| Regex::new(&p).unwrap_or_else(|_| unreachable_regex());
        Patterns {
            version: re(concat!(
                r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?",
                r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
                r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$"
            )
            .to_owned()),
            constraint: re(format!(r"^\s*({OPS})\s*({CV})\s*$")),
            range: re(format!(r"\s*({CV})\s+-\s+({CV})\s*")),
            find: re(format!(r"({OPS})\s*({CV})")),
            valid: re(format!(
                r"^(\s*({OPS})\s*({CV})\s*)((?:\s+|,\s*)({OPS})\s*({CV})\s*)*$"
            )),
        }
    })
}

/// The patterns above are constants that compile; a regex that matches nothing stands in
/// rather than a panic.
fn unreachable_regex() -> Regex {
    Regex::new(r"[^\s\S]").unwrap_or_else(|_| unreachable_regex())
}

fn err(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
    original: String,
}

impl Version {
    /// Masterminds' `NewVersion`: an optional `v`, minor and patch may be left out.
    pub(super) fn parse(text: &str) -> Result<Self, Error> {
        let invalid = || err(format!("{text:?} is not a semantic version"));
        let caps = patterns().version.captures(text).ok_or_else(invalid)?;
        let number = |i: usize| -> Result<u64, Error> {
            caps.get(i).map_or(Ok(0), |m| {
                m.as_str()
                    .trim_start_matches('.')
                    .parse()
                    .map_err(|_| invalid())
            })
        };
        Ok(Self {
            major: number(1)?,
            minor: number(2)?,
            patch: number(3)?,
            pre: caps.get(5).map_or("", |m| m.as_str()).to_owned(),
            metadata: caps.get(8).map_or("", |m| m.as_str()).to_owned(),
            original: text.to_owned(),
        })
    }

    fn compare(&self, other: &Self) -> Ordering {
        self.major
            .cmp(&other.major)
            .then(self.minor.cmp(&other.minor))
            .then(self.patch.cmp(&other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &other.pre),
            })
    }
}

/// SemVer precedence of prereleases: identifier by identifier, numbers numerically and below
/// text, a longer list above its prefix.
fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let a: Vec<&str> = a.split('.').collect();
    let b: Vec<&str> = b.split('.').collect();
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (
            a.get(i).copied().unwrap_or(""),
            b.get(i).copied().unwrap_or(""),
        );
        let order = match (x.is_empty(), y.is_empty()) {
            _ if x == y => Ordering::Equal,
            (true, _) => Ordering::Less,
            (_, true) => Ordering::Greater,
            _ => match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => x.cmp(y),
            },
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

struct Constraint {
    con: Version,
    op: String,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

impl Constraint {
    fn parse(text: &str) -> Result<Self, Error> {
        let caps = patterns()
            .constraint
            .captures(text)
            .ok_or_else(|| err(format!("improper constraint: {text}")))?;
        let group = |i: usize| caps.get(i).map_or("", |m| m.as_str());
        let (major, minor, patch, pre) = (group(3), group(4), group(5), group(6));
        let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
        let version = if is_x(major) || major.is_empty() {
            dirty = true;
            format!("0.0.0{pre}")
        } else if is_x(minor.trim_start_matches('.')) || minor.is_empty() {
            minor_dirty = true;
            dirty = true;
            format!("{major}.0.0{pre}")
        } else if is_x(patch.trim_start_matches('.')) || patch.is_empty() {
            patch_dirty = true;
            dirty = true;
            format!("{major}{minor}.0{pre}")
        } else {
            group(2).to_owned()
        };
        let con =
            Version::parse(&version).map_err(|_| err(format!("improper constraint: {text}")))?;
        Ok(Self {
            con,
            op: group(1).to_owned(),
            minor_dirty,
            patch_dirty,
            dirty,
        })
    }

    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        // A prerelease version only matches constraints that name a prerelease (`!=`
        // checks this for wildcards only).
        if !v.pre.is_empty() && c.pre.is_empty() && (self.op != "!=" || self.dirty) {
            return false;
        }
        match self.op.as_str() {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            "!=" => self.not_equal(v),
            ">" => {
                if !self.dirty {
                    v.compare(c) == Ordering::Greater
                } else if v.major != c.major {
                    v.major > c.major
                } else if self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    v.compare(c) == Ordering::Greater
                }
            }
            "<" => v.compare(c) == Ordering::Less,
            ">=" | "=>" => v.compare(c) != Ordering::Less,
            "<=" | "=<" => {
                if self.dirty {
                    !(v.major > c.major
                        || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
                } else {
                    v.compare(c) != Ordering::Greater
                }
            }
            "~" | "~>" => self.tilde(v),
            "^" => self.caret(v),
            _ => false,
        }
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.con;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            } else if self.minor_dirty {
                return false;
            } else if c.patch != v.patch && !self.patch_dirty {
                return true;
            } else if self.patch_dirty {
                if !v.pre.is_empty() || !c.pre.is_empty() {
                    return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                }
                return false;
            }
        }
        v.compare(c) != Ordering::Equal
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        v.patch == c.patch
    }
}

/// Masterminds' `NewConstraint` and `Check`.
pub(super) fn satisfies(constraint: &str, version: &Version) -> Result<bool, Error> {
    if constraint.len() > MAX_CONSTRAINT_LEN {
        return Err(err(format!(
            "semver constraint of {} bytes is longer than the limit of {MAX_CONSTRAINT_LEN}",
            constraint.len()
        )));
    }
    let p = patterns();
    // `1.2 - 1.4.5` is `>= 1.2, <= 1.4.5`.
    let mut text = constraint.to_owned();
    for caps in p.range.captures_iter(constraint) {
        let (Some(whole), Some(low), Some(high)) = (caps.get(0), caps.get(1), caps.get(11)) else {
            continue;
        };
        text = text.replacen(
            whole.as_str(),
            &format!(">= {}, <= {}", low.as_str(), high.as_str()),
            1,
        );
    }
    let mut groups = Vec::new();
    for group in text.split("||") {
        if !p.valid.is_match(group) {
            return Err(err(format!("improper constraint: {group}")));
        }
        let parts = p
            .find
            .find_iter(group)
            .map(|m| Constraint::parse(m.as_str()))
            .collect::<Result<Vec<_>, _>>()?;
        groups.push(parts);
    }
    Ok(groups
        .iter()
        .any(|group| group.iter().all(|c| c.check(version))))
}

/// `semver("1.2.3-beta.1+build")`: a dict of `Major`, `Minor`, `Patch`, `Prerelease`,
/// `Metadata` and `Original`, as Sprig's version object's methods.
pub(super) fn parse_function(text: &str) -> Result<Value, Error> {
    let v = Version::parse(text)?;
    let pairs = vec![
        ("Major", Value::from(v.major)),
        ("Minor", Value::from(v.minor)),
        ("Patch", Value::from(v.patch)),
        ("Prerelease", Value::from(v.pre)),
        ("Metadata", Value::from(v.metadata)),
        ("Original", Value::from(v.original)),
    ];
    minijinja::functions::dict(None, minijinja::value::Kwargs::from_iter(pairs))
}

/// `semverCompare(">=1.2.0", version)`: whether the version satisfies the constraint; an
/// error for an invalid version or constraint (as in Helm).
pub(super) fn compare_function(constraint: &str, version: &str) -> Result<bool, Error> {
    satisfies(constraint, &Version::parse(version)?)
}

/// `version | semverCompare(">=1.2.0")`.
pub(super) fn compare_filter(version: &str, constraint: &str) -> Result<bool, Error> {
    compare_function(constraint, version)
}
