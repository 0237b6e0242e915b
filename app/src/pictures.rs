//! Pictures in the prompt (screenshots, mockups, sketches): which model gets them how, and the
//! description a vision model writes for a code model that does not see. Plain logic, tested
//! natively; `hook` holds the signals and runs the describing stream, `components::image_attach`
//! and `components::image_description` show them.

mod hook;

use flint_protocol::image::ImageData;
use flint_protocol::picture::with_description;
use flint_protocol::{ModelList, Role, StartRequest};

use crate::versions::{Described, FromPictures};

pub use hook::{Pictures, expect_pictures, provide_pictures, run_models};

/// The longest side a picture is sent at: what the vision models Flint pairs with read at full
/// detail (Anthropic's guidance is 1,568 px; OpenAI fits 2,048 and then 768 on the short side), so
/// more pixels only cost bytes and tokens.
pub const FIT_SIDE: u32 = 1_568;
/// The most pixels a picture is sent with (about 1.2 megapixels, the same guidance).
pub const FIT_PIXELS: u64 = 1_200_000;

/// One picture the person attached, checked, downscaled and re-encoded (no metadata left).
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    /// Numbers it within the tab (for keys and Remove).
    pub id: u32,
    /// The file's name, or what it came from ("pasted image", "sketch").
    pub name: String,
    /// The picture as models are sent it.
    pub image: ImageData,
}

/// The size a `width` × `height` picture is sent at: scaled down (never up), keeping its aspect,
/// to fit [`FIT_SIDE`] and [`FIT_PIXELS`].
pub fn fit(width: u32, height: u32) -> (u32, u32) {
    let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    let by_side = f64::from(FIT_SIDE) / w.max(h);
    let by_pixels = (FIT_PIXELS as f64 / (w * h)).sqrt();
    let scale = by_side.min(by_pixels).min(1.0);
    (((w * scale).round() as u32).max(1), ((h * scale).round() as u32).max(1))
}

/// How one model of a run gets the pictures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// It sees: the pictures go with the prompt.
    Sees,
    /// It does not; the vision model named describes them and it gets the description.
    Described {
        /// The describing model's id.
        by: String,
    },
    /// It does not, and nothing here can describe them: the run is refused, never sent blind.
    Blind,
}

/// Whether `model` sees, per the gateway's list (an unknown model does not).
pub fn sees(list: &ModelList, model: &str) -> bool {
    list.models.iter().any(|m| m.id == model && m.vision)
}

/// How `model` gets the pictures.
pub fn route(list: &ModelList, model: &str) -> Route {
    if sees(list, model) {
        return Route::Sees;
    }
    match &list.vision_model {
        Some(by) => Route::Described { by: by.clone() },
        None => Route::Blind,
    }
}

/// The vision model that must describe the pictures for the run's `models`: `None` when every one
/// of them sees (or none is configured: [`refusal`] says so).
pub fn describer(list: &ModelList, models: &[String]) -> Option<String> {
    models.iter().find_map(|m| match route(list, m) {
        Route::Described { by } => Some(by),
        _ => None,
    })
}

/// Why a run of `models` with pictures cannot go yet, as a sentence; `None` when it can.
pub fn refusal(list: &ModelList, models: &[String], description: Option<&Description>) -> Option<String> {
    for model in models {
        match route(list, model) {
            Route::Sees => {}
            Route::Blind => {
                return Some(format!(
                    "{model} does not see images, and this gateway has no vision model to describe them \
                     ([vision] model in flint.toml). Pick a model marked “sees images”, or remove the picture."
                ));
            }
            Route::Described { by } => match description {
                Some(d) if d.by == by && d.status == DescribeStatus::Done && !d.text.trim().is_empty() => {}
                Some(d) if d.by == by && matches!(d.status, DescribeStatus::Failed(_)) => {
                    return Some(format!(
                        "{model} does not see images and {by} could not describe the picture: press \
                         “Describe again” above the prompt, or remove the picture."
                    ));
                }
                _ => {
                    return Some(format!(
                        "{model} does not see images: wait for {by}'s description of the picture (above the \
                         prompt) to finish, then run."
                    ));
                }
            },
        }
    }
    None
}

/// Where a description is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescribeStatus {
    /// It streams.
    Streaming,
    /// It is complete (and the person may edit it).
    Done,
    /// The describing stream failed, saying why.
    Failed(String),
}

/// A vision model's description of the attached pictures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// Which pictures and which model (see [`key`]): a description is cached per both.
    pub key: u64,
    /// The describing model's id.
    pub by: String,
    /// The text so far (the person's edit, once they make one).
    pub text: String,
    /// Where it is.
    pub status: DescribeStatus,
}

/// Names a set of pictures described by one model (FNV-1a over the model and each picture's bytes
/// as sent): the same pictures are not described twice by the same model.
pub fn key(images: &[Attached], by: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        hash = (hash ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    };
    eat(by.as_bytes());
    for a in images {
        eat(a.image.data.as_bytes());
    }
    hash
}

/// The pictures as the saved session keeps them (the description only once complete: one cut off
/// by a reload is made again).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedPictures {
    /// Each picture's name and the picture as sent.
    pub images: Vec<(String, ImageData)>,
    /// The description's model and text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<(String, String)>,
    /// They came with a shared link and the person has not yet asked for them to be described: a
    /// reload keeps them held ([`hook::Pictures::attach_shared`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
}

impl SavedPictures {
    /// What the session keeps of `images` and `description`; `None` without pictures.
    pub fn of(images: &[Attached], description: Option<&Description>, held: bool) -> Option<Self> {
        if images.is_empty() {
            return None;
        }
        Some(Self {
            images: images.iter().map(|a| (a.name.clone(), a.image.clone())).collect(),
            description: description
                .filter(|d| d.status == DescribeStatus::Done)
                .map(|d| (d.by.clone(), d.text.clone())),
            held,
        })
    }
}

/// What a job carries of the pictures: the pictures themselves for the models that see, the
/// description for the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobPictures {
    /// The pictures, as sent.
    pub images: Vec<ImageData>,
    /// The models (ids) that see them.
    pub seeing: Vec<String>,
    /// The description and the model that wrote it, for the models that do not see.
    pub description: Option<(String, String)>,
}

impl JobPictures {
    /// Gives `request` the pictures the way its model takes them: attached to the last user
    /// message, or described in it.
    pub fn dress(&self, request: &mut StartRequest) {
        if self.images.is_empty() {
            return;
        }
        let sees = self.seeing.contains(&request.model);
        let Some(last) = request.messages.iter_mut().rev().find(|m| m.role == Role::User) else { return };
        if sees {
            last.images.clone_from(&self.images);
        } else if let Some((text, by)) = &self.description {
            last.content = with_description(&last.content, text, by);
        }
    }

    /// What a version `model` wrote keeps of the pictures: how many, and the description it got
    /// in their place when it does not see.
    pub fn for_version(&self, model: &str) -> Option<FromPictures> {
        if self.images.is_empty() {
            return None;
        }
        let description = if self.seeing.iter().any(|m| m == model) {
            None
        } else {
            self.description.as_ref().map(|(text, by)| Described { text: text.clone(), by: by.clone() })
        };
        Some(FromPictures { count: self.images.len(), description })
    }
}

#[cfg(test)]
#[path = "pictures_tests.rs"]
mod tests;
