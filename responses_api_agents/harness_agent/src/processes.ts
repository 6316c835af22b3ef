// Finding processes by their command line, for leak checks after harness runs (tests, bench).
import { readdirSync, readFileSync } from 'node:fs';

/** Ids of live processes (other than this one) whose command line holds `marker`. */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(marker)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}
