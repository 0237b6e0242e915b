//! Reviewing a proposed edit before it becomes a version.

use leptos::html::Div;
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::interop::diff_view::DiffView;
use crate::review::{FileGroup, HunkView, Review};
use crate::run::expect_runner;
use crate::share::code_language;

/// The proposal as hunks to keep or reject (changed words marked; a project's grouped by file,
/// each file with its own "Accept all" and "Reject all"), "Keep all", "Reject all" and "Apply",
/// above Monaco's diff between the current version and the result of the choices.
#[component]
pub fn DiffReview() -> impl IntoView {
    let runner = expect_runner();
    let review = runner.state().review;
    let container = NodeRef::<Div>::new();
    let diff = StoredValue::new_local(None::<SendWrapper<DiffView>>);
    container.on_load(move |el| diff.set_value(Some(SendWrapper::new(DiffView::new(&el)))));

    // Monaco shows what applying would give: it follows the choices.
    Effect::new(move |_| {
        review.with(|r| {
            let Some(r) = r else { return };
            diff.with_value(|d| {
                if let Some(d) = d {
                    d.show(&r.base, &r.result(), code_language(&r.base));
                }
            });
        });
    });

    let counts =
        Memo::new(move |_| review.with(|r| r.as_ref().map_or((0, 0), |r| (r.kept(), r.hunks.len()))));
    // A project's hunks sit under a heading per file, with that file's "Accept all" and
    // "Reject all"; a page's are one list, as they always were.
    let hunks = move || {
        review.with(|r| {
            let Some(r) = r else { return Vec::new() };
            let groups = r.files();
            if groups.is_empty() {
                return (0..r.hunks.len())
                    .filter_map(|i| hunk_item(r, i, diff))
                    .map(IntoAny::into_any)
                    .collect();
            }
            groups.into_iter().map(|group| file_item(r, group, diff).into_any()).collect::<Vec<_>>()
        })
    };
    let keep_all = {
        let runner = expect_runner();
        move |_| runner.review_all(true)
    };
    let reject_all = {
        let runner = expect_runner();
        move |_| runner.review_all(false)
    };
    let apply = {
        let runner = expect_runner();
        move |_| runner.finish_review()
    };
    view! {
        <section class="diff-review" data-testid="diff-review">
            <div class="review-bar">
                <strong>"Review the edit"</strong>
                <span class="review-count" data-testid="review-count">
                    {move || {
                        let (kept, all) = counts.get();
                        format!("{kept} of {all} change{} kept", if all == 1 { "" } else { "s" })
                    }}
                </span>
                <div class="spacer"></div>
                <button class="btn small" data-testid="keep-all" on:click=keep_all>"Keep all"</button>
                <button class="btn small" data-testid="reject-all" on:click=reject_all>"Reject all"</button>
                <button class="btn small primary" data-testid="apply-review" on:click=apply>
                    {move || if counts.get().0 == 0 { "Discard" } else { "Apply" }}
                </button>
            </div>
            <ol class="hunk-list">{hunks}</ol>
            <div class="diff-editor" data-testid="diff-editor" node_ref=container></div>
        </section>
    }
}

/// Monaco's diff, once it has loaded.
type Diff = StoredValue<Option<SendWrapper<DiffView>>, LocalStorage>;

/// Hunk `i` of the review as an item to keep or reject.
fn hunk_item(r: &Review, i: usize, diff: Diff) -> Option<impl IntoView + use<>> {
    let runner = expect_runner();
    let hunk = r.view(i)?;
    let kept = r.accepted.get(i).copied().unwrap_or(false);
    let line = r.line_in_result(i) as u32;
    Some(view! {
        <li class="hunk" class:rejected=!kept data-testid="hunk">
            <label class="hunk-head">
                <input
                    type="checkbox"
                    data-testid="hunk-keep"
                    prop:checked=kept
                    on:change=move |ev| runner.review_hunk(i, event_target_checked(&ev))
                />
                {format!("Change {} · {}", i + 1, hunk.place)}
            </label>
            <button
                class="link"
                title="Show it in the diff"
                on:click=move |_| diff.with_value(|d| if let Some(d) = d { d.reveal(line) })
            >
                "show"
            </button>
            <pre class="hunk-lines">{lines(hunk)}</pre>
        </li>
    })
}

/// One file of a project's review: its heading (path, how many changes), buttons that keep or
/// reject all of its hunks, and the hunks.
fn file_item(r: &Review, group: FileGroup, diff: Diff) -> impl IntoView + use<> {
    let (accept_name, reject_name) = group.button_names();
    let (accept, reject) =
        if group.hunks.len() == 1 { ("Accept", "Reject") } else { ("Accept all", "Reject all") };
    let items: Vec<_> = group.hunks.iter().filter_map(|&i| hunk_item(r, i, diff)).collect();
    let heading = group.heading();
    let (path, reject_path, data_path) = (group.path.clone(), group.path.clone(), group.path);
    view! {
        <li class="hunk-file" data-testid="hunk-file" data-path=data_path>
            <div class="hunk-file-head">
                <h3 class="hunk-file-name" data-testid="hunk-file-heading">{heading}</h3>
                {file_button(path, true, accept, accept_name)}
                {file_button(reject_path, false, reject, reject_name)}
            </div>
            <ol class="hunk-group">{items}</ol>
        </li>
    }
}

/// The hunk's removed then added lines, changed words marked.
fn lines(view: HunkView) -> impl IntoView {
    let side = |lines: &[Vec<(String, bool)>], sign: &'static str, class: &'static str| {
        lines
            .iter()
            .map(|runs| {
                let runs = runs
                    .iter()
                    .map(|(text, changed)| {
                        let text = text.clone();
                        if *changed { view! { <mark>{text}</mark> }.into_any() } else { text.into_any() }
                    })
                    .collect_view();
                view! { <span class=class>{sign}{runs}"\n"</span> }
            })
            .collect_view()
    };
    (side(&view.removed, "− ", "del"), side(&view.added, "+ ", "ins"))
}

/// "Accept all" (`keep`) or "Reject all" for the file at `path`, named for assistive tech by `name`.
fn file_button(path: String, keep: bool, label: &'static str, name: String) -> impl IntoView {
    let runner = expect_runner();
    let testid = if keep { "file-accept" } else { "file-reject" };
    view! {
        <button class="btn small" data-testid=testid aria-label=name on:click=move |_| runner.review_file(&path, keep)>
            {label}
        </button>
    }
}
