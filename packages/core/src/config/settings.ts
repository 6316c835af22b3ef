/**
 * The global settings: top-level config keys that are not server instances, each with its type,
 * default and one line of documentation. This table is the one declaration: the command line's
 * strict-parameter check accepts these names, `--help` lists them, `ng-dump-config +settings=true`
 * prints their values, and ServerClient reads its own through `numberSetting`.
 */
import { isDict, type ConfigDict } from './merge.js';

export const DEFAULT_HEAD_PORT = 11000;
export const DEFAULT_HOST = '127.0.0.1';

export interface GlobalSetting {
  /** As `--help` shows it: str, int, float, bool, list[str], … */
  readonly type: string;
  /** The value used when the config has none (null: no value). */
  readonly default: unknown;
  readonly doc: string;
  /** Accepted so upstream's configs and trainers' initial dicts work unchanged; nothing here reads it. */
  readonly upstreamOnly?: true;
}

const UNUSED = 'upstream (Python) only; accepted and unused here';

export const GLOBAL_SETTINGS = {
  config_paths: { type: 'list[str]', default: [], doc: 'the config files to merge, in order' },
  entrypoint: { type: 'str', default: null, doc: "a server's entry file (in its instance block)" },
  default_host: { type: 'str', default: DEFAULT_HOST, doc: 'the address servers listen on when their block names none' },
  head_server: { type: '{host, port}', default: { host: DEFAULT_HOST, port: DEFAULT_HEAD_PORT }, doc: 'where the head server listens (+head_server.port=…, +head_server.host=…)' },
  disallowed_ports: { type: 'list[int]', default: [], doc: 'ports never given to a server without one (the head port is added)' },
  port_range_low: { type: 'int', default: null, doc: 'with port_range_high: servers without a port get a free one at random in this range' },
  port_range_high: { type: 'int', default: null, doc: 'the upper end of port_range_low' },
  policy_base_url: { type: 'str | list[str]', default: null, doc: "the policy model's base URL(s), for ${policy_base_url} in model configs" },
  policy_api_key: { type: 'str', default: null, doc: "the policy model's API key (a secret: shown as ****)" },
  policy_model_name: { type: 'str', default: null, doc: "the policy model's name" },
  error_on_almost_servers: { type: 'bool', default: true, doc: 'a config block that is almost a server instance stops the command' },
  log_level: { type: 'str', default: 'info', doc: 'servers log at debug, info, warn or error' },
  log_format: { type: 'str', default: 'plain', doc: 'plain lines, or json (pino JSON lines)' },
  http_connect_timeout_s: { type: 'float', default: 30, doc: 'seconds to open a connection to another server' },
  http_headers_timeout_s: { type: 'float', default: 3600, doc: 'seconds to wait for the response headers of a call' },
  http_body_timeout_s: { type: 'float', default: 3600, doc: 'seconds to wait between chunks of a response body' },
  http_connections_per_host: { type: 'int', default: 1024, doc: 'sockets per target server (further requests queue)' },
  http_pipelining: { type: 'int', default: 1, doc: 'requests in flight per socket (1: no HTTP/1.1 pipelining)' },
  http_retry_max_attempts: { type: 'int', default: 6, doc: 'attempts per call on connection errors and 408/429/502-504' },
  http_retry_max_elapsed_s: { type: 'float', default: 120, doc: 'seconds a call may spend retrying' },
  replica_health_interval_s: { type: 'float', default: 1, doc: 'how often clients check the replicas of an instance' },
  replica_health_timeout_s: { type: 'float', default: 2, doc: 'how long a replica health check may take' },
  offer_server_tools: { type: 'bool', default: false, doc: "agents offer the model the resources server's tools (GET /ng_tools) when a task row lists none; an agent's block may set it too" },
  global_aiohttp_connector_limit_per_host: { type: 'int', default: 1024, doc: "the Python run_examples' connections per agent" },
  global_aiohttp_connector_limit: { type: 'int', default: null, doc: UNUSED, upstreamOnly: true },
  global_aiohttp_client_request_debug: { type: 'bool', default: false, doc: UNUSED, upstreamOnly: true },
  head_server_deps: { type: 'list[str]', default: null, doc: UNUSED, upstreamOnly: true },
  python_version: { type: 'str', default: null, doc: UNUSED, upstreamOnly: true },
  ray_head_node_address: { type: 'str', default: null, doc: UNUSED, upstreamOnly: true },
  profiling_enabled: { type: 'bool', default: false, doc: UNUSED, upstreamOnly: true },
  profiling_results_dirpath: { type: 'str', default: null, doc: UNUSED, upstreamOnly: true },
  uvicorn_logging_show_200_ok: { type: 'bool', default: false, doc: UNUSED, upstreamOnly: true },
  mlflow_tracking_uri: { type: 'str', default: null, doc: UNUSED, upstreamOnly: true },
  mlflow_tracking_token: { type: 'str', default: null, doc: UNUSED, upstreamOnly: true },
  use_absolute_ip: { type: 'bool', default: false, doc: UNUSED, upstreamOnly: true },
  uv_venv_dir: { type: 'str', default: null, doc: UNUSED, upstreamOnly: true },
  uv_cache_dir: { type: 'str', default: null, doc: UNUSED, upstreamOnly: true },
  skip_venv_if_present: { type: 'bool', default: false, doc: UNUSED, upstreamOnly: true },
  pip_install_verbose: { type: 'bool', default: false, doc: UNUSED, upstreamOnly: true },
  uv_pip_set_python: { type: 'bool', default: false, doc: UNUSED, upstreamOnly: true },
  num_gpu_nodes: { type: 'int', default: null, doc: UNUSED, upstreamOnly: true },
} as const satisfies Record<string, GlobalSetting>;

export type GlobalSettingName = keyof typeof GLOBAL_SETTINGS;

/** The names of the global settings, in declaration order. */
export const GLOBAL_SETTING_NAMES = Object.keys(GLOBAL_SETTINGS) as GlobalSettingName[];

type NumberSettingName = { [K in GlobalSettingName]: (typeof GLOBAL_SETTINGS)[K]['default'] extends number ? K : never }[GlobalSettingName];

/** A numeric setting of the config: its value when a positive finite number, else its declared default. */
export function numberSetting(config: ConfigDict, name: NumberSettingName): number {
  const v = config[name];
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : GLOBAL_SETTINGS[name].default;
}

/** The value a setting has in the config: its own, else its declared default. */
export function settingValue(config: ConfigDict, name: GlobalSettingName): unknown {
  return name in config ? config[name] : GLOBAL_SETTINGS[name].default;
}

export interface HeadAddress {
  host: string;
  port: number;
}

/** The head server's address in a config: its head_server block, defaulted to 127.0.0.1:DEFAULT_HEAD_PORT. */
export function headServerOf(config: ConfigDict): HeadAddress {
  const h = isDict(config.head_server) ? (config.head_server as Partial<HeadAddress>) : {};
  return { host: h.host ?? DEFAULT_HOST, port: h.port ?? DEFAULT_HEAD_PORT };
}

/** `http://host:port` of an address. */
export function originOf(a: HeadAddress): string {
  return `http://${a.host}:${a.port}`;
}
