/**
 * Which resources servers score the rollouts of one task together (docs/group-rewards.md): an
 * agent's `resources_server` names an instance whose config says `verify_group: true`, with its
 * `group_wait_timeout_s` and `group_member_failure`. The one reading of those keys, for the
 * collectors (rollouts/group.ts) and for the head server's `GET /group_verifiers` (the Python surface).
 */
import { asServerRef, getFirstServerConfigDict } from './instances.js';
import { isDict, type ConfigDict } from './merge.js';
import { UsageError } from '../errors.js';

export type GroupMemberFailure = 'score_rest' | 'fail_group';
export const GROUP_MEMBER_FAILURE_VALUES: readonly GroupMemberFailure[] = ['score_rest', 'fail_group'];

/** How a group is waited for and what a failed member does to it. */
export interface GroupSettings {
  /** Longest wait (ms) from the first finished member of a group to scoring it. */
  waitTimeoutMs: number;
  memberFailure: GroupMemberFailure;
}

/** Defaults when neither the resources server's config nor the collector's flags say. */
export const DEFAULT_GROUP_SETTINGS: GroupSettings = { waitTimeoutMs: 600_000, memberFailure: 'score_rest' };

/** The field of an output row that marks it as scored by its group. */
export const GROUP_FIELD = 'group_verify';

/** Settings given on the collector's command line; they override the resources server's own. */
export interface GroupOverrides {
  waitTimeoutS?: number | null;
  memberFailure?: string | null;
}

function memberFailureOf(value: unknown, where: string): GroupMemberFailure {
  if (value === 'score_rest' || value === 'fail_group') return value;
  throw new UsageError(`${where} must be one of ${GROUP_MEMBER_FAILURE_VALUES.join(', ')}, got ${JSON.stringify(value)}.`);
}

function waitOf(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new UsageError(`${where} must be a number of seconds > 0, got ${JSON.stringify(value)}.`);
  return value * 1000;
}

/**
 * The resources server that scores an agent's rollouts as a group, and how: the agent's
 * `resources_server` ref names an instance whose config says `verify_group: true`. Null when the
 * agent's rollouts are scored one by one.
 */
export function groupVerifierOf(config: ConfigDict, agent: string, overrides: GroupOverrides = {}): { server: string; settings: GroupSettings } | null {
  const ref = asServerRef(getFirstServerConfigDict(config, agent)?.resources_server);
  if (!ref) return null;
  const inner = getFirstServerConfigDict(config, ref.name);
  if (!isDict(inner) || inner.verify_group !== true) return null;
  const where = (key: string) => `${ref.name}'s ${key}`;
  const settings: GroupSettings = { ...DEFAULT_GROUP_SETTINGS };
  if (inner.group_wait_timeout_s != null) settings.waitTimeoutMs = waitOf(inner.group_wait_timeout_s, where('group_wait_timeout_s'));
  if (inner.group_member_failure != null) settings.memberFailure = memberFailureOf(inner.group_member_failure, where('group_member_failure'));
  if (overrides.waitTimeoutS != null) settings.waitTimeoutMs = waitOf(overrides.waitTimeoutS, '+group_wait_timeout_s');
  if (overrides.memberFailure != null) settings.memberFailure = memberFailureOf(overrides.memberFailure, '+group_member_failure');
  return { server: ref.name, settings };
}

/** Checks the collector's group flags before anything runs (a typo is one line, not a failed run). */
export function checkGroupOverrides(overrides: GroupOverrides): void {
  if (overrides.waitTimeoutS != null) waitOf(overrides.waitTimeoutS, '+group_wait_timeout_s');
  if (overrides.memberFailure != null) memberFailureOf(overrides.memberFailure, '+group_member_failure');
}


/** Every agent of the config whose rollouts are scored as groups, with its resources server and settings (as JSON for GET /group_verifiers). */
export function groupVerifiers(config: ConfigDict): Record<string, { server: string; group_wait_timeout_s: number; group_member_failure: GroupMemberFailure } | { error: string }> {
  const out: Record<string, { server: string; group_wait_timeout_s: number; group_member_failure: GroupMemberFailure } | { error: string }> = {};
  for (const name of Object.keys(config)) {
    try {
      const v = groupVerifierOf(config, name);
      if (v) out[name] = { server: v.server, group_wait_timeout_s: v.settings.waitTimeoutMs / 1000, group_member_failure: v.settings.memberFailure };
    } catch (err) {
      out[name] = { error: (err as Error).message };
    }
  }
  return out;
}
