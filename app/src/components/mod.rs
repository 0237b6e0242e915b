//! The app's parts, one component per file, named after what the user sees.

mod code_editor;
mod connection_status;
mod console_panel;
mod error_message;
mod export_menu;
mod history_panel;
mod metrics_bar;
mod model_notice;
mod model_picker;
mod preview;
mod prompt_box;
mod restored_notice;
mod share_button;
mod shared_link_banner;
mod storage_warning;

pub use code_editor::CodeEditor;
pub use connection_status::ConnectionStatus;
pub use console_panel::ConsolePanel;
pub use error_message::ErrorMessage;
pub use export_menu::ExportMenu;
pub use history_panel::HistoryPanel;
pub use metrics_bar::MetricsBar;
pub use model_notice::ModelNotice;
pub use model_picker::ModelPicker;
pub use preview::Preview;
pub use prompt_box::PromptBox;
pub use restored_notice::RestoredNotice;
pub use share_button::ShareButton;
pub use shared_link_banner::SharedLinkBanner;
pub use storage_warning::StorageWarning;
