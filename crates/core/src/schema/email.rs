//! Go `net/mail.ParseAddress`, for `format: email`.
//!
//! Imports nothing from the other schema files.

/// strfmt.IsEmail: Go `net/mail.ParseAddress` accepts it (group syntax and RFC 2047 words aside).
pub(super) fn is_email(s: &str) -> bool {
    let mut p = MailParser { s };
    p.parse_single_address()
}

/// A port of the parts of Go's `net/mail` address parser that `ParseAddress` uses.
struct MailParser<'a> {
    s: &'a str,
}

impl MailParser<'_> {
    fn parse_single_address(&mut self) -> bool {
        if !self.parse_address() {
            return false;
        }
        self.skip_cfws() && self.s.is_empty()
    }

    fn parse_address(&mut self) -> bool {
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        // addr-spec first, then name-addr.
        let saved = self.s;
        if self.consume_addr_spec() {
            self.skip_space();
            if self.s.starts_with('(') {
                self.s = &self.s[1..];
                return self.consume_comment();
            }
            return true;
        }
        self.s = saved;
        if !self.s.starts_with('<') && !self.consume_phrase() {
            return false;
        }
        self.skip_space();
        let Some(rest) = self.s.strip_prefix('<') else {
            return false;
        };
        self.s = rest;
        if !self.consume_addr_spec() {
            return false;
        }
        match self.s.strip_prefix('>') {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }

    fn skip_space(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while let Some(rest) = self.s.strip_prefix('(') {
            self.s = rest;
            if !self.consume_comment() {
                return false;
            }
            self.skip_space();
        }
        true
    }

    /// After `(`: consume up to the matching `)`; false when unclosed.
    fn consume_comment(&mut self) -> bool {
        let mut depth = 1;
        let b = self.s.as_bytes();
        let mut i = 0;
        while i < b.len() && depth > 0 {
            match b[i] {
                b'\\' if i + 1 < b.len() => i += 1,
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        self.s = self.s.get(i..).unwrap_or("");
        depth == 0
    }

    fn consume_addr_spec(&mut self) -> bool {
        let saved = self.s;
        let ok = self.addr_spec();
        if !ok {
            self.s = saved;
        }
        ok
    }

    fn addr_spec(&mut self) -> bool {
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        let local_ok = if self.s.starts_with('"') {
            self.consume_quoted_string().is_some_and(|q| !q.is_empty())
        } else {
            self.consume_atom(true, false)
        };
        if !local_ok {
            return false;
        }
        let Some(rest) = self.s.strip_prefix('@') else {
            return false;
        };
        self.s = rest;
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        if self.s.starts_with('[') {
            self.consume_domain_literal()
        } else {
            self.consume_atom(true, false)
        }
    }

    fn consume_atom(&mut self, dot: bool, permissive: bool) -> bool {
        let end = self
            .s
            .char_indices()
            .find(|(_, c)| !is_atext(*c, dot))
            .map_or(self.s.len(), |(i, _)| i);
        if end == 0 {
            return false;
        }
        let atom = &self.s[..end];
        if !permissive && (atom.starts_with('.') || atom.ends_with('.') || atom.contains("..")) {
            return false;
        }
        self.s = &self.s[end..];
        true
    }

    fn consume_quoted_string(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut escaped = false;
        for (i, c) in self.s.char_indices().skip(1) {
            if escaped {
                if !is_vchar(c) && !matches!(c, ' ' | '\t') {
                    return None;
                }
                out.push(c);
                escaped = false;
            } else if c == '"' {
                self.s = &self.s[i + 1..];
                return Some(out);
            } else if c == '\\' {
                escaped = true;
            } else if is_vchar(c) || matches!(c, ' ' | '\t') {
                out.push(c);
            } else {
                return None;
            }
        }
        None
    }

    fn consume_domain_literal(&mut self) -> bool {
        let Some(rest) = self.s.strip_prefix('[') else {
            return false;
        };
        let Some(close) = rest.find(']') else {
            return false;
        };
        let dtext = &rest[..close];
        if !dtext
            .chars()
            .all(|c| !matches!(c, '[' | ']' | '\\') && is_vchar(c))
        {
            return false;
        }
        self.s = &rest[close + 1..];
        dtext.parse::<std::net::IpAddr>().is_ok()
    }

    /// A display name: one or more words (atoms or quoted strings), comments allowed between.
    fn consume_phrase(&mut self) -> bool {
        let mut words = 0;
        loop {
            if words > 0 && !self.skip_cfws() {
                return false;
            }
            self.skip_space();
            if self.s.is_empty() {
                break;
            }
            let ok = if self.s.starts_with('"') {
                self.consume_quoted_string().is_some()
            } else {
                self.consume_atom(true, true)
            };
            if !ok {
                break;
            }
            words += 1;
        }
        words > 0
    }
}

fn is_vchar(c: char) -> bool {
    ('!'..='~').contains(&c) || !c.is_ascii()
}

fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => is_vchar(c),
    }
}
