// Which image an instance runs in: upstream's per-instance image names (SWE-Gym, SWE-bench
// Verified) as config templates, and upstream's search for a Singularity `.sif` file.
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createError } from '@nemo-gym/core/errors';
import { MINI_SWE_AGENT_ERRORS } from './errors.js';

/** An instance has no image, or its image cannot be found or started (NG_ERR_SWE_ENVIRONMENT). */
export const ImageError = createError(MINI_SWE_AGENT_ERRORS.NG_ERR_SWE_ENVIRONMENT, 'SweImageError');

/** Upstream's names, per `subset` of the row: SWE-Gym (`gym`) and SWE-bench Verified (`verified`). */
export const DEFAULT_IMAGE_TEMPLATES: Record<string, string> = {
  gym: 'xingyaoww/sweb.eval.x86_64.{instance_id_s}:latest',
  verified: 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest',
};

/** Placeholders of image and `.sif` templates. */
export const IMAGE_PLACEHOLDERS = ['instance_id', 'instance_id_s', 'instance_id_1776'] as const;

/** The values of the placeholders for one instance id (`__` -> `_s_` for SWE-Gym's images, `_1776_`
 * for SWE-bench's). */
export function idForms(instanceId: string): Record<(typeof IMAGE_PLACEHOLDERS)[number], string> {
  return { instance_id: instanceId, instance_id_s: instanceId.replaceAll('__', '_s_'), instance_id_1776: instanceId.replaceAll('__', '_1776_') };
}

/** Fills `{name}` placeholders; an unknown one is an error. */
export function fillTemplate(template: string, values: Record<string, string>, what: string): string {
  return template.replace(/\{(\w*)\}/g, (_, name: string) => {
    if (!Object.hasOwn(values, name)) {
      throw new ImageError(`${what} '${template}' has the unknown placeholder {${name}}; known: ${Object.keys(values).map((k) => `{${k}}`).join(', ')}`);
    }
    return values[name]!;
  });
}

/** Refuses templates with unknown placeholders (at start-up, not at the first row). */
export function checkTemplates(templates: Record<string, string>, what: string): void {
  const probe = idForms('owner__repo-1');
  for (const [k, t] of Object.entries(templates)) fillTemplate(t, probe, `${what}.${k}`);
}

/** The image of an instance: the row's `image_name` when set, else the template of its subset
 * (or `default`), lower-cased as upstream does (image references are lower-case). */
export function imageName(instance: { instance_id: string; image_name?: unknown }, subset: string, templates: Record<string, string>): string {
  if (typeof instance.image_name === 'string' && instance.image_name) return instance.image_name;
  const template = templates[subset] ?? templates.default;
  if (!template) {
    throw new ImageError(
      `no image for instance ${instance.instance_id}: subset '${subset}' has no entry in container.image_templates (known: ${Object.keys(templates).join(', ') || 'none'}); add one, add a 'default', or give the row an image_name`,
    );
  }
  return fillTemplate(template, idForms(instance.instance_id), `container.image_templates.${subset}`).toLowerCase();
}

/** Upstream's search for the `.sif` of an instance from `cache_dir_template` (`{instance_id}`):
 * the id with `__` -> `_1776_`, as given and lower-cased, then `__` -> `_s_`, as given and
 * lower-cased, then any `.sif` in that folder whose name holds one of those forms. Null when
 * none exists; `wanted` is the first candidate (where a pulled image is written). */
export function findSif(cacheDirTemplate: string, instanceId: string, exists: (p: string) => boolean = existsSync, list: (dir: string) => string[] = safeList): { found: string | null; wanted: string } {
  const f = idForms(instanceId);
  const forms = [f.instance_id_1776, f.instance_id_1776.toLowerCase(), f.instance_id_s, f.instance_id_s.toLowerCase()];
  const paths = forms.map((id) => fillTemplate(cacheDirTemplate, { instance_id: id }, 'cache_dir_template'));
  const wanted = paths[0]!;
  for (const p of paths) if (exists(p)) return { found: p, wanted };
  const dir = dirname(wanted);
  const names = list(dir).filter((n) => n.endsWith('.sif'));
  for (const id of [f.instance_id_1776, f.instance_id_s, f.instance_id_1776.toLowerCase(), f.instance_id_s.toLowerCase()]) {
    const hit = names.find((n) => basename(n).includes(id));
    if (hit) return { found: join(dir, hit), wanted };
  }
  return { found: null, wanted };
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
