#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('test-all');
const { cli } = await import('../dist/src/main.js');
await cli('test-all');
