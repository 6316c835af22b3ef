/** The error codes responses_api_agents/remote_agent owns, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const REMOTE_AGENT_ERRORS = registerErrorCodes('responses_api_agents/remote_agent', {
  NG_ERR_REMOTE_AGENT_FAILED: {
    message: '%s',
    status: 502,
    meaning:
      'remote_agent: the agent service at `agent_base_url` could not be reached (after the client\'s connection retries), or answered `POST /v1/responses` with an HTTP error, a redirect, or a Response that reports its own failure (`status: "failed"` or an `error`). The rollout is recorded as a failure (class `agent_unreachable`; a 429 or 503 from the service is passed on as a rate limit), never scored.',
    fix: 'Check that your service runs and listens at `agent_base_url` (the message names the URL and, for an error answer, the start of the service\'s body), that it serves `POST /v1/responses` at exactly that address (redirects are not followed), and that `agent_api_key` is what it expects. Your service\'s own log has the rest.',
  },
  NG_ERR_REMOTE_AGENT_TIMEOUT: {
    message: '%s',
    status: 504,
    meaning: 'remote_agent: one call to the agent service gave no answer within `remote_responses_timeout_secs`. The call is cancelled and the rollout is recorded as a failure (class `timeout`), never scored. (The whole rollout past `run_timeout_secs` is `NG_ERR_TIMEOUT`.)',
    fix: 'Raise `remote_responses_timeout_secs` if your service legitimately works longer per call (many internal model turns), or find out in its log why it hangs.',
  },
  NG_ERR_REMOTE_AGENT_BAD_RESPONSE: {
    message: '%s',
    status: 502,
    meaning:
      'remote_agent: the agent service answered 2xx with something the loop cannot use: a body that is not JSON, JSON that is not a Responses API object (`id`, `created_at`, `model`, `object: "response"`, `output`, `parallel_tool_calls`, `tool_choice`, `tools`), an output item of the wrong shape (a `function_call` without a string `call_id`, `name` or `arguments`), two unpaired calls with one `call_id`, or a call to a name that is not a tool route (`seed_session`, `verify`, a path). Tool `arguments` that are not JSON are not this error: they come back to the service as the output of that call, as simple_agent tells a model. The rollout is recorded as a failure (class `bad_result`), never scored.',
    fix: 'The message names the step, the item (`output.<i>`) and what is wrong. Build your service\'s answer as the official `openai` client types a `Response` (docs/remote-agents.md shows a minimal one).',
  },
});

export const RemoteAgentFailedError = createError('NG_ERR_REMOTE_AGENT_FAILED', 'RemoteAgentFailedError');
export const RemoteAgentTimeoutError = createError('NG_ERR_REMOTE_AGENT_TIMEOUT', 'RemoteAgentTimeoutError');
export const RemoteAgentBadResponseError = createError('NG_ERR_REMOTE_AGENT_BAD_RESPONSE', 'RemoteAgentBadResponseError');
