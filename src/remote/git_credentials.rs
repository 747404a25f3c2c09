//! Which credentials a Git fetch may answer a server with (issue 21 H6): `KRM_CATALOG_GIT_TOKEN`
//! only to the host `KRM_CATALOG_GIT_TOKEN_HOST` names, a `.netrc` `machine` entry only to its
//! host (never the `default` entry), and nothing for a source that is only being viewed.

use std::sync::Arc;

/// Whether a credential request is for an `https://` URL. gix's HTTP transport asks with the
/// `url` alone (no `protocol` field), so the scheme is read from whichever is given.
pub(super) fn is_https(ctx: &gix::credentials::protocol::Context) -> bool {
    ctx.protocol.as_deref() == Some("https")
        || ctx
            .url
            .as_ref()
            .is_some_and(|url| url.starts_with(b"https://"))
}

/// What a fetch answers a server that asks for credentials, and why it answered nothing.
pub(super) struct Scope {
    /// `catalog view`: nothing is sent.
    pub(super) withheld: bool,
    pub(super) token: Option<String>,
    /// `host[:port]` the token is for (lowercase).
    pub(super) token_host: Option<String>,
    /// Why nothing was sent, for the error the server then gives.
    pub(super) note: Arc<std::sync::Mutex<Option<String>>>,
}

impl Scope {
    /// For an HTTPS server that asks: `KRM_CATALOG_GIT_TOKEN` when the server is the host of
    /// `KRM_CATALOG_GIT_TOKEN_HOST`, else the server's own `machine` entry of the user's
    /// `.netrc`, and nothing else: no helper program, no prompt, no `default` entry, nothing
    /// for a source that is not trusted yet.
    pub(super) fn answer(
        &self,
        action: gix::credentials::helper::Action,
    ) -> Option<gix::credentials::protocol::Outcome> {
        use gix::credentials::helper::{Action, NextAction};
        let Action::Get(ctx) = action else {
            return None;
        };
        let host = host_of(&ctx)?.to_ascii_lowercase();
        let (username, password) = match self.choose(&ctx, &host) {
            Ok(pair) => pair,
            Err(why) => {
                crate::log!(crate::logger::Level::Warn, "{why}");
                if let Ok(mut note) = self.note.lock() {
                    *note = Some(why);
                }
                return None;
            }
        };
        Some(gix::credentials::protocol::Outcome {
            identity: gix::sec::identity::Account {
                username,
                password,
                oauth_refresh_token: None,
            },
            next: NextAction::from(ctx),
        })
    }

    /// The user name and password for `host`, or why there are none.
    pub(super) fn choose(
        &self,
        ctx: &gix::credentials::protocol::Context,
        host: &str,
    ) -> Result<(String, String), String> {
        use crate::env::{GIT_TOKEN, GIT_TOKEN_HOST};
        let asked = format!("{host} asked for credentials");
        if self.withheld {
            return Err(format!(
                "{asked}; `catalog view` sends none, since the source is not trusted yet: \
                 add it to spec.trustedCatalogs and run the function, or `krm-catalog catalog pull` it"
            ));
        }
        if !is_https(ctx) {
            return Err(format!("{asked}; credentials are sent over https only"));
        }
        if let (Some(token), Some(token_host)) = (&self.token, &self.token_host)
            && same_host(token_host, host)
        {
            return Ok(("x-access-token".to_owned(), token.clone()));
        }
        let (entry, default_ignored) = super::netrc::credentials_for(host);
        if let Some(pair) = entry {
            return Ok(pair);
        }
        let bare = host.rsplit_once(':').map_or(host, |(name, _)| name);
        let mut why = match (&self.token, &self.token_host) {
            (Some(_), None) => format!(
                "{asked}; {GIT_TOKEN} is not sent, since {GIT_TOKEN_HOST} is not set: set {GIT_TOKEN_HOST}={host} if the token is for this host"
            ),
            (Some(_), Some(token_host)) => format!(
                "{asked}; {GIT_TOKEN} is not sent: it is for {token_host} ({GIT_TOKEN_HOST})"
            ),
            _ => format!(
                "{asked} and none are set for it: {GIT_TOKEN} with {GIT_TOKEN_HOST}={host}, or a `machine {bare}` entry in .netrc"
            ),
        };
        if default_ignored {
            why.push_str("; the .netrc `default` entry is never sent");
        }
        Err(why)
    }
}

/// Whether the `host[:port]` of `KRM_CATALOG_GIT_TOKEN_HOST` is `host` (as gix gives it: the
/// port only when it is not 443).
pub(super) fn same_host(named: &str, host: &str) -> bool {
    let named = named.strip_suffix(":443").unwrap_or(named);
    let host = host.strip_suffix(":443").unwrap_or(host);
    named.eq_ignore_ascii_case(host)
}

/// The `host[:port]` a credential request is for (gix gives it, or the URL).
pub(super) fn host_of(ctx: &gix::credentials::protocol::Context) -> Option<String> {
    if let Some(host) = ctx.host.as_ref().filter(|h| !h.is_empty()) {
        return Some(host.clone());
    }
    let url = ctx.url.as_ref()?.to_string();
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_owned())
}
