/**
 * t-digest median estimator with the behaviour of the Python `tdigest` package (delta 0.01, K 25)
 * that the reference metrics were computed with.
 *
 * Centroids are kept sorted by mean; identical means merge. While the digest holds fewer than a
 * couple of hundred points no centroid can absorb a neighbour (the size threshold is below 2), so
 * the median is an exact interpolation over distinct values weighted by multiplicity and matches
 * the Python output. For larger inputs the Python package visits centroids in a random order, so
 * both implementations give close but not bit-identical estimates.
 */
import { mulberry32 } from './random.js';

function shuffled<T>(items: T[], rand: () => number): T[] {
  const out = items.slice();
  for (let k = out.length - 1; k > 0; k--) {
    const j = Math.floor(rand() * (k + 1));
    [out[k], out[j]] = [out[j]!, out[k]!];
  }
  return out;
}

export class TDigest {
  /** Sorted centroid means and their counts. */
  private means: number[] = [];
  private counts: number[] = [];
  /** Sum of all centroid counts. */
  private total = 0;
  n = 0;
  private readonly rand: () => number;

  constructor(
    readonly delta = 0.01,
    readonly K = 25,
    seed = 0x5eed,
  ) {
    this.rand = mulberry32(seed); // stands in for Python's random choices
  }

  get size(): number {
    return this.means.length;
  }

  centroids(): { mean: number; count: number }[] {
    return this.means.map((mean, k) => ({ mean, count: this.counts[k]! }));
  }

  /** Sum of counts[0 .. index-1], scanning from the nearer end. */
  private leftSum(index: number): number {
    const c = this.counts;
    if (index <= c.length / 2) {
      let s = 0;
      for (let k = 0; k < index; k++) s += c[k]!;
      return s;
    }
    let s = 0;
    for (let k = index; k < c.length; k++) s += c[k]!;
    return this.total - s;
  }

  /** First index whose mean is >= x. */
  private lowerBound(x: number): number {
    let lo = 0;
    let hi = this.means.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.means[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Insert a centroid, merging into an existing one with the same mean. */
  private addCentroid(mean: number, count: number): void {
    const at = this.lowerBound(mean);
    if (at < this.means.length && this.means[at] === mean) {
      this.updateAt(at, mean, count);
      return;
    }
    this.means.splice(at, 0, mean);
    this.counts.splice(at, 0, count);
    this.total += count;
  }

  /** Centroid.update: count += w, mean moves toward x; re-positioned like pop + re-insert. */
  private updateAt(index: number, x: number, w: number): void {
    const count = this.counts[index]! + w;
    const mean = this.means[index]! + (w * (x - this.means[index]!)) / count;
    const prev = index > 0 ? this.means[index - 1]! : -Infinity;
    const next = index + 1 < this.means.length ? this.means[index + 1]! : Infinity;
    if (mean > prev && mean < next) {
      this.means[index] = mean;
      this.counts[index] = count;
      this.total += w;
      return;
    }
    this.total -= this.counts[index]!;
    this.means.splice(index, 1);
    this.counts.splice(index, 1);
    this.addCentroid(mean, count);
  }

  private threshold(q: number): number {
    return 4 * this.n * this.delta * q * (1 - q);
  }

  update(x: number, w = 1): void {
    this.n += w;
    if (this.means.length === 0) {
      this.addCentroid(x, w);
      return;
    }
    // Closest centroid(s): both neighbours when equidistant.
    const at = this.lowerBound(x);
    const candidates: number[] = [];
    if (at >= this.means.length) candidates.push(this.means.length - 1);
    else if (at === 0 || this.means[at] === x) candidates.push(at);
    else {
      const dFloor = Math.abs(this.means[at - 1]! - x);
      const dCeil = Math.abs(this.means[at]! - x);
      if (dFloor < dCeil) candidates.push(at - 1);
      else if (dFloor === dCeil) candidates.push(at, at - 1);
      else candidates.push(at);
    }
    let candidateMeans = candidates.map((k) => this.means[k]!);
    while (candidateMeans.length > 0 && w > 0) {
      const j = candidateMeans.length > 1 ? Math.floor(this.rand() * candidateMeans.length) : 0;
      const mean = candidateMeans[j]!;
      const idx = this.lowerBound(mean);
      candidateMeans = candidateMeans.filter((_, k) => k !== j);
      if (idx >= this.means.length || this.means[idx] !== mean) continue;
      const count = this.counts[idx]!;
      const q = (count / 2 + this.leftSum(idx)) / this.n;
      const thr = this.threshold(q);
      if (count + w > thr) continue;
      const dw = Math.min(thr - count, w);
      this.updateAt(idx, x, dw);
      w -= dw;
    }
    if (w > 0) this.addCentroid(x, w);
    if (this.means.length > this.K / this.delta) this.compress();
  }

  compress(): void {
    const fresh = new TDigest(this.delta, this.K, Math.floor(this.rand() * 2 ** 32));
    for (const c of shuffled(this.centroids(), this.rand)) fresh.update(c.mean, c.count);
    this.means = fresh.means;
    this.counts = fresh.counts;
    this.total = fresh.total;
  }

  /** `a + b`: a new digest fed every centroid of both, in shuffled order. */
  merged(other: TDigest): TDigest {
    const out = new TDigest(this.delta, this.K, Math.floor(this.rand() * 2 ** 32));
    const all = [...this.centroids(), ...other.centroids()];
    for (const c of shuffled(all, this.rand)) out.update(c.mean, c.count);
    return out;
  }

  /** Percentile in [0, 100], interpolating between neighbouring centroids. */
  percentile(pct: number): number {
    if (!(pct >= 0 && pct <= 100)) throw new RangeError('percentile must be between 0 and 100, inclusive');
    if (this.means.length === 0) return NaN;
    const p = (pct / 100) * this.n;
    const last = this.means[this.means.length - 1]!;
    if (p === this.n) return last;
    let t = 0;
    for (let k = 0; k < this.means.length; k++) {
      const count = this.counts[k]!;
      let kk: number;
      if (k === 0) kk = count / 2;
      else {
        kk = (count + this.counts[k - 1]!) / 2;
        if (p < t + kk) {
          const z1 = p - t;
          const z2 = t + kk - p;
          return (this.means[k - 1]! * z2 + this.means[k]! * z1) / (z1 + z2);
        }
      }
      t += kk;
    }
    return last;
  }
}
