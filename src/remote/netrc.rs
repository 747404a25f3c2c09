//! `.netrc` credentials for HTTPS Git catalog sources (`$NETRC`, else `~/.netrc`), read the
//! way curl (and so `git`) reads them: whitespace-separated tokens, `machine NAME` entries with
//! `login` and `password`, `macdef` bodies skipped up to a blank line. Only host-scoped
//! `machine` entries are used: a `default` entry is ignored, since it would go to whichever
//! server asks (issue 21 H6). The file is the user's own configuration (trusted), but it is read
//! bounded and its contents never reach a message.

use std::path::PathBuf;

/// A `login` and a `password`.
type Entry = (String, String);

/// A `.netrc` larger than this is ignored (a real one holds a few entries).
const MAX_BYTES: u64 = 256 * 1024;

/// The `login` and `password` of `host`'s `machine` entry, never of the `default` entry, and
/// whether a `default` entry was left unused. `host` may carry a port (`example.com:8443`): the
/// entry is looked up with and then without it, as curl matches the host name alone.
pub(crate) fn credentials_for(host: &str) -> (Option<Entry>, bool) {
    let Some(text) = path().and_then(|p| read(&p)) else {
        return (None, false);
    };
    let bare = host.rsplit_once(':').map_or(host, |(name, _)| name);
    let (exact, default) = lookup(&text, host);
    let entry = exact.or_else(|| lookup(&text, bare).0);
    let default_ignored = entry.is_none() && default.is_some();
    (entry, default_ignored)
}

/// Where the file is: `$NETRC`, else `$HOME/.netrc`.
fn path() -> Option<PathBuf> {
    crate::env::netrc()
        .map(PathBuf::from)
        .or_else(|| crate::env::home().map(|home| PathBuf::from(home).join(".netrc")))
}

/// The file's text; `None` when it is absent, not a regular file, too large or not UTF-8.
fn read(path: &std::path::Path) -> Option<String> {
    use std::io::Read as _;
    let file = fs_err::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        crate::log!(
            crate::logger::Level::Warn,
            "{} is not a regular file of at most {MAX_BYTES} bytes: not read for Git credentials",
            path.display()
        );
        return None;
    }
    let mut text = String::new();
    file.take(MAX_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The entry for `host` (exact, ASCII case-insensitive) and the `default` entry, each if it has
/// a password.
fn lookup(text: &str, host: &str) -> (Option<Entry>, Option<Entry>) {
    let mut tokens = tokens(text);
    let mut found: Option<Entry> = None;
    let mut default: Option<Entry> = None;
    // The entry being read: whether it is the host's (`Some(true)`), `default`'s (`None`
    // inside `in_default`), or another machine's.
    let mut current: Option<bool> = None;
    let mut in_default = false;
    let (mut login, mut password) = (String::new(), None::<String>);
    let mut close = |current: Option<bool>,
                     in_default: bool,
                     login: &mut String,
                     password: &mut Option<String>| {
        if let Some(password) = password.take() {
            let entry = (std::mem::take(login), password);
            if current == Some(true) && found.is_none() {
                found = Some(entry);
            } else if in_default && default.is_none() {
                default = Some(entry);
            }
        }
        login.clear();
    };
    while let Some(token) = tokens.next() {
        match token.as_str() {
            "machine" => {
                close(current, in_default, &mut login, &mut password);
                in_default = false;
                current = tokens.next().map(|name| name.eq_ignore_ascii_case(host));
            }
            "default" => {
                close(current, in_default, &mut login, &mut password);
                current = None;
                in_default = true;
            }
            "login" => login = tokens.next().unwrap_or_default(),
            "password" => password = tokens.next(),
            "account" => {
                tokens.next();
            }
            "macdef" => {
                tokens.next();
                tokens.skip_macro();
            }
            _ => {}
        }
    }
    close(current, in_default, &mut login, &mut password);
    (found, default)
}

/// The tokens of a `.netrc` (whitespace-separated; a `"…"` token may hold spaces and `\`
/// escapes, as curl reads them).
fn tokens(text: &str) -> Tokens<'_> {
    Tokens { rest: text }
}

struct Tokens<'a> {
    rest: &'a str,
}

impl Tokens<'_> {
    /// A `macdef` body runs to the next blank line.
    fn skip_macro(&mut self) {
        self.rest = self
            .rest
            .find("\n\n")
            .map_or("", |end| &self.rest[end + 2..]);
    }
}

impl Iterator for Tokens<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let rest = self.rest.trim_start();
        if rest.is_empty() {
            self.rest = rest;
            return None;
        }
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        self.rest = &quoted[i + 1..];
                        return Some(out);
                    }
                    '\\' => match chars.next() {
                        Some((_, 'n')) => out.push('\n'),
                        Some((_, 't')) => out.push('\t'),
                        Some((_, 'r')) => out.push('\r'),
                        Some((_, other)) => out.push(other),
                        None => {}
                    },
                    other => out.push(other),
                }
            }
            self.rest = "";
            return Some(out);
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(rest[..end].to_owned())
    }
}

#[cfg(test)]
mod tests {
    #[allow(clippy::unnecessary_wraps)] // compared with what `lookup` answers
    fn pair(login: &str, password: &str) -> Option<super::Entry> {
        Some((login.to_owned(), password.to_owned()))
    }

    /// The host's entry (the `default` entry is never used for a host).
    fn lookup(text: &str, host: &str) -> Option<super::Entry> {
        super::lookup(text, host).0
    }

    /// A host with a port finds the entry of its name before the default entry.
    #[test]
    fn a_port_falls_back_to_the_name_before_the_default() {
        let text = "default login anon password d\nmachine h login me password p\n";
        let (exact, default) = super::lookup(text, "h:8443");
        assert_eq!((exact, default), (None, pair("anon", "d")));
        assert_eq!(super::lookup(text, "h").0, pair("me", "p"));
    }

    #[test]
    fn finds_the_host_and_never_default() {
        let text = "machine a.example login alice password one\n\
                    machine git.example.com\n  login bob\n  password \"two words\"\n\
                    default login anon password three\n";
        assert_eq!(lookup(text, "git.example.com"), pair("bob", "two words"));
        assert_eq!(lookup(text, "GIT.example.com"), pair("bob", "two words"));
        assert_eq!(lookup(text, "a.example"), pair("alice", "one"));
        assert_eq!(lookup(text, "other.example"), None);
        assert_eq!(lookup("machine a login x password y", "b"), None);
    }

    #[test]
    fn the_first_entry_wins_and_entries_without_password_give_nothing() {
        let text = "machine h login first password 1 machine h login second password 2";
        assert_eq!(lookup(text, "h"), pair("first", "1"));
        assert_eq!(lookup("machine h login only", "h"), None);
        // A password without login is sent with an empty user name, as curl does.
        assert_eq!(lookup("machine h password p", "h"), pair("", "p"));
    }

    #[test]
    fn macdef_bodies_and_accounts_are_skipped() {
        let text = "macdef init\nmachine h login evil password evil\n\n\
                    machine h account acct login me password \"a\\\"b\\\\c\"\n";
        assert_eq!(lookup(text, "h"), pair("me", "a\"b\\c"));
        assert_eq!(lookup("machine h login u password", "h"), None);
    }
}
