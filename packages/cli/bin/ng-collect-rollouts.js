#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('collect-rollouts');
const { cli } = await import('../dist/src/main.js');
await cli('collect-rollouts');
