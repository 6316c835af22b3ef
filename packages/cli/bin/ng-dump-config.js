#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('dump-config');
const { cli } = await import('../dist/src/main.js');
await cli('dump-config');
