/**
 * Generated pictures for the vision_shapes environment: a few circles, squares and triangles in
 * three colours on a white 128x128 canvas, one shape per cell of a 4x4 grid so that none
 * overlap. A scene is fully determined by its seed, so rows can be regenerated and checked.
 */
import { mulberry32 } from '@nemo-gym/core/data';
import { encodePng, pngDataUrl } from './png.js';

export const SIZE = 128;
const CELL = 32;
export const SHAPES = ['circle', 'square', 'triangle'] as const;
export type ShapeKind = (typeof SHAPES)[number];
const COLOURS: Record<string, [number, number, number]> = { red: [220, 40, 40], blue: [40, 80, 220], green: [30, 160, 60] };

export interface Shape {
  kind: ShapeKind;
  colour: string;
  cx: number;
  cy: number;
  r: number;
}

export interface Scene {
  seed: number;
  shapes: Shape[];
  /** The kind the question asks about. */
  target: ShapeKind;
}

/** Between 3 and 8 shapes in distinct grid cells; the target kind appears at least once. */
export function makeScene(seed: number): Scene {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const cells = Array.from({ length: 16 }, (_, i) => i);
  for (let i = cells.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [cells[i], cells[j]] = [cells[j]!, cells[i]!];
  }
  const count = 3 + Math.floor(rand() * 6);
  const shapes = cells.slice(0, count).map((cell): Shape => ({
    kind: pick(SHAPES),
    colour: pick(Object.keys(COLOURS)),
    cx: (cell % 4) * CELL + CELL / 2,
    cy: Math.floor(cell / 4) * CELL + CELL / 2,
    r: 9 + Math.floor(rand() * 4),
  }));
  return { seed, shapes, target: shapes[Math.floor(rand() * shapes.length)]!.kind };
}

function covers(s: Shape, x: number, y: number): boolean {
  const dx = x + 0.5 - s.cx;
  const dy = y + 0.5 - s.cy;
  if (s.kind === 'circle') return dx * dx + dy * dy <= s.r * s.r;
  if (s.kind === 'square') return Math.abs(dx) <= s.r * 0.85 && Math.abs(dy) <= s.r * 0.85;
  // Triangle pointing up: apex at the top, base at the bottom.
  if (dy < -s.r || dy > s.r) return false;
  return Math.abs(dx) <= ((dy + s.r) / (2 * s.r)) * s.r;
}

/** RGB pixels of the scene. */
export function renderScene(scene: Scene): Uint8Array {
  const rgb = new Uint8Array(SIZE * SIZE * 3).fill(255);
  for (const s of scene.shapes) {
    const [r, g, b] = COLOURS[s.colour]!;
    for (let y = Math.max(0, s.cy - s.r - 1); y <= Math.min(SIZE - 1, s.cy + s.r + 1); y++) {
      for (let x = Math.max(0, s.cx - s.r - 1); x <= Math.min(SIZE - 1, s.cx + s.r + 1); x++) {
        if (!covers(s, x, y)) continue;
        const o = (y * SIZE + x) * 3;
        rgb[o] = r;
        rgb[o + 1] = g;
        rgb[o + 2] = b;
      }
    }
  }
  return rgb;
}

export function expectedCount(scene: Scene): number {
  return scene.shapes.filter((s) => s.kind === scene.target).length;
}

/** One dataset row: the question and the picture as a PNG data URL, with the answer and the seed. */
export function sceneRow(seed: number): Record<string, unknown> {
  const scene = makeScene(seed);
  const image = pngDataUrl(encodePng(SIZE, SIZE, renderScene(scene)));
  const question = `How many ${scene.target}s are in this picture? Count every colour. Put the final number in \\boxed{}.`;
  return {
    responses_create_params: {
      input: [{ role: 'user', content: [{ type: 'input_text', text: question }, { type: 'input_image', image_url: image, detail: 'auto' }] }],
    },
    expected_count: expectedCount(scene),
    shape: scene.target,
    seed,
  };
}

/** The seeds of data/example.jsonl. */
export const EXAMPLE_SEEDS = [1, 2, 3, 4, 5];
