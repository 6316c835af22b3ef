import { describe, expect, it } from 'vitest';
import { collectSecretValues, instanceConfig, publicConfig, redactSecrets, redactUrlCredentials } from '../src/config/index.js';
import { isSecretKey } from '../src/config/redact.js';

describe('isSecretKey', () => {
  it.each([
    'api_key',
    'api-key',
    'apiKey',
    'APIKey',
    'x-api-key',
    'X-Api-Key',
    'policy_api_key',
    'openai_api_key',
    'token',
    'hf_token',
    'accessToken',
    'mlflow_tracking_token',
    'secret',
    'client_secret',
    'aws_secret_access_key',
    'password',
    'db-password',
    'passwd',
    'Authorization',
    'proxy-authorization',
    'private_key',
    'credentials',
    'cookie',
    'sig',
    'X-Amz-Signature',
  ])('%s is secret', (k) => expect(isSecretKey(k)).toBe(true));

  it.each(['max_tokens', 'max_output_tokens', 'token_ids', 'tokenizer', 'model', 'host', 'port', 'keyword', 'monkey', 'name', 'base_url', 'extra_headers'])(
    '%s is not secret',
    (k) => expect(isSecretKey(k)).toBe(false),
  );
});

describe('redactUrlCredentials', () => {
  it('masks the password in user info and secret query parameters, nothing else', () => {
    expect(redactUrlCredentials('http://user:KEY@host:8000/v1')).toBe('http://user:****@host:8000/v1');
    expect(redactUrlCredentials('see postgres://admin:p%40ss@db/x and https://h/p?api_key=abc&mode=x')).toBe(
      'see postgres://admin:****@db/x and https://h/p?api_key=****&mode=x',
    );
    expect(redactUrlCredentials('http://127.0.0.1:8000/v1?max_tokens=5')).toBe('http://127.0.0.1:8000/v1?max_tokens=5');
  });

  it('masks a bare-token user info, signatures and `key`, and keeps JSON around a URL intact', () => {
    expect(redactUrlCredentials('https://ghp_abc123@github.com/o/r')).toBe('https://****@github.com/o/r');
    expect(redactUrlCredentials('https://acct.blob.core.windows.net/c?sv=2022&sig=abc%2Fdef&se=1')).toBe('https://acct.blob.core.windows.net/c?sv=2022&sig=****&se=1');
    expect(redactUrlCredentials('https://h/x?X-Amz-Signature=abc&X-Amz-Security-Token=def&key=AIza1')).toBe('https://h/x?X-Amz-Signature=****&X-Amz-Security-Token=****&key=****');
    const json = JSON.stringify({ error: { message: 'bad key for http://h/v1?token=abc', url: 'http://u:p@h/?api_key=q' } });
    expect(JSON.parse(redactUrlCredentials(json))).toEqual({ error: { message: 'bad key for http://h/v1?token=****', url: 'http://u:****@h/?api_key=****' } });
    expect(redactUrlCredentials('http://user:****@h and https://****@h')).toBe('http://user:****@h and https://****@h');
    expect(redactUrlCredentials('mail me@example.com, a=b')).toBe('mail me@example.com, a=b');
  });

  it('takes time linear in the text, whatever it holds (error texts echo model input)', () => {
    const n = 200_000;
    for (const text of ['a.'.repeat(n) + '://u:p@h', 'x://a:'.repeat(n / 3) + '@', `http://h/${'?'.repeat(n)}=`, `http://h/?${'a=b&'.repeat(n / 4)}`, `a://${'@'.repeat(n)}=`]) {
      const t0 = performance.now();
      redactUrlCredentials(text);
      expect(performance.now() - t0, text.slice(0, 12)).toBeLessThan(1000);
    }
  });
});

describe('redactSecrets', () => {
  it('masks secret keys of any spelling, URL credentials, and copies of secret values under other keys', () => {
    const cfg = {
      policy_api_key: 'sk-canary-1',
      m: { extra_headers: { 'x-api-key': 'hdr-canary' }, apiKey: 'camel-canary', url: 'http://u:url-canary@h/', note: 'key is sk-canary-1', max_tokens: 64, use_password: true },
    };
    const out = redactSecrets(cfg, collectSecretValues(cfg));
    expect(JSON.stringify(out)).not.toMatch(/canary/);
    expect(out.m.url).toBe('http://u:****@h/');
    expect(out.m.note).toBe('key is ****');
    expect(out.m.max_tokens).toBe(64);
    expect(out.m.use_password).toBe(true);
  });
});

describe('publicConfig and instanceConfig', () => {
  const config = {
    policy_api_key: 'sk-canary-2',
    head_server: { host: '127.0.0.1', port: 11999 },
    policy_model: { responses_api_models: { openai_model: { entrypoint: 'app.ts', host: '127.0.0.1', port: 8001, openai_api_key: '${policy_api_key}' } } },
    weather: { resources_servers: { simple_weather: { entrypoint: 'app.ts', host: '127.0.0.1', port: 8002 } } },
    agent: {
      responses_api_agents: {
        simple_agent: { entrypoint: 'app.ts', host: '127.0.0.1', port: 8003, model_server: { type: 'responses_api_models', name: 'policy_model' } },
      },
    },
  };

  it('the public config keeps every host and port and no secret', () => {
    const pub = publicConfig(config);
    expect(JSON.stringify(pub)).not.toContain('sk-canary-2');
    expect((pub.policy_model as typeof config.policy_model).responses_api_models.openai_model.port).toBe(8001);
    expect((pub.policy_model as typeof config.policy_model).responses_api_models.openai_model.openai_api_key).toBe('****');
  });

  it('an instance sees its own secrets resolved, and nobody else sees them', () => {
    const model = instanceConfig(config, 'policy_model');
    expect((model.policy_model as typeof config.policy_model).responses_api_models.openai_model.openai_api_key).toBe('sk-canary-2');
    expect(model.policy_api_key).toBe('****');
    for (const name of ['weather', 'agent']) {
      const own = instanceConfig(config, name);
      expect(JSON.stringify(own)).not.toContain('sk-canary-2');
      expect((own.policy_model as typeof config.policy_model).responses_api_models.openai_model.host).toBe('127.0.0.1');
    }
  });
});
