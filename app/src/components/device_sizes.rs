//! The preview's width: a phone's, a tablet's or the whole pane, to see a page as each shows it.

use leptos::prelude::*;

/// A width the preview can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceSize {
    /// 390 CSS pixels (a current phone held upright).
    Phone,
    /// 820 CSS pixels (a tablet held upright).
    Tablet,
    /// The whole pane.
    #[default]
    Desktop,
}

impl DeviceSize {
    const ALL: [Self; 3] = [Self::Phone, Self::Tablet, Self::Desktop];

    /// The frame's width, as CSS.
    pub fn width(self) -> &'static str {
        match self {
            Self::Phone => "390px",
            Self::Tablet => "820px",
            Self::Desktop => "100%",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Phone => "Phone",
            Self::Tablet => "Tablet",
            Self::Desktop => "Desktop",
        }
    }
}

/// Three buttons, one pressed.
#[component]
pub fn DeviceSizes(size: RwSignal<DeviceSize>) -> impl IntoView {
    view! {
        <div class="device-sizes" role="group" aria-label="Preview width">
            {DeviceSize::ALL
                .into_iter()
                .map(|each| {
                    view! {
                        <button
                            class="device"
                            class:active=move || size.get() == each
                            aria-pressed=move || (size.get() == each).to_string()
                            data-testid=format!("device-{}", each.name().to_lowercase())
                            title=format!("Preview at {} wide", each.width())
                            on:click=move |_| size.set(each)
                        >
                            {each.name()}
                        </button>
                    }
                })
                .collect_view()}
        </div>
    }
}
