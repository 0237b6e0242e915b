//! A banner for a problem with the gateway connection itself: the gateway refused this page (and
//! why), wants the person signed in (with a link to its sign-in page), or speaks another protocol
//! version.

use leptos::prelude::*;

use crate::context::GatewayStatus;

/// Shown while the connection has a problem the person must act on.
#[component]
pub fn GatewayProblem() -> impl IntoView {
    let status = expect_context::<GatewayStatus>();
    move || {
        status.problem.get().map(|problem| {
            let sign_in = problem.sign_in.then(|| {
                view! { <a href="/signin" data-testid="sign-in-link">"Sign in"</a> }
            });
            view! {
                <div class="banner notice" data-testid="gateway-problem" role="alert">
                    <strong>"Cannot use the gateway"</strong>
                    <span class="banner-text">{problem.text}</span>
                    {sign_in}
                </div>
            }
        })
    }
}
