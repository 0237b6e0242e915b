// What a preview frame may be sent (protocol/src/frames.rs, `ToFrame`), checked on receipt by the
// preview runtime (preview-runtime.js). Loaded by preview.html before the runtime, which takes
// `FlintMessages` and deletes it before any page is written. The page's side reads what frames
// send against its own table (app/js/frame_messages.js). Both tables are derived from the Rust
// types by protocol/src/frames_tests.rs, which fails when one differs.
self.FlintMessages = (() => {
  'use strict';

  // Kind → field → type; `?`: the field may be left out (or null). Not edited by hand: see above.
  // frame-messages:begin
  const TABLE = {
    "append": {"at": "number", "text": "string"},
    "check": {"doc": "string", "expect": "array"},
    "connect": {},
    "pick": {"on": "boolean"},
    "picture": {"doc": "string", "max_height": "number", "width": "number"},
    "ping": {"id": "number"},
    "run": {"doc": "string"},
    "snapshot": {"html": "string"},
    "swap": {"doc": "string"}
  };
  // frame-messages:end

  const hasOwn = Object.hasOwn;
  const entries = Object.entries;
  const isArray = Array.isArray;
  const typeOf = (value) => (value === null ? 'null' : isArray(value) ? 'array' : typeof value);
  // Taken now, with the table: a written page shares this realm afterwards.
  const fields = {};
  for (const [kind, spec] of entries(TABLE)) fields[kind] = entries(spec);

  /** Why `data` is not a message a frame is sent (a sentence), or null when it is one. */
  function problem(data) {
    if (!data || typeof data !== 'object' || isArray(data)) return 'not an object';
    const kind = data.flint;
    if (typeof kind !== 'string' || !hasOwn(fields, kind)) return `unknown kind ${JSON.stringify(String(kind)).slice(0, 40)}`;
    for (const [name, type] of fields[kind]) {
      const value = data[name];
      const optional = type.endsWith('?');
      if (optional && (value === undefined || value === null)) continue;
      if (typeOf(value) !== (optional ? type.slice(0, -1) : type)) return `"${kind}" needs ${name}: ${type}`;
    }
    return null;
  }

  return { problem };
})();
