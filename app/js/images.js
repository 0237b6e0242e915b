// Pictures the person attaches: the files an event carries, their bytes (checked in Rust before
// anything decodes them), and a redraw at the size models are sent. Drawing the decoded pixels onto
// a fresh canvas and encoding that is what strips the file's metadata (EXIF, GPS, colour profiles,
// comments) and every frame of an animation but the first: nothing of the original file but its
// pixels is ever sent.

/**
 * The files a paste or a drop carries. All of them, whatever type they claim: each is checked by its
 * bytes, and one that is not a picture is refused with a sentence (a drop left to the browser would
 * open the file in place of Flint).
 */
export function imageFiles(event) {
  const list = event.clipboardData?.files ?? event.dataTransfer?.files;
  return list ? Array.from(list) : [];
}

/** Whether a drag carries files (not text or a link being dragged within the page). */
export function dragsFiles(event) {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}

/** The files an `<input type=file>` holds, then empties it so the same file can be picked again. */
export function inputFiles(input) {
  const files = Array.from(input.files ?? []);
  input.value = '';
  return files;
}

/** A file's name, or `fallback` for a pasted picture that has none. */
export function fileName(blob, fallback) {
  return typeof blob.name === 'string' && blob.name ? blob.name : fallback;
}

/** The blob's bytes. */
export async function blobBytes(blob) {
  return new Uint8Array(await blob.arrayBuffer());
}

/**
 * Decodes `blob` whole (EXIF orientation applied, so the size is the one a person sees). Rejects
 * with an Error whose message is a sentence for the person. Rust has read the header first and
 * refused a size that would not fit in memory.
 */
export async function decode(blob) {
  try {
    return await createImageBitmap(blob, { imageOrientation: 'from-image' });
  } catch {
    throw new Error('the browser could not decode it: the file is damaged or not really an image');
  }
}

/**
 * Draws `bitmap` at `width` × `height` on a fresh canvas and encodes it: PNG (screenshots keep
 * their text sharp), or JPEG when the PNG is over `maxBytes`. Closes the bitmap. Resolves to
 * `[mediaType, base64]`; rejects with an Error whose message is a sentence for the person.
 */
export async function encode(bitmap, width, height, maxBytes) {
  try {
    const canvas = new OffscreenCanvas(width, height);
    const context = canvas.getContext('2d');
    context.imageSmoothingQuality = 'high';
    // Transparent pixels become white, as a page behind them would show.
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, width, height);
    context.drawImage(bitmap, 0, 0, width, height);
    for (const [type, quality] of [['image/png', undefined], ['image/jpeg', 0.9], ['image/jpeg', 0.75]]) {
      const out = await canvas.convertToBlob({ type, quality });
      if (out.size <= maxBytes) return [type, await base64(out)];
    }
  } finally {
    bitmap.close();
  }
  throw new Error('it stays too large even as a JPEG: crop it, or send a smaller picture');
}

async function base64(blob) {
  const url = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(new Error('the picture could not be read back'));
    reader.readAsDataURL(blob);
  });
  return url.slice(url.indexOf(',') + 1);
}
