/** Config schemas every server's own schema extends: where it listens and what it refers to. */
import { z } from 'zod';
import { RolloutCaptureSettingsSchema } from '../capture/store.js';
import { DomainSchema, ModelServerRefSchema, ResourcesServerRefSchema } from '../config/instances.js';

export const BaseServerConfigSchema = z
  .object({
    name: z.string(),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(0),
    entrypoint: z.string().default('app.ts'),
  })
  .loose();
export const ResourcesServerConfigSchema = BaseServerConfigSchema.extend({ domain: DomainSchema });
/** `rollout_capture`: limits of the per-rollout token capture (capture/store.ts). */
export const ModelServerConfigSchema = BaseServerConfigSchema.extend({ rollout_capture: RolloutCaptureSettingsSchema.optional() });
export const AgentServerConfigSchema = BaseServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema.optional(),
  model_server: ModelServerRefSchema.optional(),
});
