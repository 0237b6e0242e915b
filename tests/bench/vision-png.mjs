// An indexed PNG encoder for the vision fixtures: a screenshot's colours cut to the 256 most
// common (each other pixel takes the nearest of them), so a mock stays under 30 KB. Node has zlib
// but no PNG encoder, and the fixtures only need this one kind.
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes) => {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** `rgba` (width × height × 4 bytes, opaque) as an indexed PNG of at most 256 colours. */
export function indexedPng(width, height, rgba) {
  const counts = new Map();
  for (let i = 0; i < rgba.length; i += 4) {
    const key = (rgba[i] << 16) | (rgba[i + 1] << 8) | rgba[i + 2];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const palette = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 256).map(([key]) => key);
  const index = new Map(palette.map((key, i) => [key, i]));
  const nearest = (key) => {
    let best = 0;
    let bestDistance = Infinity;
    for (const [i, p] of palette.entries()) {
      const d = (((p >> 16) & 255) - ((key >> 16) & 255)) ** 2 + (((p >> 8) & 255) - ((key >> 8) & 255)) ** 2 + ((p & 255) - (key & 255)) ** 2;
      if (d < bestDistance) [best, bestDistance] = [i, d];
    }
    index.set(key, best);
    return best;
  };
  const raw = Buffer.alloc(height * (width + 1));
  for (let y = 0; y < height; y++) {
    raw[y * (width + 1)] = 0;
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const key = (rgba[i] << 16) | (rgba[i + 1] << 8) | rgba[i + 2];
      raw[y * (width + 1) + 1 + x] = index.get(key) ?? nearest(key);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 3;
  const plte = Buffer.alloc(palette.length * 3);
  palette.forEach((p, i) => plte.set([(p >> 16) & 255, (p >> 8) & 255, p & 255], i * 3));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header), chunk('PLTE', plte), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0)),
  ]);
}
