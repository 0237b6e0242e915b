//! Share: a link that opens this prompt, its model and, if chosen, its code in another browser.
//! With pictures, the link is stored on the gateway at once: only a stored link carries them
//! (`crate::share::stored_pictures`).

use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::HtmlInputElement;

use flint_protocol::share::{SharedPrompt, encode, is_too_long};
use flint_protocol::stored_link::{ShareCreated, ShareRequest};

use crate::context::{FanOut, ModelChoice};
use crate::draft::expect_draft;
use crate::interop::clipboard::copy_text;
use crate::interop::http::{FetchError, post_json};
use crate::interop::page_address;
use crate::pictures::expect_pictures;
use crate::run::expect_runner;
use crate::share::stored_pictures::{carried, not_carried, to_share};
use crate::share::{ShareOutcome, kept_until, make_share, share_url, shared_prompt, too_long_message};

/// Selects the whole link when it gets focus, ready for Ctrl+C.
fn select_all(ev: leptos::ev::FocusEvent) {
    event_target::<HtmlInputElement>(&ev).select();
}

/// The link to copy, read-only, selected whole when focused.
fn link_field(url: String) -> impl IntoView {
    view! { <input class="share-link" data-testid="share-link" readonly=true prop:value=url on:focus=select_all /> }
}

/// A Share button with an "include code" box. The link is copied when the browser allows and always
/// shown below, ready to copy by hand; a link too long to survive being sent is not offered.
#[component]
pub fn ShareButton() -> impl IntoView {
    let runner = expect_runner();
    let draft = expect_draft();
    let choice = expect_context::<ModelChoice>();
    let fan_out = expect_context::<FanOut>();
    let include_code = RwSignal::new(false);
    let outcome = RwSignal::new(None::<ShareOutcome>);
    let copied = RwSignal::new(false);
    // The expiry of the link just stored, if the gateway gave one.
    let kept = RwSignal::new(None::<String>);
    let pictures = expect_pictures();
    // What the link just stored carries besides the prompt ("… and its 2 pictures").
    let carries = RwSignal::new(None::<String>);

    let share = move |with_code: bool| {
        let code = if with_code { runner.code() } else { None };
        let shared = SharedPrompt {
            variations: fan_out.count.get_untracked(),
            system: Some(draft.goal.get_untracked()).filter(|g| !g.trim().is_empty()),
            // Only a profile in effect: one left behind by picking another model would mislead.
            profile: choice.active_profile.with_untracked(|p| p.as_ref().map(|p| p.name.clone())),
            kind: draft.prompt.with_untracked(|p| draft.kind_untracked().unless_suggested_by(p)),
            ..shared_prompt(draft.prompt.get_untracked(), choice.selected.get_untracked(), code)
        };
        let (origin, pathname) = page_address();
        copied.set(false);
        kept.set(None);
        carries.set(None);
        let attached = pictures
            .images
            .with_untracked(|images| to_share(images.iter().map(|a| (a.name.as_str(), &a.image))));
        if !attached.is_empty() {
            // Pictures never go into the fragment: the link is stored with them, or goes without.
            let link = encode(&shared);
            let text_url = (!is_too_long(&link)).then(|| share_url(&origin, &pathname, &link));
            let count = attached.len();
            outcome.set(Some(ShareOutcome::Storing));
            spawn_local(async move {
                let request = ShareRequest { link, pictures: attached };
                let made = match post_json::<_, ShareCreated>("/api/share", &request).await {
                    Ok(stored) => {
                        kept.try_set(kept_until(stored.expires_at));
                        carries.try_set(carried(count, stored.pictures));
                        ShareOutcome::Link(format!("{origin}{}", stored.path))
                    }
                    Err(err) => {
                        let status = match &err {
                            FetchError::Status { status, .. } | FetchError::Refused { status, .. } => {
                                Some(*status)
                            }
                            _ => None,
                        };
                        ShareOutcome::WithoutPictures {
                            url: text_url,
                            why: not_carried(count, status, &err.to_string()),
                        }
                    }
                };
                outcome.try_set(Some(made));
            });
            return;
        }
        let made = make_share(&origin, &pathname, &shared);
        if let ShareOutcome::Link(url) = &made {
            let url = url.clone();
            spawn_local(async move {
                let done = copy_text(&url).await;
                // Pressing Share again meanwhile shows another link: only say "copied" for this one.
                let shown =
                    outcome.try_with_untracked(|o| matches!(o, Some(ShareOutcome::Link(u)) if *u == url));
                if done && shown == Some(true) {
                    copied.try_set(true);
                }
            });
        }
        outcome.set(Some(made));
    };

    let share_click = share;
    let panel = move || {
        let close = move |_| outcome.set(None);
        outcome.get().map(|made| match made {
            ShareOutcome::Link(url) => view! {
                <div class="share-panel" role="status">
                    {link_field(url)}
                    <span class="share-note" data-testid="share-note">
                        {move || if copied.get() { "Link copied" } else { "Copy this link" }}
                    </span>
                    {move || carries.get().map(|what| view! {
                        <span class="share-note" data-testid="share-pictures">{what}</span>
                    })}
                    {move || kept.get().map(|until| view! {
                        <span class="share-note" data-testid="share-expiry">{until}</span>
                    })}
                    <button class="banner-close" title="Close" on:click=close>"×"</button>
                </div>
            }
            .into_any(),
            ShareOutcome::TooLong { chars, with_code, link } => {
                let store = move |_| {
                    let link = link.clone();
                    spawn_local(async move {
                        let request = ShareRequest { link, pictures: Vec::new() };
                        let made = match post_json::<_, ShareCreated>("/api/share", &request).await {
                            Ok(stored) => {
                                kept.try_set(kept_until(stored.expires_at));
                                let (origin, _) = page_address();
                                ShareOutcome::Link(format!("{origin}{}", stored.path))
                            }
                            Err(err) => ShareOutcome::Failed(err.to_string()),
                        };
                        outcome.try_set(Some(made));
                    });
                };
                let without_code = with_code.then(|| {
                    view! {
                        <button
                            class="btn"
                            data-testid="share-without-code"
                            on:click=move |_| {
                                include_code.set(false);
                                share(false);
                            }
                        >
                            "Share without code"
                        </button>
                    }
                });
                view! {
                    <div class="share-panel" role="alert">
                        <span class="share-note too-long" data-testid="share-too-long">
                            {too_long_message(chars, with_code)}
                        </span>
                        <button class="btn" data-testid="share-store" on:click=store>"Store as a short link"</button>
                        {without_code}
                        <button class="banner-close" title="Close" on:click=close>"×"</button>
                    </div>
                }
                .into_any()
            }
            ShareOutcome::Storing => view! {
                <div class="share-panel" role="status">
                    <span class="share-note" data-testid="share-storing">"Storing the link with its pictures…"</span>
                </div>
            }
            .into_any(),
            ShareOutcome::WithoutPictures { url, why } => view! {
                <div class="share-panel" role="alert">
                    <span class="share-note too-long" data-testid="share-no-pictures">{why}</span>
                    {url.map(link_field)}
                    <button class="banner-close" title="Close" on:click=close>"×"</button>
                </div>
            }
            .into_any(),
            ShareOutcome::Failed(why) => view! {
                <div class="share-panel" role="alert">
                    <span class="share-note too-long" data-testid="share-store-error">{why}</span>
                    <button class="banner-close" title="Close" on:click=close>"×"</button>
                </div>
            }
            .into_any(),
        })
    };

    view! {
        <div class="share">
            <label class="share-include" title="Put the editor's code in the link too">
                <input
                    type="checkbox"
                    data-testid="share-include-code"
                    prop:checked=move || include_code.get()
                    on:change=move |ev| include_code.set(event_target_checked(&ev))
                />
                "include code"
            </label>
            <button
                class="btn share-button"
                data-testid="share-button"
                title="Make a link that opens this prompt"
                on:click=move |_| share_click(include_code.get_untracked())
            >
                "Share"
            </button>
            {panel}
        </div>
    }
}
