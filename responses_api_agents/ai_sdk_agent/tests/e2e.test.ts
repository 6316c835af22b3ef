/**
 * The AI SDK agent end to end (ng-run + ng-collect-rollouts): simple_weather and multineedle on the replay
 * model and on vllm_model in front of the trainer's vLLM stand-in, next to simple_agent on the same
 * scripted model (tests/helpers/agent-examples.ts says what is checked).
 */
import { describeExample } from '../../../tests/helpers/agent-examples.js';

describeExample('ai_sdk_agent', {
  config: 'responses_api_agents/ai_sdk_agent/configs/ai_sdk_agent.yaml',
  agents: { simple_weather: 'simple_weather_ai_sdk_agent', multineedle: 'multineedle_ai_sdk_agent' },
});
