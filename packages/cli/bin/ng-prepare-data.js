#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('prepare-data');
const { cli } = await import('../dist/src/main.js');
await cli('prepare-data');
