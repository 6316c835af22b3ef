/** What several sections print beside their ratios, and how they summarise rounds. */
export const SHARED_NOTE = 'the machine may be shared with other work: compare the ratio, not the absolute rates';

/** The median of a list of numbers (the upper one of an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
