#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('merge-rollouts');
const { cli } = await import('../dist/src/main.js');
await cli('merge-rollouts');
