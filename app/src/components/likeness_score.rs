//! "Looks like the picture: 87 %" for a page compared with the prompt's picture, on a tile and
//! above the main preview; what differs opens under it (a disclosure: reachable by keyboard and
//! named by its summary), or a sentence says why it could not be compared.

use leptos::prelude::*;

use crate::judge::Likeness;

/// What the score says on hover: how it is made and what it is for.
const HOW: &str = "The page drawn at the size of the prompt's picture and compared with it (layout, block \
                   colours, palette) in Flint's worker. It ranks variations and words a Fix request.";

/// The likeness of one page; nothing while the prompt has no picture.
#[component]
pub fn LikenessScore(likeness: Signal<Likeness>) -> impl IntoView {
    move || {
        let current = likeness.get();
        let label = current.label()?;
        Some(match current {
            Likeness::Done { score, findings } => {
                // A whole percentage for the tests to read, as the label says it.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let percent = (score.clamp(0.0, 1.0) * 100.0).round() as u32;
                let differences = if findings.is_empty() {
                    view! { <p class="likeness-none">"No difference stands out."</p> }.into_any()
                } else {
                    view! {
                        <ul class="likeness-findings" data-testid="likeness-findings">
                            {findings.into_iter().map(|f| view! { <li>{f}</li> }).collect_view()}
                        </ul>
                    }
                    .into_any()
                };
                view! {
                    <details class="likeness" data-testid="likeness" data-state="done" data-score=percent>
                        <summary title=HOW>{label}</summary>
                        {differences}
                    </details>
                }
                .into_any()
            }
            Likeness::Drawing => {
                view! { <p class="likeness" data-testid="likeness" data-state="running">{label}</p> }
                    .into_any()
            }
            Likeness::Failed(_) | Likeness::None => {
                view! { <p class="likeness" data-testid="likeness" data-state="failed">{label}</p> }
                    .into_any()
            }
        })
    }
}
