/** Pieces the simulated-user end-to-end tests share: the user's model server block, message text. */

/** A `user_model` vllm_model instance (YAML) in front of the backend at `baseUrl`. */
export function userModelYaml(baseUrl: string, options: { tokenIds: boolean; maxAttempts?: number }): string {
  return `user_model:
  responses_api_models:
    vllm_model:
      entrypoint: app.ts
      base_url: ${baseUrl}
      api_key: dummy
      model: Qwen/Qwen3-8B
      return_token_id_information: ${options.tokenIds}
      uses_reasoning_parser: ${options.tokenIds}
      max_attempts: ${options.maxAttempts ?? 3}
`;
}

/** The text of a chat or Responses message: its string content, or its parts' texts joined. */
export function textOf(m: Record<string, any> | undefined): string {
  const content = m?.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((p: Record<string, any>) => p.text ?? '').join('') : '';
}

/** A user_simulation_agent instance (YAML): the policy_model against `resources`, played to by user_model. */
export function userSimulationAgentYaml(name: string, resources: string, settings: Record<string, number>): string {
  return `${name}:
  responses_api_agents:
    user_simulation_agent:
      entrypoint: app.ts
      resources_server: {type: resources_servers, name: ${resources}}
      model_server: {type: responses_api_models, name: policy_model}
      user_model_server: {type: responses_api_models, name: user_model}
${Object.entries(settings)
  .map(([k, v]) => `      ${k}: ${v}\n`)
  .join('')}`;
}
