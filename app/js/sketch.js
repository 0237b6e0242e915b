// The sketch pad: a white canvas to draw a layout by hand (free lines, or boxes for regions), kept
// as a list of strokes so Undo is exact, and handed over as a PNG that goes through the same checks
// and downscale as any picture.

const INK = '#111111';
const WIDTH = 3;

/** Starts drawing on `canvas`; returns the pad's controls. */
export function startSketch(canvas) {
  const context = canvas.getContext('2d');
  const strokes = [];
  let tool = 'pen';
  let current = null;

  function point(event) {
    const rect = canvas.getBoundingClientRect();
    return [
      ((event.clientX - rect.left) * canvas.width) / rect.width,
      ((event.clientY - rect.top) * canvas.height) / rect.height,
    ];
  }

  function draw(stroke) {
    context.strokeStyle = INK;
    context.lineWidth = WIDTH;
    context.lineCap = 'round';
    context.lineJoin = 'round';
    const [first, ...rest] = stroke.points;
    if (stroke.tool === 'box') {
      const last = rest[rest.length - 1] ?? first;
      context.strokeRect(first[0], first[1], last[0] - first[0], last[1] - first[1]);
      return;
    }
    context.beginPath();
    context.moveTo(first[0], first[1]);
    for (const [x, y] of rest) context.lineTo(x, y);
    if (rest.length === 0) context.lineTo(first[0] + 0.1, first[1]);
    context.stroke();
  }

  function repaint() {
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    for (const stroke of strokes) draw(stroke);
    if (current) draw(current);
  }

  canvas.addEventListener('pointerdown', (event) => {
    canvas.setPointerCapture(event.pointerId);
    current = { tool, points: [point(event)] };
    repaint();
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!current) return;
    if (current.tool === 'box') current.points = [current.points[0], point(event)];
    else current.points.push(point(event));
    repaint();
  });
  const end = () => {
    if (!current) return;
    strokes.push(current);
    current = null;
    repaint();
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
  repaint();

  return {
    setTool(name) { tool = name === 'box' ? 'box' : 'pen'; },
    undo() { strokes.pop(); repaint(); },
    clear() { strokes.length = 0; repaint(); },
    isEmpty() { return strokes.length === 0; },
    toBlob() {
      return new Promise((resolve) => canvas.toBlob((blob) => resolve(blob), 'image/png'));
    },
  };
}
