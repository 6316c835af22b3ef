/**
 * Dataset metrics as `ng_prepare_data` and the viewer report them: numeric summaries
 * (count, mean, min, max, t-digest median, sample standard deviation) and string counters,
 * serialized with the reference implementation's key names and number formatting.
 */
import { NgError } from '../errors.js';
import { pyRound } from '../py/json.js';
import type { PyDict, PyValue } from '../py/json.js';
import { TDigest } from './tdigest.js';

/** A float in a metrics document (printed with a `.0` when integral), as opposed to an int. */
export class MetricFloat {
  constructor(readonly value: number) {}
}

/** Plain JSON-ish document; ints are bigint/number, floats are MetricFloat. Maps keep key order. */
export type MetricsDoc = Map<string, unknown>;

export class AvgMinMax {
  total = 0;
  mean = 0;
  M2 = 0;
  min = Infinity;
  max = -Infinity;
  tdigest = new TDigest();

  observe(x: number): void {
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
    this.total += 1;
    const delta = x - this.mean;
    this.mean += delta / this.total;
    this.M2 += delta * (x - this.mean);
    this.tdigest.update(x);
  }

  /** Merge another accumulator (Chan et al. parallel variance). */
  add(other: AvgMinMax): void {
    if (other.total === 0) return;
    if (this.total === 0) {
      this.total = other.total;
      this.mean = other.mean;
      this.M2 = other.M2;
      this.min = other.min;
      this.max = other.max;
      this.tdigest = new TDigest().merged(other.tdigest);
      return;
    }
    const n1 = this.total;
    const n2 = other.total;
    const delta = other.mean - this.mean;
    const n = n1 + n2;
    this.mean = this.mean + delta * (n2 / n);
    this.M2 = this.M2 + other.M2 + delta * delta * ((n1 * n2) / n);
    this.total = n;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
    this.tdigest = this.tdigest.merged(other.tdigest);
  }

  summary(): AvgMinMaxSummary {
    const n = this.total;
    const round = (x: number) => (x >= 1 || x <= -1 ? pyRound(x, 2) : pyRound(x, 3));
    return {
      total: n,
      average: round(n > 0 ? this.mean : 0),
      min: round(n > 0 ? this.min : 0),
      max: round(n > 0 ? this.max : 0),
      median: round(n > 0 && this.tdigest.n > 0 ? this.tdigest.percentile(50) : 0),
      stddev: round(n > 1 ? Math.sqrt(this.M2 / (n - 1)) : 0),
    };
  }
}

export interface AvgMinMaxSummary {
  total: number;
  average: number;
  min: number;
  max: number;
  median: number;
  stddev: number;
}

export function summaryDoc(s: AvgMinMaxSummary): MetricsDoc {
  return new Map<string, unknown>([
    ['Total # non-null values', s.total],
    ['Average', new MetricFloat(s.average)],
    ['Min', new MetricFloat(s.min)],
    ['Max', new MetricFloat(s.max)],
    ['Median', new MetricFloat(s.median)],
    ['Standard deviation', new MetricFloat(s.stddev)],
  ]);
}

export class StringCounter {
  readonly counts = new Map<string, number>();
  add(s: string): void {
    this.counts.set(s, (this.counts.get(s) ?? 0) + 1);
  }
  doc(): MetricsDoc {
    let total = 0;
    for (const c of this.counts.values()) total += c;
    return new Map<string, unknown>([
      ['unique_count', this.counts.size],
      ['total_count', total],
    ]);
  }
}

export const NUMBER_OF_EXAMPLES = 'Number of examples';
export const NUMBER_OF_TOOLS = 'Number of tools';
export const NUMBER_OF_WORDS = 'Json-dumped number of words (proxy for token count)';
export const NUMBER_OF_TURNS = 'Number of turns';
export const TEMPERATURE = 'Temperature';
/** Written only for datasets that have images, so image-free metrics files stay as they were. */
export const NUMBER_OF_IMAGES = 'Number of images';

/** Field names of the reference metrics model; an "other metrics" key with one of these names collides. */
export const RESERVED_METRIC_KEYS = new Set([
  'number_of_examples',
  'number_of_tools',
  'json_dumped_number_of_words',
  'number_of_turns',
  'temperature',
]);

export class MetricsKeyCollisionError extends NgError {
  constructor(message: string) {
    super('NG_ERR_METRICS_KEY_COLLISION', message);
  }
}

export class MixedMetricTypesError extends NgError {
  constructor(message: string) {
    super('NG_ERR_MIXED_METRIC_TYPES', message);
  }
}

/** Per-row metrics computed from the validated create params. */
export interface SampleMetrics {
  tools: number | undefined;
  turns: number | undefined;
  temperature: number | undefined;
  words: number;
  /** Image parts in the row's input (0 when none). */
  images?: number;
}

/** Running metrics for one dataset (or one dataset type). */
export class DatasetMetrics {
  examples = 0;
  tools = new AvgMinMax();
  words = new AvgMinMax();
  turns = new AvgMinMax();
  temperature = new AvgMinMax();
  images = new AvgMinMax();
  imageCount = 0;
  /** Other top-level keys, in first-seen order. Values are finished documents once `finishOther` ran. */
  other = new Map<string, AvgMinMax | StringCounter | MetricsDoc>();

  observeSample(m: SampleMetrics): void {
    this.examples += 1;
    if (m.tools !== undefined) this.tools.observe(m.tools);
    if (m.turns !== undefined) this.turns.observe(m.turns);
    if (m.temperature !== undefined) this.temperature.observe(m.temperature);
    this.words.observe(m.words);
    this.images.observe(m.images ?? 0);
    this.imageCount += m.images ?? 0;
  }

  /**
   * Fold a row's top-level keys other than `responses_create_params` and `response` into the
   * "other metrics": lists are flattened, booleans count as 0/1, numbers get numeric stats,
   * strings a counter; objects and nulls are ignored.
   */
  observeOther(row: PyDict, where: string): void {
    for (const [k, v] of row) {
      if (k === 'responses_create_params' || k === 'response') continue;
      const values: PyValue[] = Array.isArray(v) ? v : [v];
      for (let item of values) {
        if (typeof item === 'boolean') item = item ? 1n : 0n;
        if (typeof item === 'bigint' || typeof item === 'number') this.otherAccumulator(k, AvgMinMax, where).observe(Number(item));
        else if (typeof item === 'string') this.otherAccumulator(k, StringCounter, where).add(item);
      }
    }
  }

  /** The accumulator of other-metrics key `k`, made on first use; a key holds one kind of value. */
  private otherAccumulator<A extends AvgMinMax | StringCounter>(k: string, kind: new () => A, where: string): A {
    let acc = this.other.get(k);
    if (acc === undefined) {
      if (RESERVED_METRIC_KEYS.has(k)) {
        throw new MetricsKeyCollisionError(
          `${where}: top-level key "${k}" has the name of a built-in metric field and cannot be aggregated; ` +
            `rename the key in the data (the reference implementation crashes on it too)`,
        );
      }
      acc = new kind();
      this.other.set(k, acc);
    }
    if (!(acc instanceof kind)) {
      const [here, before] = kind === AvgMinMax ? ['a number', 'strings'] : ['text', 'numbers'];
      throw new MixedMetricTypesError(
        `${where}: key "${k}" holds ${here} here but ${before} in earlier rows; ` +
          `metrics need one kind of value per key, so make "${k}" consistently numeric or consistently text`,
      );
    }
    return acc;
  }

  /** Turn the other-metrics accumulators into their finished documents. */
  finishOther(): void {
    for (const [k, v] of this.other) {
      if (v instanceof AvgMinMax) this.other.set(k, summaryDoc(v.summary()));
      else if (v instanceof StringCounter) this.other.set(k, v.doc());
    }
  }

  /** Sum another dataset's metrics into this one; finished other-metrics are copied (last wins). */
  add(other: DatasetMetrics): void {
    this.examples += other.examples;
    this.tools.add(other.tools);
    this.words.add(other.words);
    this.turns.add(other.turns);
    this.temperature.add(other.temperature);
    this.images.add(other.images);
    this.imageCount += other.imageCount;
    for (const [k, v] of other.other) this.other.set(k, v);
  }

  /** The metrics document: the five built-in entries followed by the other metrics. */
  doc(): MetricsDoc {
    const out: MetricsDoc = new Map<string, unknown>([
      [NUMBER_OF_EXAMPLES, this.examples],
      [NUMBER_OF_TOOLS, summaryDoc(this.tools.summary())],
      [NUMBER_OF_WORDS, summaryDoc(this.words.summary())],
      [NUMBER_OF_TURNS, summaryDoc(this.turns.summary())],
      [TEMPERATURE, summaryDoc(this.temperature.summary())],
    ]);
    if (this.imageCount > 0) out.set(NUMBER_OF_IMAGES, summaryDoc(this.images.summary()));
    for (const [k, v] of this.other) {
      if (v instanceof AvgMinMax) out.set(k, summaryDoc(v.summary()));
      else if (v instanceof StringCounter) out.set(k, v.doc());
      else out.set(k, v);
    }
    return out;
  }
}
