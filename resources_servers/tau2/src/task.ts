/**
 * tau2's task (`tau2.data_model.tasks.Task`): the parts this server uses, and `str(user_scenario)`,
 * the text tau2 hands its user simulator as instructions.
 */
import { z } from 'zod';
import { pyStrip } from '@nemo-gym/core/py';

export const ActionSchema = z
  .object({
    action_id: z.string(),
    requestor: z.enum(['assistant', 'user']).default('assistant'),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    info: z.string().nullable().optional(),
    compare_args: z.array(z.string()).nullable().optional(),
  })
  .loose();
export type Action = z.output<typeof ActionSchema>;

export const EnvFunctionCallSchema = z
  .object({
    env_type: z.enum(['assistant', 'user']),
    func_name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  })
  .loose();
export type EnvFunctionCall = z.output<typeof EnvFunctionCallSchema>;

export const RewardTypeSchema = z.enum(['DB', 'ENV_ASSERTION', 'NL_ASSERTION', 'ACTION', 'COMMUNICATE']);
export type RewardType = z.output<typeof RewardTypeSchema>;

export const EvaluationCriteriaSchema = z
  .object({
    actions: z.array(ActionSchema).nullable().optional(),
    env_assertions: z.array(z.unknown()).nullable().optional(),
    communicate_info: z.array(z.string()).nullable().optional(),
    nl_assertions: z.array(z.string()).nullable().optional(),
    reward_basis: z.array(RewardTypeSchema).default(['DB', 'COMMUNICATE']),
  })
  .loose();
export type EvaluationCriteria = z.output<typeof EvaluationCriteriaSchema>;

export const InitialStateSchema = z
  .object({
    initialization_data: z
      .object({ agent_data: z.record(z.string(), z.unknown()).nullable().optional(), user_data: z.record(z.string(), z.unknown()).nullable().optional() })
      .loose()
      .nullable()
      .optional(),
    initialization_actions: z.array(EnvFunctionCallSchema).nullable().optional(),
    message_history: z.array(z.unknown()).nullable().optional(),
  })
  .loose();
export type InitialState = z.output<typeof InitialStateSchema>;

export const StructuredInstructionsSchema = z
  .object({
    domain: z.string(),
    reason_for_call: z.string(),
    known_info: z.string().nullable().optional(),
    unknown_info: z.string().nullable().optional(),
    task_instructions: z.string(),
  })
  .loose();

export const UserScenarioSchema = z
  .object({
    persona: z.string().nullable().optional(),
    instructions: z.union([StructuredInstructionsSchema, z.string()]),
  })
  .loose();
export type UserScenario = z.output<typeof UserScenarioSchema>;

export const TaskSchema = z
  .object({
    id: z.string(),
    description: z.unknown().optional(),
    user_scenario: UserScenarioSchema,
    initial_state: InitialStateSchema.nullable().optional(),
    evaluation_criteria: EvaluationCriteriaSchema.nullable().optional(),
  })
  .loose();
export type Task = z.output<typeof TaskSchema>;

export function parseTasks(data: unknown): Task[] {
  return z.array(TaskSchema).parse(data);
}

/** Python `textwrap.indent(text, prefix)`: the prefix on every line that is not blank. */
function indent(text: string, prefix: string): string {
  return text
    .split(/(?<=\n)/)
    .map((line) => (pyStrip(line) ? prefix + line : line))
    .join('');
}

/** `str(task.user_scenario)`: what tau2 gives its user simulator as `instructions`. */
export function userScenarioText(s: UserScenario): string {
  const lines: string[] = [];
  if (s.persona !== null && s.persona !== undefined) lines.push('Persona:', indent(s.persona, '\t'));
  const ins = s.instructions;
  let text: string;
  if (typeof ins === 'string') text = ins;
  else {
    const parts = [`Domain: ${ins.domain}`, `Reason for call:\n${indent(ins.reason_for_call, '\t')}`];
    if (ins.known_info !== null && ins.known_info !== undefined) parts.push(`Known info:\n${indent(ins.known_info, '\t')}`);
    if (ins.unknown_info !== null && ins.unknown_info !== undefined) parts.push(`Unknown info:\n${indent(ins.unknown_info, '\t')}`);
    parts.push(`Task instructions:\n${indent(ins.task_instructions, '\t')}`);
    text = parts.join('\n');
  }
  lines.push('Instructions:', indent(text, '\t'));
  return lines.join('\n');
}
