// What the preview's frames may send the page (protocol/src/frames.rs, `FromFrame`), checked on
// receipt by preview.js and checks.js before anything else reads a message. The frames check what
// they are sent against their own table (public/preview-messages.js). Both tables are derived from
// the Rust types by protocol/src/frames_tests.rs, which fails when one differs.

// Kind → field → type; `?`: the field may be left out (or null). Not edited by hand: see above.
// frame-messages:begin
export const FROM_FRAME = {
  "applied": {"ms": "number", "resync": "boolean?", "whole": "boolean?"},
  "checked": {"failed": "string?", "ms": "number?", "results": "array?", "text": "string?"},
  "console": {"level": "string", "text": "string"},
  "gone": {},
  "loaded": {},
  "picked": {"cancelled": "boolean?", "id": "string?", "path": "array?", "src": "string?"},
  "pixels": {"failed": "string?", "height": "number?", "ms": "number?", "page_height": "number?", "rgba": "string?", "width": "number?"},
  "pong": {"id": "number"},
  "ready": {},
  "swapped": {"ok": "boolean"}
};
// frame-messages:end

const typeOf = (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Why `data` is not a message of `table` (a sentence), or null when it is one. */
export function messageProblem(data, table = FROM_FRAME) {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return 'not an object';
  const kind = data.flint;
  if (typeof kind !== 'string' || !Object.hasOwn(table, kind)) {
    return `unknown kind ${JSON.stringify(String(kind)).slice(0, 40)}`;
  }
  for (const [name, type] of Object.entries(table[kind])) {
    const value = data[name];
    const optional = type.endsWith('?');
    if (optional && (value === undefined || value === null)) continue;
    if (typeOf(value) !== (optional ? type.slice(0, -1) : type)) return `"${kind}" needs ${name}: ${type}`;
  }
  return null;
}

/** A checked `picked` message as the JSON the app reads (its fields alone; a cancel if it is over 16 KB). */
export function pickedJson(data) {
  let json;
  try {
    json = JSON.stringify({ path: data.path, id: data.id, src: data.src, cancelled: data.cancelled === true });
  } catch (_) {
    json = '{"cancelled":true}';
  }
  return json.length > 16_384 ? '{"cancelled":true}' : json;
}
