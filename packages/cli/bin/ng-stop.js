#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('stop');
const { cli } = await import('../dist/src/main.js');
await cli('stop');
