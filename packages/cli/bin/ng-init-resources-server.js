#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('init-resources-server');
const { cli } = await import('../dist/src/main.js');
await cli('init-resources-server');
