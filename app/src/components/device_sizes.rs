//! The preview's width: a phone's, a tablet's or the whole pane, to see a page as each shows it. One
//! switch for the main preview and every variation tile ([`PreviewWidth`]).

use leptos::prelude::*;

/// A width the preview can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceSize {
    /// 390 CSS pixels (a current phone held upright).
    Phone,
    /// 820 CSS pixels (a tablet held upright).
    Tablet,
    /// The whole pane (a variation tile: 1280 CSS pixels, a common laptop's).
    #[default]
    Desktop,
}

/// The width every preview is shown at, shared by the main preview and the variation tiles.
#[derive(Debug, Clone, Copy)]
pub struct PreviewWidth(pub RwSignal<DeviceSize>);

/// Provides the shared [`PreviewWidth`] (Desktop until the person switches).
pub fn provide_preview_width() -> PreviewWidth {
    let width = PreviewWidth(RwSignal::new(DeviceSize::default()));
    provide_context(width);
    width
}

/// The shared [`PreviewWidth`].
pub fn expect_preview_width() -> PreviewWidth {
    expect_context::<PreviewWidth>()
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

    /// The width a variation tile lays its page out at, in CSS pixels, before scaling it to the tile.
    pub fn device_px(self) -> f64 {
        match self {
            Self::Phone => 390.0,
            Self::Tablet => 820.0,
            Self::Desktop => 1280.0,
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
