/**
 * Bounded concurrency for the collector: at most `concurrency` jobs run at once (p-limit), and
 * the next job is taken from the source only when a slot is free, so a lazy source (the input
 * file) is read no faster than rollouts finish.
 */
import pLimit from 'p-limit';

export interface ScheduleOptions {
  concurrency: number;
  /** Checked before each job is started; true ends the schedule (running jobs finish). */
  stopped?: () => boolean;
}

export async function runBounded<T>(source: AsyncIterable<T>, run: (job: T) => Promise<void>, options: ScheduleOptions): Promise<void> {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const limit = pLimit(concurrency);
  const running = new Set<Promise<void>>();
  let slotFreed: (() => void) | null = null;
  const stopped = options.stopped ?? (() => false);
  for await (const job of source) {
    while (running.size >= concurrency) await new Promise<void>((r) => (slotFreed = r));
    if (stopped()) break;
    const p: Promise<void> = limit(() => run(job)).finally(() => {
      running.delete(p);
      const wake = slotFreed;
      slotFreed = null;
      wake?.();
    });
    running.add(p);
  }
  await Promise.all(running);
}
