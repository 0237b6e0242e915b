//! "Keys": where the gateway's operator allows it, a person pastes their own API key for a
//! provider; it stays in this browser and goes to the gateway only over the socket, for this
//! person's streams, outside the operator's daily quota.

use std::collections::BTreeSet;

use flint_protocol::Secret;
use leptos::prelude::*;

use crate::context::ModelChoice;
use crate::interop::own_keys;

/// Sends a provider's key (or `None`) to the gateway: the socket's `use_key`.
#[derive(Clone, Copy)]
pub struct OwnKeys(pub Callback<(String, Option<Secret>)>);

/// The button and its panel, shown only when some provider takes people's own keys.
#[component]
pub fn OwnKeysButton() -> impl IntoView {
    let choice = expect_context::<ModelChoice>();
    let OwnKeys(send) = expect_context::<OwnKeys>();
    let providers = Memo::new(move |_| {
        choice.models.get().and_then(Result::ok).map_or_else(BTreeSet::new, |list| {
            list.models.into_iter().filter(|m| m.user_key).map(|m| m.provider).collect::<BTreeSet<_>>()
        })
    });
    let stored = RwSignal::new(own_keys::load().into_keys().collect::<BTreeSet<_>>());
    // Stored keys go to the gateway once it says which providers take them.
    Effect::new(move |sent: Option<bool>| {
        if sent == Some(true) || providers.with(BTreeSet::is_empty) {
            return sent.unwrap_or(false);
        }
        for (provider, key) in own_keys::load() {
            if providers.with(|p| p.contains(&provider)) {
                send.run((provider, Some(Secret::new(key))));
            }
        }
        true
    });
    let open = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    let row = move |provider: String| {
        let draft = RwSignal::new(String::new());
        let has = {
            let provider = provider.clone();
            Memo::new(move |_| stored.with(|s| s.contains(&provider)))
        };
        let save = {
            let provider = provider.clone();
            move |_| {
                let key = draft.get_untracked().trim().to_owned();
                if key.is_empty() {
                    return;
                }
                if !own_keys::store(&provider, Some(&key)) {
                    problem.set(Some(
                        "This browser would not keep the key: it is used until you reload.".into(),
                    ));
                }
                send.run((provider.clone(), Some(Secret::new(key))));
                stored.update(|s| {
                    s.insert(provider.clone());
                });
                draft.set(String::new());
            }
        };
        let forget = {
            let provider = provider.clone();
            move |_| {
                own_keys::store(&provider, None);
                send.run((provider.clone(), None));
                stored.update(|s| {
                    s.remove(&provider);
                });
            }
        };
        view! {
            <div class="own-key-row">
                <span class="own-key-provider">{provider.clone()}</span>
                <input
                    type="password"
                    autocomplete="off"
                    data-testid=format!("own-key-{provider}")
                    placeholder=move || if has.get() { "your key is in use" } else { "paste your API key" }
                    prop:value=move || draft.get()
                    on:input=move |ev| draft.set(event_target_value(&ev))
                />
                <button data-testid=format!("own-key-save-{provider}") on:click=save>"Use"</button>
                <Show when=move || has.get()>
                    <button data-testid=format!("own-key-forget-{provider}") on:click=forget.clone()>"Forget"</button>
                </Show>
            </div>
        }
    };
    view! {
        <Show when=move || !providers.with(BTreeSet::is_empty)>
            <div class="own-keys">
                <button
                    class="own-keys-button"
                    data-testid="own-keys-button"
                    title="Use your own API key for a provider"
                    on:click=move |_| open.update(|o| *o = !*o)
                >
                    {move || if stored.with(BTreeSet::is_empty) { "Keys" } else { "Keys ●" }}
                </button>
                <Show when=move || open.get()>
                    <div class="own-keys-panel" data-testid="own-keys-panel">
                        <p class="muted">
                            "Your key stays in this browser and goes to the gateway only over its socket, for your streams; the gateway's daily quota does not apply to them. It is never in share links, the history or exports."
                        </p>
                        {move || providers.get().into_iter().map(row).collect_view()}
                        {move || problem.get().map(|p| view! { <p class="warn">{p}</p> })}
                    </div>
                </Show>
            </div>
        </Show>
    }
}
