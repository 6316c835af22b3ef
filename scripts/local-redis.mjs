#!/usr/bin/env node
// A Redis for one machine (a try-out, a test, the loopback example of docs/deployment.md):
// Debian's redis-server bound to 127.0.0.1 on a free port (or --port N), append-only file on and
// synced on every write, data in a fresh folder (or --dir PATH). Prints `Redis ready at
// redis://127.0.0.1:PORT`, writes the URL to --url-file PATH when given, and runs until SIGINT or
// SIGTERM, then stops redis-server (a data folder it made is removed; a given one is kept).
// Needs `pnpm build` first. For several machines run redis-server yourself (see docs/deployment.md).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
function flag(name) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}
let launcher;
try {
  launcher = await import(pathToFileURL(join(root, 'packages/queue/dist/src/redis-server.js')).href);
} catch (err) {
  console.error(`local-redis: cannot load the built queue package (${err.message}); run \`pnpm build\` first.`);
  process.exit(1);
}
const port = flag('port') === undefined ? undefined : Number(flag('port'));
let redis;
try {
  redis = await launcher.startRedisServer({ port, dir: flag('dir') });
} catch (err) {
  console.error(`local-redis: ${err.message}`);
  process.exit(1);
}
const urlFile = flag('url-file');
if (urlFile) writeFileSync(urlFile, `${redis.url}\n`);
console.log(`Redis ready at ${redis.url} (pid ${redis.pid}, data in ${redis.dir})`);
let stopping = false;
const stop = async (signal) => {
  if (stopping) return;
  stopping = true;
  await redis.stop();
  console.log(`Redis stopped (${signal}).`);
  process.exit(0);
};
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => void stop(s));
// Stays up until a signal arrives.
setInterval(() => undefined, 1 << 30);
