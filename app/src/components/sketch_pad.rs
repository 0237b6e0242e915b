//! The sketch pad: draw a layout by hand (lines, or boxes for regions) and attach it like any
//! picture. A modal dialog, so the keyboard stays in it and Esc closes it.

use std::rc::Rc;

use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::interop::images::{Sketch, SketchTool};
use crate::pictures::expect_pictures;

/// The Sketch button and its dialog.
#[component]
pub fn SketchPad() -> impl IntoView {
    let pictures = expect_pictures();
    let dialog = NodeRef::<leptos::html::Dialog>::new();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let pad = StoredValue::new_local(None::<Rc<Sketch>>);
    let tool = RwSignal::new(SketchTool::Pen);
    let problem = RwSignal::new(None::<&'static str>);
    let open = move |_| {
        let (Some(dialog), Some(canvas)) = (dialog.get(), canvas.get()) else { return };
        if pad.with_value(Option::is_none) {
            pad.set_value(Some(Rc::new(Sketch::start(&canvas))));
        }
        problem.set(None);
        let _ = dialog.show_modal();
    };
    let close = move || {
        if let Some(dialog) = dialog.get() {
            dialog.close();
        }
    };
    let with_pad = move |f: &dyn Fn(&Sketch)| {
        if let Some(p) = pad.get_value() {
            f(&p);
        }
    };
    let choose = move |t: SketchTool| {
        tool.set(t);
        with_pad(&|p| p.tool(t));
    };
    let add = move |_| {
        let Some(p) = pad.get_value() else { return };
        let p = SendWrapper::new(p);
        leptos::task::spawn_local(async move {
            match p.picture().await {
                Some(file) => {
                    pictures.add(vec![file]);
                    p.clear();
                    close();
                }
                None => problem.set(Some("Draw something first, or press Cancel.")),
            }
        });
    };
    view! {
        <button class="btn" data-testid="open-sketch" title="Draw a layout by hand" on:click=open>
            "Sketch"
        </button>
        <dialog class="sketch-dialog" node_ref=dialog aria-labelledby="sketch-title" data-testid="sketch-dialog">
            <h2 id="sketch-title">"Sketch a layout"</h2>
            <div class="sketch-tools" role="group" aria-label="Drawing tool">
                <button
                    class="btn small"
                    aria-pressed=move || (tool.get() == SketchTool::Pen).to_string()
                    on:click=move |_| choose(SketchTool::Pen)
                >
                    "Pen"
                </button>
                <button
                    class="btn small"
                    data-testid="sketch-box"
                    aria-pressed=move || (tool.get() == SketchTool::Box).to_string()
                    on:click=move |_| choose(SketchTool::Box)
                >
                    "Box"
                </button>
                <button class="btn small" on:click=move |_| with_pad(&|p| p.undo())>"Undo"</button>
                <button class="btn small" on:click=move |_| with_pad(&|p| p.clear())>"Clear"</button>
            </div>
            <canvas
                class="sketch-canvas"
                node_ref=canvas
                width="800"
                height="500"
                role="img"
                aria-label="Sketch area: draw with a mouse, pen or finger"
                data-testid="sketch-canvas"
            ></canvas>
            <Show when=move || problem.with(Option::is_some)>
                <p class="picture-problem" role="alert">{move || problem.get()}</p>
            </Show>
            <div class="sketch-actions">
                <button class="btn primary" data-testid="add-sketch" on:click=add>"Add sketch"</button>
                <button class="btn" on:click=move |_| close()>"Cancel"</button>
            </div>
        </dialog>
    }
}
