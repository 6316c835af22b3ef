/**
 * The LangGraph.js agent end to end (ng-run + ng-collect-rollouts): simple_weather and multineedle on the replay
 * model and on vllm_model in front of the trainer's vLLM stand-in, next to simple_agent on the same
 * scripted model (tests/helpers/agent-examples.ts says what is checked).
 */
import { describeExample } from '../../../tests/helpers/agent-examples.js';

describeExample('langgraph_agent', {
  config: 'responses_api_agents/langgraph_agent/configs/langgraph_agent.yaml',
  agents: { simple_weather: 'simple_weather_langgraph_agent', multineedle: 'multineedle_langgraph_agent' },
});
