//! Stored sign-ins added to a launch.

use crate::config::Transport;

use super::connection::Launch;
use super::{Manager, Slot};

impl Manager {
    /// A stored sign-in becomes the http client's token handling, an
    /// `sse` server's `Authorization` header, or (for stdio servers with
    /// `auth: {type: "oauth", credentialId}`) `OAUTH_ACCESS_TOKEN`. An
    /// explicit Authorization header in the config wins over a sign-in, and
    /// so does a bearer token the user gave for this server and URL (kept in
    /// the keychain, never in the config file).
    pub(super) async fn add_sign_in(&self, slot: &Slot, launch: &mut Launch) -> Result<(), String> {
        let Some(vault) = self.vault() else {
            return Ok(());
        };
        let has_header = launch
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"));
        if let (false, Some(url), Transport::Http | Transport::Sse) =
            (has_header, launch.def.url.clone(), launch.def.transport)
        {
            match crate::auth::oauth::static_token(&slot.name, &url, &vault).await {
                Ok(Some(t)) => {
                    slot.log.redactor.add([t.clone()]);
                    launch
                        .headers
                        .insert("Authorization".into(), format!("Bearer {t}"));
                    return Ok(());
                }
                Ok(None) => {}
                Err(e) => self.warn(
                    slot,
                    &format!("cannot read the bearer token kept for this server: {e}"),
                ),
            }
        }
        match launch.def.transport {
            Transport::Http if !has_header => {
                let url = launch.def.url.clone().unwrap_or_default();
                match crate::auth::oauth::authorized(&slot.name, &url, &vault).await {
                    Ok(crate::auth::oauth::Authorized::Client(c)) => launch.oauth = Some(c),
                    Ok(crate::auth::oauth::Authorized::None) => {}
                    Err(e) => self.warn(slot, &e),
                }
            }
            Transport::Sse if !has_header => {
                let url = launch.def.url.clone().unwrap_or_default();
                if crate::auth::oauth::is_signed_in(&slot.name, &url, &vault).await {
                    match crate::auth::oauth::access_token(&slot.name, &vault).await {
                        Ok(Some(t)) => {
                            slot.log.redactor.add([t.clone()]);
                            launch
                                .headers
                                .insert("Authorization".into(), format!("Bearer {t}"));
                        }
                        Ok(None) => {}
                        Err(e) => return Err(format!("Authentication required: {e}")),
                    }
                }
            }
            Transport::Stdio => {
                let Some(auth) = launch.def.auth.as_ref().filter(|a| a.kind == "oauth") else {
                    return Ok(());
                };
                let from = auth
                    .credential_id
                    .clone()
                    .unwrap_or_else(|| slot.name.clone());
                match crate::auth::oauth::access_token(&from, &vault).await {
                    Ok(Some(t)) => {
                        slot.log.redactor.add([t.clone()]);
                        launch.env.insert("OAUTH_ACCESS_TOKEN".into(), t);
                    }
                    Ok(None) => {
                        let msg = format!("Authentication required: no sign-in is stored for \"{from}\" (auth.credentialId); sign in to it first, then start this server");
                        self.warn(slot, &msg);
                        return Err(msg);
                    }
                    Err(e) => return Err(format!("Authentication required: {e}")),
                }
            }
            _ => {}
        }
        Ok(())
    }
}
